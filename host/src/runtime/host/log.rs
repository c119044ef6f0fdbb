//! `gamefeature:plugin/log`: plugin log lines into `tracing` and the timeline, tagged with the plugin.

use crate::runtime::bindings::gamefeature::plugin::log::{Host, Level};
use crate::runtime::plugin_log::record_line;
use crate::runtime::state::InstanceState;
use crate::timeline::LogLevel;

fn level_of(level: Level) -> LogLevel {
    match level {
        Level::Trace => LogLevel::Trace,
        Level::Debug => LogLevel::Debug,
        Level::Info => LogLevel::Info,
        Level::Warn => LogLevel::Warn,
        Level::Error => LogLevel::Error,
    }
}

impl Host for InstanceState {
    fn enabled(&mut self, level: Level) -> bool {
        level_of(level) >= self.env.log_level
    }

    fn log(&mut self, level: Level, message: String) {
        record_line(&self.env, &self.log_budget, level_of(level), message);
    }
}
