//! Reports which assets its world can read, one log line each: `equipped: yes`, `client-only: no`, ...
//! Tests use it to check bundle selection by net mode through the real host call.

use gamefeature_sdk::{export_plugin, log, world, ActivationContext, Plugin};

#[derive(Default)]
struct AssetProbe;

impl Plugin for AssetProbe {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        for name in ["equipped", "client-only", "server-only", "own-data"] {
            let readable = if world::read_asset(name).is_ok() { "yes" } else { "no" };
            log::info(&format!("{name}: {readable}"));
        }
        Ok(())
    }
}

export_plugin!(AssetProbe);
