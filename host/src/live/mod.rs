//! A world that keeps running: the operations a console, a script or a game applies to it between frames —
//! features activated, deactivated, hot-reloaded, installed and uninstalled, players spawned, the world
//! summarised — each a method of [`LiveWorld`], and [`Command`] their text form for consoles and scripts.

mod watch;

pub use watch::{FolderWatcher, Settling, QUIET};

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use crate::experience::ExperienceManager;
use crate::game;
use crate::world;

/// One console or script command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Lists the installed plugins: version, state, whether this world runs them.
    Features,
    /// Activates a plugin in this world (applied to every actor that exists).
    Activate(String),
    /// Deactivates a plugin in this world, leaving nothing of it behind.
    Deactivate(String),
    /// Hot-reloads a plugin from its files as they are now.
    Reload(String),
    /// Installs the plugin folder at this path.
    Install(PathBuf),
    /// Installs the plugin folders that appeared in the plugin directories.
    Rescan,
    /// Takes a plugin out of every world and the process.
    Uninstall(String),
    /// Spawns players (pawn, controller, player state), as the game mode does.
    Spawn(usize),
    /// Summarises the world: actors, components, handlers, init states.
    State,
    /// Writes the timeline as a Chrome trace.
    Trace(PathBuf),
    /// Lets time pass (in a script).
    Wait(Duration),
    /// Ends play and stops.
    Quit,
}

/// The commands, as a console prints them for `help`.
pub const HELP: &str = "features | activate NAME | deactivate NAME | reload NAME | install DIR | rescan | \
                        uninstall NAME | spawn N | state | trace FILE | wait MS | quit";

impl FromStr for Command {
    type Err = String;

    fn from_str(line: &str) -> Result<Self, String> {
        let mut words = line.split_whitespace();
        let verb = words.next().ok_or("empty command")?;
        let argument = words.next();
        if words.next().is_some() {
            return Err(format!("{verb}: too many arguments ({HELP})"));
        }
        let needs = |what: &str| argument.map(str::to_string).ok_or_else(|| format!("{verb} needs {what}"));
        let count = |what: &str| needs(what)?.parse::<u64>().map_err(|e| format!("{verb}: {e}"));
        let command = match verb {
            "features" => Command::Features,
            "activate" => Command::Activate(needs("a plugin name")?),
            "deactivate" => Command::Deactivate(needs("a plugin name")?),
            "reload" => Command::Reload(needs("a plugin name")?),
            "install" => Command::Install(needs("a plugin folder")?.into()),
            "rescan" => Command::Rescan,
            "uninstall" => Command::Uninstall(needs("a plugin name")?),
            "spawn" => Command::Spawn(count("a number of players")?.min(10_000) as usize),
            "state" => Command::State,
            "trace" => Command::Trace(needs("a file")?.into()),
            "wait" => Command::Wait(Duration::from_millis(count("milliseconds")?.min(60_000))),
            "quit" | "exit" => Command::Quit,
            other => return Err(format!("unknown command {other:?} ({HELP})")),
        };
        if argument.is_some() && matches!(command, Command::Features | Command::State | Command::Rescan | Command::Quit)
        {
            return Err(format!("{verb} takes no argument"));
        }
        Ok(command)
    }
}

/// The plugins `manager`'s world wants (running, quarantined or failed to activate: a new version is how a plugin
/// comes back) whose component or manifest is among `files`, each once: what a watcher's changes mean.
/// Paths are compared as the files they name: a watcher reports absolute paths, a plugin folder given as
/// `--plugins plugins` makes relative ones.
pub fn plugins_of(manager: &ExperienceManager, files: &[PathBuf]) -> Vec<String> {
    let wanted = manager.wanted_features();
    let files: Vec<PathBuf> = files.iter().map(|file| same_file_key(file)).collect();
    let plugins_list = manager.features().list();
    let changed = |file: &Path| {
        plugins_list.iter().find(|p| {
            wanted.contains(&p.manifest.name)
                && (same_file_key(&p.manifest.component_path) == file
                    || same_file_key(&p.manifest.manifest_path) == file)
        })
    };
    let mut plugins: Vec<String> = Vec::new();
    for plugin in files.iter().filter_map(|f| changed(f)) {
        if !plugins.contains(&plugin.manifest.name) {
            plugins.push(plugin.manifest.name.clone());
        }
    }
    plugins
}

