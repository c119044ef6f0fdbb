//! The clock that says when to look at a call: a thread that advances the engine's epoch every millisecond.
//!
//! wasmtime checks the epoch at function entries and loop back-edges, so when a call's epoch deadline (a
//! number of ticks ahead of the epoch when its call started) passes, the store's callback runs at the next
//! check, whatever the plugin is doing — an endless loop included — and decides from the CPU time the call
//! used whether it goes on or traps (see `deadline`). Checking costs a load and a compare; the thread wakes a
//! thousand times a second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::Engine;

/// How long one epoch tick lasts.
pub const TICK: Duration = Duration::from_millis(1);

/// Advances an engine's epoch every [`TICK`] until dropped.
pub struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, flag) = (engine.clone(), stop.clone());
        let thread = std::thread::Builder::new().name("gamefeature-epoch".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                engine.increment_epoch();
            }
        })?;
        Ok(EpochTicker { stop, thread: Some(thread) })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The longest a deadline may span: wasmtime adds the ticks to the current epoch, which must not overflow.
const MAX_TICKS: u64 = 24 * 3600 * 1000;

/// The number of ticks a deadline spans (at least one, at most a day).
pub fn ticks(deadline: Duration) -> u64 {
    let ticks = deadline.as_micros().div_ceil(TICK.as_micros());
    u64::try_from(ticks).unwrap_or(u64::MAX).clamp(1, MAX_TICKS)
}
