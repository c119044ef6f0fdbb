//! The seam between the feature subsystem and the code that loads plugins: their code compiled once, and an
//! instance of it made for each world.
//!
//! The subsystem loads plugins through these traits; `crate::runtime` implements them with wasmtime, and tests
//! can implement them in plain Rust. The calls into an instance are delivery's seam, [`PluginInstance`].

use std::sync::Arc;
use std::time::Duration;

use super::interface::ComponentInterface;
use super::manifest::PluginManifest;
use super::permissions::Permissions;
use crate::assets::Assets;
use crate::delivery::{CallError, PluginInstance};
use crate::timeline::{LogLevel, Timeline};
use crate::world::component_manager::OwnerId;
use crate::world::{NetMode, SharedWorld};

/// Makes a plugin's code ready to run: the subsystem's `Loading` transition.
pub trait PluginLoader: Send + Sync {
    /// Compiles the plugin's component (or reads it from the cache) and checks it against the host's world.
    fn load(&self, manifest: &PluginManifest) -> Result<Arc<dyn LoadedPlugin>, LoadError>;

    /// The plugin was unloaded: compiled code kept for it alone may be freed.
    fn unloaded(&self, _manifest: &PluginManifest) {}
}

/// Why a plugin's code could not be loaded. Every variant names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The component file does not exist: the plugin has not been built.
    #[error("component file {path} not found: build the plugin first (`gfhost build`)")]
    MissingComponent {
        /// The component file, as shown to users.
        path: String,
    },
    /// The file is not a WebAssembly component (a core module, say, or corrupt bytes) and could not be compiled.
    #[error("component file {path} is not a valid WebAssembly component: {cause}")]
    Invalid {
        /// The component file, as shown to users.
        path: String,
        /// Why it could not be compiled, and what to do when that is known.
        cause: String,
    },
    /// The component is valid but does not fit the world: another API version than the manifest's or the host's, or
    /// imports the host does not provide, or exports missing.
    #[error("component file {path} does not fit the gamefeature:plugin world: {cause}")]
    Incompatible {
        /// The component file, as shown to users.
        path: String,
        /// What does not fit: the versions at odds, or each import the host cannot satisfy.
        cause: String,
    },
    /// Any other failure: the file could not be read, the host's configuration leaves too little memory to compile
    /// it, or the loader panicked.
    #[error("component file {path}: {cause}")]
    Other {
        /// The component file, as shown to users.
        path: String,
        /// What went wrong.
        cause: String,
    },
    /// The plugin's folder is no longer what was admitted (a package changed since it was installed, say): its
    /// code is not read.
    #[error("{0}")]
    Refused(String),
}

/// How a loaded plugin's code was obtained, for timelines and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Compiled from the `.wasm` now (and written to the cache).
    Compiled {
        /// How long compiling took.
        took: Duration,
    },
    /// Read from the compiled-component cache.
    Cached {
        /// How long getting the code from the cache took.
        took: Duration,
    },
}

/// A plugin's code, ready to instantiate in any number of worlds.
pub trait LoadedPlugin: Send + Sync {
    /// Creates the plugin's instance for one world.
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError>;

    /// Whether the code was compiled now or read from the cache, and how long that took.
    fn provenance(&self) -> Provenance;

    /// What the component imports and exports, to show how it fits the host's world.
    fn interface(&self) -> ComponentInterface;
}

/// What an instance may see of its world.
#[derive(Clone)]
pub struct InstanceEnv {
    /// The plugin's name, which names the instance in the timeline and its log lines.
    pub plugin: Arc<str>,
    /// The instance's identity in the world's component manager.
    pub owner: OwnerId,
    /// The name the host gave the world, unique in the process; the plugin can ask for it.
    pub world_name: Arc<str>,
    /// What the world is (standalone, dedicated server, listen server or client); the plugin can ask for it.
    pub net_mode: NetMode,
    /// The world the instance's host calls read and change, as its owner.
    pub world: SharedWorld,
    /// The experience's and the plugin's loaded bundles.
    pub assets: Arc<Assets>,
    /// Where the instance's log lines and refused host calls are recorded.
    pub timeline: Timeline,
    /// Plugin log lines below this level are dropped.
    pub log_level: LogLevel,
    /// What the plugin may do: what it declared and was granted.
    pub permissions: Arc<Permissions>,
    /// Who narrowed what the plugin asks for, if anyone did (a publisher's ceiling, a client's limit for
    /// fetched plugins): its denials name them rather than the host's grants.
    pub permissions_limited_by: Option<Arc<str>>,
    /// The plugin's own data directory on the host, when it was granted `fs.data`.
    pub data_dir: Option<std::path::PathBuf>,
    /// In a recorded or replayed world: where the instance's clock readings and random numbers come from.
    pub tape: Option<crate::recording::InstanceTape>,
}
