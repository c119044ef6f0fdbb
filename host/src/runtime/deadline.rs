//! When a call into a plugin has run too long: the decision behind the epoch callback, apart from wasmtime.
//!
//! A call's budget is CPU time of the thread running it (see `cpu_clock`), so a plugin is never stopped
//! because the machine or the host was busy. A generous wall-clock backstop still stops a call that makes no
//! progress for a long time however little CPU it uses (stuck in a host call, say). Where no CPU clock exists
//! the budget falls back to wall-clock time.
//!
//! Starting a call reads no clock: reading the thread's CPU clock is a system call costing more than a whole
//! call into a plugin, and almost every call ends within a fraction of an epoch tick. A call's first check
//! comes at the epoch ticker's next tick (or, if the plugin is in a host call then, when that call returns)
//! and only takes the readings the call is measured from; the checks after it judge. So a call that ends
//! before the next tick never reads a clock, and a longer one is charged from its first check on: what it used
//! before is not charged. It can only be under-charged, never for the host's time.

use std::time::{Duration, Instant};

use crate::cpu_clock::thread_cpu_time;

/// The wall-clock backstop of a call with budget `budget`: a hundred times the budget, and at least a second,
/// at most ten minutes.
pub fn backstop(budget: Duration) -> Duration {
    budget.saturating_mul(100).clamp(Duration::from_secs(1), Duration::from_secs(600))
}

/// The clock of one call: its budget, and the readings it is measured from once its first check has come.
#[derive(Debug, Clone, Copy)]
pub struct CallClock {
    budget: Duration,
    /// The thread's CPU time (where it has a CPU clock) and the wall time at the call's first check.
    measured_from: Option<(Option<Duration>, Instant)>,
}

/// What the epoch callback does when a call's check comes due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within budget: check again after this much more time.
    Continue(Duration),
    /// The call used its whole budget of CPU time (or of wall time, without a CPU clock).
    OverBudget { used: Duration },
    /// The call has been running longer than its wall-clock backstop.
    OverBackstop { elapsed: Duration },
}

impl CallClock {
    /// The epoch ticks from a call's start to its first check.
    pub const FIRST_CHECK: u64 = 1;

    /// The clock of a call with `budget`, before its first check.
    pub fn start(budget: Duration) -> Self {
        CallClock { budget, measured_from: None }
    }

    /// Checks the call now, on the thread running it. The first check takes the readings and gives the call its
    /// whole budget from then on.
    pub fn check(&mut self) -> Verdict {
        self.check_at(thread_cpu_time(), Instant::now())
    }

    /// [`check`](Self::check), given the thread's CPU time and the wall time now.
    fn check_at(&mut self, cpu_now: Option<Duration>, wall_now: Instant) -> Verdict {
        let Some((cpu_then, wall_then)) = self.measured_from else {
            self.measured_from = Some((cpu_now, wall_now));
            return Verdict::Continue(self.budget);
        };
        let cpu_used = cpu_then.zip(cpu_now).map(|(then, now)| now.saturating_sub(then));
        decide(self.budget, backstop(self.budget), cpu_used, wall_now.saturating_duration_since(wall_then))
    }
}

/// The verdict for a call that has used `cpu_used` of CPU time (`None`: no CPU clock) over `elapsed` of wall
/// time.
pub fn decide(budget: Duration, backstop: Duration, cpu_used: Option<Duration>, elapsed: Duration) -> Verdict {
    if elapsed >= backstop {
        return Verdict::OverBackstop { elapsed };
    }
    let used = cpu_used.unwrap_or(elapsed);
    if used >= budget {
        return Verdict::OverBudget { used };
    }
    // Check again once the rest of the budget could have been used, but never past the backstop.
    Verdict::Continue((budget - used).min(backstop - elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_call_is_measured_from_its_first_check() {
        let start = Instant::now();
        let mut clock = CallClock::start(10 * MS);
        // The first check takes the readings, whatever the thread used before, and grants the whole budget.
        assert_eq!(clock.check_at(Some(500 * MS), start), Verdict::Continue(10 * MS));
        assert_eq!(clock.check_at(Some(504 * MS), start + 20 * MS), Verdict::Continue(6 * MS));
        assert_eq!(clock.check_at(Some(510 * MS), start + 30 * MS), Verdict::OverBudget { used: 10 * MS });
        // Without a CPU clock, wall time since the first check counts.
        let mut clock = CallClock::start(10 * MS);
        assert_eq!(clock.check_at(None, start), Verdict::Continue(10 * MS));
        assert_eq!(clock.check_at(None, start + 12 * MS), Verdict::OverBudget { used: 12 * MS });
    }

    #[test]
    fn a_preempted_call_is_not_over_budget() {
        // 2 ms of CPU over 50 ms of wall time: the thread was preempted, the plugin is fine.
        assert_eq!(decide(10 * MS, backstop(10 * MS), Some(2 * MS), 50 * MS), Verdict::Continue(8 * MS));
    }

    #[test]
    fn a_call_using_its_cpu_budget_is_over() {
        assert_eq!(decide(10 * MS, backstop(10 * MS), Some(10 * MS), 11 * MS), Verdict::OverBudget { used: 10 * MS });
    }

    #[test]
    fn the_backstop_stops_a_call_making_no_progress() {
        let elapsed = Duration::from_secs(1);
        assert_eq!(decide(10 * MS, backstop(10 * MS), Some(MS), elapsed), Verdict::OverBackstop { elapsed });
    }

    #[test]
    fn without_a_cpu_clock_wall_time_counts() {
        assert_eq!(decide(10 * MS, backstop(10 * MS), None, 12 * MS), Verdict::OverBudget { used: 12 * MS });
    }

    #[test]
    fn the_next_check_never_passes_the_backstop() {
        let verdict = decide(Duration::from_secs(60), Duration::from_secs(61), Some(MS), Duration::from_secs(60));
        assert_eq!(verdict, Verdict::Continue(Duration::from_secs(1)));
    }

    #[test]
    fn backstops_are_generous_and_bounded() {
        assert_eq!(backstop(10 * MS), Duration::from_secs(1));
        assert_eq!(backstop(Duration::from_secs(1)), Duration::from_secs(100));
        assert_eq!(backstop(Duration::MAX), Duration::from_secs(600));
    }
}
