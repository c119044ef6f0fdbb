//! The clock that says when to look at a call: a thread that advances the engine's epoch every millisecond.
//!
//! wasmtime checks the epoch at function entries and loop back-edges, so when a call's epoch deadline (the
//! next tick for its first check, then a number of ticks ahead) passes, the store's callback runs at the next
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

const TICK_NANOS: u64 = TICK.as_nanos() as u64;
const TICKS_PER_SECOND: u64 = 1_000_000_000 / TICK_NANOS;

/// The number of ticks a deadline spans (at least one, at most a day). Every call arms one, so the arithmetic
/// stays in 64 bits (a 128-bit division costs more than the rest of arming a call).
pub fn ticks(deadline: Duration) -> u64 {
    let whole = deadline.as_secs().saturating_mul(TICKS_PER_SECOND);
    whole.saturating_add(u64::from(deadline.subsec_nanos()).div_ceil(TICK_NANOS)).clamp(1, MAX_TICKS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_spans_its_ticks_rounded_up_within_bounds() {
        assert_eq!(ticks(Duration::ZERO), 1);
        assert_eq!(ticks(Duration::from_micros(1)), 1);
        assert_eq!(ticks(Duration::from_millis(10)), 10);
        assert_eq!(ticks(Duration::from_micros(10_001)), 11);
        assert_eq!(ticks(Duration::from_secs(2) + Duration::from_nanos(1)), 2001);
        assert_eq!(ticks(Duration::from_secs(365 * 24 * 3600)), MAX_TICKS);
        assert_eq!(ticks(Duration::MAX), MAX_TICKS);
    }
}
