//! The experience manager driven with in-memory plugins — no Wasm: Lyra's order of load states and lifecycle
//! calls, teardown that leaves nothing behind, a trapping plugin quarantined while the others play on, a held
//! deactivation polled until done, and a reload that carries state across.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::delivery::{
    ActivationContext, CallError, ChainBatch, ChainWalk, Deactivation, ExtensionBatch, FeatureBatch, PluginInstance,
    StateChangeBatch,
};
use crate::feature::{
    ComponentInterface, InstanceEnv, LoadError, LoadedPlugin, PluginLoader, PluginManifest, Provenance, API_VERSION,
};
use crate::world::{NetMode, World};

/// What every fake instance did, in order: `"<plugin>@<version> <call>"`.
type Log = Arc<Mutex<Vec<String>>>;

/// How a fake plugin behaves.
#[derive(Clone, Default)]
struct Behaviour {
    /// `on-activating` refuses.
    refuse_activation: bool,
    /// Hearing an extension event traps.
    trap_on_event: bool,
    /// `on-deactivating` holds deactivation open for this many polls.
    pending_polls: u32,
    /// On activation: a handler for `Character` receivers and a request for a `Fake` component on them.
    extends_characters: bool,
}

struct FakeLoader {
    behaviours: Mutex<HashMap<String, Behaviour>>,
    log: Log,
}

impl PluginLoader for FakeLoader {
    fn load(&self, manifest: &PluginManifest) -> Result<Arc<dyn LoadedPlugin>, LoadError> {
        let behaviour = self.behaviours.lock().unwrap().get(&manifest.name).cloned().unwrap_or_default();
        let label = format!("{}@{}", manifest.name, manifest.version);
        Ok(Arc::new(FakePlugin { label, behaviour, log: self.log.clone() }))
    }
}

struct FakePlugin {
    label: String,
    behaviour: Behaviour,
    log: Log,
}

impl LoadedPlugin for FakePlugin {
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        let (label, behaviour, log) = (self.label.clone(), self.behaviour.clone(), self.log.clone());
        let polls_left = behaviour.pending_polls;
        Ok(Box::new(FakeInstance { label, polls_left, behaviour, log, env, requests: Vec::new() }))
    }
    fn provenance(&self) -> Provenance {
        Provenance::Compiled { took: Duration::ZERO }
    }
    fn interface(&self) -> ComponentInterface {
        ComponentInterface::default()
    }
}

struct FakeInstance {
    label: String,
    behaviour: Behaviour,
    polls_left: u32,
    log: Log,
    env: InstanceEnv,
    /// The component requests it holds, as a real instance's resource table holds them.
    requests: Vec<crate::world::component_manager::RequestHandle>,
}

impl FakeInstance {
    fn note(&self, call: &str) {
        self.log.lock().unwrap().push(format!("{} {call}", self.label));
    }
}

impl PluginInstance for FakeInstance {
    fn on_registering(&mut self) -> Result<(), CallError> {
        self.note("on-registering");
        Ok(())
    }
    fn on_loading(&mut self) -> Result<(), CallError> {
        self.note("on-loading");
        Ok(())
    }
    fn on_activating(&mut self, _: &ActivationContext) -> Result<(), CallError> {
        self.note("on-activating");
        match self.behaviour.refuse_activation {
            true => Err(CallError::Refused("not today".into())),
            false => Ok(()),
        }
    }
    fn on_activated(&mut self) -> Result<(), CallError> {
        self.note("on-activated");
        if self.behaviour.extends_characters {
            let owner = self.env.owner;
            let request = world::lock(&self.env.world).acting_as(owner, |w| {
                w.add_extension_handler(owner, "Character", 1).unwrap();
                w.add_component_request(owner, "Character", "Fake", Default::default()).unwrap()
            });
            self.requests.push(request);
        }
        Ok(())
    }
    fn on_deactivating(&mut self, _: &ActivationContext) -> Result<Deactivation, CallError> {
        self.note("on-deactivating");
        Ok(if self.polls_left > 0 { Deactivation::Pending } else { Deactivation::Done })
    }
    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
        self.note("poll-deactivation");
        self.polls_left = self.polls_left.saturating_sub(1);
        Ok(if self.polls_left > 0 { Deactivation::Pending } else { Deactivation::Done })
    }
    fn on_unloading(&mut self) -> Result<(), CallError> {
        self.note("on-unloading");
        Ok(())
    }
    fn on_unregistering(&mut self) -> Result<(), CallError> {
        self.note("on-unregistering");
        Ok(())
    }
    fn handle_extension_events(&mut self, batch: &ExtensionBatch) -> Result<(), CallError> {
        for event in &batch.events {
            self.note(&format!("event {}", batch.names[*event as usize]));
        }
        match self.behaviour.trap_on_event {
            true => Err(CallError::Trapped("unreachable executed".into())),
            false => Ok(()),
        }
    }
    fn try_change_init_states(&mut self, batch: &ChainBatch) -> Result<Vec<ChainWalk>, CallError> {
        Ok(batch.actors.iter().map(|_| ChainWalk::one_step(false)).collect())
    }
    fn check_default_initializations(&mut self, _: &FeatureBatch) -> Result<(), CallError> {
        Ok(())
    }
    fn on_init_states_changed(&mut self, _: &StateChangeBatch) -> Result<(), CallError> {
        Ok(())
    }
    fn snapshot(&mut self) -> Result<Option<Vec<u8>>, CallError> {
        self.note("snapshot");
        Ok(Some(format!("state of {}", self.label).into_bytes()))
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), CallError> {
        self.note(&format!("restore {:?}", String::from_utf8_lossy(state)));
        Ok(())
    }
}

