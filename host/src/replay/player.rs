//! Playing a recording again: the world set up as it was, every recorded input applied in order, and its
//! state compared with the recording's at every checkpoint, stopping at the first difference.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::transport::{RecordedPolls, ReplayClientTransport, ReplayServerTransport};
use crate::experience::ChaosDelay;
use crate::game_loop::recording::file_digest;
use crate::game_loop::world_state::{Difference, WorldState};
use crate::game_loop::{GameLoop, Played};
use crate::live::Command;
use crate::net::{GameClient, GameServer, ServerOptions};
use crate::recording::{Record, Recording, Role, Tape};
use crate::runtime::RuntimeConfig;
use crate::timeline::EventKind;
use crate::world::NetMode;
use crate::{Session, SessionOptions};

/// Calls into plugins a report shows before a difference.
const CALLS_SHOWN: usize = 12;

/// Differences a report lists at most.
const DIFFERENCES_SHOWN: usize = 20;

/// How a replay runs. A recording is data: what it names of the machine it was made on (plugin folders, a
/// folder it installed from, a mods folder) is shown, and followed only with [`follow_recorded`].
///
/// [`follow_recorded`]: ReplayOptions::follow_recorded
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// The folders the plugins play from (the replayer's own, or newer builds to check a fix); `None`: the
    /// folders recorded.
    pub plugin_dirs: Option<Vec<PathBuf>>,
    /// Carry out the recording's `install` of folders outside the plugin folders played.
    pub follow_recorded: bool,
    /// The session's options (runtime, limits, grants, trust) as the host's configuration gives them; the
    /// replay sets its folders and loosens its time limits.
    pub session: SessionOptions,
    /// For a client recording that fetched its server's plugins: how it fetched them (the policy and folder
    /// the recording names, with the host configuration's trust and limits).
    pub mod_sync: Option<crate::net::mod_sync::ModSync>,
    /// Play the whole recording even once the world differs (the first difference is still reported): for a
    /// replay with plugins left out, which differs by design, to see whether a failure still comes.
    pub through_differences: bool,
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// Which side of a game the recording was.
    pub role: Role,
    /// Frames played again.
    pub frames: u64,
    /// Checkpoints found equal.
    pub checkpoints: usize,
    /// The first checkpoint that differed, if one did: the replay stopped there.
    pub divergence: Option<Divergence>,
    /// What a modder should know about this replay: components that are not the recorded ones, a recording
    /// cut short, plugins that read their clocks more often than recorded.
    pub notes: Vec<String>,
    /// What the replayed world's plugins said (info and above), as `gfhost play` shows it:
    /// `[plugin@world] level: text`.
    pub said: Vec<String>,
    /// What failed in the replayed world (plugins quarantined, or refused at load), each as the world said it:
    /// `PLUGIN failed during PHASE: why`.
    pub failures: Vec<String>,
}

impl ReplayReport {
    /// Whether every checkpoint was equal.
    pub fn same(&self) -> bool {
        self.divergence.is_none()
    }
}

/// Where a replay first differed from its recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Frames played before the checkpoint that differed.
    pub frame: u64,
    /// The frame of the last checkpoint that was equal, if one was: the difference arose after it.
    pub equal_at: Option<u64>,
    /// What differs, entry by entry (the first few).
    pub differences: Vec<Difference>,
    /// How many entries differ in all.
    pub count: usize,
    /// The last calls into plugins before it, oldest first, as the timeline shows them.
    pub last_calls: Vec<String>,
    /// Why it may differ, where the host can tell (a plugin stopped for time in the recording).
    pub hints: Vec<String>,
    /// The first line a plugin said otherwise (or not at all) since the last equal checkpoint, if one did.
    pub said: Option<SaidDifference>,
}

