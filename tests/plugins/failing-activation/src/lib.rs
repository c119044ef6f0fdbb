//! Refuses activation, as a feature whose configuration is wrong would.

use gamefeature_sdk::{export_plugin, ActivationContext, Plugin};

#[derive(Default)]
struct FailingActivation;

impl Plugin for FailingActivation {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        Err("required map data is missing".to_string())
    }
}

export_plugin!(FailingActivation);
