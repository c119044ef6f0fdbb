//! The hostile plugin (`tests/plugins/hostile`) beside lyra-character: the fixtures of the sandbox and guard
//! tests.

use gamefeature_host::experience::ExperienceManager;
use gamefeature_host::game;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::Session;

use crate::{experience_with_features, ExperienceDir, PluginDir, HOSTILE};

/// The hostile plugin's manifest under `name`: it declares every permission, so the tests see what the sandbox
/// itself stops.
pub fn hostile_manifest(name: &str) -> String {
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
         [permissions]\nspawn-actors = true\nsend-events = true\nrelevancy = true\ncomponent-requests = [\"*\"]\nfs.data = true\n\
         [bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n"
    )
}

/// Adds a copy of the hostile plugin named `name` that behaves as `behaviour` says.
pub fn hostile_named(plugins: &PluginDir, name: &str, behaviour: &str) -> std::path::PathBuf {
    let folder = plugins.add_custom(name, &hostile_manifest(name), Some(&HOSTILE));
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
    folder
}

pub fn hostile(plugins: &PluginDir, behaviour: &str) {
    hostile_named(plugins, "hostile", behaviour);
}

/// Plays one player through Lyra's character flow and checks lyra-character brought it to GameplayReady.
pub fn play_one_player(manager: &mut ExperienceManager, behaviour: &str) {
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    let w = world::lock(manager.world());
    for feature in ["PawnExtension", "Hero"] {
        let state = w.feature_state(player.pawn, feature).unwrap();
        assert_eq!(w.state_text(state), Some("InitState.GameplayReady"), "{behaviour}: {feature}");
    }
}

/// Loads `hostile` and `lyra-character` into a world "w" of `session` and plays one player through the flow.
pub async fn play_beside_lyra(session: &Session, behaviour: &str) -> ExperienceManager {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    play_one_player(&mut manager, behaviour);
    manager
}

/// The hostile plugin's log lines at `level`.
pub fn hostile_lines(session: &Session, level: LogLevel) -> Vec<String> {
    session.timeline().texts(&track::instance("hostile", "w"), EventKind::Log(level))
}

/// Plays `behaviour` beside lyra-character in `session`, checks the hostile plugin was tolerated (still live at
/// the end of play), and returns its info and warning lines.
pub async fn tolerated(session: &Session, behaviour: &str) -> (Vec<String>, Vec<String>) {
    let mut manager = play_beside_lyra(session, behaviour).await;
    assert_eq!(manager.live_features(), ["hostile", "lyra-character"], "{behaviour} is recoverable");
    manager.end_play().await.unwrap();
    (hostile_lines(session, LogLevel::Info), hostile_lines(session, LogLevel::Warn))
}

/// Loads the hostile plugin alone (as `plugins` holds it) into world "w" of `session`.
pub async fn hostile_alone(session: &Session) -> ExperienceManager {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    manager
}

/// What the hostile plugin said of each import it tried, for a behaviour logging `<behaviour> <import>: <outcome>`
/// lines (`pending-kill`, `ungranted`).
pub struct Outcomes {
    behaviour: String,
    pub lines: Vec<String>,
}

impl Outcomes {
    pub fn of(session: &Session, behaviour: &str) -> Self {
        let prefix = format!("{behaviour} ");
        let lines = hostile_lines(session, LogLevel::Info).into_iter().filter(|l| l.starts_with(&prefix)).collect();
        Outcomes { behaviour: behaviour.to_string(), lines }
    }

    /// The outcome of one import (`accepted`, or `refused <error>`); a panic when it was not tried.
    pub fn of_import(&self, import: &str) -> &str {
        let prefix = format!("{} {import}: ", self.behaviour);
        let line = self.lines.iter().find(|l| l.starts_with(&prefix));
        let line = line.unwrap_or_else(|| panic!("{import} was not tried: {:#?}", self.lines));
        &line[prefix.len()..]
    }
}
