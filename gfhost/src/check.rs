//! `gfhost check PLUGIN`: what a plugin author wants to know before shipping — does the component fit the
//! world's WIT, and how does it behave when it runs? The plugin plays alone in a headless standalone world
//! (two players arrive the Lyra way, a second of frames passes, play ends), and the report lists its calls with
//! their slowest time, the calls it was denied or refused, its failures, and what it left behind.
//!
//! The world takes the game's classes and pawn class from an experience (the default one unless told), so a
//! plugin written for that game's classes finds them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use gamefeature_host::runtime::Limits;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{game, Session, SessionOptions};

/// Frames of play the check runs: two seconds at 30 Hz, so that timers of up to a second fire.
const FRAMES: u32 = 60;

/// The world the check plays in.
const WORLD: &str = "check";

/// A call is reported as slow past this share of its deadline.
const SLOW_SHARE: u32 = 4;

/// The parts of an experience that make its game's world: classes, pawn data and creation policies — not its
/// features, actions or bundles.
const GAME_TABLES: [&str; 3] = ["classes", "pawn-data", "component-creation"];

/// An experience playing `features` (and nothing else) in the game `game` (an experience file) describes: the
/// world of `gfhost check` and of `gfhost test`'s scenarios.
pub fn game_experience(title: &str, features: &[String], game: Option<&Path>) -> Result<String> {
    let mut experience = toml::Table::new();
    if let Some(path) = game {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let table: toml::Table = text.parse().with_context(|| format!("{} is not valid TOML", path.display()))?;
        for key in GAME_TABLES {
            if let Some(value) = table.get(key) {
                experience.insert(key.to_string(), value.clone());
            }
        }
    }
    let mut header = toml::Table::new();
    header.insert("name".into(), title.into());
    header.insert("features".into(), toml::Value::Array(features.iter().map(|f| f.as_str().into()).collect()));
    experience.insert("experience".into(), header.into());
    if !experience.contains_key("pawn-data") {
        let mut pawn = toml::Table::new();
        pawn.insert("pawn-class".into(), "Character".into());
        experience.insert("pawn-data".into(), pawn.into());
    }
    Ok(toml::to_string(&experience)?)
}

