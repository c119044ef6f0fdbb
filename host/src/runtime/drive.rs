//! Runs a plugin's waits to completion on the calling thread.
//!
//! WASI's implementations are asynchronous (a stream's flush, a timer, a file operation), and their own
//! synchronous wrappers block on an async runtime the embedding game may already be inside. So the host drives
//! them itself: a call made with wasmtime's async API (see `runtime::instance`) is polled here as a whole; a
//! direct call (see `runtime::direct`) has each blocking WASI function it calls polled here. The host's own
//! interfaces never wait, and the WASI ones a plugin is given finish at once (except a timer, which the
//! runtime's own WASI thread wakes), so a future is normally ready the first time it is polled; between
//! wake-ups the thread parks. Time spent parked is time the plugin chose to wait: past its call's wait budget
//! the call is abandoned, as it is past a wall-clock backstop. Time the call spends running is not counted here
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Abandoned {
    /// It spent longer than its wait budget parked in WASI calls.
    #[error("waited {0:?} inside WASI calls, past its wait budget")]
    Waited(Duration),
    /// It was still unfinished at its wall-clock backstop.
    #[error("was still waiting at its wall-clock backstop")]
    Backstop,
}

/// How long one call may still wait, spent by every wait inside it: a call driven here waits at most once, but
/// a call made directly (see `runtime::direct`) waits inside each blocking WASI function it calls.
#[derive(Debug, Clone, Copy)]
pub struct WaitBudget {
    budget: Duration,
    backstop: Duration,
    waited: Duration,
    /// When the call first had to wait: its backstop counts from there (a call that never waits reads no
    /// clock here; the epoch's checks hold its running time to its own backstop).
    first_wait: Option<Instant>,
}

impl WaitBudget {
    /// A call that may wait `budget` in all, and nothing once `backstop` has passed since it first waited.
    pub fn new(budget: Duration, backstop: Duration) -> Self {
        WaitBudget { budget, backstop, waited: Duration::ZERO, first_wait: None }
    }

    /// The time the call has spent parked so far.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Polls `future` until it is ready, charging the time spent parked to this budget. Gives up (dropping it,
    /// which cancels what it was doing) once the budget is spent or `backstop` has passed.
    ///
    /// The future is pinned where it was made: a call's future is large, and moving it costs.
    pub fn wait_for<F: Future>(&mut self, future: Pin<&mut F>) -> Result<F::Output, Abandoned> {
        THREAD_WAKER.with(|waker| self.poll_until_done(future, waker))
    }

    fn poll_until_done<F: Future>(&mut self, mut future: Pin<&mut F>, waker: &Waker) -> Result<F::Output, Abandoned> {
        let mut context = Context::from_waker(waker);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return Ok(output);
            }
            // A future that only yielded (a zero-length WASI timer does) is ready when polled again. Inside the
            // game's tokio runtime, tokio hands a yield's wake-up to that runtime's scheduler, which cannot run
            // while this call holds its thread: without this, the wait would sleep out its whole budget.
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return Ok(output);
            }
            if self.waited >= self.budget {
                return Err(Abandoned::Waited(self.waited));
            }
            let now = Instant::now();
            let backstop = *self.first_wait.get_or_insert(now) + self.backstop;
            if now >= backstop {
                return Err(Abandoned::Backstop);
            }
            std::thread::park_timeout((self.budget - self.waited).min(backstop - now));
            self.waited += now.elapsed();
        }
    }
}

thread_local! {
    /// The waker of the current thread, made once: calls are too cheap to allocate one each.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(Unpark(std::thread::current())));
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(5);

    fn until_done<F: Future>(future: Pin<&mut F>, budget: Duration, backstop: Instant) -> Result<F::Output, Abandoned> {
        WaitBudget::new(budget, backstop.saturating_duration_since(Instant::now())).wait_for(future)
    }

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
    fn waits_inside_one_call_share_its_budget() {
        let mut budget = WaitBudget::new(Duration::from_millis(20), LONG);
        let Err(Abandoned::Waited(first)) = budget.wait_for(std::pin::pin!(std::future::pending::<()>())) else {
            panic!("a wait that never ends is abandoned");
        };
        assert!(first >= Duration::from_millis(20));
        // What is ready needs no budget; what is not gets none, the first wait having spent it all.
        assert_eq!(budget.wait_for(std::pin::pin!(async { 1 })), Ok(1));
        assert_eq!(budget.wait_for(std::pin::pin!(std::future::pending::<()>())), Err(Abandoned::Waited(first)));
    }

    #[test]
    fn a_future_that_yields_inside_a_tokio_runtime_completes_without_waiting() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let outcome = until_done(std::pin::pin!(tokio::task::yield_now()), Duration::ZERO, Instant::now() + LONG);
            assert_eq!(outcome, Ok(()));
        });
    }

    #[test]
    fn the_backstop_ends_a_wait_whatever_its_budget() {
        let started = Instant::now();
        let outcome =
            until_done(std::pin::pin!(std::future::pending::<()>()), LONG, started + Duration::from_millis(10));
        assert_eq!(outcome, Err(Abandoned::Backstop));
    }
}