/// A loaded experience's world, kept running and changed by commands: owned (`LiveWorld<'s>`), or borrowed
/// for a command from whatever owns it (`LiveWorld<'s, &mut ExperienceManager>`, as a game loop does).
pub struct LiveWorld<'s, M = ExperienceManager> {
    session: &'s crate::Session,
    world: M,
}

impl<'s, M: std::borrow::BorrowMut<ExperienceManager>> LiveWorld<'s, M> {
    /// Takes over (or borrows) a world whose experience is loaded.
    pub fn new(world: M, session: &'s crate::Session) -> Self {
        LiveWorld { session, world }
    }

    /// The world's experience manager, for what the commands do not cover.
    pub fn manager(&mut self) -> &mut ExperienceManager {
        self.world.borrow_mut()
    }

    /// The world's experience manager, to read.
    pub fn manager_ref(&self) -> &ExperienceManager {
        self.world.borrow()
    }

    /// Gives the world back (to end play).
    pub fn into_manager(self) -> M {
        self.world
    }

    /// Carries out one command; returns what a console shows, or why it was refused. Nothing a command
    /// refuses changes the world.
    pub async fn execute(&mut self, command: &Command) -> Result<String, crate::Error> {
        match command {
            Command::Features => Ok(self.features_text()),
            Command::Activate(name) => {
                self.manager().activate_feature(name).await?;
                self.failure_or(format!("{name} active"), name)
            }
            Command::Deactivate(name) => match self.manager().deactivate_feature(name).await {
                true => Ok(format!("{name} deactivated")),
                false => Err(crate::Error::NotFound {
                    name: name.clone(),
                    message: format!("{name} is not active in this world"),
                }),
            },
            Command::Reload(name) => {
                let reloaded = self.manager().reload_feature(name).await?;
                Ok(reloaded.to_string())
            }
            Command::Install(dir) => match self.manager().install_plugin(dir)? {
                (name, true) => Ok(format!("{name} installed from {}", dir.display())),
                (name, false) => Ok(format!("{name} is installed already, from {}", dir.display())),
            },
            Command::Rescan => {
                let (new, problems) = self.session.rescan();
                let mut text = match new.as_slice() {
                    [] => "no new plugins".to_string(),
                    new => format!("installed {}", new.join(", ")),
                };
                for problem in problems {
                    text += &format!("\nproblem: {problem}");
                }
                Ok(text)
            }
            Command::Uninstall(name) => {
                let before = self.session.runtime().compiled_components();
                self.manager().uninstall_plugin(name).await?;
                let after = self.session.runtime().compiled_components();
                Ok(format!("{name} uninstalled; compiled components held: {before} -> {after}"))
            }
            Command::Spawn(players) => Ok(self.spawn(*players)),
            Command::State => Ok(self.state_text()),
            Command::Trace(path) => {
                let json = serde_json::to_string_pretty(&self.session.timeline().to_chrome_trace())
                    .map_err(|e| crate::Error::host(e.to_string()))?;
                std::fs::write(path, json)
                    .map_err(|e| crate::Error::bad_input(path, format!("writing {}: {e}", path.display())))?;
                Ok(format!("trace written to {}", path.display()))
            }
            Command::Wait(duration) => {
                tokio::time::sleep(*duration).await;
                Ok(String::new())
            }
            Command::Quit => Ok("ending play".into()),
        }
    }

    /// The folders of the plugins this world wants (running, quarantined or failed to activate), to watch for
    /// new versions.
    pub fn plugin_folders(&self) -> Vec<PathBuf> {
        let wanted = self.manager_ref().wanted_features();
        self.session
            .features()
            .list()
            .into_iter()
            .filter(|p| wanted.contains(&p.manifest.name))
            .map(|p| p.manifest.dir.clone())
            .collect()
    }

    /// The plugins this world wants whose component or manifest is among `files` (see [`plugins_of`]).
    pub fn plugins_of(&self, files: &[PathBuf]) -> Vec<String> {
        plugins_of(self.manager_ref(), files)
    }

    /// Hot-reloads the plugins this world runs whose component or manifest is among `files`, each once;
    /// returns what a console shows for each.
    pub async fn reload_changed(&mut self, files: &[PathBuf]) -> Vec<Result<String, crate::Error>> {
        let mut outcomes = Vec::new();
        for plugin in self.plugins_of(files) {
            outcomes.push(self.execute(&Command::Reload(plugin)).await);
        }
        outcomes
    }

