//! `gfhost test PLUGIN`: a plugin author's own scenario tests. Each `tests/*.toml` file in the plugin's folder
//! is a scenario: the plugin (and the plugins it names `with`) plays in a fresh headless world of the game an
//! experience describes, and the steps run in order — players spawned the Lyra way, actors spawned, frames
//! passed, events sent, properties written — with expectations between them on its log, init states, components
//! and properties. The scenario fails at the first expectation that does not hold, when a played plugin fails,
//! or when something is left behind at end of play; the report says which step and why. The language the plugin
//! is written in does not matter: scenarios drive the world, not the plugin's code.
//!
//! ```toml
//! [scenario]
//! name = "greets every character"
//!
//! [[step]]
//! spawn-players = 2
//!
//! [[step]]
//! expect-log = "greets character"
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use gamefeature_host::experience::ExperienceManager;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, ActorId, NetMode, Value};
use gamefeature_host::{game, Session, SessionOptions};
use serde::{Deserialize, Serialize};

/// The folder of a plugin holding its scenarios.
pub const SCENARIO_FOLDER: &str = "tests";

/// One frame of a scenario's world.
const FRAME: Duration = Duration::from_millis(33);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    scenario: Header,
    #[serde(default)]
    step: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    name: String,
    /// Other plugins that play beside the one under test.
    #[serde(default)]
    with: Vec<String>,
}

/// One step: an action, or an expectation (`expect-…`). Actors are named `player1.pawn`, `player1.controller`,
/// `player1.state` (players numbered from 1 as spawned), or by the `name` a `spawn` step gave.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
enum Step {
    /// Players arrive as the game mode brings them: pawn spawned, possessed, player state replicated.
    SpawnPlayers(usize),
    /// An actor of a class, named for later steps.
    Spawn { class: String, name: String },
    /// Frames pass: timers fire, queued work is delivered.
    Frames(u32),
    /// An extension event about an actor, as the game sends it.
    Event { to: String, event: String },
    /// A property written by the game.
    Set { actor: String, component: String, property: String, value: toml::Value },
    /// A line of the tested plugin's log contains this text.
    ExpectLog(String),
    /// No line of the tested plugin's log contains this text.
    ExpectNoLog(String),
    /// An init-state feature of an actor has reached a state.
    ExpectState { actor: String, feature: String, state: String },
    /// A component of an actor holds a property of this value.
    ExpectProperty { actor: String, component: String, property: String, equals: toml::Value },
    /// An actor carries a component.
    ExpectComponent { actor: String, component: String },
    /// An actor does not carry a component.
    ExpectNoComponent { actor: String, component: String },
}

/// A scenario's world and what its steps named.
struct Run<'a> {
    session: &'a Session,
    manager: ExperienceManager,
    plugin: &'a str,
    world: String,
    players: Vec<game::Player>,
    named: HashMap<String, ActorId>,
}

