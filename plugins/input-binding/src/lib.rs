//! Lyra's `AddInputBinding` action: when a pawn's hero sends `BindInputsNow`, its input bindings are added to
//! the pawn's `HeroComponent`; when the pawn or this feature goes, they are forgotten. A feature activated (or
//! reloaded) after the hero initialised binds at `ExtensionAdded`, as Lyra's action does. As in Lyra, only a
//! pawn this machine's player controls takes input: none on a dedicated server, a client's own pawn only.

use std::collections::HashSet;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::init_state::{self, DATA_INITIALIZED};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Plugin, Value};

const BINDINGS: &str = "Move,Look,Fire";

#[derive(Default)]
struct InputBinding {
    handler: Option<ExtensionHandler>,
    bound: HashSet<ActorId>,
}

impl Plugin for InputBinding {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.handler = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?);
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, pawn: ActorId, event: &str) {
        match event {
            "BindInputsNow" => self.bind(pawn),
            events::EXTENSION_ADDED if hero_initialized(pawn) => self.bind(pawn),
            events::EXTENSION_REMOVED | events::RECEIVER_REMOVED if self.bound.remove(&pawn) => {
                let _ = world::set_property(pawn, "HeroComponent", "input-bindings", &Value::Text(String::new()));
                log::info(&format!("pawn {pawn}: unbound"));
            }
            _ => {}
        }
    }
}

impl InputBinding {
    fn bind(&mut self, pawn: ActorId) {
        if !world::is_locally_controlled(pawn).unwrap_or(false) {
            return;
        }
        match world::set_property(pawn, "HeroComponent", "input-bindings", &Value::Text(BINDINGS.into())) {
            Ok(()) => {
                self.bound.insert(pawn);
                log::info(&format!("pawn {pawn}: bound {BINDINGS}"));
            }
            Err(e) => log::warn(&format!("pawn {pawn}: cannot bind input: {e:?}")),
        }
    }
}

/// Whether the pawn's hero has initialised (it sends `BindInputsNow` on the way there).
fn hero_initialized(pawn: ActorId) -> bool {
    init_state::has_feature_reached(pawn, "Hero", DATA_INITIALIZED).unwrap_or(false)
}

export_plugin!(InputBinding);
