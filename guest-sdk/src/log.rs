//! Logging into the host's log. Lines are tagged with the plugin's name by the host.

use std::cell::Cell;

pub use crate::bindings::gamefeature::plugin::log::Level;
use crate::bindings::gamefeature::plugin::log::{enabled as host_enabled, log};

thread_local! {
    // The host's answer per level, asked once per instance: trace, debug, info, warn, error.
    static ENABLED: [Cell<Option<bool>>; 5] = const { [const { Cell::new(None) }; 5] };
}

/// Whether the host keeps lines at `level`. Check it before formatting an expensive line.
pub fn enabled(level: Level) -> bool {
    ENABLED.with(|cache| {
        let slot = &cache[level as usize];
        slot.get().unwrap_or_else(|| {
            let answer = host_enabled(level);
            slot.set(Some(answer));
            answer
        })
    })
}

/// Logs at trace level.
pub fn trace(message: &str) {
    log(Level::Trace, message)
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(Level::Debug, message)
}

/// Logs at info level.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message)
}

/// Logs at error level.
pub fn error(message: &str) {
    log(Level::Error, message)
}
