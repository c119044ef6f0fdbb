//! A shared, timestamped record of what happened: experience and plugin states, calls into plugins, their
//! logs and what they did to the world.
//!
//! `gfhost run` prints it and writes it as a Chrome trace. Each event sits on a *track* (one per experience,
//! plugin, plugin-in-world and world), which becomes a row in Perfetto.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The severity of a plugin's log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Detail for finding a problem.
    Trace,
    /// Detail for a developer.
    Debug,
    /// What happened.
    Info,
    /// Something unexpected that did not stop anything.
    Warn,
    /// Something failed.
    Error,
}

/// What kind of thing an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A state was entered; it lasts until the track's next `State` event.
    State,
    /// A call into a plugin and its outcome.
    Call,
    /// A line a plugin logged.
    Log(LogLevel),
    /// A change to the world's actors.
    World,
    /// Compiling or reading a component.
    Load,
    /// Something failed; the text says what and why.
    Failure,
    /// Anything else worth seeing.
    Note,
    /// A plugin's supervised restart (see `supervision`), or its being left out for good: on its instance's
    /// track, recorded beside what plugins say, so a replay compares them.
    Restart,
}

/// One timestamped event.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    /// Time since the timeline started.
    pub at: Duration,
    /// The track it is on (see [`track`]).
    pub track: String,
    /// What kind of event it is.
    pub kind: EventKind,
    /// What happened, as shown.
    pub text: String,
    /// How long the call it records took, for calls into plugins.
    pub took: Option<Duration>,
}

/// Names a recorded event, to add what is known only later (a call's duration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId(u64);

/// The calls one plugin instance made (as the timeline recorded them) and the time they took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginTime {
    /// The instance's track, `plugin@world`.
    pub track: String,
    /// Calls made.
    pub calls: u32,
    /// Their time in all.
    pub total: Duration,
    /// The slowest one's time.
    pub slowest: Duration,
    /// The text of its slowest call (the hook and its batch size).
    pub slowest_call: String,
}

/// A duration as people read one: microseconds below a millisecond, milliseconds below a second.
pub fn shown_duration(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s < 1e-3 => format!("{:.1} us", s * 1e6),
        s if s < 1.0 => format!("{:.3} ms", s * 1e3),
        s => format!("{s:.3} s"),
    }
}

struct Inner {
    start: Instant,
    events: VecDeque<TimelineEvent>,
    // Keep at most this many events, dropping the oldest: a long-running server's timeline stays bounded.
    retention: Option<usize>,
    // The bytes of text the events hold, kept under [`MAX_TEXT_BYTES`] the same way: plugins' log lines are
    // text the host keeps for them.
    text_bytes: usize,
    // Events ever recorded: the newest kept event is number `recorded - 1`.
    recorded: u64,
}

/// The most text a timeline keeps, whatever its event retention: the oldest events go first.
pub const MAX_TEXT_BYTES: usize = 64 << 20;

impl Inner {
    fn push(&mut self, event: TimelineEvent) -> EventId {
        self.text_bytes += event.track.len() + event.text.len();
        self.events.push_back(event);
        self.recorded += 1;
        while self.over() {
            self.drop_oldest();
        }
        EventId(self.recorded - 1)
    }

    fn drop_oldest(&mut self) {
        if let Some(event) = self.events.pop_front() {
            self.text_bytes -= event.track.len() + event.text.len();
        }
    }

    fn over(&self) -> bool {
        self.retention.is_some_and(|keep| self.events.len() > keep) || self.text_bytes > MAX_TEXT_BYTES
    }
}

/// Events a timeline keeps by default: enough for a session's story, bounded for a server that runs for days.
pub const DEFAULT_RETENTION: usize = 100_000;

/// A timeline shared by everything that records into it. Cloning shares it.
#[derive(Clone)]
pub struct Timeline {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline").field("events", &self.lock().events.len()).finish()
    }
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new()
    }
}

