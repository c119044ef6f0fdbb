//! Shared gameplay tuning. Reads the experience's `tuning` asset while loading and reports what it found when
//! activated, so a feature that depends on it can count on the data being there.

use gamefeature_sdk::{export_plugin, log, world, ActivationContext, Plugin};

#[derive(Default)]
struct BaseGameplay {
    tuning_lines: usize,
}

impl Plugin for BaseGameplay {
    fn on_loading(&mut self) -> Result<(), String> {
        match world::read_asset_text("tuning") {
            Ok(text) => {
                self.tuning_lines = text.lines().filter(|l| !l.trim().is_empty()).count();
                Ok(())
            }
            Err(gamefeature_sdk::Error::UnknownAsset(_)) => {
                log::warn("no tuning asset in this experience; using built-in defaults");
                Ok(())
            }
            Err(e) => Err(format!("reading tuning: {e:?}")),
        }
    }

    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
        log::info(&format!(
            "base gameplay active in {} ({:?}) with {} tuning entries",
            context.world_name, context.net_mode, self.tuning_lines
        ));
        Ok(())
    }
}

export_plugin!(BaseGameplay);
