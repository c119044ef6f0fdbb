//! Recording one world as it plays: what its game loop does to it (frames, commands, reloads), which
//! components it runs, and a checkpoint of its state every few frames.
//!
//! The loop that drives the world calls [`WorldRecording`] at each step; the world's plugins read their clocks
//! and random numbers through its [`tape`](WorldRecording::tape), and a networked world's transport is wrapped
//! in a recording one (see [`crate::replay::transport`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::world_state::StateTracker;
use crate::experience::ExperienceManager;
use crate::recording::{Record, Recorder, RecordingError, SessionInfo, Tape};

/// Frames between two checkpoints by default: two a second at 60 Hz.
pub const DEFAULT_CHECKPOINT_EVERY: u32 = 30;

/// One world being recorded.
pub struct WorldRecording {
    recorder: Arc<Recorder>,
    tape: Arc<Tape>,
    /// The state at the last checkpoint: the next one records what changed since.
    state: StateTracker,
    frames: u64,
    every: u64,
    /// Each playing plugin's component as last recorded: its version and component file.
    components: BTreeMap<String, (String, std::path::PathBuf)>,
    /// The world's timeline events recorded so far: what plugins said since is recorded at the next checkpoint.
    said_from: u64,
}

/// What the plugins of `world` said in `events` (lines at info and above, which every session keeps): each
/// plugin's name and its line as `level: text`, in order.
pub(crate) fn said_in(events: &[crate::timeline::TimelineEvent], world: &str) -> Vec<(String, String)> {
    let suffix = format!("@{world}");
    events
        .iter()
        .filter_map(|event| match event.kind {
            crate::timeline::EventKind::Log(level) if level >= crate::timeline::LogLevel::Info => {
                let plugin = event.track.strip_prefix("plugin:")?.strip_suffix(suffix.as_str())?;
                Some((plugin.to_string(), format!("{}: {}", format!("{level:?}").to_lowercase(), event.text)))
            }
            // What the host did to it: a restart is part of what people see.
            crate::timeline::EventKind::Restart => {
                let plugin = event.track.strip_prefix("plugin:")?.strip_suffix(suffix.as_str())?;
                Some((plugin.to_string(), format!("restart: {}", event.text)))
            }
            _ => None,
        })
        .collect()
}

/// What a recorded world is, for a replay to set it up again.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// Which side of a game the world is.
    pub role: crate::recording::Role,
    /// The experience file it loads (a server's or a standalone world's).
    pub experience: Option<&'a Path>,
    /// For a client: the folder of its own experience files.
    pub experiences_dir: Option<&'a Path>,
    /// For a client that fetches its server's plugins: its fetch policy and the folder it keeps them in.
    pub mods: Option<(&'a str, &'a Path)>,
    /// The world's name.
    pub world: &'a str,
    /// Its net mode.
    pub net_mode: crate::world::NetMode,
    /// Frames per second it is meant to run at.
    pub tick_rate: u32,
}

impl WorldRecording {
    /// Starts recording the world of `manager` (before its experience loads) into `path`: what the world is
    /// and how `options` set the session up, then everything its game loop does; its plugins read their clocks
    /// and random numbers through the recording from now on.
    pub fn start(
        path: &Path,
        recorded: Recorded<'_>,
        options: &crate::SessionOptions,
        manager: &mut ExperienceManager,
    ) -> Result<WorldRecording, RecordingError> {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string();
        let chaos = options.manager.chaos.map(|c| (c.min_secs, c.random_secs, c.seed));
        let session = SessionInfo {
            host_version: env!("CARGO_PKG_VERSION").to_string(),
            role: recorded.role,
            experience: recorded.experience.map(absolute).unwrap_or_default(),
            experience_digest: recorded.experience.map(file_digest),
            plugin_dirs: options.plugin_dirs.iter().map(|d| absolute(d)).collect(),
            experiences_dir: recorded.experiences_dir.map(absolute),
            mods: recorded.mods.map(|(policy, dir)| (policy.to_string(), absolute(dir))),
            world: recorded.world.to_string(),
            net_mode: recorded.net_mode.to_string(),
            chaos,
            tick_rate: recorded.tick_rate,
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
            seed: WorldRecording::new_seed(),
            started_unix: crate::net::ticket::unix_now(),
        };
        let recording = WorldRecording::create(path, session)?;
        manager.set_tape(recording.tape());
        Ok(recording)
    }

