//! What the host is started with: where its plugins are, what it plays, and (for a client) how it joins.

use std::net::SocketAddr;
use std::path::PathBuf;

use gamefeature_host::feature::GrantPolicy;
use gamefeature_host::net::mod_sync::ModSync;
use gamefeature_host::net::transport::trust::ServerTrust;
use gamefeature_host::package::TrustPolicy;
use gamefeature_host::timeline::LogLevel;

/// Where the host finds its plugins and what the world plays.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// The folders plugins are installed in (each plugin a folder with its plugin.toml and component).
    pub plugin_dirs: Vec<PathBuf>,
    /// The experience the world loads.
    pub experience: PathBuf,
    /// The host's configuration (a `gfhost.toml`: what each plugin is granted, its limits); `None` grants plugins
    /// nothing beyond their sandbox.
    pub config: Option<PathBuf>,
    /// Where compiled plugins are cached between runs; `None` compiles them every time.
    pub cache_dir: Option<PathBuf>,
    /// The game's own classes, each with its parent, declared before the experience loads.
    pub classes: Vec<(String, String)>,
    /// Reload a plugin whose component or manifest changes on disk (a modder's rebuild), as `gfhost play --watch`.
    pub watch: bool,
    /// What plugins are granted, over the configuration's `[grants]`: `GrantPolicy::Declared` grants the game's
    /// own (reviewed) plugins what their manifests declare.
    pub grants: Option<GrantPolicy>,
    /// Where plugins granted `fs.data` keep their files, over the configuration's `data-dir`.
    pub data_dir: Option<PathBuf>,
    /// The publishers whose signed packages are trusted, over the configuration's `[trust]`.
    pub trust: Option<TrustPolicy>,
    /// The lowest level of plugins' log lines the timeline keeps (`Info` unless told: plugins' per-frame
    /// details are at `Debug`).
    pub plugin_log_level: LogLevel,
}

impl HostSettings {
    /// Plugins from `plugin_dir`, playing `experience`.
    pub fn new(plugin_dir: impl Into<PathBuf>, experience: impl Into<PathBuf>) -> Self {
        HostSettings {
            plugin_dirs: vec![plugin_dir.into()],
            experience: experience.into(),
            config: None,
            cache_dir: None,
            classes: Vec::new(),
            watch: false,
            grants: None,
            data_dir: None,
            trust: None,
            plugin_log_level: LogLevel::Info,
        }
    }

    /// Keeps plugins' log lines from `level` up in the timeline (`LogLevel::Debug`: their details too).
    pub fn plugin_log_level(mut self, level: LogLevel) -> Self {
        self.plugin_log_level = level;
        self
    }

    /// The publishers trusted, over the configuration's.
    pub fn trust(mut self, trust: TrustPolicy) -> Self {
        self.trust = Some(trust);
        self
    }

    /// Declares one of the game's classes: `class`, a subclass of `parent`.
    pub fn class(mut self, class: impl Into<String>, parent: impl Into<String>) -> Self {
        self.classes.push((class.into(), parent.into()));
        self
    }

    /// The host's configuration file.
    pub fn config(mut self, file: impl Into<PathBuf>) -> Self {
        self.config = Some(file.into());
        self
    }

    /// What plugins are granted, over the configuration's.
    pub fn grants(mut self, grants: GrantPolicy) -> Self {
        self.grants = Some(grants);
        self
    }

    /// Where plugins keep their data, over the configuration's.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Reloads plugins whose files change on disk.
    pub fn watch(mut self) -> Self {
        self.watch = true;
        self
    }

    /// A compile cache.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }
}

/// How a client joins its server.
#[derive(Debug, Clone)]
pub struct Join {
    /// The server's address.
    pub server: SocketAddr,
    /// How the server's certificate is checked: pinned, or against authorities.
    pub trust: ServerTrust,
    /// The ticket the server asks for, when it asks for one.
    pub token: Option<String>,
    /// Where the experiences the server names are read from (or, with mod sync, kept once fetched).
    pub experiences: PathBuf,
    /// Fetch the plugins and experience the server plays and this client lacks, as this allows.
    pub mod_sync: Option<ModSync>,
}
