//! Work as time passes: timers fire in the world's frames and reach
//! [`Plugin::on_timer`](crate::Plugin::on_timer).
//!
//! Keep the [`Timer`] (in your plugin struct) for as long as it should run; dropping it stops it. A timer with
//! period zero fires every frame.
//!
//! ```ignore
//! self.regen = Some(timers::every(Duration::from_millis(500), REGEN)?);
//! ```

use std::time::Duration;

pub use crate::bindings::gamefeature::plugin::timers::{now, start_timer, Timer};
pub use crate::bindings::gamefeature::plugin::types::Frame;
use crate::Error;

fn micros(period: Duration) -> u64 {
    u64::try_from(period.as_micros()).unwrap_or(u64::MAX)
}

/// A timer tagged `id` firing every `period` of game time, first one period from now.
pub fn every(period: Duration, id: u32) -> Result<Timer, Error> {
    start_timer(micros(period), true, id)
}

/// A timer tagged `id` firing every frame, from the next one.
pub fn every_frame(id: u32) -> Result<Timer, Error> {
    start_timer(0, true, id)
}

/// A timer tagged `id` firing once, `delay` of game time from now.
pub fn after(delay: Duration, id: u32) -> Result<Timer, Error> {
    start_timer(micros(delay), false, id)
}