/// The first line a plugin said differently in the replay than in the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaidDifference {
    /// The plugin.
    pub plugin: String,
    /// Its line in the recording (`None`: it said nothing more there).
    pub recorded: Option<String>,
    /// Its line in the replay (`None`: it said nothing more here).
    pub replayed: Option<String>,
    /// The call into the plugin it said it in, in the replay, as the timeline shows it.
    pub call: Option<String>,
}

impl std::fmt::Display for SaidDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |line: &Option<String>| line.as_ref().map_or("nothing".to_string(), |l| format!("{l:?}"));
        write!(
            f,
            "{} said {} in the recording, {} in the replay",
            self.plugin,
            shown(&self.recorded),
            shown(&self.replayed)
        )?;
        if let Some(call) = &self.call {
            write!(f, " (in {call})")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let since = self.equal_at.map(|frame| format!(", equal at frame {frame}")).unwrap_or_default();
        writeln!(
            f,
            "the replay differs from the recording at frame {}{since} ({} entries differ):",
            self.frame, self.count
        )?;
        if let Some(said) = &self.said {
            writeln!(f, "  what plugins said: {said}")?;
        }
        for difference in &self.differences {
            writeln!(f, "  {difference}")?;
        }
        if self.count > self.differences.len() {
            writeln!(f, "  ... and {} more", self.count - self.differences.len())?;
        }
        if !self.last_calls.is_empty() {
            writeln!(f, "the last calls into plugins before it:")?;
            for call in &self.last_calls {
                writeln!(f, "  {call}")?;
            }
        }
        for hint in &self.hints {
            writeln!(f, "note: {hint}")?;
        }
        Ok(())
    }
}

/// Why a recording could not be replayed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReplayError(pub String);

/// The runtime's limits with time loosened: a CPU-time limit can stop a call in one run and not the next, so
/// a replay stops a call only where the recording says one was stopped (see `recording::Tape`), and otherwise
/// gives each call twenty times its deadline (at least two seconds): enough for a loaded machine, and still an
/// end to a new build that loops where the recorded one did not.
pub fn without_time_limits(mut runtime: RuntimeConfig) -> RuntimeConfig {
    let loosened = |limit: Duration| limit.saturating_mul(20).max(Duration::from_secs(2));
    runtime.call_deadline = loosened(runtime.call_deadline);
    runtime.instantiate_deadline = loosened(runtime.instantiate_deadline);
    runtime.frame_budget = loosened(runtime.frame_budget);
    for limits in runtime.plugin_limits.values_mut() {
        limits.call_deadline_ms = None;
        limits.instantiate_deadline_ms = None;
        limits.frame_budget_ms = None;
    }
    runtime
}

