//! When a call into a plugin has run too long: the decision behind the epoch callback, apart from wasmtime.
//!
//! A call's budget is CPU time of the thread running it (see `cpu_clock`), so a plugin is never stopped
//! because the machine or the host was busy. A generous wall-clock backstop still stops a call that makes no
//! progress for a long time however little CPU it uses (stuck in a host call, say). Where no CPU clock exists
//! the budget falls back to wall-clock time.

use std::time::{Duration, Instant};

use super::cpu_clock::{recent_thread_cpu_time, thread_cpu_time};

/// The wall-clock backstop of a call with budget `budget`: a hundred times the budget, and at least a second,
/// at most ten minutes.
pub fn backstop(budget: Duration) -> Duration {
    budget.saturating_mul(100).clamp(Duration::from_secs(1), Duration::from_secs(600))
}

/// How old the CPU-clock reading a call starts from may be, at most: the most CPU time a call can use beyond its
/// budget before it is stopped (on top of the epoch's tick). Never more than a tenth of the budget.
const CPU_READING_MAX_AGE: Duration = Duration::from_millis(1);

/// The clock of one call: when it started, in CPU and wall time, and what it may use.
#[derive(Debug, Clone, Copy)]
pub struct CallClock {
    budget: Duration,
    backstop: Duration,
    started_wall: Instant,
    /// A recent reading of the thread's CPU clock, and how long (wall time) before the call's start it was taken.
    started_cpu: Option<(Duration, Duration)>,
}

/// What the epoch callback does when a call's wall-clock check comes due.
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
    /// Starts the clock of a call on the current thread.
    pub fn start(budget: Duration) -> Self {
        let started_wall = Instant::now();
        let started_cpu = recent_thread_cpu_time(started_wall, CPU_READING_MAX_AGE.min(budget / 10))
            .map(|(cpu, taken)| (cpu, started_wall.saturating_duration_since(taken)));
        CallClock { budget, backstop: backstop(budget), started_wall, started_cpu }
    }

    /// When the call started (wall time).
    pub fn started(&self) -> Instant {
        self.started_wall
    }

    pub fn backstop(&self) -> Duration {
        self.backstop
    }

    /// Checks the call now, on the thread running it.
    pub fn check(&self) -> Verdict {
        let cpu_used =
            self.started_cpu.zip(thread_cpu_time()).map(|((start, lead), now)| cpu_used_since(start, lead, now));
        decide(self.budget, self.backstop, cpu_used, self.started_wall.elapsed())
    }
}

/// The CPU time a call used, from a reading `start` taken `lead` (wall time) before the call began and one taken
/// `now`: the CPU time between the readings, less what the thread can have used before the call began.
pub fn cpu_used_since(start: Duration, lead: Duration, now: Duration) -> Duration {
    now.saturating_sub(start).saturating_sub(lead)
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
    fn cpu_time_before_the_call_is_not_charged() {
        // Read 3 ms of wall time before the call; 12 ms of CPU since the reading: at least 9 ms were the call's.
        assert_eq!(cpu_used_since(100 * MS, 3 * MS, 112 * MS), 9 * MS);
        assert_eq!(cpu_used_since(100 * MS, 3 * MS, 101 * MS), Duration::ZERO);
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
