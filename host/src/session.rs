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
    trust: TrustPolicy,
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
        let features = FeatureSubsystem::new(runtime.clone());
        let timeline = Timeline::new();
        features.add_observer(state_recorder(timeline.clone(), Arc::downgrade(&features)));
        let plugin_dirs = options.plugin_dirs.clone();
        let discovery = features.discover(&plugin_dirs, &installed_packages_within(&options.trust));
        for error in &discovery.errors {
            timeline.record("discovery", EventKind::Failure, error.clone());
        }
        Ok(Session {
            plugin_dirs,
            trust: options.trust,
            runtime,
            features,
            timeline,
            discovery,
            manager_options: options.manager,
        })
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
        let report = self.features.discover(&self.plugin_dirs, &installed_packages_within(&self.trust));
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

/// What discovery lets through: a folder installed from a package must still be that package, signed by a
/// publisher `trust` accepts, and its plugin then asks for no more than that publisher may be granted. Other
/// folders are the operator's own.
fn installed_packages_within(
    trust: &TrustPolicy,
) -> impl Fn(&mut crate::feature::PluginManifest) -> Result<(), String> + '_ {
    move |manifest| {
        let verdict = crate::package::install::verify_installed(&manifest.dir, trust).map_err(|e| e.to_string())?;
        if let Some(ceiling) = verdict.as_ref().and_then(|v| v.ceiling()) {
            manifest.permissions = manifest.permissions.intersect(ceiling);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::feature::{Permissions, PluginManifest};
    use crate::package::{install::install, Package, SecretKey, TrustedPublisher};

    #[test]
    fn an_installed_package_asks_for_no_more_than_its_publisher_may_be_granted_and_a_changed_one_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let source = root.path().join("source/hud");
        std::fs::create_dir_all(&source).unwrap();
        let manifest = "[plugin]\nname = \"hud\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"hud.wasm\"\n\
                        [permissions]\nspawn-actors = true\nsend-events = true\n";
        std::fs::write(source.join("plugin.toml"), manifest).unwrap();
        std::fs::write(source.join("hud.wasm"), b"\0asm").unwrap();
        let key = SecretKey::generate();
        let package = Package::from_folder(&source).unwrap();
        let signature = key.sign("studio", package.summary());
        let ceiling = Permissions { send_events: true, ..Permissions::default() };
        let publisher = TrustedPublisher { key: key.public_key(), permissions: Some(ceiling.clone()) };
        let trust = TrustPolicy { publishers: BTreeMap::from([("studio".into(), publisher)]), allow_untrusted: false };
        let plugins = root.path().join("plugins");
        let (folder, _) = install(&package, Some(&signature), &plugins, &trust).unwrap();

        let vet = installed_packages_within(&trust);
        let mut found = PluginManifest::read(&folder).unwrap();
        vet(&mut found).unwrap();
        assert_eq!(found.permissions, ceiling, "spawn-actors is beyond what the studio's plugins may have");
        // A plugin of the operator's own (no package record) is found as it is.
        let mut own = PluginManifest::read(&source).unwrap();
        vet(&mut own).unwrap();
        assert!(own.permissions.spawn_actors);

        std::fs::write(folder.join("hud.wasm"), b"\0asm, edited").unwrap();
        let refused = vet(&mut PluginManifest::read(&folder).unwrap()).unwrap_err();
        assert!(refused.contains("changed since package hud 1.0.0 was installed"), "{refused}");
    }
}
