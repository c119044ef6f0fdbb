//! The game loop, owned by the library: a game steps it once a frame, in any net mode, and it does the rest.
//!
//! Unreal's game features live inside the engine's tick; here the host is something a game steps, not a
//! program that owns the game. A [`GameLoop`] holds one world — standalone, a server with its clients, or a
//! client of a server ([`Played`]) — and each [`step`](GameLoop::step) is one frame:
//! 1. between frames, what happened since the last one is applied: new plugin versions that finished compiling
//!    off the frame (asked for with [`reload`](GameLoop::reload), or found by [`watch`](GameLoop::watch)ing the
//!    plugins' folders) replace the old ones, their state kept;
//! 2. the frame: timers, the world's queued work, the network;
//! 3. the frame is recorded, when the loop is.
//!
//! What a program around the world adds — metrics, a fleet's health, pacing frames to real time ([`Pace`]) —
//! reads each [`Step`] and the world; it is not woven into the loop. Play ends with
//! [`end`](GameLoop::end): a server first lets what its clients have not acknowledged reach them, tells them
//! play ended, and closes their connections; a client says goodbye; the recording ends with the world's last
//! state. `gfhost`'s `play`, `server` and `client` are shells over this loop, and so is any game embedding the
//! host (`docs/embedding.md`).

mod pace;
pub mod recording;
pub mod world_state;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use pace::{frame_of, Pace};

use crate::experience::{ExperienceError, ExperienceManager, NewVersion};
use crate::live::{Command, FolderWatcher, LiveWorld};
use crate::net::{ClientError, ClientState, GameClient, GameServer, ServerNote};
use crate::recording::Record;
pub use recording::WorldRecording;

/// How long a server ending play lets what its clients have not acknowledged reach them, the world standing
/// still (a client that acknowledges nothing does not hold it longer).
pub const SETTLE: Duration = Duration::from_secs(2);

/// How long a server ending play waits for its clients to close their connections once told.
pub const GOODBYE: Duration = Duration::from_secs(3);

/// The world a loop runs, in its net mode.
pub enum Played {
    /// A world of its own (standalone, or a listen server's own world before clients).
    Standalone(Box<ExperienceManager>),
    /// A server's world and its clients.
    Server(Box<GameServer>),
    /// A client's world, replicated from its server.
    Client(Box<GameClient>),
}

impl Played {
    /// The world's experience manager.
    pub fn manager(&self) -> &ExperienceManager {
        match self {
            Played::Standalone(manager) => manager,
            Played::Server(server) => server.manager(),
            Played::Client(client) => client.manager(),
        }
    }
}

/// What one step did, for the program around the loop to show or measure.
#[derive(Debug, Default)]
pub struct Step {
    /// New plugin versions applied before the frame (or refused).
    pub reloads: Vec<Reload>,
    /// Files in the watched folders that changed since the last step (settled: quiet for a moment).
    pub changed: Vec<PathBuf>,
    /// Plugins whose new version has been compiling for [`COMPILING_TOLD_AFTER`] now (each told once), for a
    /// console to say that it is.
    pub compiling: Vec<String>,
    /// What a server's frame did to its clients (joined, left, dropped, refused).
    pub notes: Vec<ServerNote>,
    /// For a client: play ended in this frame — the server ended it (its reason) or the connection failed.
    pub ended: Option<Result<String, ClientError>>,
    /// The frame's wall-clock time (reloads before it not included).
    pub took: Duration,
}

/// A new version of a plugin, applied between frames.
#[derive(Debug)]
pub struct Reload {
    /// The plugin.
    pub plugin: String,
    /// What a console shows (`hud reloaded: 1.0.0 -> 1.0.1`, a server adding `; clients follow`), or why the
    /// new version was refused (the old one plays on).
    pub outcome: Result<String, crate::Error>,
}

/// How play ended, for the program around the loop to report.
pub struct Ended {
    /// The world's experience manager, play ended (its report lists what failed).
    pub manager: ExperienceManager,
    /// How the recording ended; `None` when the loop was not recorded.
    pub recording: Option<RecordingEnd>,
}