pub fn check_plugin(name: &str, game: Option<&Path>, options: SessionOptions) -> Result<ExitCode> {
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let runtime_config = options.runtime.clone();
    let dirs = options.plugin_dirs.clone();
    let session = Session::new(options)?;
    let manifest = session.features().manifest(name).with_context(|| crate::no_plugin_named(name, &dirs))?;
    // The limits fitted to its component, when it loads (the check below says why when it does not).
    let limits = match session.runtime().load_plugin(&manifest) {
        Ok(plugin) => plugin.limits().clone(),
        Err(_) => Limits::of(name, &runtime_config),
    };
    println!("checking {} {} ({})", manifest.name, manifest.version, manifest.component_path.display());
    match game {
        Some(path) => println!("  game: classes and pawn data of {}", path.display()),
        None => println!("  game: no experience given (--experience FILE): a Character pawn, no classes of its own"),
    }

    let inspection = session.runtime().inspect_plugin(&manifest)?;
    let fit = inspection.interface.fit();
    let missing: Vec<String> = fit
        .imports
        .iter()
        .chain(&fit.needed_exports)
        .filter_map(|line| line.problem.as_ref().map(|problem| format!("{}: {problem}", line.name)))
        .collect();
    match &inspection.problem {
        None => {
            println!("  interface: fits gamefeature:plugin@{}", manifest.api);
            println!("  limits, fitted to its component: {limits}");
        }
        Some(problem) => {
            println!("  interface: does not fit: {problem}");
            for line in &missing {
                println!("    - {line}");
            }
            return Ok(ExitCode::from(2));
        }
    }

    let folder = tempfile::tempdir().context("creating a folder for the check's experience")?;
    let experience = folder.path().join("check.toml");
    let text = game_experience(&format!("check {name}"), &[name.to_string()], game)?;
    std::fs::write(&experience, text).context("writing the check's experience")?;
    let mut manager = session.create_world(WORLD, NetMode::Standalone);
    tokio.block_on(manager.load(&experience))?;
    let pawn_class = manager.pawn_class();
    let players: Vec<game::Player> =
        manager.with_world(|w| (0..2).filter_map(|_| game::spawn_player(w, &pawn_class).ok()).collect());
    for player in &players {
        manager.with_world(|w| game::possess(w, player)).ok();
        manager.with_world(|w| game::replicate_player_state(w, player)).ok();
    }
    let mut frame_costs = Vec::new();
    for _ in 0..FRAMES {
        manager.tick(Duration::from_secs(1) / 30);
        frame_costs.extend(manager.last_frame_cost(name));
    }
    tokio.block_on(manager.end_play())?;
    let report = manager.report().clone();
    let left = left_behind(&world::lock(manager.world()));

    let instance = track::instance(name, WORLD);
    let events: Vec<_> = session.timeline().events().into_iter().filter(|e| e.track == instance).collect();
    let mut calls: BTreeMap<String, (usize, Duration)> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == EventKind::Call) {
        let hook = event.text.split(' ').next().unwrap_or_default().to_string();
        let entry = calls.entry(hook).or_default();
        entry.0 += 1;
        entry.1 = entry.1.max(event.took.unwrap_or_default());
    }
    let slow_after = limits.call_deadline / SLOW_SHARE;
    let deadline = limits.call_deadline;
    println!("  calls (slowest of each; slow past {slow_after:?}, a quarter of the {deadline:?} deadline):");
    let mut slow = 0;
    for (hook, (count, slowest)) in &calls {
        let mark = if *slowest > slow_after {
            slow += 1;
            "  SLOW"
        } else {
            ""
        };
        println!("    {hook:32} x{count:<5} {:>9.1} us{mark}", slowest.as_secs_f64() * 1e6);
    }
    if let Some(heaviest) = frame_costs.iter().max() {
        let mean = frame_costs.iter().sum::<Duration>() / frame_costs.len() as u32;
        println!(
            "  CPU time per frame ({} frames of its timers, deliveries and calls): mean {:.1} us, heaviest {:.1} us, \
             budget {:?}",
            frame_costs.len(),
            mean.as_secs_f64() * 1e6,
            heaviest.as_secs_f64() * 1e6,
            limits.frame_budget
        );
    }
    let texts = |keep: &dyn Fn(&EventKind, &str) -> bool| -> Vec<String> {
        events.iter().filter(|e| keep(&e.kind, &e.text)).map(|e| e.text.clone()).collect()
    };
    // Every refusal is noted; a denial is a refusal whose error is `denied`.
    let denied = texts(&|kind, text| *kind == EventKind::Note && text.starts_with("refused: Error::Denied("));
    let refused = texts(&|kind, text| {
        *kind == EventKind::Note && text.starts_with("refused: ") && !text.starts_with("refused: Error::Denied(")
    });
    // What the plugin itself said went wrong: a trap's message (a panic, an uncaught exception) is often only
    // there.
    let said = texts(&|kind, text| {
        matches!(kind, EventKind::Log(LogLevel::Warn | LogLevel::Error)) && !text.starts_with("denied: ")
    });
    let failures: Vec<String> = report.failures.iter().map(|f| f.to_string()).collect();
    let sections = [
        ("denied calls", &denied),
        ("refused calls", &refused),
        ("its warnings and errors", &said),
        ("failures", &failures),
    ];
    for (title, lines) in sections {
        println!("  {title}: {}", lines.len());
        for line in lines.iter().take(10) {
            println!("    - {line}");
        }
    }
    println!("  after end of play: {}", left.as_deref().unwrap_or("nothing left"));
    let clean = failures.is_empty() && left.is_none();
    println!(
        "{}: {} failure(s), {} denied, {} refused, {slow} slow hook(s)",
        if clean { "ok" } else { "problems found" },
        failures.len(),
        denied.len(),
        refused.len()
    );
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// What plugins left in a world whose play ended, said; `None` when nothing.
pub fn left_behind(w: &gamefeature_host::World) -> Option<String> {
    let counts = [
        (w.requested_component_count(), "feature components"),
        (w.live_handlers(), "handlers"),
        (w.live_subscriptions(), "subscriptions"),
        (w.live_features(), "init-state features"),
        (w.live_watches(), "property watches"),
        (w.live_timers(), "timers"),
    ];
    let left: Vec<String> = counts.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")).collect();
    (!left.is_empty()).then(|| format!("{} left", left.join(", ")))
}

/// `gfhost check --types PLUGIN`: type-checks a plugin's sources (a plugin named, a plugin folder, or every
/// plugin with sources in a folder of them) with its language's checker, as the editor configuration `gfhost
/// new` wrote says (see `gamefeature_builder::types`). Prints what each checker found; exit status 1 when any
/// plugin has errors, for CI.
pub fn check_types(plugin: &str, plugin_dirs: &[PathBuf]) -> Result<ExitCode> {
    use gamefeature_builder::{Language, Toolchains};
    let path = Path::new(plugin);
    let folders: Vec<PathBuf> = if path.join(gamefeature_host::feature::MANIFEST_FILE).is_file() {
        vec![path.to_path_buf()]
    } else if path.is_dir() {
        crate::build::plugin_folders(path)?
    } else {
        let report = gamefeature_host::feature::discover(plugin_dirs, &|_| Ok(()));
        let found = report.found.into_iter().find(|manifest| manifest.name == plugin);
        vec![found.with_context(|| crate::no_plugin_named(plugin, plugin_dirs))?.dir]
    };
    let toolchains = Toolchains::of_repository(&crate::build::repository()?);
    let rust_target_dir = crate::build::rust_target_dir();
    let mut failed = 0;
    let mut checked = 0;
    for folder in &folders {
        let Some(language) = Language::of(folder)? else { continue };
        checked += 1;
        let check = toolchains.check_types(language, folder, rust_target_dir.as_deref())?;
        let output = check.output.trim_end();
        if !output.is_empty() {
            println!("{output}");
        }
        let verdict = if check.passed { "ok" } else { "errors" };
        println!("types of {} ({language}): {verdict}  [{}]", folder.display(), check.command);
        failed += usize::from(!check.passed);
    }
    if checked == 0 {
        anyhow::bail!("{plugin}: no plugin with sources to check");
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
