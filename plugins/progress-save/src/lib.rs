//! Saves player progress at end of play: deactivation is held open (as an Unreal deactivation pauser holds
//! it) while the save is flushed, over three polls, so the world does not end before the save is written.

use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Plugin};

#[derive(Default)]
struct ProgressSave {
    polls_left: u32,
}

impl Plugin for ProgressSave {
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

export_plugin!(ProgressSave);