impl Timeline {
    /// An empty timeline starting now, keeping the newest [`DEFAULT_RETENTION`] events.
    pub fn new() -> Self {
        let inner = Inner {
            start: Instant::now(),
            events: VecDeque::new(),
            retention: Some(DEFAULT_RETENTION),
            text_bytes: 0,
            recorded: 0,
        };
        Timeline { inner: Arc::new(Mutex::new(inner)) }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while recording cannot leave the list half-written, so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an event now.
    pub fn record(&self, track: impl Into<String>, kind: EventKind, text: impl Into<String>) -> EventId {
        let mut inner = self.lock();
        let at = inner.start.elapsed();
        inner.push(TimelineEvent { at, track: track.into(), kind, text: text.into(), took: None })
    }

    /// Records a call that has just finished: the event is placed when the call started, `took` ago.
    pub fn record_finished(&self, track: impl Into<String>, kind: EventKind, text: impl Into<String>, took: Duration) {
        let mut inner = self.lock();
        let at = inner.start.elapsed().saturating_sub(took);
        inner.push(TimelineEvent { at, track: track.into(), kind, text: text.into(), took: Some(took) });
    }

    /// Records how long the call an event records took (nothing when the event is no longer kept).
    pub fn set_duration(&self, id: EventId, took: Duration) {
        let mut inner = self.lock();
        let first_kept = inner.recorded - inner.events.len() as u64;
        if let Some(index) = id.0.checked_sub(first_kept) {
            if let Some(event) = inner.events.get_mut(index as usize) {
                event.took = Some(took);
            }
        }
    }

    /// Keeps only the newest `events` events from now on (`None`: keep everything).
    pub fn set_retention(&self, events: Option<usize>) {
        let mut inner = self.lock();
        inner.retention = events;
        while inner.over() {
            inner.drop_oldest();
        }
    }

    /// Every event kept, in the order recorded.
    pub fn events(&self) -> Vec<TimelineEvent> {
        self.lock().events.iter().cloned().collect()
    }

    /// The events recorded from number `from` on (0: the first ever) that are still kept, and the number the
    /// next event will get: a console follows a timeline by asking again from there.
    pub fn events_since(&self, from: u64) -> (Vec<TimelineEvent>, u64) {
        let inner = self.lock();
        let first_kept = inner.recorded - inner.events.len() as u64;
        let skip = usize::try_from(from.saturating_sub(first_kept)).unwrap_or(usize::MAX);
        (inner.events.iter().skip(skip).cloned().collect(), inner.recorded)
    }

    /// The texts of one track's events of one kind, in order: what tests compare.
    pub fn texts(&self, track: &str, kind: EventKind) -> Vec<String> {
        self.lock().events.iter().filter(|e| e.track == track && e.kind == kind).map(|e| e.text.clone()).collect()
    }

    /// A readable rendering, one event per line: time, track, text.
    pub fn render_text(&self) -> String {
        self.render_tracks(|_| true)
    }

    /// The rendering of one world's tracks only (those named `…@world`).
    pub fn render_world_text(&self, world: &str) -> String {
        self.render_tracks(|track| world_of(track) == Some(world))
    }

    /// The rendering of the process-wide tracks (the plugins' states), which belong to no world.
    pub fn render_process_text(&self) -> String {
        self.render_tracks(|track| world_of(track).is_none())
    }

    fn render_tracks(&self, shown: impl Fn(&str) -> bool) -> String {
        let inner = self.lock();
        let mut events: Vec<&TimelineEvent> = inner.events.iter().filter(|e| shown(&e.track)).collect();
        // A call is recorded when it ends but placed when it started: in time order it comes before what the
        // plugin logged during it.
        events.sort_by_key(|e| e.at);
        // Tracks longer than this overflow their column rather than widen every line (or overflow `format!`).
        let width = events.iter().map(|e| e.track.len()).max().unwrap_or(0).min(80);
        let mut out = String::new();
        for e in events {
            let marker = match e.kind {
                EventKind::State => "=>",
                EventKind::Call => "->",
                EventKind::Log(LogLevel::Warn) => "!!",
                EventKind::Log(LogLevel::Error) | EventKind::Failure => "XX",
                EventKind::Log(_) => "  ",
                EventKind::World => " +",
                EventKind::Load => " ~",
                EventKind::Note => " *",
                EventKind::Restart => "<>",
            };
            let at = e.at.as_secs_f64() * 1000.0;
            match e.took {
                Some(took) => {
                    let took = shown_duration(took);
                    let _ = writeln!(out, "{at:>10.3} ms  {:<width$}  {marker} {}  [{took}]", e.track, e.text);
                }
                None => {
                    let _ = writeln!(out, "{at:>10.3} ms  {:<width$}  {marker} {}", e.track, e.text);
                }
            }
        }
        out
    }

    /// The time each plugin instance (each `plugin@world` track) spent in the calls the timeline recorded, most
    /// first: where a frame's or a load's time went, plugin by plugin.
    pub fn time_in_plugins(&self) -> Vec<PluginTime> {
        let inner = self.lock();
        let mut by_track: Vec<PluginTime> = Vec::new();
        let mut index_of: HashMap<&str, usize> = HashMap::new();
        for e in inner.events.iter().filter(|e| e.kind == EventKind::Call) {
            let Some(took) = e.took else { continue };
            let index = *index_of.entry(e.track.as_str()).or_insert_with(|| {
                by_track.push(PluginTime { track: e.track.clone(), ..PluginTime::default() });
                by_track.len() - 1
            });
            let time = &mut by_track[index];
            time.calls += 1;
            time.total += took;
            if took >= time.slowest {
                (time.slowest, time.slowest_call) = (took, e.text.clone());
            }
        }
        by_track.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.track.cmp(&b.track)));
        by_track
    }

    /// [`time_in_plugins`](Self::time_in_plugins) as a table, one plugin instance per line.
    pub fn render_time_in_plugins(&self) -> String {
        let times = self.time_in_plugins();
        let width = times.iter().map(|t| t.track.len()).max().unwrap_or(0).min(80);
        let mut out = String::new();
        for t in &times {
            let mean = t.total / t.calls.max(1);
            let _ = writeln!(
                out,
                "  {:<width$}  {:>6} calls  {:>10} in all  {:>10} each  slowest {}: {}",
                t.track,
                t.calls,
                shown_duration(t.total),
                shown_duration(mean),
                shown_duration(t.slowest),
                t.slowest_call
            );
        }
        out
    }

    /// The timeline in Chrome's Trace Event Format, which Perfetto and chrome://tracing open: one process per
    /// world (a server and its clients side by side), one for the tracks of no world. States become complete
    /// events spanning until the track's next state; calls with a duration become slices as long as the call;
    /// everything else becomes an instant event.
    pub fn to_chrome_trace(&self) -> Value {
        let inner = self.lock();
        let end = inner.events.back().map(|e| e.at).unwrap_or_default();
        let mut tids: HashMap<&str, (usize, usize)> = HashMap::new();
        let mut pids: HashMap<Option<&str>, usize> = HashMap::new();
        let mut trace = Vec::new();
        for (index, e) in inner.events.iter().enumerate() {
            let world = world_of(&e.track);
            let next_pid = pids.len() + 1;
            let pid = *pids.entry(world).or_insert_with(|| {
                let name = world.map_or("process".to_string(), |w| format!("world {w}"));
                trace.push(json!({ "name": "process_name", "ph": "M", "pid": next_pid, "args": { "name": name } }));
                next_pid
            });
            let next = tids.len() + 1;
            let (pid, tid) = *tids.entry(e.track.as_str()).or_insert_with(|| {
                trace.push(json!({
                    "name": "thread_name", "ph": "M", "pid": pid, "tid": next,
                    "args": { "name": e.track },
                }));
                (pid, next)
            });
            let ts = micros(e.at);
            match e.kind {
                EventKind::State => {
                    let until = inner
                        .events
                        .range(index + 1..)
                        .find(|later| later.track == e.track && later.kind == EventKind::State)
                        .map_or(end, |later| later.at);
                    trace.push(json!({
                        "name": e.text, "cat": "state", "ph": "X", "pid": pid, "tid": tid,
                        "ts": ts, "dur": micros(until.saturating_sub(e.at)),
                    }));
                }
                // A call with its duration is a slice, so a slow hook stands out by its width.
                kind => trace.push(match e.took {
                    Some(took) => json!({
                        "name": e.text, "cat": category(kind), "ph": "X", "pid": pid, "tid": tid, "ts": ts,
                        "dur": micros(took),
                    }),
                    None => json!({
                        "name": e.text, "cat": category(kind), "ph": "i", "s": "t", "pid": pid, "tid": tid, "ts": ts,
                    }),
                }),
            }
        }
        json!({ "traceEvents": trace, "displayTimeUnit": "ms" })
    }
}

