//! Runs a call into a plugin to completion on the calling thread.
//!
//! Calls into plugins are made with wasmtime's async API, because the WASI implementations a plugin reaches
//! (its standard output, its data directory) are asynchronous, and their synchronous wrappers would block on
//! an async runtime the embedding game may already be inside. The host's own interfaces never wait, and the
//! WASI ones a plugin is given finish at once (except a timer, which the runtime's own WASI thread wakes), so
//! a call's future is normally ready the first time it is polled: this driver polls it on the current thread
//! and parks between wake-ups. Time spent parked is time the plugin chose to wait: past its wait budget the
//! call is abandoned, as it is past a wall-clock backstop. Time the call spends running is not counted here
//! (the CPU-time deadline does that), so a preempted thread never makes a call look like it waited.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Wakes the thread driving the call.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Why a call was abandoned while it waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// It spent longer than its wait budget parked in WASI calls.
    Waited(Duration),
    /// It was still unfinished at its wall-clock backstop.
    Backstop,
}

/// Polls `future` until it is ready. Gives up (dropping it, which cancels the call) once it has waited — been
/// parked between polls — for longer than `wait_budget`, or is still waiting at `backstop`.
///
/// The future is pinned where it was made: a call's future is large, and moving it costs.
pub fn until_done<F: Future>(
    future: Pin<&mut F>,
    wait_budget: Duration,
    backstop: Instant,
) -> Result<F::Output, Abandoned> {
    THREAD_WAKER.with(|waker| poll_until_done(future, waker, wait_budget, backstop))
}

thread_local! {
    /// The waker of the current thread, made once: calls are too cheap to allocate one each.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(Unpark(std::thread::current())));
}

fn poll_until_done<F: Future>(
    mut future: Pin<&mut F>,
    waker: &Waker,
    wait_budget: Duration,
    backstop: Instant,
) -> Result<F::Output, Abandoned> {
    let mut context = Context::from_waker(waker);
    let mut waited = Duration::ZERO;
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return Ok(output);
        }
        if waited >= wait_budget {
            return Err(Abandoned::Waited(waited));
        }
        let now = Instant::now();
        if now >= backstop {
            return Err(Abandoned::Backstop);
        }
        std::thread::park_timeout((wait_budget - waited).min(backstop - now));
        waited += now.elapsed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(5);

    #[test]
    fn a_ready_future_completes() {
        assert_eq!(until_done(std::pin::pin!(async { 7 }), Duration::ZERO, Instant::now()), Ok(7));
    }

    #[test]
    fn a_future_woken_from_another_thread_completes() {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            tx.send(3).unwrap();
        });
        assert_eq!(until_done(std::pin::pin!(rx), LONG, Instant::now() + LONG).map(Result::unwrap), Ok(3));
    }

    #[test]
    fn a_future_that_never_finishes_is_abandoned_after_its_wait_budget() {
        let started = Instant::now();
        let never = std::future::pending::<()>();
        let outcome = until_done(std::pin::pin!(never), Duration::from_millis(20), started + LONG);
        assert!(matches!(outcome, Err(Abandoned::Waited(waited)) if waited >= Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn the_backstop_ends_a_wait_whatever_its_budget() {
        let started = Instant::now();
        let outcome =
            until_done(std::pin::pin!(std::future::pending::<()>()), LONG, started + Duration::from_millis(10));
        assert_eq!(outcome, Err(Abandoned::Backstop));
    }
}
