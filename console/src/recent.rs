//! What the console remembers between snapshots, in rings of fixed size: each plugin's CPU in the last frames
//! (the sparkline), its calls, quarantines and restarts with their reasons, the latest calls into plugins, and
//! the log. Fed each frame from the frame's spend (a few map updates) and, at each snapshot, from the
//! timeline's events since the last one.

use std::collections::{BTreeMap, VecDeque};

use gamefeature_host::timeline::{EventKind, LogLevel, Timeline};

use crate::snapshot::{CallView, LogLine};

/// Frames of CPU history kept per plugin.
pub const CPU_FRAMES: usize = 90;
/// Calls into plugins kept for the strip.
pub const CALLS_KEPT: usize = 120;
/// Log lines kept.
pub const LOG_KEPT: usize = 200;
/// Incidents (failures, restarts) kept per plugin.
pub const INCIDENTS_KEPT: usize = 5;
/// Bytes of a log line or call kept: a plugin's text is data, shown whole up to here, its control characters
/// escaped (a `\n` in it never starts a line of its own).
pub const MAX_LINE: usize = 300;

/// Timeline events read at most at once: a console that starts watching a long-running world reads its recent
/// past, not the whole retained timeline, on the frame thread.
pub const EVENTS_READ: u64 = 2_000;

/// One plugin's recent history.
#[derive(Debug, Default)]
pub struct PluginRecord {
    pub cpu_us: VecDeque<u32>,
    pub calls: u64,
    pub quarantines: u64,
    pub restarts: u64,
    pub incidents: VecDeque<String>,
}

/// The console's memory (see the module's documentation).
#[derive(Debug, Default)]
pub struct Recent {
    pub plugins: BTreeMap<String, PluginRecord>,
    pub calls: VecDeque<CallView>,
    pub log: VecDeque<LogLine>,
    next_event: u64,
}

impl Recent {
    /// One frame's spend: what each plugin's code cost and how many calls it took. A plugin that did not run
    /// in the frame cost nothing in it.
    pub fn frame<'a>(&mut self, spend: impl Iterator<Item = (&'a str, std::time::Duration, u32)>) {
        let mut spent: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
        for (plugin, cpu, calls) in spend {
            let micros = u32::try_from(cpu.as_micros()).unwrap_or(u32::MAX);
            spent.insert(plugin, (micros, calls));
            if !self.plugins.contains_key(plugin) {
                self.plugins.insert(plugin.to_string(), PluginRecord::default());
            }
        }
        for (plugin, record) in &mut self.plugins {
            let (micros, calls) = spent.get(plugin.as_str()).copied().unwrap_or((0, 0));
            push_bounded(&mut record.cpu_us, micros, CPU_FRAMES);
            record.calls += u64::from(calls);
        }
    }

    /// A line for the log strip (what the program around the world printed: joins, reloads, actions).
    pub fn log(&mut self, at_ms: u64, text: &str) {
        push_bounded(&mut self.log, LogLine { at_ms, text: cut(text) }, LOG_KEPT);
    }

    /// Reads the timeline's events since the last call (its last [`EVENTS_READ`] at most), at `now_ms` on the
    /// console's clock: calls for the strip (at the timeline's own times), plugins' log lines at info and above,
    /// and their failures and restarts (a failure that quarantined counts as a quarantine).
    pub fn read_timeline(&mut self, timeline: &Timeline, now_ms: u64) {
        let (_, end) = timeline.events_since(u64::MAX);
        let (events, next) = timeline.events_since(self.next_event.max(end.saturating_sub(EVENTS_READ)));
        self.next_event = next;
        for event in events {
            let at_ms = u64::try_from(event.at.as_millis()).unwrap_or(u64::MAX);
            let plugin = event.track.strip_prefix("plugin:").map(|p| p.split('@').next().unwrap_or(p));
            match (event.kind, plugin) {
                (EventKind::Call, Some(_)) => {
                    let took_us = event.took.map(|t| u64::try_from(t.as_micros()).unwrap_or(u64::MAX));
                    let call = CallView { at_ms, track: cut(&event.track), text: cut(&event.text), took_us };
                    push_bounded(&mut self.calls, call, CALLS_KEPT);
                }
                (EventKind::Log(level), Some(plugin)) if level >= LogLevel::Info => {
                    self.log(now_ms, &format!("[{plugin}] {}", event.text));
                }
                (EventKind::Failure | EventKind::Restart, Some(plugin)) => {
                    let record = self.plugins.entry(plugin.to_string()).or_default();
                    match event.kind {
                        EventKind::Restart => record.restarts += 1,
                        _ if event.text.starts_with("quarantined") => record.quarantines += 1,
                        _ => {}
                    }
                    push_bounded(&mut record.incidents, cut(&event.text), INCIDENTS_KEPT);
                    self.log(now_ms, &format!("[{plugin}] {}", event.text));
                }
                (EventKind::Failure, None) => self.log(now_ms, &format!("[{}] {}", event.track, event.text)),
                _ => {}
            }
        }
    }
}

