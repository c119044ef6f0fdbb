//! Runs a call into a plugin to completion on the calling thread.
//!
//! Calls into plugins are made with wasmtime's async API, because the WASI implementations a plugin reaches
//! (its standard output, its data directory) are asynchronous, and their synchronous wrappers would block on
//! an async runtime the embedding game may already be inside. The host's own interfaces never wait, and the
//! WASI ones a plugin is given finish at once (except a timer, which the runtime's own WASI thread wakes), so
//! a call's future is normally ready the first time it is polled: this driver polls it on the current thread,
//! parks between wake-ups, and gives up at a wall-clock deadline so that a plugin waiting longer (a long
//! sleep) cannot hold the host either.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

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

/// Polls `future` until it is ready, or returns `None` (dropping it, which cancels the call) once `deadline`
/// has passed while it waits.
pub fn until_deadline<F: Future>(future: F, deadline: Instant) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return Some(output);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::park_timeout(deadline - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_ready_future_completes() {
        assert_eq!(until_deadline(async { 7 }, Instant::now()), Some(7));
    }

    #[test]
    fn a_future_woken_from_another_thread_completes() {
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            tx.send(3).unwrap();
        });
        assert_eq!(until_deadline(rx, Instant::now() + Duration::from_secs(5)).map(Result::unwrap), Some(3));
    }

    #[test]
    fn a_future_that_never_finishes_is_abandoned_at_the_deadline() {
        let started = Instant::now();
        let never = std::future::pending::<()>();
        assert_eq!(until_deadline(never, started + Duration::from_millis(20)), None);
        assert!(started.elapsed() >= Duration::from_millis(20));
    }
}
