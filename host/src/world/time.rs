//! The world's frames and timers: its clock, as World's methods.

use super::*;

impl World {
    /// The world's current frame.
    pub fn now(&self) -> Frame {
        self.clock.now()
    }

    /// Moves the world to its next frame, `delta` of game time later; the timers that came due, by owner.
    pub fn advance(&mut self, delta: std::time::Duration) -> (Frame, Vec<Fired>) {
        self.clock.advance(delta)
    }

    /// Starts a timer for a plugin instance (see [`Clock::start`]).
    pub fn start_timer(&mut self, owner: OwnerId, period_us: u64, repeating: bool, number: u32) -> TimerId {
        self.clock.start(owner, period_us, repeating, number)
    }

    /// Stops a timer (a no-op when it already stopped).
    pub fn stop_timer(&mut self, timer: TimerId) {
        self.clock.stop(timer);
    }

    /// Timers running in this world.
    pub fn live_timers(&self) -> usize {
        self.clock.timers()
    }
}