impl Run<'_> {
    fn actor(&self, name: &str) -> Result<ActorId, String> {
        if let Some(actor) = self.named.get(name) {
            return Ok(*actor);
        }
        let unknown = || {
            format!("no actor is named {name:?} (player1.pawn, player1.controller, player1.state, or a spawn's name)")
        };
        let (player, part) = name.split_once('.').ok_or_else(unknown)?;
        let number: usize = player.strip_prefix("player").and_then(|n| n.parse().ok()).ok_or_else(unknown)?;
        let player =
            self.players.get(number.wrapping_sub(1)).ok_or_else(|| format!("there is no player {number} yet"))?;
        match part {
            "pawn" => Ok(player.pawn),
            "controller" => Ok(player.controller),
            "state" => Ok(player.player_state),
            _ => Err(unknown()),
        }
    }

    fn log(&self) -> Vec<String> {
        let instance = track::instance(self.plugin, &self.world);
        let levels = [LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error];
        let timeline = self.session.timeline();
        let mut lines: Vec<(Duration, String)> = Vec::new();
        for event in timeline.events().into_iter().filter(|e| e.track == instance) {
            if levels.iter().any(|level| event.kind == EventKind::Log(*level)) {
                lines.push((event.at, event.text));
            }
        }
        lines.sort_by_key(|(at, _)| *at);
        lines.into_iter().map(|(_, text)| text).collect()
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::SpawnPlayers(count) => {
                let pawn_class = self.manager.pawn_class();
                for _ in 0..*count {
                    let player =
                        self.manager.with_world(|w| game::spawn_player(w, &pawn_class)).map_err(|e| e.to_string())?;
                    self.manager.with_world(|w| game::possess(w, &player)).map_err(|e| e.to_string())?;
                    self.manager.with_world(|w| game::replicate_player_state(w, &player)).map_err(|e| e.to_string())?;
                    self.players.push(player);
                }
            }
            Step::Spawn { class, name } => {
                let actor = self.manager.with_world(|w| w.spawn(class)).map_err(|e| e.to_string())?;
                self.named.insert(name.clone(), actor);
            }
            Step::Frames(frames) => {
                for _ in 0..*frames {
                    self.manager.tick(FRAME);
                }
            }
            Step::Event { to, event } => {
                let actor = self.actor(to)?;
                self.manager.with_world(|w| w.send_extension_event(actor, event)).map_err(|e| e.to_string())?;
            }
            Step::Set { actor, component, property, value } => {
                let (actor, value) = (self.actor(actor)?, world_value(value)?);
                self.manager
                    .with_world(|w| w.set_property(actor, component, property, value))
                    .map_err(|e| e.to_string())?;
            }
            Step::ExpectLog(text) | Step::ExpectNoLog(text) => {
                let lines = self.log();
                let found = lines.iter().any(|line| line.contains(text.as_str()));
                match (found, matches!(step, Step::ExpectLog(_))) {
                    (true, false) => return Err(format!("a line of {}'s log contains {text:?}", self.plugin)),
                    (false, true) => {
                        let last: Vec<&String> = lines.iter().rev().take(5).collect();
                        return Err(format!(
                            "no line of {}'s log contains {text:?}; its last lines: {last:?}",
                            self.plugin
                        ));
                    }
                    _ => {}
                }
            }
            Step::ExpectState { actor, feature, state } => {
                let id = self.actor(actor)?;
                let w = world::lock(self.manager.world());
                let reached = w.feature_state(id, feature).ok().and_then(|s| w.state_text(s).map(str::to_string));
                if reached.as_deref() != Some(state.as_str()) {
                    let at = reached.map_or("no state (not registered)".to_string(), |s| format!("{s:?}"));
                    return Err(format!("{feature} of {actor} is at {at}, not {state:?}"));
                }
            }
            Step::ExpectProperty { actor, component, property, equals } => {
                let (id, expected) = (self.actor(actor)?, world_value(equals)?);
                let w = world::lock(self.manager.world());
                let found = w
                    .actor(id)
                    .map_err(|e| e.to_string())?
                    .component(component)
                    .and_then(|c| c.properties.get(property).cloned());
                if found.as_ref() != Some(&expected) {
                    return Err(format!("{component}.{property} of {actor} is {found:?}, not {expected:?}"));
                }
            }
            Step::ExpectComponent { actor, component } | Step::ExpectNoComponent { actor, component } => {
                let id = self.actor(actor)?;
                let w = world::lock(self.manager.world());
                let has = w.actor(id).map_err(|e| e.to_string())?.component(component).is_some();
                match (has, matches!(step, Step::ExpectComponent { .. })) {
                    (false, true) => return Err(format!("{actor} has no {component}")),
                    (true, false) => return Err(format!("{actor} has a {component}")),
                    _ => {}
                }
            }
        }
        self.manager.pump();
        match self.manager.report().failures.first() {
            Some(failure) => Err(format!("a plugin failed: {failure}")),
            None => Ok(()),
        }
    }
}

