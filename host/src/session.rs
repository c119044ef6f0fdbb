//! One process's plugins and worlds: the runtime, the feature subsystem and a shared timeline.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use crate::experience::{ExperienceManager, ManagerOptions};
use crate::feature::{
    Destination, DiscoveryReport, FeatureSubsystem, PluginState, Provenance, StateChange, Transition,
};
use crate::package::TrustPolicy;
use crate::runtime::{Runtime, RuntimeConfig, RuntimeError};
use crate::timeline::{track, EventKind, Timeline};
use crate::world::{NetMode, World};

/// How a session is set up.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Directories whose sub-folders are plugin packages.
    pub plugin_dirs: Vec<PathBuf>,
    /// The runtime's configuration: engine, limits, compile cache.
    pub runtime: RuntimeConfig,
    /// Options for every world's experience manager.
    pub manager: ManagerOptions,
    /// Which installed packages may load: the publishers trusted, and the most their plugins may be granted.
    pub trust: TrustPolicy,
}

/// Everything one process needs to run experiences: plugins are discovered once and shared by every world.
pub struct Session {
    plugin_dirs: Vec<PathBuf>,
    runtime: Arc<Runtime>,
    features: Arc<FeatureSubsystem>,
    timeline: Timeline,
    discovery: DiscoveryReport,
    manager_options: ManagerOptions,
}

impl Session {
    /// Sets up the runtime and discovers the plugins in `options.plugin_dirs`. Problems with single plugins
    /// are in [`discovery`](Self::discovery); only an engine that cannot start is an error.
    pub fn new(options: SessionOptions) -> Result<Self, RuntimeError> {
        let runtime = Runtime::new(options.runtime)?;
        let features = FeatureSubsystem::new(runtime.clone(), crate::package::gate::gate(options.trust));
        let timeline = Timeline::new();
        features.add_observer(state_recorder(timeline.clone(), Arc::downgrade(&features)));
        let plugin_dirs = options.plugin_dirs.clone();
        let discovery = features.discover(&plugin_dirs);
        for error in &discovery.errors {
            timeline.record("discovery", EventKind::Failure, error.clone());
        }
        Ok(Session { plugin_dirs, runtime, features, timeline, discovery, manager_options: options.manager })
    }

    /// The Wasm runtime the session's plugins run in.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The feature subsystem: every plugin in the process and its state.
    pub fn features(&self) -> &Arc<FeatureSubsystem> {
        &self.features
    }

    /// The timeline every world of the session records into.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// What plugin discovery found, and the manifests it refused.
    pub fn discovery(&self) -> &DiscoveryReport {
        &self.discovery
    }

    /// Looks through the plugin directories again and installs the plugins that appeared since: returns their
    /// names, and the problems found (bad manifests, duplicate names), as discovery does.
    pub fn rescan(&self) -> (Vec<String>, Vec<String>) {
        let before: Vec<String> = self.features.list().into_iter().map(|p| p.manifest.name.clone()).collect();
        let report = self.features.discover(&self.plugin_dirs);
        for error in &report.errors {
            self.timeline.record("discovery", EventKind::Failure, error.clone());
        }
        let new = report.found.iter().map(|m| m.name.clone()).filter(|name| !before.contains(name)).collect();
        (new, report.errors)
    }

    /// A new, empty world with its experience manager.
    pub fn create_world(&self, name: &str, net_mode: NetMode) -> ExperienceManager {
        let world = Arc::new(std::sync::Mutex::new(World::new(name, net_mode)));
        ExperienceManager::new(world, self.features.clone(), self.timeline.clone(), self.manager_options.clone())
    }
}

/// Records every plugin state change, and how each plugin's code was obtained (and which version), on the
/// plugin's track.
fn state_recorder(timeline: Timeline, features: Weak<FeatureSubsystem>) -> crate::feature::Observer {
    Arc::new(move |change: &StateChange| {
        let track = track::plugin(&change.plugin);
        let kind = if change.state.is_error() { EventKind::Failure } else { EventKind::State };
        timeline.record(&track, kind, change.state.to_string());
        let just_loaded = change.from == PluginState::Transition(Transition::Loading)
            && change.state == PluginState::Stable(Destination::Loaded);
        if just_loaded {
            let features = features.upgrade();
            let code = features.as_ref().and_then(|f| f.code(&change.plugin));
            let version = features.and_then(|f| f.manifest(&change.plugin)).map(|m| m.version.clone());
            if let Some(code) = code {
                let text = match code.provenance() {
                    Provenance::Compiled { took } => format!("compiled in {:.1} ms", took.as_secs_f64() * 1e3),
                    Provenance::Cached { took } => format!("loaded from cache in {:.2} ms", took.as_secs_f64() * 1e3),
                };
                timeline.record(&track, EventKind::Load, format!("{text} (version {})", version.unwrap_or_default()));
            }
        }
    })
}
