//! Logging into the host's log. Lines are tagged with the plugin's name by the host.

use crate::bindings::gamefeature::plugin::log::{log, Level};

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
