//! The CPU time of the calling thread: what a plugin's call deadline is measured in.
//!
//! Wall-clock deadlines punish a plugin for the host's load: on a busy machine the thread running a healthy
//! plugin can be preempted for longer than the plugin's whole budget. CPU time only advances while the thread
//! runs, and calls into a plugin run on the thread that makes them (wasmtime's fibers switch stacks, not
//! threads), so the CPU time the thread used during a call is the time the plugin — and the host calls it
//! made — actually took.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The CPU time the calling thread has used so far, or `None` where the platform has no per-thread CPU clock
/// (the caller then measures wall-clock time).
#[cfg(unix)]
pub fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes one `timespec` through a pointer to a valid, exclusively borrowed one.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

#[cfg(not(unix))]
pub fn thread_cpu_time() -> Option<Duration> {
    None
}

thread_local! {
    /// The thread's last reading of its CPU clock, and when (wall time) it was taken.
    static LAST_READING: Cell<Option<(Duration, Instant)>> = const { Cell::new(None) };
}

/// The thread's CPU time as read no more than `max_age` of wall time before `now` (read afresh when the last
/// reading is older), with the instant it was read. Reading the clock is a system call of a few hundred
/// nanoseconds — more than a whole call into a plugin costs — so calls share a recent reading: the CPU time the
/// thread used between the reading and the call's start is at most the wall time between them, which the call
/// is not charged (see `deadline::CallClock`).
pub fn recent_thread_cpu_time(now: Instant, max_age: Duration) -> Option<(Duration, Instant)> {
    if let Some((cpu, taken)) = LAST_READING.get() {
        if now.saturating_duration_since(taken) <= max_age {
            return Some((cpu, taken));
        }
    }
    let reading = thread_cpu_time().map(|cpu| (cpu, Instant::now()));
    LAST_READING.set(reading);
    reading
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recent_reading_is_reused_and_an_old_one_renewed() {
        let now = Instant::now();
        let Some((first, taken)) = recent_thread_cpu_time(now, Duration::from_secs(60)) else { return };
        assert_eq!(recent_thread_cpu_time(now, Duration::from_secs(60)), Some((first, taken)));
        let mut x = 0u64;
        while thread_cpu_time().unwrap() == first {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let later = Instant::now() + Duration::from_millis(2);
        let (renewed, renewed_at) = recent_thread_cpu_time(later, Duration::from_millis(1)).unwrap();
        assert!(renewed > first && renewed_at > taken);
    }

    #[test]
    fn advances_while_the_thread_works_and_not_while_it_sleeps() {
        let Some(start) = thread_cpu_time() else { return };
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().unwrap() - start;
        assert!(slept < Duration::from_millis(50), "sleeping used {slept:?} of CPU time");
        let busy_start = thread_cpu_time().unwrap();
        let mut x = 0u64;
        while thread_cpu_time().unwrap() - busy_start < Duration::from_millis(5) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(x > 0);
    }
}