fn world_value(value: &toml::Value) -> Result<Value, String> {
    match value {
        toml::Value::Boolean(b) => Ok(Value::Boolean(*b)),
        toml::Value::Integer(i) => Ok(Value::Integer(*i)),
        toml::Value::Float(f) => Ok(Value::Float(*f)),
        toml::Value::String(s) => Ok(Value::Text(s.clone())),
        other => Err(format!("{other} is not a property value (a boolean, an integer, a float or a string)")),
    }
}

/// How a step reads in a report.
/// A step as its file spells it (`spawn-players = 2`).
fn shown(step: &Step) -> String {
    let spelled = match toml::Value::try_from(step) {
        Ok(toml::Value::Table(table)) => table.iter().map(|(key, value)| format!("{key} = {value}")).collect(),
        _ => format!("{step:?}"),
    };
    gamefeature_host::text::shown(&spelled, 120)
}

/// What the tested plugin said went wrong while a step ran (a panic's message is only in its log), to follow the
/// step's failure.
fn said_during(session: &Session, plugin: &str, world: &str, since: u64) -> String {
    let instance = track::instance(plugin, world);
    let said: Vec<String> = session
        .timeline()
        .events_since(since)
        .0
        .into_iter()
        .filter(|e| e.track == instance && matches!(e.kind, EventKind::Log(LogLevel::Warn | LogLevel::Error)))
        .map(|e| e.text)
        .filter(|text| !text.trim().is_empty())
        .collect();
    match said.as_slice() {
        [] => String::new(),
        lines => format!("\n        it said: {}", lines[lines.len().saturating_sub(5)..].join("\n                 ")),
    }
}

/// Runs one scenario file in world `world`; `Err` says why it failed.
fn run_scenario(
    session: &Session,
    tokio: &tokio::runtime::Runtime,
    plugin: &str,
    game: Option<&Path>,
    file: &Path,
    world: &str,
) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read it: {e}"))?;
    let scenario: ScenarioFile =
        toml::from_str(&text).map_err(|e| format!("not a scenario: {}", e.to_string().trim()))?;
    let mut features = vec![plugin.to_string()];
    features.extend(scenario.scenario.with.iter().cloned());
    let folder = tempfile::tempdir().map_err(|e| e.to_string())?;
    let experience = folder.path().join("scenario.toml");
    let experience_text =
        crate::check::game_experience(&format!("test {plugin}"), &features, game).map_err(|e| format!("{e:#}"))?;
    std::fs::write(&experience, experience_text).map_err(|e| e.to_string())?;
    let mut manager = session.create_world(world, NetMode::Standalone);
    tokio.block_on(manager.load(&experience)).map_err(|e| format!("the world did not load: {e}"))?;
    let mut run =
        Run { session, manager, plugin, world: world.to_string(), players: Vec::new(), named: HashMap::new() };
    if let Some(failure) = run.manager.report().failures.first() {
        return Err(format!("a plugin failed as the world loaded: {failure}"));
    }
    for (index, step) in scenario.step.iter().enumerate() {
        let logged = session.timeline().events_since(u64::MAX).1;
        run.step(step).map_err(|why| {
            let said = said_during(session, plugin, world, logged);
            format!("step {} ({}): {why}{said}", index + 1, shown(step))
        })?;
    }
    tokio.block_on(run.manager.end_play()).map_err(|e| e.to_string())?;
    if let Some(left) = crate::check::left_behind(&world::lock(run.manager.world())) {
        return Err(format!("at end of play: {left}"));
    }
    Ok(scenario.scenario.name)
}

