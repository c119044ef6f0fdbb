//! What plugins write — through the log interface, or to standard output and error — into `tracing` and the
//! timeline, tagged with the plugin, within a per-call budget of lines.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::feature::InstanceEnv;
use crate::timeline::{track, EventKind, LogLevel};

/// Longer lines are cut: a log line is for people, and a plugin must not fill the host's memory through it.
pub(crate) const MAX_LINE: usize = 4096;

/// Lines one call into a plugin may log (through the log interface, stdout and stderr together), plus one per
/// batch entry; the rest are dropped and counted, so a plugin cannot flood the host's log and timeline.
pub(crate) const MAX_LINES_PER_CALL: u32 = 1000;

/// How many more lines the current call may log, and how many it had dropped. Shared by an instance's log
/// interface and its standard output and error.
#[derive(Debug, Default)]
pub(crate) struct LogBudget {
    left: AtomicU32,
    dropped: AtomicU32,
}

impl LogBudget {
    /// Starts a call allowed `lines` lines.
    pub(crate) fn reset(&self, lines: u32) {
        self.left.store(lines, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Relaxed);
    }

    fn take(&self) -> bool {
        let taken = self.left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1)).is_ok();
        if !taken {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        taken
    }

    /// Lines dropped in the current call.
    pub(crate) fn dropped(&self) -> u32 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Records one line a plugin wrote (through the log interface or its standard output or error) in `tracing`
/// and on the instance's timeline track, unless it is below the plugin's log level or over the call's budget.
/// Control characters are escaped, so a line cannot forge another or drive a terminal.
pub(crate) fn record_line(env: &InstanceEnv, budget: &LogBudget, level: LogLevel, line: String) {
    if level < env.log_level || !budget.take() {
        return;
    }
    line_of_plugin(env, level, crate::text::shown(&line, MAX_LINE));
}

/// Records a line on the instance's track and in `tracing` tagged with the plugin: what the plugin wrote, or
/// what the host says about it (a refused permission, dropped lines), which no budget holds back.
pub(crate) fn line_of_plugin(env: &InstanceEnv, level: LogLevel, line: String) {
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