/// Plays `recording` again and compares every checkpoint. The world is stepped by a [`GameLoop`], as it was
/// when recorded, whose async work runs on `tokio` (call this from outside that runtime's threads).
pub fn replay(
    recording: &Recording,
    options: ReplayOptions,
    tokio: tokio::runtime::Handle,
) -> Result<ReplayReport, ReplayError> {
    let info = &recording.session;
    let mut notes = Vec::new();
    if info.host_version != env!("CARGO_PKG_VERSION") {
        notes.push(format!(
            "recorded by host {}, replayed by host {}: a difference may come from the host",
            info.host_version,
            env!("CARGO_PKG_VERSION")
        ));
    }
    if let Some(cut) = &recording.truncated {
        notes.push(format!("{cut}; the replay goes as far as the recording does"));
    } else if !recording.ended() {
        notes.push(
            "the recording stops without the end of its session (it was cut short after a complete record); the \
             replay goes as far as the recording does"
                .into(),
        );
    }
    let mut session_options = options.session;
    let recorded_dirs: Vec<PathBuf> = info.plugin_dirs.iter().map(PathBuf::from).collect();
    session_options.plugin_dirs = options.plugin_dirs.clone().unwrap_or_else(|| recorded_dirs.clone());
    let played_dirs = session_options.plugin_dirs.clone();
    if !same_folders(&recorded_dirs, &played_dirs) {
        notes.push(format!(
            "recorded with the plugins in {}; replayed with those in {} (--follow-recorded plays the recorded ones)",
            shown_folders(&recorded_dirs),
            shown_folders(&played_dirs)
        ));
    }
    session_options.runtime = without_time_limits(session_options.runtime);
    session_options.manager.chaos = info
        .chaos
        .map(|(min, random, seed)| ChaosDelay::new(min, random, seed))
        .transpose()
        .map_err(|e| ReplayError(format!("the recorded chaos delay: {e}")))?;
    let session = Session::new(session_options).map_err(|e| ReplayError(e.to_string()))?;
    let net_mode: NetMode = info.net_mode.parse().map_err(|e| ReplayError(format!("the recorded world: {e}")))?;
    let mut manager = session.create_world(&info.world, net_mode);
    let tape = Tape::replaying(info.seed, recording.records());
    manager.set_tape(tape.clone());
    let polls = RecordedPolls::of(recording.records());
    let experience = Path::new(&info.experience);
    if let Some(recorded) = &info.experience_digest {
        let now = file_digest(experience);
        if *recorded != now {
            notes.push(format!(
                "the experience {} is not the one recorded (sha256 {recorded}, now {now})",
                experience.display()
            ));
        }
    }
    let setup = |e: String| ReplayError(format!("setting the recorded world up again: {e}"));
    let played = match info.role {
        Role::Standalone => {
            tokio.block_on(manager.load(experience)).map_err(|e| setup(e.to_string()))?;
            Played::Standalone(Box::new(manager))
        }
        Role::Server => {
            let options = ServerOptions { tick_rate: info.tick_rate, ..Default::default() };
            let mut server = GameServer::new(manager, Box::new(ReplayServerTransport::new(polls)), options);
            tokio.block_on(server.load(experience)).map_err(|e| setup(e.to_string()))?;
            Played::Server(Box::new(server))
        }
        Role::Client => {
            let experiences = info.experiences_dir.clone().unwrap_or_default();
            let transport = Box::new(ReplayClientTransport::new(polls));
            let mut client = GameClient::connect(manager, transport, None, Path::new(&experiences));
            if let Some(sync) = options.mod_sync.clone() {
                client = client.with_mod_sync(sync);
            }
            Played::Client(Box::new(client))
        }
    };
    let mut game = GameLoop::new(played, tokio.clone());

    let mut recorded = WorldState::default();
    let (mut frames, mut checkpoints, mut equal_at, mut chain) = (0, 0, None, 0);
    let mut divergence = None;
    // What plugins said, compared at each checkpoint where the recording holds it (recordings made before it was
    // recorded hold none).
    let compares_said = recording.records().any(|record| matches!(record, Record::Said { .. }));
    let (mut recorded_said, mut replayed_from) = (Vec::new(), 0);
    for record in recording.records() {
        let record = &record;
        match record {
            Record::Said { plugin, line } => recorded_said.push((plugin.clone(), line.clone())),
            Record::Frame { delta_nanos } => {
                // A client whose session ends says so in its state, which the checkpoints compare.
                game.step(Duration::from_nanos(*delta_nanos));
                frames += 1;
            }
            Record::Command(line) => {
                if !matches!(game.played(), Played::Standalone(_)) {
                    continue;
                }
                // A trace writes a file and changes nothing, and a wait only lets wall-clock time pass (a game loop
                // records the frames played meanwhile): a replay does neither, whatever a recording asks.
                let replayed = |c: &Command| !matches!(c, Command::Trace(_) | Command::Wait(_));
                let Some(command) = line.parse::<Command>().ok().filter(replayed) else { continue };
                // A folder elsewhere is installed only when the replayer follows the recording on purpose.
                if let Command::Install(dir) = &command {
                    if !options.follow_recorded && !inside_any(dir, &played_dirs) {
                        notes.push(format!(
                            "the recording installs {}, outside the plugin folders played: not followed \
                             (--follow-recorded follows it)",
                            crate::text::shown(&dir.display().to_string(), 512)
                        ));
                        continue;
                    }
                }
                let _ = game.execute(&session, &command, line);
            }
            // A client's plugins follow its server: the loop refuses a client's reload, as it did when recorded.
            Record::Reload { plugin } => drop(game.reload_now(plugin)),
            Record::Flush => {
                if let Some(server) = game.server_mut() {
                    server.flush();
                }
            }
            // The end of play as recorded, step by step (the recording holds the frames, flushes and closes a
            // server's ending played), not `GameLoop::end`'s sequence run again.
            Record::EndPlay(reason) => match game.played_mut() {
                Played::Standalone(manager) => drop(tokio.block_on(manager.end_play())),
                Played::Server(server) => drop(tokio.block_on(server.end_play(reason))),
                Played::Client(client) => tokio.block_on(client.leave()),
            },
            Record::Close(reason) => {
                if let Some(server) = game.server_mut() {
                    server.close(reason);
                }
            }
            Record::Component { plugin, version, digest } => {
                let manager = game.manager();
                let now =
                    manager.features().manifest(plugin).map(|m| (m.version.clone(), file_digest(&m.component_path)));
                match now {
                    Some((_, now)) if now == *digest => {}
                    Some((now_version, now)) => notes.push(format!(
                        "{plugin}: replayed with another build than recorded (recorded {version}, sha256 {}; now \
                         {now_version}, sha256 {})",
                        short(digest),
                        short(&now)
                    )),
                    None => notes.push(format!("{plugin}: recorded ({version}) but not installed for the replay")),
                }
            }
            Record::Checkpoint(checkpoint) => {
                chain = crate::game_loop::world_state::chained_hash(chain, &checkpoint.changed, &checkpoint.removed);
                if chain != checkpoint.hash {
                    return Err(ReplayError(format!(
                        "the checkpoint of frame {} does not match its hash: the recording was altered",
                        checkpoint.frame
                    )));
                }
                recorded = recorded.after(checkpoint);
                let replayed = WorldState::of(game.manager());
                let differences = recorded.differences(&replayed);
                let (events, next) = session.timeline().events_since(replayed_from);
                replayed_from = next;
                let said = match compares_said {
                    true => first_said_difference(&std::mem::take(&mut recorded_said), &events, &info.world),
                    false => None,
                };
                if differences.is_empty() && said.is_none() {
                    checkpoints += 1;
                    equal_at = Some(checkpoint.frame);
                    continue;
                }
                if divergence.is_some() {
                    continue;
                }
                divergence = Some(Divergence {
                    frame: checkpoint.frame,
                    equal_at,
                    count: differences.len(),
                    hints: hints(&differences),
                    differences: differences.into_iter().take(DIFFERENCES_SHOWN).collect(),
                    last_calls: last_calls(&session, &info.world),
                    said,
                });
                if !options.through_differences {
                    break;
                }
            }
            Record::End => break,
            Record::Session(_)
            | Record::Polled { .. }
            | Record::Clock { .. }
            | Record::Stopped { .. }
            | Record::OverBudget { .. } => {}
        }
    }
    notes.extend(tape.beyond_recording());
    if divergence.is_none() || options.through_differences {
        // Play ends as it would have (a recording cut short, or a replay that stopped early, leaves it on).
        let manager = match game.played_mut() {
            Played::Standalone(manager) => Some(&mut **manager),
            Played::Server(server) => Some(server.manager_mut()),
            Played::Client(_) => None,
        };
        if let Some(manager) = manager.filter(|m| m.state() == crate::ExperienceLoadState::Loaded) {
            let _ = tokio.block_on(manager.end_play());
        }
    }
    let said = crate::game_loop::recording::said_in(&session.timeline().events(), &info.world)
        .into_iter()
        .map(|(plugin, line)| format!("[{plugin}@{}] {line}", info.world))
        .collect();
    let failures = failures_in(&session.timeline().events(), &info.world);
    Ok(ReplayReport { role: info.role, frames, checkpoints, divergence, notes, said, failures })
}