/// How a loop's recording ended.
#[derive(Debug)]
pub struct RecordingEnd {
    /// Frames recorded.
    pub frames: u64,
    /// Its size in bytes, or why it stopped early.
    pub size: Result<u64, crate::Error>,
}

/// A new version compiling off the frame.
struct Compiling {
    plugin: String,
    task: tokio::task::JoinHandle<Result<NewVersion, crate::Error>>,
    started: Instant,
    /// Whether a step said it is taking long.
    told: bool,
}

/// How long a new version compiles before a step says so ([`Step::compiling`]): a Python or JavaScript
/// component takes seconds to compile, and a silent wait after its build reads as a hang.
pub const COMPILING_TOLD_AFTER: Duration = Duration::from_secs(1);

/// One world, stepped a frame at a time (see the module's documentation).
pub struct GameLoop {
    played: Played,
    tokio: tokio::runtime::Handle,
    recording: Option<WorldRecording>,
    watcher: Option<FolderWatcher>,
    compiling: Vec<Compiling>,
}

impl GameLoop {
    /// A loop over `played`, whose experience is loaded (a client's loads as it joins). Its async work — new
    /// versions compiled off the frame, a client's network — runs on `tokio`; call the loop from outside that
    /// runtime's threads (a game's main thread).
    pub fn new(played: Played, tokio: tokio::runtime::Handle) -> Self {
        GameLoop { played, tokio, recording: None, watcher: None, compiling: Vec::new() }
    }

    /// Records every frame, reload and end of play into `recording` from now on. It must have been created for
    /// this world before its experience loaded, the world's manager reading its plugins' clocks through it
    /// ([`ExperienceManager::set_tape`] with [`WorldRecording::tape`]), and a networked world's transport wrapped
    /// to record what the network delivers (`replay::RecordingServerTransport`, `RecordingClientTransport`).
    pub fn recorded(mut self, recording: WorldRecording) -> Self {
        self.recording = Some(recording);
        self
    }

    /// Watches the folders of the plugins this world wants: a plugin whose component or manifest changes is
    /// reloaded (compiled off the frame, applied between frames); every changed file is in the next
    /// [`Step::changed`] (a modder's tools rebuild a plugin whose sources changed).
    pub fn watch(&mut self, folders: &[PathBuf]) -> notify::Result<()> {
        match &mut self.watcher {
            Some(watcher) => watcher.follow(folders),
            None => {
                self.watcher = Some(FolderWatcher::new(folders)?);
                Ok(())
            }
        }
    }

    /// The async runtime the loop's work runs on: for a program's own work off the frame (compiling a plugin
    /// before activating it, say).
    pub fn tokio(&self) -> &tokio::runtime::Handle {
        &self.tokio
    }

    /// Whether the loop is recorded: a recorded server's world changes only by play, so that it replays.
    pub fn is_recorded(&self) -> bool {
        self.recording.is_some()
    }

    /// The world the loop runs.
    pub fn played(&self) -> &Played {
        &self.played
    }

    /// The world the loop runs, to drive it between steps (spawn players, say); what changes replicates.
    pub fn played_mut(&mut self) -> &mut Played {
        &mut self.played
    }

    /// The world's experience manager.
    pub fn manager(&self) -> &ExperienceManager {
        self.played.manager()
    }

    /// The server, when the loop runs one.
    pub fn server(&self) -> Option<&GameServer> {
        match &self.played {
            Played::Server(server) => Some(server),
            _ => None,
        }
    }

    /// The server, when the loop runs one, to drive between steps (an allocation, its tickets).
    pub fn server_mut(&mut self) -> Option<&mut GameServer> {
        match &mut self.played {
            Played::Server(server) => Some(server),
            _ => None,
        }
    }

    /// The client, when the loop runs one.
    pub fn client(&self) -> Option<&GameClient> {
        match &self.played {
            Played::Client(client) => Some(client),
            _ => None,
        }
    }

