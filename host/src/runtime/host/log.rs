//! `gamefeature:plugin/log`: plugin log lines into `tracing` and the timeline, tagged with the plugin.

use crate::feature::InstanceEnv;
use crate::runtime::bindings::gamefeature::plugin::log::{Host, Level};
use crate::runtime::state::InstanceState;
use crate::timeline::{track, EventKind, LogLevel};

/// Longer lines are cut: a log line is for people, and a plugin must not fill the host's memory through it.
pub(crate) const MAX_LINE: usize = 4096;

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
        record_line(&self.env, level_of(level), message);
    }
}

/// Records one line a plugin wrote (through the log interface or its standard output or error) in `tracing`
/// and on the instance's timeline track, unless it is below the plugin's log level.
pub(crate) fn record_line(env: &InstanceEnv, level: LogLevel, mut line: String) {
    if level < env.log_level {
        return;
    }
    if line.len() > MAX_LINE {
        let mut cut = MAX_LINE;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push_str(" [cut]");
    }
    let plugin = &*env.plugin;
    match level {
        LogLevel::Trace => tracing::trace!(plugin, "{line}"),
        LogLevel::Debug => tracing::debug!(plugin, "{line}"),
        LogLevel::Info => tracing::info!(plugin, "{line}"),
        LogLevel::Warn => tracing::warn!(plugin, "{line}"),
        LogLevel::Error => tracing::error!(plugin, "{line}"),
    }
    env.timeline.record(track::instance(plugin, &env.world_name), EventKind::Log(level), line);
}