/// `gfhost test PLUGIN`: runs every scenario of the plugin; success when all pass.
pub fn test_plugin(name: &str, game: Option<&Path>, options: SessionOptions) -> Result<ExitCode> {
    Ok(if scenarios_pass(name, game, options)? { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Tests every plugin of the folder `dir` that has scenarios, each as [`test_plugin`] does, in name order:
/// what CI runs over a mod's folder. Fails when any scenario does, or a plugin cannot be built or loaded.
pub fn test_folder(dir: &Path, game: Option<&Path>, options: SessionOptions) -> Result<ExitCode> {
    let with_scenarios: Vec<PathBuf> =
        crate::build::plugin_folders(dir)?.into_iter().filter(|folder| folder.join(SCENARIO_FOLDER).is_dir()).collect();
    if with_scenarios.is_empty() {
        bail!("no plugin in {} has scenarios ({SCENARIO_FOLDER}/NAME.toml beside its plugin.toml)", dir.display());
    }
    let mut failed = Vec::new();
    for folder in &with_scenarios {
        let name = gamefeature_host::feature::PluginManifest::read(folder)?.name;
        let options = SessionOptions { plugin_dirs: vec![dir.to_path_buf()], ..options.clone() };
        match scenarios_pass(&name, game, options) {
            Ok(true) => {}
            Ok(false) => failed.push(name),
            Err(e) => {
                println!("  FAIL  {name}: {}", gamefeature_host::text::shown(&format!("{e:#}"), 2048));
                failed.push(name);
            }
        }
    }
    let passed = with_scenarios.len() - failed.len();
    println!(
        "tested {} plugin(s) in {}: {passed} passed, {} failed",
        with_scenarios.len(),
        dir.display(),
        failed.len()
    );
    if !failed.is_empty() {
        println!("failed: {}", failed.join(", "));
    }
    Ok(if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Runs `name`'s scenarios (building it first when its component is stale): whether they all passed.
fn scenarios_pass(name: &str, game: Option<&Path>, options: SessionOptions) -> Result<bool> {
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let dirs = options.plugin_dirs.clone();
    let session = Session::new(options)?;
    let manifest = session.features().manifest(name).with_context(|| crate::no_plugin_named(name, &dirs))?;
    // A test of a component older than its sources would test what the modder no longer has.
    if let Some(why) = crate::build::staleness(&manifest) {
        println!("building {name} first: {why}");
        let built = crate::build::build_plugins(&manifest.dir)?;
        if let Some(failure) = built.failures.first() {
            bail!("{name} does not build, so its scenarios cannot run: {failure:#}");
        }
    }
    let folder = manifest.dir.join(SCENARIO_FOLDER);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no scenarios: write {SCENARIO_FOLDER}/NAME.toml files (`gfhost new` writes a first one)",
            folder.display()
        );
    }
    println!("testing {name}: {} scenario(s) in {}", files.len(), folder.display());
    let mut failed = 0;
    for (index, file) in files.iter().enumerate() {
        let shown_file = file.strip_prefix(&manifest.dir).unwrap_or(file).display().to_string();
        match run_scenario(&session, &tokio, name, game, file, &format!("test-{}", index + 1)) {
            Ok(title) => println!("  ok    {title} ({shown_file})"),
            Err(why) => {
                failed += 1;
                println!("  FAIL  {shown_file}: {why}");
            }
        }
    }
    println!("{} passed, {failed} failed", files.len() - failed);
    Ok(failed == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse_and_an_unknown_step_says_so() {
        let text = "[scenario]\nname = \"n\"\nwith = [\"lyra-character\"]\n\n[[step]]\nspawn-players = 2\n\n[[step]]\n\
                    expect-state = { actor = \"player1.pawn\", feature = \"Hero\", state = \"InitState.GameplayReady\" }\n\n\
                    [[step]]\nset = { actor = \"player2.pawn\", component = \"Health\", property = \"hp\", value = 5 }\n";
        let scenario: ScenarioFile = toml::from_str(text).unwrap();
        assert_eq!(scenario.scenario.with, ["lyra-character"]);
        assert!(matches!(scenario.step[0], Step::SpawnPlayers(2)));
        assert!(matches!(&scenario.step[2], Step::Set { value: toml::Value::Integer(5), .. }));
        let unknown = toml::from_str::<ScenarioFile>("[scenario]\nname = \"n\"\n[[step]]\ndance = 1\n").unwrap_err();
        assert!(unknown.to_string().contains("dance"), "{unknown}");
    }
}