    /// Runs game code on the world between steps — spawning the game's entities as actors, possessing them,
    /// writing the properties the game owns — then delivers what it caused to the plugins. A client's world is
    /// its server's copy, not the game's to change: `None`.
    pub fn with_world<R>(&mut self, f: impl FnOnce(&mut crate::world::World) -> R) -> Option<R> {
        match &mut self.played {
            Played::Standalone(manager) => Some(manager.with_world(f)),
            Played::Server(server) => Some(server.manager_mut().with_world(f)),
            Played::Client(_) => None,
        }
    }

    /// The folders of the plugins this world wants (running, quarantined or failed to activate).
    pub fn plugin_folders(&self) -> Vec<PathBuf> {
        let manager = self.manager();
        let features = manager.features();
        manager.wanted_features().iter().filter_map(|name| features.manifest(name)).map(|m| m.dir.clone()).collect()
    }

    /// Starts compiling `plugin`'s new version from its files as they are now, off the frame; a later step
    /// applies it between frames (a server then offers it to its clients). A client's plugins follow its
    /// server: asked of a client, the step says so. Asked again while a compile of it is under way, that one
    /// is dropped for the new one.
    pub fn reload(&mut self, plugin: &str) {
        self.drop_compiles_of(plugin);
        let features = self.manager().features().clone();
        let name = plugin.to_string();
        let task =
            self.tokio.spawn(async move { NewVersion::prepare(&features, &name).await.map_err(crate::Error::from) });
        self.compiling.push(Compiling { plugin: plugin.to_string(), task, started: Instant::now(), told: false });
    }

    /// Whether new versions are still compiling.
    pub fn is_compiling(&self) -> bool {
        !self.compiling.is_empty()
    }

    /// One frame, `delta` of game time after the last (see the module's documentation).
    pub fn step(&mut self, delta: Duration) -> Step {
        let mut step = Step::default();
        if let Some(watcher) = &mut self.watcher {
            step.changed = watcher.changed();
            for plugin in crate::live::plugins_of(self.played.manager(), &step.changed) {
                self.reload(&plugin);
            }
        }
        step.reloads = self.apply_compiled();
        for compiling in self.compiling.iter_mut().filter(|c| !c.told && c.started.elapsed() >= COMPILING_TOLD_AFTER) {
            compiling.told = true;
            step.compiling.push(compiling.plugin.clone());
        }
        let started = Instant::now();
        if let Some(recording) = &mut self.recording {
            recording.frame(delta);
        }
        match &mut self.played {
            Played::Standalone(manager) => {
                manager.tick(delta);
            }
            Played::Server(server) => step.notes = server.frame(delta),
            Played::Client(client) => {
                step.ended = match self.tokio.block_on(client.frame(delta)) {
                    Err(e) => Some(Err(e)),
                    Ok(()) => match client.state() {
                        ClientState::Ended(reason) => Some(Ok(reason.clone())),
                        _ => None,
                    },
                };
            }
        }
        if let Some(recording) = &mut self.recording {
            recording.frame_done(self.played.manager());
        }
        step.took = started.elapsed();
        step
    }

    /// For a server: frames in which the world stands still (no time passes, no plugin runs) until its clients
    /// have acknowledged everything sent them, or [`SETTLE`] has passed; whether they did. Clients and the server
    /// then hold the same values: what a program comparing them (a test, `gfhost run --clients`) waits for.
    /// Anything else is settled already.
    pub fn settle(&mut self, frame: Duration, ending: &mut dyn Ending) -> bool {
        match &mut self.played {
            Played::Server(server) => settle(server, self.recording.as_mut(), frame, ending),
            _ => true,
        }
    }

    /// Records a checkpoint of the world's state now, between frames, when the loop is recorded (a replay
    /// compares the state there too): after the game set its world up, say.
    pub fn checkpoint(&mut self) {
        if let Some(recording) = &mut self.recording {
            recording.checkpoint(self.played.manager());
        }
    }