fn push_bounded<T>(ring: &mut VecDeque<T>, item: T, keep: usize) {
    if ring.len() == keep {
        ring.pop_front();
    }
    ring.push_back(item);
}

/// A line as shown: control characters escaped, cut at [`MAX_LINE`] bytes.
fn cut(text: &str) -> String {
    gamefeature_host::text::shown(text, MAX_LINE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_plugin_that_did_not_run_in_a_frame_cost_nothing_in_it_and_history_is_bounded() {
        let mut recent = Recent::default();
        recent.frame([("hud", Duration::from_micros(40), 2)].into_iter());
        recent.frame(std::iter::empty());
        assert_eq!(recent.plugins["hud"].cpu_us, [40, 0]);
        assert_eq!(recent.plugins["hud"].calls, 2);
        for _ in 0..CPU_FRAMES * 2 {
            recent.frame([("hud", Duration::from_micros(7), 1)].into_iter());
        }
        assert_eq!(recent.plugins["hud"].cpu_us.len(), CPU_FRAMES);
        assert!(recent.plugins["hud"].cpu_us.iter().all(|&us| us == 7));
    }

    #[test]
    fn the_timeline_feeds_calls_logs_quarantines_and_restarts() {
        let timeline = Timeline::new();
        timeline.record_finished("plugin:hud@main", EventKind::Call, "on-tick (1)", Duration::from_micros(12));
        timeline.record("plugin:hud@main", EventKind::Log(LogLevel::Info), "hello");
        timeline.record("plugin:hud@main", EventKind::Log(LogLevel::Debug), "chatter");
        timeline.record("plugin:hud@main", EventKind::Failure, "quarantined: on-tick trapped");
        timeline.record("plugin:hud@main", EventKind::Restart, "restarted after 1 s");
        let mut recent = Recent::default();
        recent.read_timeline(&timeline, 0);
        assert_eq!(recent.calls.len(), 1);
        assert_eq!(recent.calls[0].took_us, Some(12));
        let log: Vec<&str> = recent.log.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(log, ["[hud] hello", "[hud] quarantined: on-tick trapped", "[hud] restarted after 1 s"]);
        let hud = &recent.plugins["hud"];
        assert_eq!((hud.quarantines, hud.restarts, hud.incidents.len()), (1, 1, 2));
        recent.read_timeline(&timeline, 0);
        assert_eq!(recent.calls.len(), 1, "events are read once");
    }

    #[test]
    fn long_lines_are_cut_and_the_log_is_bounded() {
        let mut recent = Recent::default();
        for i in 0..LOG_KEPT + 5 {
            recent.log(i as u64, &"x".repeat(MAX_LINE * 2));
        }
        assert_eq!(recent.log.len(), LOG_KEPT);
        assert_eq!(recent.log.front().unwrap().at_ms, 5);
        assert!(recent.log[0].text.len() <= MAX_LINE + " [cut]".len());
        recent.log(0, "one line\nconsole: forged");
        assert_eq!(recent.log.back().unwrap().text, "one line\\nconsole: forged", "a newline is shown, not followed");
    }
}
