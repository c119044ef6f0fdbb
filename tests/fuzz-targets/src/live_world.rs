//! A live world driven by arbitrary command sequences: the default experience's plugins (Rust, Python,
//! JavaScript and C) activated, deactivated, hot-reloaded, uninstalled and installed again, players spawned and
//! frames ticked, in any order — as a console or a script would. Each command is applied or refused; the
//! component model holds after every one; at end of play nothing of any plugin is left in the world.

use std::path::PathBuf;
use std::time::Duration;

use gamefeature_host::live::{Command, LiveWorld};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{ExperienceManager, Session};
use gamefeature_tests::{default_experience, session_with, shared_cache, trusted, ExperienceDir, PluginDir};
use gamefeature_tests::{TestPlugin, DEFAULT_PLUGINS, OTHER_LANGUAGE_PLUGINS};

use crate::{nothing_left, TOKIO};

/// The most commands one input runs.
const MAX_COMMANDS: usize = 24;
const FRAME: Duration = Duration::from_millis(33);

struct Fixture {
    /// A world that keeps the plugins in other languages than Rust active, so that an input's end of play does
    /// not unload them (loading them again costs a hundred times what a Rust plugin's load does). Uninstalling
    /// them is refused while it plays; the Rust plugins are uninstalled and installed again.
    keeper: ExperienceManager,
    plugins: PluginDir,
    experiences: ExperienceDir,
    session: Session,
}

thread_local! {
    static FIXTURE: Fixture = {
        let plugins = PluginDir::with(&DEFAULT_PLUGINS);
        let experiences = default_experience();
        let session = session_with(&plugins, Some(&shared_cache()), trusted());
        let mut keeper = session.create_world("keeper", NetMode::Standalone);
        let path = experiences.write("keeper.toml", &keeper_experience(&experiences));
        TOKIO.with(|tokio| tokio.block_on(keeper.load(&path))).expect("the keeper's experience loads");
        Fixture { keeper, plugins, experiences, session }
    };
}

/// The default experience (its classes, pawn data and actions) playing only the plugins in other languages.
fn keeper_experience(experiences: &ExperienceDir) -> String {
    let default = std::fs::read_to_string(experiences.path().join("default.toml")).expect("the default experience");
    let names: Vec<String> = OTHER_LANGUAGE_PLUGINS.iter().map(|p| format!("{:?}", p.name)).collect();
    let features = format!("features = [{}]", names.join(", "));
    let lines = default.lines().filter(|line| !line.starts_with("action-sets"));
    lines.map(|line| if line.starts_with("features") { features.as_str() } else { line }).collect::<Vec<_>>().join("\n")
}

/// A plugin of the experience, or (rarely) a name no plugin has.
fn plugin(byte: u8) -> (String, Option<&'static TestPlugin>) {
    match DEFAULT_PLUGINS.get(usize::from(byte) % (DEFAULT_PLUGINS.len() + 1)) {
        Some(plugin) => (plugin.name.to_string(), Some(plugin)),
        None => ("no-such-plugin".to_string(), None),
    }
}

fn command(kind: u8, argument: u8, plugins: &PluginDir) -> Command {
    let (name, found) = plugin(argument);
    match kind % 9 {
        0 => Command::Activate(name),
        1 => Command::Deactivate(name),
        2 => Command::Reload(name),
        3 => Command::Uninstall(name),
        4 => Command::Install(found.map_or_else(|| PathBuf::from("/nonexistent"), |p| plugins.folder(p))),
        5 => Command::Rescan,
        6 => Command::Spawn(usize::from(argument % 3) + 1),
        7 => Command::Features,
        _ => Command::State,
    }
}

/// See the module's documentation.
pub fn live_world(data: &[u8]) {
    FIXTURE.with(|fixture| TOKIO.with(|tokio| tokio.block_on(play(fixture, data))))
}

async fn play(fixture: &Fixture, data: &[u8]) {
    let session = &fixture.session;
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&fixture.experiences.path().join("default.toml")).await.expect("the default experience loads");
    let mut live = LiveWorld::new(manager, session);
    for (step, pair) in data.chunks(2).take(MAX_COMMANDS).enumerate() {
        let (kind, argument) = (pair[0], pair.get(1).copied().unwrap_or(0));
        // Frames between commands, as a running world has them (one in every nine pairs is all frames).
        let frames = if kind % 9 == 8 { usize::from(argument % 4) + 1 } else { 1 };
        let command = command(kind, argument, &fixture.plugins);
        let _outcome = live.execute(&command).await;
        for _ in 0..frames {
            live.manager().tick(FRAME);
        }
        if let Err(broken) = world::lock(live.manager().world()).check_invariants() {
            panic!("after command {step} ({command:?}): {broken}");
        }
    }
    let mut manager = live.into_manager();
    manager.end_play().await.expect("play ends");
    nothing_left(&world::lock(manager.world()));
    restore(fixture);
}

/// Puts back what an input uninstalled: the plugins' folders are still there, and a rescan installs them.
fn restore(fixture: &Fixture) {
    let (_new, problems) = fixture.session.rescan();
    assert!(problems.is_empty(), "the plugin folders are found again: {problems:?}");
    let keeper = fixture.keeper.live_features();
    assert_eq!(keeper.len(), OTHER_LANGUAGE_PLUGINS.len(), "the keeper's plugins are never uninstalled: {keeper:?}");
}