/// The failures `world` recorded among `events` (its plugins quarantined or refused).
fn failures_in(events: &[crate::timeline::TimelineEvent], world: &str) -> Vec<String> {
    let track = crate::timeline::track::experience(world);
    events
        .iter()
        .filter(|event| event.kind == EventKind::Failure && event.track == track)
        .map(|e| e.text.clone())
        .collect()
}

/// Whether two lists of folders name the same folders (as the file system resolves them).
fn same_folders(a: &[PathBuf], b: &[PathBuf]) -> bool {
    let resolved = |dirs: &[PathBuf]| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = dirs.iter().map(|d| d.canonicalize().unwrap_or_else(|_| d.clone())).collect();
        dirs.sort();
        dirs.dedup();
        dirs
    };
    resolved(a) == resolved(b)
}

/// Whether `dir` is inside (or is) one of `folders`, as the file system resolves them.
fn inside_any(dir: &Path, folders: &[PathBuf]) -> bool {
    let Ok(dir) = dir.canonicalize() else { return false };
    folders.iter().filter_map(|f| f.canonicalize().ok()).any(|folder| dir.starts_with(folder))
}

/// Folders for a note, each shown as data (a recording names them).
fn shown_folders(dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| crate::text::shown(&d.display().to_string(), 512)).collect();
    shown.join(", ")
}