/// A world with plugins `names` installed from manifests in `folder` (read again by a reload), and an
/// experience playing `features`.
struct Stage {
    manager: ExperienceManager,
    log: Log,
    folder: tempfile::TempDir,
    experience: std::path::PathBuf,
}

fn write_manifest(folder: &Path, name: &str, version: &str) {
    let dir = folder.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"{version}\"\napi = \"{API_VERSION}\"\ncomponent = \"{name}.wasm\"\n"
    );
    std::fs::write(dir.join("plugin.toml"), text).unwrap();
}

fn stage(plugins: &[(&str, Behaviour)], features: &[&str]) -> Stage {
    let folder = tempfile::tempdir().unwrap();
    let log: Log = Arc::default();
    let behaviours = plugins.iter().map(|(name, b)| (name.to_string(), b.clone())).collect();
    let loader = Arc::new(FakeLoader { behaviours: Mutex::new(behaviours), log: log.clone() });
    let subsystem = FeatureSubsystem::new(loader, crate::feature::Gate::unchecked());
    for (name, _) in plugins {
        write_manifest(folder.path(), name, "1.0.0");
        subsystem.install(subsystem.admit(&folder.path().join(name)).unwrap()).unwrap();
    }
    let quoted: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    let experience = folder.path().join("test.toml");
    std::fs::write(&experience, format!("[experience]\nname = \"Test\"\nfeatures = [{}]\n", quoted.join(", ")))
        .unwrap();
    let world = Arc::new(Mutex::new(World::new("main", NetMode::Standalone)));
    let options = ManagerOptions { grants: crate::feature::GrantPolicy::Declared, ..ManagerOptions::default() };
    let manager = ExperienceManager::new(world, subsystem, Timeline::new(), options);
    Stage { manager, log, folder, experience }
}

