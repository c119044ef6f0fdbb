//! Counts extension events and sums their actor ids: the least work a handler can do, so benchmarks measure
//! the cost of delivering events rather than of handling them.

use gamefeature_sdk::components::{self, ExtensionHandler};
use gamefeature_sdk::world::ActorId;
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Plugin};

#[derive(Default)]
struct EventSink {
    handler: Option<ExtensionHandler>,
    events: u64,
    checksum: u64,
}

impl Plugin for EventSink {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.handler = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?);
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, actor: ActorId, _event: &str) {
        self.events += 1;
        self.checksum = self.checksum.wrapping_add(actor);
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        log::info(&format!("received {} events", self.events));
        Deactivation::Done
    }
}

export_plugin!(EventSink);
