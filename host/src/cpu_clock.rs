//! The CPU time of the calling thread: what a plugin's call deadline is measured in.
//!
//! Wall-clock deadlines punish a plugin for the host's load: on a busy machine the thread running a healthy
//! plugin can be preempted for longer than the plugin's whole budget. CPU time only advances while the thread
//! runs, and calls into a plugin run on the thread that makes them (wasmtime's fibers switch stacks, not
//! threads), so the CPU time the thread used during a call is the time the plugin — and the host calls it
//! made — actually took.

use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

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