    /// Starts recording into the file at `path`.
    pub fn create(path: &Path, session: SessionInfo) -> Result<WorldRecording, RecordingError> {
        let (seed, every) = (session.seed, session.checkpoint_every);
        Ok(WorldRecording::with_recorder(Recorder::create(path, session)?, seed, every))
    }

    /// Starts recording into `recorder`, which has written the session's record.
    pub fn with_recorder(recorder: Arc<Recorder>, seed: [u8; 32], checkpoint_every: u32) -> WorldRecording {
        WorldRecording {
            tape: Tape::recording(recorder.clone(), seed),
            recorder,
            state: StateTracker::default(),
            frames: 0,
            every: u64::from(checkpoint_every.max(1)),
            components: BTreeMap::new(),
            said_from: 0,
        }
    }

    /// A new seed for a session's random numbers, from the system's generator.
    pub fn new_seed() -> [u8; 32] {
        rand::random()
    }

    /// Where the world's plugins read their clocks and random numbers: hand it to the world's manager
    /// ([`ExperienceManager::set_tape`]) before it loads.
    pub fn tape(&self) -> Arc<Tape> {
        self.tape.clone()
    }

    /// The recorder, for a transport to record into.
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.recorder
    }

    /// A frame of `delta` game time is about to be played.
    pub fn frame(&mut self, delta: Duration) {
        self.recorder.write(&Record::Frame { delta_nanos: delta.as_nanos() as u64 });
    }

    /// The frame is over: every few frames, the components now playing are recorded if they changed, a
    /// checkpoint is written and everything is put on disk (so a session cut short loses at most the frames
    /// since the last checkpoint).
    pub fn frame_done(&mut self, manager: &ExperienceManager) {
        self.frames += 1;
        if self.frames.is_multiple_of(self.every) {
            self.checkpoint(manager);
        }
    }

    /// A command is about to be carried out between frames.
    pub fn command(&mut self, line: &str) {
        self.recorder.write(&Record::Command(line.to_string()));
    }

    /// Anything else the loop does to the world between frames (a reload, a flush, the end of play).
    pub fn note(&mut self, record: Record) {
        self.recorder.write(&record);
    }

    /// The world's state now, as a checkpoint; also records the components playing if they changed.
    pub fn checkpoint(&mut self, manager: &ExperienceManager) {
        self.components(manager);
        let (events, next) = manager.timeline().events_since(self.said_from);
        self.said_from = next;
        for (plugin, line) in said_in(&events, manager.world_name()) {
            self.recorder.write(&Record::Said { plugin, line });
        }
        let checkpoint = self.state.checkpoint(self.frames, manager);
        self.recorder.write(&Record::Checkpoint(checkpoint));
        self.recorder.flush();
    }

    /// Ends the recording with a last checkpoint (of `manager`'s world, when it is still there); returns the
    /// recording's size in bytes, or why recording stopped early.
    pub fn finish(mut self, manager: Option<&ExperienceManager>) -> Result<u64, crate::Error> {
        if let Some(manager) = manager {
            self.checkpoint(manager);
        }
        self.recorder.finish()
    }

    /// Frames recorded so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Records each playing plugin's component whose version or file changed since it was last recorded.
    fn components(&mut self, manager: &ExperienceManager) {
        for plugin in manager.live_features() {
            let Some(manifest) = manager.features().manifest(&plugin) else { continue };
            let known = self.components.get(&plugin);
            if known.is_some_and(|(version, path)| *version == manifest.version && *path == manifest.component_path) {
                continue;
            }
            let digest = file_digest(&manifest.component_path);
            self.recorder.write(&Record::Component {
                plugin: plugin.clone(),
                version: manifest.version.clone(),
                digest,
            });
            self.components.insert(plugin, (manifest.version.clone(), manifest.component_path.clone()));
        }
    }

    /// The same as [`Record::Reload`] noted, then the new component recorded: a reload keeps the version
    /// (or the file) only when the modder did not bump it, so the digest is taken again.
    pub fn reloaded(&mut self, plugin: &str, manager: &ExperienceManager) {
        self.components.remove(plugin);
        self.components(manager);
    }
}

/// The SHA-256 of a file, in hex; what is wrong with it when it cannot be read.
pub fn file_digest(path: &Path) -> String {
    use sha2::Digest;
    match std::fs::read(path) {
        Ok(bytes) => sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect(),
        Err(e) => format!("unreadable: {e}"),
    }
}