/// The world a track belongs to: the part after its `@`, if any.
fn world_of(track: &str) -> Option<&str> {
    track.rsplit_once('@').map(|(_, world)| world)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn category(kind: EventKind) -> &'static str {
    match kind {
        EventKind::State => "state",
        EventKind::Call => "call",
        EventKind::Log(_) => "log",
        EventKind::World => "world",
        EventKind::Load => "load",
        EventKind::Failure => "failure",
        EventKind::Note => "note",
        EventKind::Restart => "restart",
    }
}

/// Track names, so every recorder spells them the same way.
pub mod track {
    /// A world's experience: `experience@<world>`.
    pub fn experience(world: &str) -> String {
        format!("experience@{world}")
    }
    /// A plugin's process-wide states: `plugin:<name>`.
    pub fn plugin(name: &str) -> String {
        format!("plugin:{name}")
    }
    /// A plugin's instance in a world: `plugin:<plugin>@<world>`.
    pub fn instance(plugin: &str, world: &str) -> String {
        format!("plugin:{plugin}@{world}")
    }
    /// What happens to a world's actors: `world@<world>`.
    pub fn world(world: &str) -> String {
        format!("world@{world}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_bounded_and_a_giant_track_name_does_not_break_the_rendering() {
        let timeline = Timeline::new();
        let line = "x".repeat(4096);
        for _ in 0..(MAX_TEXT_BYTES / 4096 + 100) {
            timeline.record("plugin:flooder@w", EventKind::Log(LogLevel::Info), line.clone());
        }
        let kept: usize = timeline.events().iter().map(|e| e.track.len() + e.text.len()).sum();
        assert!(kept <= MAX_TEXT_BYTES, "{kept}");
        let timeline = Timeline::new();
        timeline.record("t".repeat(70_000), EventKind::Note, "a note");
        assert!(timeline.render_text().contains("a note"));
    }

    #[test]
    fn retention_keeps_the_newest_events() {
        let t = Timeline::new();
        for i in 0..5 {
            t.record("a", EventKind::Note, i.to_string());
        }
        t.set_retention(Some(3));
        t.record("a", EventKind::Note, "5");
        assert_eq!(t.texts("a", EventKind::Note), ["3", "4", "5"]);
    }

    #[test]
    fn calls_carry_their_duration_and_start_where_the_call_started() {
        let t = Timeline::new();
        std::thread::sleep(Duration::from_millis(5));
        let batch = t.record("p", EventKind::Call, "handle-extension-events (2)");
        t.set_duration(batch, Duration::from_micros(300));
        t.record("p", EventKind::Log(LogLevel::Info), "said during the next call");
        t.record_finished("p", EventKind::Call, "on-activating ok", Duration::from_millis(2));
        let events = t.events();
        assert_eq!(events[0].took, Some(Duration::from_micros(300)));
        assert_eq!(events[2].took, Some(Duration::from_millis(2)));
        assert!(events[2].at < events[1].at, "placed when it started, before what it logged");
        let text = t.render_text();
        let position = |needle: &str| text.find(needle).unwrap();
        assert!(position("on-activating ok") < position("said during the next call"), "{text}");
        assert!(text.contains("-> handle-extension-events (2)  [300.0 us]"), "{text}");
        assert!(text.contains("-> on-activating ok  [2.000 ms]"), "{text}");
        let times = t.time_in_plugins();
        let expected = PluginTime {
            track: "p".into(),
            calls: 2,
            total: Duration::from_micros(2300),
            slowest: Duration::from_millis(2),
            slowest_call: "on-activating ok".into(),
        };
        assert_eq!(times, [expected]);
        let table = t.render_time_in_plugins();
        assert!(table.contains("2 calls") && table.contains("2.300 ms in all"), "{table}");
        let trace = t.to_chrome_trace();
        let slices: Vec<_> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| (e["name"].as_str().unwrap().to_string(), e["dur"].as_f64().unwrap()))
            .collect();
        assert_eq!(
            slices,
            [("handle-extension-events (2)".to_string(), 300.0), ("on-activating ok".to_string(), 2000.0)]
        );
    }