    /// The first half of a reload — a plugin's new version read and compiled — as a task that needs no world,
    /// to run off the frame thread; hand its result to [`apply`](Self::apply) between frames.
    pub fn prepare(
        &self,
        plugin: &str,
    ) -> impl std::future::Future<Output = Result<crate::experience::NewVersion, crate::Error>> + Send + 'static {
        let (features, plugin) = (self.session.features().clone(), plugin.to_string());
        async move { Ok(crate::experience::NewVersion::prepare(&features, &plugin).await?) }
    }

    /// The second half of a reload, between frames.
    pub async fn apply(&mut self, new: crate::experience::NewVersion) -> Result<String, crate::Error> {
        let reloaded = self.manager().apply_new_version(new).await?;
        Ok(reloaded.to_string())
    }

    /// `ok` unless `plugin` failed since the last command (its failure is the answer).
    fn failure_or(&self, ok: String, plugin: &str) -> Result<String, crate::Error> {
        match self.manager_ref().report().failures.iter().rev().find(|f| f.source == plugin) {
            Some(failure) if !self.manager_ref().live_features().iter().any(|f| f == plugin) => {
                Err(crate::Error::from_failure(failure, false))
            }
            _ => Ok(ok),
        }
    }

    fn features_text(&self) -> String {
        let live = self.manager_ref().live_features();
        let mut lines = Vec::new();
        for info in self.session.features().list() {
            let here = if live.contains(&info.manifest.name) { "  (in this world)" } else { "" };
            lines.push(format!("{} {}  [{}]{here}", info.manifest.name, info.manifest.version, info.state));
        }
        lines.join("\n")
    }

    fn spawn(&mut self, players: usize) -> String {
        let pawn_class = self.manager().pawn_class();
        let spawned: Vec<game::Player> = self
            .manager()
            .with_world(|w| (0..players).filter_map(|_| game::spawn_player(w, &pawn_class).ok()).collect());
        // The game's part, as `gfhost run` plays it: the controller arrives, then the player state.
        self.manager().with_world(|w| spawned.iter().filter_map(|p| game::possess(w, p).err()).count());
        self.manager().with_world(|w| spawned.iter().filter_map(|p| game::replicate_player_state(w, p).err()).count());
        format!("spawned {} player(s)", spawned.len())
    }

    fn state_text(&self) -> String {
        let w = world::lock(self.manager_ref().world());
        let mut reached: std::collections::BTreeMap<String, usize> = Default::default();
        for actor in w.actors() {
            for feature in w.manager.init_states.features(actor.id) {
                let state = w.state_text(feature.state).unwrap_or("no state");
                *reached.entry(format!("{} {state}", w.name_text(feature.feature))).or_default() += 1;
            }
        }
        let states: Vec<String> = reached.iter().map(|(s, n)| format!("{n} x {s}")).collect();
        format!(
            "{} actors, {} feature components, {} handlers, {} subscriptions, {} init-state features{}{}",
            w.actors().count(),
            w.requested_component_count(),
            w.live_handlers(),
            w.live_subscriptions(),
            w.live_features(),
            if states.is_empty() { "" } else { "; " },
            states.join(", ")
        )
    }
}

/// What two paths to one file have in common: the absolute path, its folder's links resolved (the file itself
/// may be gone for a moment while a build replaces it).
fn same_file_key(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent().and_then(|dir| dir.canonicalize().ok()), absolute.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_bad_ones_say_why() {
        assert_eq!("activate hello".parse(), Ok(Command::Activate("hello".into())));
        assert_eq!("spawn 3".parse(), Ok(Command::Spawn(3)));
        assert_eq!("wait 20".parse(), Ok(Command::Wait(Duration::from_millis(20))));
        assert_eq!("  state ".parse(), Ok(Command::State));
        assert!("activate".parse::<Command>().unwrap_err().contains("needs a plugin name"));
        assert!("spawn many".parse::<Command>().unwrap_err().contains("spawn"));
        assert!("dance".parse::<Command>().unwrap_err().contains("unknown command"));
        assert!("state now".parse::<Command>().unwrap_err().contains("takes no argument"));
    }
}
