//! What plugins read from outside the world — their clocks and random numbers — recorded, and played back.
//!
//! Random numbers are not recorded byte by byte: every instance draws them from generators seeded from the
//! session's seed (recorded once) and the instance's number, so a replay hands each instance the same bytes.
//! Clock readings are recorded as they are read, and a replay hands each instance its readings in order.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::format::{ClockKind, Record};
use super::recorder::Recorder;

/// One world's source of what its plugins read from outside it: recorded as they read it, or played back.
pub struct Tape {
    seed: [u8; 32],
    mode: Mode,
    next_instance: AtomicU32,
}

enum Mode {
    Recording(Arc<Recorder>),
    Replaying(Box<Mutex<Playback>>),
}

#[derive(Default)]
struct Playback {
    readings: HashMap<(u32, ClockKind), VecDeque<u64>>,
    /// Calls a time limit stopped, by instance and call number, with the cause.
    stopped: HashMap<(u32, u64), String>,
    /// Plugins quarantined over their frame budget, by frame number: the plugin and the cause.
    over_budget: HashMap<u64, Vec<(String, String)>>,
    last: HashMap<(u32, ClockKind), u64>,
    beyond: Vec<String>,
}

impl Tape {
    /// A tape that records clock readings into `recorder`; random numbers come from `seed`.
    pub fn recording(recorder: Arc<Recorder>, seed: [u8; 32]) -> Arc<Tape> {
        Arc::new(Tape { seed, mode: Mode::Recording(recorder), next_instance: AtomicU32::new(0) })
    }

    /// A tape that plays back the clock readings of a recording (`records`' [`Record::Clock`]s) and the random
    /// numbers of `seed`.
    pub fn replaying(seed: [u8; 32], records: impl IntoIterator<Item = Record>) -> Arc<Tape> {
        let mut playback = Playback::default();
        for record in records {
            match record {
                Record::Clock { instance, clock, value } => {
                    playback.readings.entry((instance, clock)).or_default().push_back(value);
                }
                Record::Stopped { instance, call, cause } => {
                    playback.stopped.insert((instance, call), cause);
                }
                Record::OverBudget { frame, plugin, cause } => {
                    playback.over_budget.entry(frame).or_default().push((plugin, cause));
                }
                _ => {}
            }
        }
        Arc::new(Tape { seed, mode: Mode::Replaying(Box::new(Mutex::new(playback))), next_instance: AtomicU32::new(0) })
    }

    /// The tape of the next instance the world creates, for the plugin `plugin`.
    pub fn next_instance(self: &Arc<Self>, plugin: &str) -> InstanceTape {
        let instance = self.next_instance.fetch_add(1, Ordering::SeqCst);
        InstanceTape { tape: self.clone(), instance, plugin: plugin.to_string() }
    }

    /// In a recording: `plugin` was quarantined over its frame budget at frame `frame`.
    pub fn record_over_budget(&self, frame: u64, plugin: &str, cause: &str) {
        if let Mode::Recording(recorder) = &self.mode {
            let (plugin, cause) = (plugin.to_string(), cause.to_string());
            recorder.write(&Record::OverBudget { frame, plugin, cause });
        }
    }

    /// In a replay: the plugins the recording quarantined over their frame budget at frame `frame`, with why.
    pub fn over_budget_at(&self, frame: u64) -> Vec<(String, String)> {
        match &self.mode {
            Mode::Replaying(playback) => lock(playback).over_budget.remove(&frame).unwrap_or_default(),
            Mode::Recording(_) => Vec::new(),
        }
    }

    /// In a replay: the instances that read a clock more often than the recording holds (a plugin built anew
    /// may), each said once.
    pub fn beyond_recording(&self) -> Vec<String> {
        match &self.mode {
            Mode::Replaying(playback) => lock(playback).beyond.clone(),
            Mode::Recording(_) => Vec::new(),
        }
    }
}

/// What one instance reads from outside the world.
#[derive(Clone)]
pub struct InstanceTape {
    tape: Arc<Tape>,
    instance: u32,
    plugin: String,
}

impl InstanceTape {
    /// A clock reading: `real` read and recorded, or the recording's next reading for this instance. A replay
    /// that runs out of readings (the plugin reads more often than it did) goes on from the last one, moving
    /// the monotonic clock forward by a nanosecond a reading, and says so once.
    pub fn read_clock(&self, clock: ClockKind, real: impl FnOnce() -> u64) -> u64 {
        match &self.tape.mode {
            Mode::Recording(recorder) => {
                let value = real();
                recorder.write(&Record::Clock { instance: self.instance, clock, value });
                value
            }
            Mode::Replaying(playback) => {
                let mut playback = lock(playback);
                let key = (self.instance, clock);
                let next = playback.readings.get_mut(&key).and_then(VecDeque::pop_front);
                let value = match next {
                    Some(value) => value,
                    None => {
                        let note = format!(
                            "{} (instance {}) read its {clock:?} clock more often than the recording holds",
                            self.plugin, self.instance
                        );
                        if !playback.beyond.contains(&note) {
                            playback.beyond.push(note);
                        }
                        let last = playback.last.get(&key).copied().unwrap_or_default();
                        if clock == ClockKind::Monotonic {
                            // The recording's word: a last reading of u64::MAX stays there.
                            last.saturating_add(1)
                        } else {
                            last
                        }
                    }
                };
                playback.last.insert(key, value);
                value
            }
        }
    }