    #[test]
    fn chrome_trace_has_an_event_per_state_and_names_tracks() {
        let t = Timeline::new();
        t.record("a", EventKind::State, "One");
        t.record("b", EventKind::Note, "hello");
        t.record("a", EventKind::State, "Two");
        let trace = t.to_chrome_trace();
        let events = trace["traceEvents"].as_array().unwrap();
        let states: Vec<_> =
            events.iter().filter(|e| e["cat"] == "state").map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(states, ["One", "Two"]);
        let names: Vec<_> =
            events.iter().filter(|e| e["name"] == "thread_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(t.texts("a", EventKind::State), ["One", "Two"]);
    }

    #[test]
    fn each_world_is_a_process_of_the_trace_and_renders_on_its_own() {
        let t = Timeline::new();
        t.record(track::plugin("p"), EventKind::State, "Active");
        t.record(track::experience("server"), EventKind::State, "Loaded");
        t.record(track::instance("p", "client-1"), EventKind::Note, "hello");
        t.record(track::experience("client-1"), EventKind::State, "Loaded");
        let trace = t.to_chrome_trace();
        let events = trace["traceEvents"].as_array().unwrap();
        let processes: Vec<_> = events
            .iter()
            .filter(|e| e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(processes, ["process", "world server", "world client-1"]);
        let pid_of = |track: &str| {
            events.iter().find(|e| e["name"] == "thread_name" && e["args"]["name"] == track).unwrap()["pid"].clone()
        };
        assert_eq!(pid_of("plugin:p@client-1"), pid_of("experience@client-1"));
        assert_ne!(pid_of("experience@server"), pid_of("experience@client-1"));
        let client = t.render_world_text("client-1");
        assert!(client.contains("hello") && !client.contains("server") && !client.contains("Active"), "{client}");
        assert!(t.render_process_text().contains("Active"));
    }
}