/// The first line the replay's plugins said otherwise than the recording's between two checkpoints: `recorded`
/// the recording's lines, `events` the replayed world's timeline since the last checkpoint.
fn first_said_difference(
    recorded: &[(String, String)],
    events: &[crate::timeline::TimelineEvent],
    world: &str,
) -> Option<SaidDifference> {
    let replayed = crate::game_loop::recording::said_in(events, world);
    let at = (0..recorded.len().max(replayed.len())).find(|i| recorded.get(*i) != replayed.get(*i))?;
    let (recorded, replayed) = (recorded.get(at), replayed.get(at));
    let plugin = replayed.or(recorded).map(|(plugin, _)| plugin.clone()).unwrap_or_default();
    // The call the replayed line was said in: the last call into its plugin before it.
    let track = crate::timeline::track::instance(&plugin, world);
    let call = replayed.and_then(|(_, line)| {
        let said_at = events.iter().position(|e| e.track == track && line.ends_with(e.text.as_str()))?;
        let call = events[..said_at].iter().rev().find(|e| e.track == track && e.kind == EventKind::Call)?;
        Some(call.text.clone())
    });
    Some(SaidDifference {
        plugin,
        recorded: recorded.map(|(_, line)| line.clone()),
        replayed: replayed.map(|(_, line)| line.clone()),
        call,
    })
}

/// The first twelve hex digits of a digest: enough to tell builds apart in a note.
fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// The last calls into plugins in `world`, oldest first.
fn last_calls(session: &Session, world: &str) -> Vec<String> {
    let suffix = format!("@{world}");
    let events = session.timeline().events();
    let calls: Vec<String> = events
        .iter()
        .filter(|e| e.kind == EventKind::Call && e.track.ends_with(&suffix))
        .map(|e| format!("{}: {}", e.track.trim_end_matches(&suffix).trim_start_matches("plugin:"), e.text))
        .collect();
    calls[calls.len().saturating_sub(CALLS_SHOWN)..].to_vec()
}

/// What the host can tell of why states differ.
fn hints(differences: &[Difference]) -> Vec<String> {
    differences
        .iter()
        .filter(|d| d.entry.starts_with("plugin ") && d.recorded.as_deref() == Some("not playing"))
        .map(|d| {
            format!(
                "{} was stopped in the recording and not in the replay, which applies the recorded stops of calls \
                 and frame budgets: was the replay run with another build, or a recording from another host version?",
                d.entry.trim_start_matches("plugin ")
            )
        })
        .collect()
}
