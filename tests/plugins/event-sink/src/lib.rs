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

    /// The counts cross a hot reload: a version byte, then the two counters.
    fn snapshot(&mut self) -> Option<Vec<u8>> {
        let mut state = vec![1];
        state.extend(self.events.to_le_bytes());
        state.extend(self.checksum.to_le_bytes());
        Some(state)
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let [1, counts @ ..] = state else { return Err(format!("unknown state format {:?}", state.first())) };
        let counter = |at: usize| counts.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        let (Some(events), Some(checksum)) = (counter(0), counter(8)) else {
            return Err(format!("state of {} bytes is truncated", state.len()));
        };
        (self.events, self.checksum) = (events, checksum);
        log::info(&format!("restored a count of {events} events"));
        Ok(())
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        log::info(&format!("received {} events", self.events));
        Deactivation::Done
    }
}

export_plugin!(EventSink);
