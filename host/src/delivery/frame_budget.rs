//! A plugin's frame budget: everything its code costs in one frame — its timers, the work delivered to it, its
//! lifecycle calls, the host calls it makes inside them — is charged to it, in CPU time of the thread running
//! it (so a busy machine charges nobody), and a plugin over its budget frame after frame is quarantined. A
//! call's deadline stops one call that runs away; the frame budget stops a plugin that keeps every frame late
//! with calls each within their deadline (a hundred thousand timers, say).
//!
//! The budget also holds inside a frame: once what was delivered to a plugin in the current frame (its timers,
//! events, notifications, property changes, chain walks, replicated changes) has cost more than its budget, it
//! gets no further delivery in that frame (see [`FrameCost::over_budget`]); its work waits for its next frame.
//! Its lifecycle calls (activation, a reload's snapshot and restore, deactivation) are charged but never held:
//! they happen when the game or an operator asks, each bounded by its call deadline.

use std::time::Duration;

/// Frames in a row a plugin may go over its budget before it is quarantined: a frame that loads a level or
/// brings a plugin up is expected to cost more, every frame is not.
pub const FRAMES_OVER_BUDGET: u32 = 3;

/// What one plugin's code has cost in the current frame, and how many frames in a row it went over budget.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FrameCost {
    spent: FrameSpend,
    /// What delivering work and timers to it has cost in the current frame: what the in-frame hold judges.
    delivered: Duration,
    frames_over: u32,
}

/// What one plugin's code cost in one frame: CPU time (with time parked in WASI) and calls into it — what an
/// operator watches per plugin (`gfhost server --admin`'s metrics, `gfhost check`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpend {
    /// CPU time of its calls, with time parked in WASI.
    pub cpu: Duration,
    /// Calls into it.
    pub calls: u32,
}

/// A plugin over its frame budget for [`FRAMES_OVER_BUDGET`] frames in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overrun {
    /// What it used in the last of those frames.
    pub used: Duration,
    /// The budget it went over.
    pub budget: Duration,
    /// Frames in a row it went over.
    pub frames: u32,
}

impl std::fmt::Display for Overrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "went over its frame budget of {:.1} ms (frame-budget-ms) {} frames in a row; its calls took {:.1} ms of \
             CPU time in the last",
            self.budget.as_secs_f64() * 1e3,
            self.frames,
            self.used.as_secs_f64() * 1e3
        )
    }
}

impl FrameCost {
    /// Charges CPU time to the current frame.
    pub fn charge(&mut self, used: Duration) {
        self.spent.cpu = self.spent.cpu.saturating_add(used);
    }

    /// Charges CPU time of a delivery (timers, work, replicated changes) to the current frame.
    pub fn charge_delivery(&mut self, used: Duration) {
        self.charge(used);
        self.delivered = self.delivered.saturating_add(used);
    }

    /// Whether deliveries to the plugin in the current frame have cost more than `budget`: then it gets no
    /// further delivery in this frame, so one plugin adds at most its budget and one call's deadline to a
    /// frame, however its work is spread over calls.
    pub fn over_budget(&self, budget: Duration) -> bool {
        self.delivered > budget
    }

    /// Counts one call into the plugin in the current frame.
    pub fn count_call(&mut self) {
        self.spent.calls = self.spent.calls.saturating_add(1);
    }

    /// What the current frame has cost so far.
    pub fn spent(&self) -> FrameSpend {
        self.spent
    }

    /// Ends the frame: the plugin's overrun when it has now gone over `budget` [`FRAMES_OVER_BUDGET`] frames in
    /// a row. A frame within budget starts the count again.
    pub fn end_frame(&mut self, budget: Duration) -> Option<Overrun> {
        let used = std::mem::take(&mut self.spent).cpu;
        self.delivered = Duration::ZERO;
        if used <= budget {
            self.frames_over = 0;
            return None;
        }
        self.frames_over += 1;
        (self.frames_over >= FRAMES_OVER_BUDGET).then_some(Overrun { used, budget, frames: self.frames_over })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = Duration::from_millis(10);

    fn frame(cost: &mut FrameCost, calls: &[u64]) -> Option<Overrun> {
        calls.iter().for_each(|ms| cost.charge(Duration::from_millis(*ms)));
        cost.end_frame(BUDGET)
    }

    #[test]
    fn a_plugin_over_budget_frame_after_frame_is_reported_on_the_third() {
        let mut cost = FrameCost::default();
        assert_eq!(frame(&mut cost, &[3, 3, 3]), None);
        assert_eq!(frame(&mut cost, &[11]), None);
        let overrun = frame(&mut cost, &[30]).or_else(|| frame(&mut cost, &[6, 6]));
        assert_eq!(overrun, Some(Overrun { used: Duration::from_millis(12), budget: BUDGET, frames: 3 }));
        let said = overrun.unwrap().to_string();
        assert!(said.contains("over its frame budget of 10.0 ms (frame-budget-ms) 3 frames in a row"), "{said}");
        assert!(said.ends_with("took 12.0 ms of CPU time in the last"), "{said}");
    }

    #[test]
    fn one_frame_within_budget_starts_the_count_again() {
        let mut cost = FrameCost::default();
        for _ in 0..10 {
            assert_eq!(frame(&mut cost, &[50]), None);
            assert_eq!(frame(&mut cost, &[50]), None);
            assert_eq!(frame(&mut cost, &[10]), None, "exactly the budget is within it");
        }
        assert_eq!(cost.spent(), FrameSpend::default());
    }

    #[test]
    fn only_deliveries_count_towards_the_hold_and_a_new_frame_lifts_it() {
        let mut cost = FrameCost::default();
        cost.charge(Duration::from_millis(40));
        assert!(!cost.over_budget(BUDGET), "a lifecycle call (activation) is not held against deliveries");
        cost.charge_delivery(Duration::from_millis(10));
        assert!(!cost.over_budget(BUDGET), "exactly the budget is within it");
        cost.charge_delivery(Duration::from_micros(1));
        assert!(cost.over_budget(BUDGET));
        assert_eq!(cost.spent().cpu, Duration::from_micros(50_001), "everything is charged to the frame");
        cost.end_frame(BUDGET);
        assert!(!cost.over_budget(BUDGET));
    }
}
