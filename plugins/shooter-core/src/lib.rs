//! Gives characters health. The components themselves come from the built-in `add-components` actions in
//! `plugin.toml`; this code reads the starting health from the experience and logs what it sees.

use gamefeature_sdk::{export_plugin, log, world, ActivationContext, Plugin, Value};

#[derive(Default)]
struct ShooterCore {
    starting_health: i64,
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
        for actor in &characters {
            if world::has_authority(*actor).unwrap_or(false) {
                world::set_property(*actor, "HealthComponent", "health", &Value::Integer(self.starting_health))
                    .map_err(|e| format!("setting health: {e:?}"))?;
            }
        }
        log::info(&format!(
            "shooter core active in {}: {} characters at {} health",
            context.world_name,
            characters.len(),
            self.starting_health
        ));
        Ok(())
    }
}

export_plugin!(ShooterCore);