impl Stage {
    fn taken(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

#[tokio::test]
async fn an_experience_loads_and_ends_in_lyras_order() {
    let mut stage = stage(&[("a", Behaviour::default()), ("b", Behaviour::default())], &["a", "b"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    assert_eq!(stage.manager.state(), ExperienceLoadState::Loaded);
    assert_eq!(
        stage.manager.visited_states(),
        [
            ExperienceLoadState::Unloaded,
            ExperienceLoadState::Loading,
            ExperienceLoadState::LoadingGameFeatures,
            ExperienceLoadState::ExecutingActions,
            ExperienceLoadState::Loaded,
        ]
    );
    let loading: Vec<String> = stage.taken();
    for plugin in ["a@1.0.0", "b@1.0.0"] {
        let calls: Vec<&str> = loading.iter().filter_map(|l| l.strip_prefix(&format!("{plugin} "))).collect();
        assert_eq!(calls, ["on-registering", "on-loading", "on-activating", "on-activated"], "{loading:?}");
    }
    let first_activated = |log: &[String], a: &str, b: &str| {
        log.iter().position(|l| l == a).unwrap() < log.iter().position(|l| l == b).unwrap()
    };
    assert!(first_activated(&loading, "a@1.0.0 on-activated", "b@1.0.0 on-activated"), "experience order: {loading:?}");

    stage.manager.end_play().await.unwrap();
    assert_eq!(stage.manager.state(), ExperienceLoadState::Unloaded);
    let ending = stage.taken();
    for plugin in ["a@1.0.0", "b@1.0.0"] {
        let calls: Vec<&str> = ending.iter().filter_map(|l| l.strip_prefix(&format!("{plugin} "))).collect();
        assert_eq!(calls, ["on-deactivating", "on-unloading", "on-unregistering"], "{ending:?}");
    }
    // Taken down in the reverse of the order they came up.
    assert!(first_activated(&ending, "b@1.0.0 on-deactivating", "a@1.0.0 on-deactivating"), "{ending:?}");
    assert!(stage.manager.report().failures.is_empty(), "{:?}", stage.manager.report().failures);
}

#[tokio::test]
async fn end_of_play_leaves_nothing_of_a_plugin_in_the_world() {
    let extends = Behaviour { extends_characters: true, ..Behaviour::default() };
    let mut stage = stage(&[("a", extends)], &["a"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    stage.taken();
    let hero = stage.manager.with_world(|w| w.spawn("Character").unwrap());
    {
        let w = world::lock(stage.manager.world());
        assert_eq!(w.live_handlers(), 1);
        assert!(w.actor(hero).unwrap().components.iter().any(|c| c.class.as_ref() == "Fake"));
    }
    // A receiver that spawns after the handler: Unreal's ReceiverAdded, then GameActorReady as it begins play.
    assert_eq!(stage.taken(), ["a@1.0.0 event ReceiverAdded", "a@1.0.0 event GameActorReady"]);
    stage.manager.end_play().await.unwrap();
    let log = stage.taken();
    // The handler hears its last event, for the receiver that still exists, before the plugin unloads.
    let removed = log.iter().position(|l| l == "a@1.0.0 event ExtensionRemoved").expect("ExtensionRemoved");
    assert!(removed < log.iter().position(|l| l == "a@1.0.0 on-unloading").unwrap(), "{log:?}");
    let w = world::lock(stage.manager.world());
    assert_eq!(w.live_handlers(), 0);
    assert_eq!(w.queued_work(), 0);
    assert!(
        w.actor(hero).unwrap().components.iter().all(|c| c.class.as_ref() != "Fake"),
        "the request's component went"
    );
}

#[tokio::test]
async fn a_trapping_plugin_is_quarantined_and_the_others_play_on() {
    let trapper = Behaviour { extends_characters: true, trap_on_event: true, ..Behaviour::default() };
    let listener = Behaviour { extends_characters: true, ..Behaviour::default() };
    let mut stage = stage(&[("trapper", trapper), ("listener", listener)], &["trapper", "listener"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    stage.manager.with_world(|w| w.spawn("Character").unwrap());
    assert_eq!(stage.manager.quarantine_count(), 1);
    assert_eq!(stage.manager.live_features(), ["listener"]);
    let failure = stage.manager.report().failures.iter().find(|f| f.to_string().contains("trapper"));
    assert!(failure.is_some_and(|f| f.to_string().contains("unreachable executed")), "{:?}", stage.manager.report());
    // The listener hears the next character too; the trapper is not called again.
    stage.taken();
    stage.manager.with_world(|w| w.spawn("Character").unwrap());
    assert_eq!(stage.taken(), ["listener@1.0.0 event ReceiverAdded", "listener@1.0.0 event GameActorReady"]);
    stage.manager.end_play().await.unwrap();
    assert_eq!(world::lock(stage.manager.world()).live_handlers(), 0);
}

#[tokio::test]
async fn a_refused_activation_fails_that_feature_alone() {
    let refuser = Behaviour { refuse_activation: true, ..Behaviour::default() };
    let mut stage = stage(&[("refuser", refuser), ("b", Behaviour::default())], &["refuser", "b"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    assert_eq!(stage.manager.state(), ExperienceLoadState::Loaded);
    assert_eq!(stage.manager.live_features(), ["b"]);
    let failures: Vec<String> = stage.manager.report().failures.iter().map(|f| f.to_string()).collect();
    assert!(failures.iter().any(|f| f.contains("refuser") && f.contains("not today")), "{failures:?}");
}

#[tokio::test]
async fn a_held_deactivation_is_polled_until_it_is_done() {
    let holder = Behaviour { pending_polls: 3, ..Behaviour::default() };
    let mut stage = stage(&[("holder", holder)], &["holder"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    stage.taken();
    stage.manager.end_play().await.unwrap();
    let calls: Vec<String> = stage.taken();
    assert_eq!(
        calls,
        [
            "holder@1.0.0 on-deactivating",
            "holder@1.0.0 poll-deactivation",
            "holder@1.0.0 poll-deactivation",
            "holder@1.0.0 poll-deactivation",
            "holder@1.0.0 on-unloading",
            "holder@1.0.0 on-unregistering",
        ]
    );
}

#[tokio::test]
async fn a_reload_hands_the_new_version_the_old_ones_state() {
    let mut stage = stage(&[("a", Behaviour::default())], &["a"]);
    stage.manager.load(&stage.experience.clone()).await.unwrap();
    stage.taken();
    write_manifest(stage.folder.path(), "a", "1.1.0");
    let reloaded = stage.manager.reload_feature("a").await.unwrap();
    assert_eq!((reloaded.from.as_str(), reloaded.to.as_str()), ("1.0.0", "1.1.0"));
    let log = stage.taken();
    let snapshot = log.iter().position(|l| l == "a@1.0.0 snapshot").expect("the old version was asked its state");
    let restore = log.iter().position(|l| l == "a@1.1.0 restore \"state of a@1.0.0\"").expect("handed to the new one");
    let activating = log.iter().position(|l| l == "a@1.1.0 on-activating").unwrap();
    assert!(snapshot < restore && restore < activating, "{log:?}");
    assert!(log.contains(&"a@1.0.0 on-deactivating".to_string()), "{log:?}");
    assert_eq!(stage.manager.live_features(), ["a"]);
}
