//! Fixtures for the integration tests: sessions over temporary plugin folders holding the plugins of
//! `plugins/` (built from source by `gamefeature-plugin-artifacts`).

use std::path::Path;

use std::sync::{Arc, Mutex};

use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::feature::{GrantPolicy, InstanceEnv, Permissions};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::timeline::LogLevel;
use gamefeature_host::world::{self, NetMode, World};
use gamefeature_host::Timeline;
use gamefeature_host::{Session, SessionOptions};

pub use gamefeature_plugin_artifacts::*;

pub mod baseline;
pub mod busy_world;
pub mod call_fuzzer;
pub mod guard_table;
pub mod hostile;

/// Runtime settings for tests: a small instance pool (many engines share one test process), the given cache
/// directory, and a call deadline of CPU time long enough for the unoptimised test build of the host serving a
/// plugin's calls; endless loops still hit it. The frame budget, CPU time too, is set beyond what a busy
/// machine makes of any test's frame, so that what a test sees never depends on the machine's load: a plugin
/// over its budget has its work held to a later frame. The tests of the budget give their plugin one of its own.
pub fn runtime_config(cache_dir: Option<&Path>) -> RuntimeConfig {
    RuntimeConfig {
        cache_dir: cache_dir.map(Path::to_path_buf),
        max_instances: 32,
        call_deadline: std::time::Duration::from_millis(500),
        frame_budget: std::time::Duration::from_secs(10),
        ..RuntimeConfig::default()
    }
}

/// Manager options for the project's own test plugins: they are trusted with what their manifests declare.
pub fn trusted() -> ManagerOptions {
    ManagerOptions { grants: GrantPolicy::Declared, ..ManagerOptions::default() }
}

/// [`trusted`], keeping the plugins' debug lines too: the examples' details (a prop's health, each score) are
/// logged at debug level.
pub fn trusted_with_details() -> ManagerOptions {
    ManagerOptions { plugin_log_level: LogLevel::Debug, ..trusted() }
}

/// A session over one plugin directory, without a compile cache, trusting its plugins' declared permissions.
pub fn session(plugins: &PluginDir) -> Session {
    session_with(plugins, None, trusted())
}

/// A session over one plugin directory with a cache directory and manager options.
pub fn session_with(plugins: &PluginDir, cache_dir: Option<&Path>, manager: ManagerOptions) -> Session {
    session_with_runtime(plugins, runtime_config(cache_dir), manager)
}

/// A session over one plugin directory with a runtime configuration of its own.
pub fn session_with_runtime(plugins: &PluginDir, runtime: RuntimeConfig, manager: ManagerOptions) -> Session {
    let plugin_dirs = vec![plugins.path().to_path_buf()];
    Session::new(SessionOptions { plugin_dirs, runtime, manager, ..SessionOptions::default() })
        .expect("the runtime starts")
}

/// A batch of `events` extension events named `Tick` for handler 1, about actors 0, 1, 2, ...: what the
/// benchmarks and memory examples deliver to the event sinks.
pub fn tick_batch(events: usize) -> gamefeature_host::delivery::ExtensionBatch {
    gamefeature_host::delivery::ExtensionBatch {
        handlers: vec![1; events],
        actors: (0..events as u64).collect(),
        events: vec![0; events],
        names: vec!["Tick".to_string()],
    }
}

/// An experience enabling `features`, with no bundles.
pub fn experience_with_features(features: &[&str]) -> String {
    let list: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    format!("[experience]\nname = \"test\"\nfeatures = [{}]\n", list.join(", "))
}

/// A standalone world named `bench` that loaded an experience enabling `feature` alone, with `characters`
/// characters spawned (unrecorded), and the experience folder it was loaded from: the benches' playing field.
pub async fn world_of_characters(
    session: &Session,
    feature: &str,
    characters: usize,
) -> (gamefeature_host::ExperienceManager, ExperienceDir) {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&[feature]));
    let mut manager = session.create_world("bench", NetMode::Standalone);
    manager.load(&path).await.expect("the experience loads");
    manager.with_world(|w| {
        w.set_recording(false);
        for _ in 0..characters {
            w.spawn("Character").expect("a character spawns");
        }
    });
    (manager, experiences)
}

/// What a plugin instance needs to run outside an experience (benchmarks instantiate plugins directly): a
/// fresh standalone world in which `plugin` is registered as an owner.
pub fn standalone_env(plugin: &str) -> InstanceEnv {
    let world = Arc::new(Mutex::new(World::new("bench", NetMode::Standalone)));
    let owner = world::lock(&world).register_owner(plugin);
    InstanceEnv {
        plugin: Arc::from(plugin),
        owner,
        world_name: Arc::from("bench"),
        net_mode: NetMode::Standalone,
        world,
        assets: Arc::default(),
        timeline: Timeline::new(),
        log_level: LogLevel::Info,
        permissions: Arc::new(Permissions::default()),
        permissions_limited_by: None,
        data_dir: None,
        tape: None,
    }
}

/// A standalone world named `w` that loaded an experience enabling every plugin given, in order, with the plugin
/// folder, experience folder and session it needs. Once loaded, plugins run from memory, so destructuring with
/// `..` (which deletes the folders) is fine unless a test loads again.
pub struct LoadedWorld {
    pub plugins: PluginDir,
    pub experiences: ExperienceDir,
    pub session: Session,
    pub manager: gamefeature_host::ExperienceManager,
    pub report: gamefeature_host::experience::LoadReport,
}

/// Loads `plugins` (trusted with their declared permissions) into a fresh standalone world `w`, compiled
/// components shared with the other tests ([`shared_cache`]).
pub async fn load_world(plugins: &[TestPlugin]) -> LoadedWorld {
    let dir = PluginDir::with(plugins);
    let experiences = ExperienceDir::new();
    let names: Vec<&str> = plugins.iter().map(|p| p.name).collect();
    let path = experiences.write("e.toml", &experience_with_features(&names));
    let session = session_with(&dir, Some(&shared_cache()), trusted());
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.expect("the experience loads").clone();
    LoadedWorld { plugins: dir, experiences, session, manager, report }
}

/// The process's resident memory, in KiB (Linux), for the examples that measure memory.
pub fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4
}