    /// Carries out a console command between frames, recorded (see [`Command`]). A server takes the commands
    /// that concern its own world (`features`, `state`, `activate`, `deactivate`, `install`, `trace`): its clients
    /// keep the plugins they joined with, and a reload goes through [`reload`](Self::reload), which they follow.
    pub fn execute(&mut self, session: &crate::Session, command: &Command, line: &str) -> Result<String, crate::Error> {
        let manager = match &mut self.played {
            Played::Standalone(manager) => &mut **manager,
            Played::Server(_) if self.recording.is_some() && !matches!(command, Command::Features | Command::State) => {
                return Err(crate::Error::refused(
                    "a recorded server's world changes only by play (its replay has no commands to follow)",
                ))
            }
            Played::Server(server) if Self::a_server_takes(command) => server.manager_mut(),
            Played::Server(_) => {
                return Err(crate::Error::refused(format!(
                    "a server does not take `{}`: its clients would not follow",
                    line.split_whitespace().next().unwrap_or(line)
                )))
            }
            Played::Client(_) => return Err(crate::Error::refused("commands drive a standalone world or a server")),
        };
        // A trace is written, not played: it changes nothing in the world.
        if let (Some(recording), false) = (&mut self.recording, matches!(command, Command::Trace(_))) {
            recording.command(line);
        }
        self.tokio.block_on(LiveWorld::new(manager, session).execute(command))
    }

    fn a_server_takes(command: &Command) -> bool {
        matches!(
            command,
            Command::Features
                | Command::State
                | Command::Activate(_)
                | Command::Deactivate(_)
                | Command::Install(_)
                | Command::Trace(_)
        )
    }

    /// Reloads `plugin` now, between frames, waiting for its new version to compile: for a reload that must
    /// happen before a given frame (a script's). [`reload`](Self::reload) keeps the frames going meanwhile.
    pub fn reload_now(&mut self, plugin: &str) -> Reload {
        self.drop_compiles_of(plugin);
        let features = self.manager().features().clone();
        let new = self.tokio.block_on(NewVersion::prepare(&features, plugin)).map_err(crate::Error::from);
        self.apply(plugin.to_string(), new)
    }

    /// Drops the compiles of `plugin` under way: the files as they are now are what counts, and a compile of an
    /// older state of them must not finish later and replace the newer version.
    fn drop_compiles_of(&mut self, plugin: &str) {
        for stale in self.compiling.iter().filter(|c| c.plugin == plugin) {
            stale.task.abort();
        }
        self.compiling.retain(|c| c.plugin != plugin);
    }

