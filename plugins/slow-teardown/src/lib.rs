//! Holds deactivation open for three polls, as a feature saving state or waiting on a network flush would.

use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Plugin};

#[derive(Default)]
struct SlowTeardown {
    polls_left: u32,
}

impl Plugin for SlowTeardown {
    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        self.polls_left = 3;
        log::info("flushing state before deactivation");
        Deactivation::Pending
    }

    fn poll_deactivation(&mut self) -> Deactivation {
        self.polls_left = self.polls_left.saturating_sub(1);
        if self.polls_left == 0 {
            log::info("flush complete");
            Deactivation::Done
        } else {
            Deactivation::Pending
        }
    }
}

export_plugin!(SlowTeardown);