    /// In a replay: why the recording's call number `call` into this instance was stopped by a time limit, if
    /// it was.
    pub fn stopped_call(&self, call: u64) -> Option<String> {
        match &self.tape.mode {
            Mode::Replaying(playback) => lock(playback).stopped.get(&(self.instance, call)).cloned(),
            Mode::Recording(_) => None,
        }
    }

    /// In a recording: call number `call` into this instance was stopped by a time limit, for `cause`.
    pub fn record_stopped(&self, call: u64, cause: &str) {
        if let Mode::Recording(recorder) = &self.tape.mode {
            recorder.write(&Record::Stopped { instance: self.instance, call, cause: cause.to_string() });
        }
    }

    /// The seed of one of this instance's generators (`purpose` tells them apart): the same in a recording and
    /// its replays, different for every instance and purpose.
    pub fn seed(&self, purpose: &str) -> [u8; 32] {
        let mut hash = Sha256::new();
        hash.update(self.tape.seed);
        hash.update(self.instance.to_le_bytes());
        hash.update(purpose.as_bytes());
        hash.finalize().into()
    }
}

fn lock(playback: &Mutex<Playback>) -> std::sync::MutexGuard<'_, Playback> {
    playback.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::format::{parse, Role, SessionInfo};

    #[test]
    fn a_replay_hands_each_instance_its_own_readings_in_order_and_the_same_seeds() {
        let out = std::sync::Arc::new(Mutex::new(Vec::new()));
        struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Shared {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let session = SessionInfo {
            host_version: String::new(),
            role: Role::Standalone,
            experience: String::new(),
            experience_digest: None,
            plugin_dirs: Vec::new(),
            experiences_dir: None,
            world: "w".into(),
            net_mode: "standalone".into(),
            chaos: None,
            mods: None,
            tick_rate: 60,
            checkpoint_every: 1,
            seed: [3; 32],
            started_unix: 0,
        };
        let recorder = Recorder::to_writer(Box::new(Shared(out.clone())), "memory", session);
        let tape = Tape::recording(recorder.clone(), [3; 32]);
        let (a, b) = (tape.next_instance("a"), tape.next_instance("b"));
        assert_eq!(a.read_clock(ClockKind::Wall, || 10), 10);
        assert_eq!(b.read_clock(ClockKind::Wall, || 20), 20);
        assert_eq!(a.read_clock(ClockKind::Monotonic, || 5), 5);
        assert_eq!(a.read_clock(ClockKind::Wall, || 11), 11);
        assert_ne!(a.seed("secure"), b.seed("secure"));
        assert_ne!(a.seed("secure"), a.seed("insecure"));
        a.record_stopped(3, "exceeded its call deadline (10ms of CPU time)");
        assert_eq!(a.stopped_call(3), None, "a recording stops no call itself");
        recorder.finish().unwrap();

        let recording = parse(&out.lock().unwrap(), "memory").unwrap();
        let replay = Tape::replaying(recording.session.seed, recording.records());
        let (a2, b2) = (replay.next_instance("a"), replay.next_instance("b"));
        let never = || panic!("a replay reads no real clock");
        assert_eq!(b2.read_clock(ClockKind::Wall, never), 20);
        assert_eq!(a2.read_clock(ClockKind::Wall, never), 10);
        assert_eq!(a2.read_clock(ClockKind::Wall, never), 11);
        assert_eq!(a2.read_clock(ClockKind::Monotonic, never), 5);
        assert_eq!(a2.seed("secure"), a.seed("secure"));
        assert_eq!(a2.stopped_call(3).as_deref(), Some("exceeded its call deadline (10ms of CPU time)"));
        assert_eq!(a2.stopped_call(2), None);
        assert_eq!(b2.stopped_call(3), None);
        assert!(replay.beyond_recording().is_empty());
        assert_eq!(a2.read_clock(ClockKind::Monotonic, never), 6, "past the recording, time still goes on");
        assert_eq!(
            replay.beyond_recording(),
            vec!["a (instance 0) read its Monotonic clock more often than the recording holds"]
        );
    }

    /// A recording's last monotonic reading of u64::MAX (the file's word) stays there past the recording.
    #[test]
    fn a_monotonic_clock_at_its_end_stays_there() {
        let records = [Record::Clock { instance: 0, clock: ClockKind::Monotonic, value: u64::MAX }];
        let replay = Tape::replaying([0; 32], records);
        let instance = replay.next_instance("a");
        let never = || panic!("a replay reads no real clock");
        assert_eq!(instance.read_clock(ClockKind::Monotonic, never), u64::MAX);
        assert_eq!(instance.read_clock(ClockKind::Monotonic, never), u64::MAX);
    }
}
