//! `--record FILE` on `run`, `play`, `server` and `client`, and `gfhost replay FILE`: a session recorded as it
//! runs, and played again frame for frame with every checkpoint compared.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use gamefeature_host::experience::ExperienceManager;
use gamefeature_host::game_loop::RecordingEnd;
use gamefeature_host::recording::Recording;
use gamefeature_host::replay::{self, ReplayOptions, WorldRecording};
use gamefeature_host::SessionOptions;

pub use gamefeature_host::replay::Recorded;

/// Starts recording a world into `path`; its manager reads plugins' clocks and random numbers through the
/// recording from now on.
pub fn start(
    path: &Path,
    recorded: Recorded<'_>,
    options: &SessionOptions,
    manager: &mut ExperienceManager,
) -> Result<WorldRecording> {
    WorldRecording::start(path, recorded, options, manager).with_context(|| format!("recording to {}", path.display()))
}

/// Says where a recording a game loop ended is, and how large (or why it stopped early).
pub fn said(recording: RecordingEnd, path: &Path) {
    match recording.size {
        Ok(bytes) => println!("recorded {} frames to {} ({bytes} bytes)", recording.frames, path.display()),
        Err(why) => eprintln!("error: {why}"),
    }
}

/// The file a client's recording goes to beside the server's `path` in `run --clients`: `session.gfrec` ->
/// `session.client-1.gfrec`.
pub fn client_path(path: &Path, index: usize) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = path.extension().map(|e| e.to_string_lossy().into_owned());
    let name = match extension {
        Some(extension) => format!("{stem}.client-{index}.{extension}"),
        None => format!("{stem}.client-{index}"),
    };
    path.with_file_name(name)
}

/// What `gfhost replay` was asked to do.
pub struct ReplayArgs {
    /// The plugin folders named with `--plugins`, if any: newer builds to check a fix.
    pub named_plugins: Option<Vec<PathBuf>>,
    /// The replayer's own plugin folders (`--plugins`, else `plugins`).
    pub own_plugins: Vec<PathBuf>,
    /// Play the folders the recording names and fetch as it did (`--follow-recorded`).
    pub follow_recorded: bool,
    /// How the replayer itself fetches: its configuration's policy, into its own mods folder.
    pub mod_sync: gamefeature_host::net::mod_sync::ModSync,
    /// Exit 1 when the replay differs.
    pub expect_same: bool,
    /// Print what the plugins said.
    pub show_output: bool,
}

/// `gfhost replay`: plays `path` again; prints what it found. A difference is a finding, not a failure,
/// unless `expect_same` (for tests and CI) makes it one. The recording is data: the folders and fetching it
/// names are shown, and followed only when asked.
pub fn replay_command(path: &Path, args: ReplayArgs, session: SessionOptions) -> Result<ExitCode> {
    let recording = Recording::read(path)?;
    let info = &recording.session;
    let plugin_dirs = match (args.named_plugins, args.follow_recorded) {
        (Some(named), _) => Some(named),
        (None, true) => None,
        (None, false) => Some(args.own_plugins),
    };
    let mod_sync = match &info.mods {
        Some((policy, dir)) if args.follow_recorded => Some(gamefeature_host::net::mod_sync::ModSync {
            policy: crate::parse_fetch_policy(policy).map_err(anyhow::Error::msg)?,
            cache_dir: PathBuf::from(dir),
            ..args.mod_sync
        }),
        Some(_) => Some(args.mod_sync),
        None => None,
    };
    println!(
        "replaying {} ({:?} world {:?} of {}, {} records, {} bytes) with the plugins in {}",
        path.display(),
        info.role,
        info.world,
        if info.experience.is_empty() { "its server's experience" } else { &info.experience },
        recording.record_count(),
        recording.bytes,
        match &plugin_dirs {
            Some(dirs) => crate::display_dirs(dirs),
            None => format!("{} (recorded)", info.plugin_dirs.join(", ")),
        }
    );
    if let Some(sync) = &mod_sync {
        println!("fetching {:?} packages into {}", sync.policy, sync.cache_dir.display());
    }
    let (expect_same, show_output) = (args.expect_same, args.show_output);
    let follow_recorded = args.follow_recorded;
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let options = ReplayOptions { plugin_dirs, session, mod_sync, follow_recorded, through_differences: false };
    let report = replay::replay(&recording, options, tokio.handle().clone())?;
    if show_output {
        for line in &report.said {
            println!("{line}");
        }
    }
    for note in &report.notes {
        println!("note: {note}");
    }
    match &report.divergence {
        None => {
            println!(
                "the same: {} frames replayed, {} checkpoints equal to the recording's",
                report.frames, report.checkpoints
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(divergence) => {
            print!("{divergence}");
            println!("({} checkpoints were equal before it)", report.checkpoints);
            Ok(if expect_same { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
    }
}
