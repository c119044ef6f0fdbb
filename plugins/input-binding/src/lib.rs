//! Lyra's `AddInputBinding` action: when a pawn's hero sends `BindInputsNow`, its input bindings are added to
//! the pawn's `HeroComponent`; when the pawn or this feature goes, they are forgotten.

use std::collections::HashSet;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
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
            "BindInputsNow" => {
                match world::set_property(pawn, "HeroComponent", "input-bindings", &Value::Text(BINDINGS.into())) {
                    Ok(()) => {
                        self.bound.insert(pawn);
                        log::info(&format!("pawn {pawn}: bound {BINDINGS}"));
                    }
                    Err(e) => log::warn(&format!("pawn {pawn}: cannot bind input: {e:?}")),
                }
            }
            events::EXTENSION_REMOVED | events::RECEIVER_REMOVED if self.bound.remove(&pawn) => {
                let _ = world::set_property(pawn, "HeroComponent", "input-bindings", &Value::Text(String::new()));
            }
            _ => {}
        }
    }
}

export_plugin!(InputBinding);
