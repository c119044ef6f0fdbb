//! Gives characters health. The components themselves come from the built-in `add-components` actions in
//! `plugin.toml`; this code reads the starting health from the experience and sets it on every character the
//! world has authority over — those there when it activates, and each one that arrives later.

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Plugin, Value};

/// The number of its handler on `Character`.
const CHARACTERS: u32 = 1;

#[derive(Default)]
struct ShooterCore {
    starting_health: i64,
    characters: Option<ExtensionHandler>,
}

impl ShooterCore {
    fn give_health(&self, actor: ActorId) {
        if !world::has_authority(actor).unwrap_or(false) {
            return;
        }
        if let Err(e) = world::set_property(actor, "HealthComponent", "health", &Value::Integer(self.starting_health)) {
            log::warn(&format!("character {actor}: cannot set its health: {e:?}"));
        }
    }
}

impl Plugin for ShooterCore {
    fn on_loading(&mut self) -> Result<(), String> {
        self.starting_health = 100;
        if let Ok(text) = world::read_asset_text("tuning") {
            for line in text.lines() {
                if let Some(v) = line.trim().strip_prefix("starting-health = ") {
                    self.starting_health = v.parse().map_err(|e| format!("bad starting-health {v:?}: {e}"))?;
                }
            }
        }
        Ok(())
    }

    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
        let characters = world::actors_of_class("Character").map_err(|e| format!("{e:?}"))?;
        // Characters there now hear `ExtensionAdded`, later ones `ReceiverAdded`: each gets its health once.
        self.characters =
            Some(components::add_extension_handler("Character", CHARACTERS).map_err(|e| format!("{e:?}"))?);
        log::info(&format!(
            "shooter core active in {}: {} characters at {} health",
            context.world_name,
            characters.len(),
            self.starting_health
        ));
        Ok(())
    }

    fn on_extension_event(&mut self, handler: u32, actor: ActorId, event: &str) {
        if handler == CHARACTERS && (event == events::EXTENSION_ADDED || event == events::RECEIVER_ADDED) {
            self.give_health(actor);
        }
    }
}

export_plugin!(ShooterCore);