    /// Applies the new versions that finished compiling, in the order they were asked for.
    fn apply_compiled(&mut self) -> Vec<Reload> {
        let (ready, still): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.compiling).into_iter().partition(|c| c.task.is_finished());
        self.compiling = still;
        let mut outcomes = Vec::new();
        for Compiling { plugin, task, .. } in ready {
            let new = match self.tokio.block_on(task) {
                Ok(new) => new,
                Err(e) => Err(crate::Error::host(format!("compiling the new version of {plugin} failed: {e}"))),
            };
            outcomes.push(self.apply(plugin, new));
        }
        outcomes
    }

    /// Applies a compiled new version of `plugin` (or says why there is none), recorded.
    fn apply(&mut self, plugin: String, new: Result<NewVersion, crate::Error>) -> Reload {
        let new = match new {
            Ok(new) => new,
            Err(e) => return Reload { plugin, outcome: Err(e) },
        };
        {
            if let Some(recording) = &mut self.recording {
                recording.note(Record::Reload { plugin: plugin.clone() });
            }
            let outcome = match &mut self.played {
                Played::Standalone(manager) => self
                    .tokio
                    .block_on(manager.apply_new_version(new))
                    .map(|r| r.to_string())
                    .map_err(crate::Error::from),
                Played::Server(server) => self.tokio.block_on(server.apply_new_version(new)),
                Played::Client(_) => {
                    Err(crate::Error::refused(format!("{plugin}: a client's plugins follow its server")))
                }
            };
            if let Some(recording) = &mut self.recording {
                recording.reloaded(&plugin, self.played.manager());
            }
            Reload { plugin, outcome }
        }
    }

    /// Ends play, saying why (`reason` reaches a server's clients), and gives the world back with the
    /// recording's outcome. A server first lets what its clients have not acknowledged reach them (at most
    /// [`SETTLE`]), tells them play ended, closes their connections and plays `frame`s until they go (at most
    /// [`GOODBYE`]); a client tells its server it left (unless the server ended play) and waits for the
    /// connection to close. `ending` hears what happens meanwhile, and waits between a server's last frames.
    pub fn end(mut self, reason: &str, frame: Duration, ending: &mut dyn Ending) -> Result<Ended, ExperienceError> {
        let recording = &mut self.recording;
        let manager = match self.played {
            Played::Standalone(mut manager) => {
                if let Some(recording) = recording {
                    recording.note(Record::EndPlay(reason.to_string()));
                }
                self.tokio.block_on(manager.end_play())?;
                *manager
            }
            Played::Server(mut server) => {
                settle(&mut server, recording.as_mut(), frame, ending);
                if let Some(recording) = recording {
                    recording.note(Record::EndPlay(reason.to_string()));
                }
                self.tokio.block_on(server.end_play(reason))?;
                // The clients hear it end, then the connections close once what was sent has arrived.
                recorded_server_frame(&mut server, recording.as_mut(), frame, ending);
                if let Some(recording) = recording {
                    recording.note(Record::Close("the server shut down".into()));
                }
                server.close("the server shut down");
                let goodbye = Instant::now();
                while !server.players().is_empty() && goodbye.elapsed() < GOODBYE {
                    recorded_server_frame(&mut server, recording.as_mut(), frame, ending);
                    ending.wait(frame);
                }
                (*server).into_manager()
            }
            Played::Client(mut client) => {
                if !matches!(client.state(), ClientState::Ended(_)) {
                    if let Some(recording) = recording {
                        recording.note(Record::EndPlay(reason.to_string()));
                    }
                    self.tokio.block_on(client.leave());
                }
                // The server hears why this client went before the connection is dropped.
                self.tokio.block_on(client.closed());
                (*client).into_manager()
            }
        };
        let recording = self
            .recording
            .take()
            .map(|recording| RecordingEnd { frames: recording.frames(), size: recording.finish(Some(&manager)) });
        Ok(Ended { manager, recording })
    }
}

/// Lets what a server's clients have not acknowledged reach them, the world standing still, for at most
/// [`SETTLE`]; whether it did.
fn settle(
    server: &mut GameServer,
    mut recording: Option<&mut WorldRecording>,
    frame: Duration,
    ending: &mut dyn Ending,
) -> bool {
    let settling = Instant::now();
    while !server.is_settled() && settling.elapsed() < SETTLE {
        if let Some(recording) = recording.as_deref_mut() {
            recording.note(Record::Flush);
        }
        for note in server.flush() {
            ending.note(server, note);
        }
        ending.wait(frame);
    }
    server.is_settled()
}

/// What a program hears while a loop ends play, and how it waits between a server's last frames. `()` hears
/// nothing and sleeps a frame between them.
pub trait Ending {
    /// What a server's last frames did to a client.
    fn note(&mut self, _server: &GameServer, _note: ServerNote) {}
    /// Between a server's last frames, `frame` long: by default, sleeps that long (a paced program sleeps until
    /// its next frame; a test stepping its clients here need not sleep at all).
    fn wait(&mut self, frame: Duration) {
        std::thread::sleep(frame);
    }
}

impl Ending for () {}

/// One of a server's last frames, recorded when the loop is.
fn recorded_server_frame(
    server: &mut GameServer,
    mut recording: Option<&mut WorldRecording>,
    delta: Duration,
    ending: &mut dyn Ending,
) {
    if let Some(recording) = recording.as_deref_mut() {
        recording.frame(delta);
    }
    let notes = server.frame(delta);
    if let Some(recording) = recording {
        recording.frame_done(server.manager());
    }
    for note in notes {
        ending.note(server, note);
    }
}
