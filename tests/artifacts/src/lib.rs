//! The plugins of `plugins/` (examples) and `tests/plugins/` (fixtures), built from source for `wasm32-wasip2`
//! by this crate's build script, as one
//! [`TestPlugin`] constant each and a `foreach_plugin!` macro listing them all; and temporary plugin and
//! experience folders to run them from.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A plugin from `plugins/` or `tests/plugins/`: its name, source folder and built component.
#[derive(Debug, Clone, Copy)]
pub struct TestPlugin {
    pub name: &'static str,
    pub source: &'static str,
    pub component: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/plugins.rs"));

/// A temporary plugin directory with packages of chosen plugins: each folder holds the plugin's `plugin.toml`,
/// its `data/` folder if it has one, and its built component, as `./dev run` lays them out.
pub struct PluginDir {
    dir: TempDir,
}

impl PluginDir {
    pub fn with(plugins: &[TestPlugin]) -> Self {
        let dir = TempDir::new().expect("creating a temporary plugin directory");
        let plugin_dir = PluginDir { dir };
        for plugin in plugins {
            plugin_dir.add(plugin);
        }
        plugin_dir
    }

    /// Adds a plugin's package.
    pub fn add(&self, plugin: &TestPlugin) {
        let source = Path::new(plugin.source);
        let target = self.folder(plugin);
        std::fs::create_dir_all(&target).unwrap();
        std::fs::copy(source.join("plugin.toml"), target.join("plugin.toml")).unwrap();
        let component = Path::new(plugin.component);
        std::fs::copy(component, target.join(component.file_name().unwrap())).unwrap();
        let data = source.join("data");
        if data.is_dir() {
            std::fs::create_dir_all(target.join("data")).unwrap();
            for entry in std::fs::read_dir(data).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, target.join("data").join(path.file_name().unwrap())).unwrap();
            }
        }
    }

    /// Adds a package with a manifest of one's own and, optionally, another plugin's component.
    pub fn add_custom(&self, folder: &str, manifest: &str, component_from: Option<&TestPlugin>) -> PathBuf {
        let target = self.dir.path().join(folder);
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("plugin.toml"), manifest).unwrap();
        if let Some(plugin) = component_from {
            let component = Path::new(plugin.component);
            std::fs::copy(component, target.join(component.file_name().unwrap())).unwrap();
        }
        target
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The folder of a plugin's package.
    pub fn folder(&self, plugin: &TestPlugin) -> PathBuf {
        self.dir.path().join(plugin.name)
    }

    /// Rewrites a plugin's manifest.
    pub fn edit_manifest(&self, plugin: &TestPlugin, edit: impl FnOnce(String) -> String) {
        let path = self.folder(plugin).join("plugin.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(path, edit(text)).unwrap();
    }
}

/// A temporary folder of experience files and their data.
pub struct ExperienceDir {
    dir: TempDir,
}

impl Default for ExperienceDir {
    fn default() -> Self {
        Self::new()
    }
}

impl ExperienceDir {
    pub fn new() -> Self {
        ExperienceDir { dir: TempDir::new().expect("creating a temporary experience directory") }
    }

    /// Writes a file (an experience, an action set or data) and returns its path.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A compile cache shared by every test process of this checkout (under `target/`): Python and JavaScript
/// components take seconds to compile, and tests that are not about the cache need not each pay for it. The
/// cache is safe to share: writers never share a file, and entries are checked before use.
pub fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-component-cache")
}

/// The plugins the repository's default experience plays: Rust ones, then the scoreboard (Python), the
/// announcer (JavaScript) and match statistics (C).
pub const DEFAULT_PLUGINS: [TestPlugin; 10] = [
    BASE_GAMEPLAY,
    SHOOTER_CORE,
    PROGRESS_SAVE,
    LYRA_CHARACTER,
    INPUT_BINDING,
    SCORE_KEEPER,
    DAMAGEABLE_PROPS,
    SCOREBOARD,
    ANNOUNCER,
    MATCH_STATS,
];

/// The plugins of the default experience written in other languages than Rust.
pub const OTHER_LANGUAGE_PLUGINS: [TestPlugin; 3] = [SCOREBOARD, ANNOUNCER, MATCH_STATS];

/// The plugins the arena (`experiences/arena.toml`) plays: the default experience's but progress-save and match
/// statistics, and the arena's mods.
pub const ARENA_PLUGINS: [TestPlugin; 12] = [
    BASE_GAMEPLAY,
    SHOOTER_CORE,
    LYRA_CHARACTER,
    INPUT_BINDING,
    SCORE_KEEPER,
    DAMAGEABLE_PROPS,
    SCOREBOARD,
    ANNOUNCER,
    DASH,
    PICKUPS,
    SHRINKING_ZONE,
    RESPAWN,
];

/// The repository's experiences (`experiences/default.toml`, and `rooms.toml` and `arena.toml` beside it) with their action set
/// and data, copied into a folder of their own.
pub fn default_experience() -> ExperienceDir {
    let experiences = ExperienceDir::new();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiences");
    for relative in [
        "default.toml",
        "rooms.toml",
        "arena.toml",
        "action-sets/persistence.toml",
        "data/tuning.toml",
        "data/hud-layout.txt",
        "data/spawn-table.txt",
        "data/arena.txt",
        "data/arena-props.txt",
    ] {
        experiences.write(relative, &std::fs::read_to_string(source.join(relative)).unwrap());
    }
    experiences
}
