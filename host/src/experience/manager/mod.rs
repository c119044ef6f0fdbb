//! The experience manager: drives one world's experience through Lyra's load states and back.
//!
//! Loading: read the definition and its action sets, load the bundles this net mode wants, bring the features
//! up in the feature subsystem (independent ones in parallel), wait the chaos delay if configured, then run
//! every feature's actions in this world — each feature's instance gets registering and loading, then the
//! manifest's built-in actions are carried out, then the instance gets activating and activated — and finally
//! the experience's and action sets' own actions. A feature that fails anywhere is recorded, shown and
//! reported, and the rest of the experience goes on (Lyra counts a failed plugin as loaded).
//!
//! End of play undoes it in reverse: every instance is asked to deactivate (and may hold that open, like an
//! Unreal deactivation pauser, until it reports done or the deadline passes), its actions are undone, then every
//! instance unloads and unregisters, the features' activations are released and unused plugins go back to
//! `Installed`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use super::callbacks::{LoadedCallback, LoadedCallbacks, LoadedExperience, Priority};
use super::chaos::ChaosDelay;
use super::definition::{DefinitionError, ExperienceDefinition};
mod in_world;
mod replicated;
mod supervise;

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<ExperienceError> for crate::error::Error {
    fn from(error: ExperienceError) -> crate::error::Error {
        let message = error.to_string();
        match error {
            ExperienceError::Busy { .. } | ExperienceError::NotLoaded(_) => crate::error::Error::refused(message),
            ExperienceError::Definition(crate::experience::DefinitionError { path: file, .. })
            | ExperienceError::Assets { experience: file, .. }
            | ExperienceError::World { experience: file, .. } => crate::error::Error::BadInput { file, message },
        }
    }
}

#[cfg(test)]
mod tests;
pub use in_world::{NewVersion, ReloadError, Reloaded};

use super::load_state::ExperienceLoadState;
use crate::assets::{AssetLoadError, Assets, BundleName};
use crate::delivery::{ActivationContext, CallError};
use crate::delivery::{DispatchLimits, Instances};
use crate::feature::{ActiveAction, FeatureSubsystem, GrantPolicy};
use crate::text::{shown, MAX_CAUSE};
use crate::timeline::{track, EventKind, LogLevel, Timeline};
use crate::world::component_manager::OwnerId;
use crate::world::{self, NetMode, SharedWorld};

/// How an experience manager behaves; the defaults suit a game.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// Lyra's chaos-testing delay; off when `None`.
    pub chaos: Option<ChaosDelay>,
    /// How long end of play waits for plugins holding deactivation open.
    pub deactivation_deadline: Duration,
    /// How often a held deactivation is polled.
    pub deactivation_poll: Duration,
    /// Plugin log lines below this level are dropped (and plugins asking `log.enabled` skip formatting them).
    pub plugin_log_level: LogLevel,
    /// What plugins are granted beyond their sandbox; by default nothing.
    pub grants: GrantPolicy,
    /// Parent of the data directories of plugins granted `fs.data` (each gets `<data_dir>/<plugin>`); without
    /// it, such plugins get no filesystem.
    pub data_dir: Option<PathBuf>,
    /// How much work one dispatch may do for each plugin causing it.
    pub dispatch: DispatchLimits,
    /// What happens to a plugin that faults while it plays; by default it stays out.
    pub restarts: crate::supervision::RestartPolicies,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            chaos: None,
            deactivation_deadline: Duration::from_secs(5),
            deactivation_poll: Duration::from_millis(2),
            plugin_log_level: LogLevel::Info,
            grants: GrantPolicy::default(),
            data_dir: None,
            dispatch: DispatchLimits::default(),
            restarts: Default::default(),
        }
    }
}

/// A refused experience request. Failures of single features are not errors: they are in the [`LoadReport`].
#[derive(Debug, thiserror::Error)]
pub enum ExperienceError {
    /// [`load`](ExperienceManager::load) was called while an experience is loaded, loading or ending.
    #[error("world {world:?} already has an experience ({state}); end play first")]
    Busy {
        /// The world's name.
        world: String,
        /// The state its experience is in.
        state: ExperienceLoadState,
    },
    /// [`end_play`](ExperienceManager::end_play) was called while no experience is fully loaded; carries the
    /// world's name.
    #[error("world {0:?} has no loaded experience")]
    NotLoaded(String),
    /// The experience file, or one of its action sets, could not be read or was refused.
    #[error(transparent)]
    Definition(#[from] DefinitionError),
    /// The message carries the cause (and has no separate `source()`, which chain printers would repeat).
    #[error("{}: {cause}", experience.display())]
    Assets {
        /// The experience file whose bundles failed.
        experience: std::path::PathBuf,
        /// Why a bundle (the experience's or an action set's) could not be loaded.
        cause: AssetLoadError,
    },
    /// The experience does not fit the world: its init states or classes are refused, or its pawn class is
    /// unknown.
    #[error("{}: {cause}", experience.display())]
    World {
        /// The experience file refused.
        experience: std::path::PathBuf,
        /// What the world refused, and why.
        cause: String,
    },
}

/// A feature (or action) that failed in this world, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The plugin, or `experience` for the experience's own actions.
    pub source: String,
    /// The step it failed in: a load state, a plugin's phase (`Loading`, `Playing`...), `dispatch`, or the
    /// experience's own action that failed.
    pub during: String,
    /// What went wrong, escaped and capped (it may quote a plugin's own text).
    pub cause: String,
}

impl crate::error::Error {
    /// A plugin's failure in a world (from its [`LoadReport`](crate::experience::LoadReport)): quarantined when
    /// `quarantined` (it is out of play), refused otherwise.
    pub fn from_failure(failure: &Failure, quarantined: bool) -> crate::error::Error {
        let (plugin, message) = (failure.source.clone(), failure.to_string());
        match quarantined {
            true => crate::error::Error::Quarantined { plugin, message },
            false => crate::error::Error::Refused { blame: crate::error::Blame::Plugin(plugin), message },
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed during {}: {}", self.source, self.during, self.cause)
    }
}

/// What loading (and ending) an experience did.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Plugins with a live instance in this world, in activation order.
    pub active: Vec<String>,
    /// Every feature or action that failed, in the order the failures happened.
    pub failures: Vec<Failure>,
    /// The asset bundles the experience loaded for this world's net mode.
    pub bundles: Vec<BundleName>,
    /// How long the chaos delay waited; `None` when no chaos delay is configured.
    pub chaos_delay: Option<Duration>,
}

impl LoadReport {
    /// The cause of the last failure of `source` listed from the `since`-th failure on (empty if none).
    pub fn last_cause_of(&self, source: &str, since: usize) -> String {
        let listed = self.failures.get(since..).unwrap_or_default();
        listed.iter().rev().find(|f| f.source == source).map(|f| f.cause.clone()).unwrap_or_default()
    }
}

/// A feature's presence in this world: its instance lives in [`Instances`] under `owner` (until it traps).
struct FeatureInWorld {
    name: String,
    owner: OwnerId,
    actions: Vec<ActiveAction>,
    /// Activated in this world (its `on-activated` returned): failures from now on happen while playing.
    playing: bool,
    /// The bundles its instance reads: kept, so that a version brought back after a failed reload reads its
    /// own files, not the new version's that replaced them on disk.
    assets: Arc<Assets>,
    /// This process's lease on its data directory, while it has one: held, never read.
    _data_lease: Option<Arc<crate::file_lock::FolderLease>>,
}

/// Drives one world's experience.
pub struct ExperienceManager {
    world: SharedWorld,
    world_name: Arc<str>,
    net_mode: NetMode,
    features: Arc<FeatureSubsystem>,
    timeline: Timeline,
    options: ManagerOptions,
    state: ExperienceLoadState,
    visited: Vec<ExperienceLoadState>,
    current: Option<Arc<ExperienceDefinition>>,
    assets: Arc<Assets>,
    callbacks: LoadedCallbacks,
    // Top-level features this experience activated in the subsystem (one activation each).
    activated: Vec<String>,
    in_world: Vec<FeatureInWorld>,
    instances: Instances,
    experience_actions: Vec<ActiveAction>,
    report: LoadReport,
    /// State crossing a hot reload, by plugin: what the old instance's `snapshot` returned, restored into the
    /// new instance (or, when the new version is refused, into the old version brought back).
    carried: std::collections::HashMap<String, Vec<u8>>,
    /// Each live plugin's CPU time in the last frame `tick` ended.
    last_frame_costs: Vec<(OwnerId, crate::delivery::FrameSpend)>,
    /// Instances quarantined in this world since it was created.
    quarantines: u64,
    /// In a recorded or replayed world: where its plugins' clocks and random numbers come from.
    tape: Option<Arc<crate::recording::Tape>>,
    /// What it keeps to restart plugins that fault.
    supervision: supervise::Supervision,
}

impl ExperienceManager {
    /// A manager for `world`, whose features come from `features`.
    pub fn new(
        world: SharedWorld,
        features: Arc<FeatureSubsystem>,
        timeline: Timeline,
        options: ManagerOptions,
    ) -> Self {
        let (world_name, net_mode) = {
            let mut w = world::lock(&world);
            w.attach_timeline(timeline.clone());
            (Arc::from(w.name()), w.net_mode())
        };
        let dispatch = options.dispatch;
        let manager = ExperienceManager {
            world,
            world_name,
            net_mode,
            features,
            timeline,
            options,
            state: ExperienceLoadState::Unloaded,
            visited: Vec::new(),
            current: None,
            assets: Arc::default(),
            callbacks: LoadedCallbacks::default(),
            activated: Vec::new(),
            in_world: Vec::new(),
            instances: Instances::with_limits(dispatch),
            carried: Default::default(),
            last_frame_costs: Vec::new(),
            quarantines: 0,
            tape: None,
            supervision: Default::default(),
            experience_actions: Vec::new(),
            report: LoadReport::default(),
        };
        manager.timeline.record(track::experience(&manager.world_name), EventKind::State, "Unloaded");
        manager
    }

    /// Hands this world's plugins their clocks and random numbers through `tape` (recorded, or played back),
    /// from the next instance created on: set it before loading, so every instance reads through it.
    pub fn set_tape(&mut self, tape: Arc<crate::recording::Tape>) {
        self.tape = Some(tape);
        // Frame budgets are judged at frames' ends only, where the tape keeps the verdicts (see
        // `Instances::hold_over_budget`).
        self.instances.hold_over_budget(false);
    }

    /// Where this world's experience is in its lifecycle now.
    pub fn state(&self) -> ExperienceLoadState {
        self.state
    }

    /// Every state entered so far, in order, starting with the initial `Unloaded`.
    pub fn visited_states(&self) -> Vec<ExperienceLoadState> {
        std::iter::once(ExperienceLoadState::Unloaded).chain(self.visited.iter().copied()).collect()
    }

    /// The world this manager drives.
    pub fn world(&self) -> &SharedWorld {
        &self.world
    }

    /// The experience this world plays, from the moment its definition is read; `None` before that and after
    /// end of play.
    pub fn current(&self) -> Option<&Arc<ExperienceDefinition>> {
        self.current.as_ref()
    }

    /// The class of the players' pawns: the experience's pawn data, or `Character`.
    pub fn pawn_class(&self) -> String {
        self.current().and_then(|d| d.pawn_data.as_ref()).map_or("Character".to_string(), |p| p.pawn_class.clone())
    }

    /// The timeline the world records into.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The world's name, as its timeline tracks show it.
    pub fn world_name(&self) -> &str {
        &self.world_name
    }

    /// What the last load did, failures included.
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// Runs `callback` once the experience has loaded: now if it already has, else when loading finishes, after
    /// every callback of a higher priority.
    pub fn call_or_register_on_loaded(&mut self, priority: Priority, callback: LoadedCallback) {
        match (&self.current, self.state) {
            (Some(definition), ExperienceLoadState::Loaded) => {
                callback(&LoadedExperience { definition: definition.clone(), world: self.world.clone() })
            }
            _ => self.callbacks.register(priority, callback),
        }
    }

    fn enter(&mut self, state: ExperienceLoadState) {
        self.state = state;
        self.visited.push(state);
        self.timeline.record(track::experience(&self.world_name), EventKind::State, state.to_string());
        tracing::info!(world = %self.world_name, %state, "experience state");
    }

    /// Records a failure. Its cause may carry a plugin's own text (an error it returned, a panic message), so it
    /// is shown escaped and capped.
    fn fail(&mut self, source: &str, during: &str, cause: String) {
        let cause = shown(&cause, MAX_CAUSE);
        let failure = Failure { source: source.to_string(), during: during.to_string(), cause };
        self.timeline.record(track::experience(&self.world_name), EventKind::Failure, failure.to_string());
        tracing::warn!(world = %self.world_name, "{failure}");
        self.report.failures.push(failure);
    }

    /// Loads the experience at `path` into this world. Returns an error only when the experience itself cannot
    /// be used (unreadable, malformed, bad bundle); failing features are in [`report`](Self::report).
    pub async fn load(&mut self, path: &Path) -> Result<&LoadReport, ExperienceError> {
        if self.state != ExperienceLoadState::Unloaded {
            return Err(ExperienceError::Busy { world: self.world_name.to_string(), state: self.state });
        }
        self.report = LoadReport::default();
        self.enter(ExperienceLoadState::Loading);
        let (definition, assets) = match self.read_experience(path).await {
            Ok(read) => read,
            Err(e) => {
                self.timeline.record(track::experience(&self.world_name), EventKind::Failure, e.to_string());
                self.enter(ExperienceLoadState::Unloaded);
                return Err(e);
            }
        };
        self.report.bundles = assets.bundles().to_vec();
        self.current = Some(definition.clone());

        let features = definition.all_features();
        if !features.is_empty() {
            self.enter(ExperienceLoadState::LoadingGameFeatures);
            self.activate_features(&features).await;
        }
        if let Some(chaos) = self.options.chaos {
            self.enter(ExperienceLoadState::LoadingChaosTestingDelay);
            let delay = chaos.delay();
            self.timeline.record(
                track::experience(&self.world_name),
                EventKind::Note,
                format!("chaos delay {:.3} s (seed {})", delay.as_secs_f64(), chaos.seed),
            );
            self.report.chaos_delay = Some(delay);
            tokio::time::sleep(delay).await;
        }

        self.enter(ExperienceLoadState::ExecutingActions);
        self.assets = Arc::new(assets);
        for name in self.instance_order() {
            self.run_feature_actions(&name).await;
        }
        let experience_actions =
            definition.actions.iter().chain(definition.action_sets.iter().flat_map(|s| &s.actions));
        for action in experience_actions {
            let result = action.activate(&mut world::lock(&self.world), OwnerId::HOST);
            match result {
                Ok(active) => self.experience_actions.push(active),
                Err(e) => self.fail("experience", &action.describe(), e.to_string()),
            }
        }
        self.pump();
        self.report.active = self.live_features();

        self.enter(ExperienceLoadState::Loaded);
        let loaded = LoadedExperience { definition, world: self.world.clone() };
        self.callbacks.fire(&loaded);
        self.pump();
        Ok(&self.report)
    }

    async fn read_experience(&mut self, path: &Path) -> Result<(Arc<ExperienceDefinition>, Assets), ExperienceError> {
        let definition = Arc::new(ExperienceDefinition::load(path).await?);
        {
            let mut w = world::lock(&self.world);
            if let Some(states) = &definition.init_states {
                w.set_init_states(states).map_err(|e| ExperienceError::World {
                    experience: definition.path.clone(),
                    cause: e.to_string(),
                })?;
            }
            for (class, parent) in &definition.classes {
                w.declare_class(class, parent).map_err(|e| ExperienceError::World {
                    experience: definition.path.clone(),
                    cause: e.to_string(),
                })?;
            }
            for (class, policy) in &definition.component_creation {
                w.override_creation(class, *policy);
            }
            if let Some(pawn) = &definition.pawn_data {
                if !w.classes().contains(&pawn.pawn_class) {
                    return Err(ExperienceError::World {
                        experience: definition.path.clone(),
                        cause: format!(
                            "[pawn-data] pawn-class {:?} is neither one of the game's classes nor declared under \
                             [classes]",
                            crate::text::shown(&pawn.pawn_class, 64)
                        ),
                    });
                }
            }
        }
        let assets_error = |cause| ExperienceError::Assets { experience: definition.path.clone(), cause };
        let mut assets =
            Assets::load(definition.dir(), &definition.bundles, self.net_mode).await.map_err(assets_error)?;
        for set in &definition.action_sets {
            let dir = set.path.parent().unwrap_or(Path::new("."));
            assets.add(dir, &set.bundles, self.net_mode).await.map_err(assets_error)?;
        }
        self.timeline.record(
            track::experience(&self.world_name),
            EventKind::Note,
            format!("experience {:?}: bundles {:?}, assets {:?}", definition.name, assets.bundles(), assets.names()),
        );
        Ok((definition, assets))
    }

    /// Activates every feature in the subsystem, independent ones in parallel. Failures are recorded.
    async fn activate_features(&mut self, features: &[String]) {
        let mut loading = JoinSet::new();
        for name in features {
            let subsystem = self.features.clone();
            let name = name.clone();
            loading.spawn(async move {
                let result = subsystem.activate(&name).await;
                (name, result)
            });
        }
        let mut results = HashMap::new();
        while let Some(joined) = loading.join_next().await {
            match joined {
                Ok((name, result)) => {
                    results.insert(name, result);
                }
                Err(e) => self.fail("experience", "LoadingGameFeatures", format!("a feature load task failed: {e}")),
            }
        }
        // Record in the experience's order, so reports do not depend on which load finished first.
        for name in features {
            match results.remove(name) {
                Some(Ok(())) => self.activated.push(name.clone()),
                Some(Err(e)) => self.fail(name, "LoadingGameFeatures", e.to_string()),
                None => {}
            }
        }
    }

    /// Plugins that get an instance in this world: each activated feature's activation closure, dependencies
    /// first, each once.
    fn instance_order(&self) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        for feature in &self.activated {
            for name in self.features.activation_order(feature).unwrap_or_default() {
                if !order.contains(&name) {
                    order.push(name);
                }
            }
        }
        order
    }

    fn context(&self) -> ActivationContext {
        ActivationContext { world_name: self.world_name.to_string(), net_mode: self.net_mode }
    }

    fn record_call(
        &self,
        plugin: &str,
        hook: &str,
        outcome: &Result<impl std::fmt::Debug, CallError>,
        took: std::time::Duration,
    ) {
        let text = match outcome {
            Ok(value) => {
                let value = format!("{value:?}");
                if value == "()" {
                    format!("{hook} ok")
                } else {
                    format!("{hook} -> {value}")
                }
            }
            Err(e) => format!("{hook} failed: {}", shown(&e.to_string(), MAX_CAUSE)),
        };
        self.timeline.record_finished(track::instance(plugin, &self.world_name), EventKind::Call, text, took);
    }

    /// Ends play: deactivates every feature in this world (waiting for held deactivations up to the deadline),
    /// undoes every action, releases the features and returns to `Unloaded`.
    pub async fn end_play(&mut self) -> Result<(), ExperienceError> {
        if self.state != ExperienceLoadState::Loaded {
            return Err(ExperienceError::NotLoaded(self.world_name.to_string()));
        }
        self.enter(ExperienceLoadState::Deactivating);
        {
            let mut w = world::lock(&self.world);
            for action in self.experience_actions.drain(..).rev() {
                action.deactivate(&mut w);
            }
        }
        self.end_supervision();
        let mut features = std::mem::take(&mut self.in_world);
        features.reverse();
        self.teardown(features).await;

        let activated = std::mem::take(&mut self.activated);
        for name in activated.iter().rev() {
            if let Err(e) = self.features.deactivate(name).await {
                self.fail(name, "Deactivating", e.to_string());
            }
        }
        // Plugins nothing else holds go all the way down; another world's activation keeps its plugins up.
        for name in self.all_feature_closure(&activated).iter().rev() {
            if self.features.activations(name) == 0 {
                let _ = self.features.unregister(name).await;
            }
        }
        self.current = None;
        self.enter(ExperienceLoadState::Unloaded);
        Ok(())
    }

    /// The feature subsystem the world's plugins come from.
    pub fn features(&self) -> &Arc<FeatureSubsystem> {
        &self.features
    }

    /// What this world grants each plugin (see [`GrantPolicy::effective`]): what a console shows beside what a
    /// plugin asks.
    pub fn grants(&self) -> &GrantPolicy {
        &self.options.grants
    }

    /// Every plugin the current experience plays: its features and its action sets', with their dependencies,
    /// each after what it depends on. Empty when no experience is loaded.
    pub fn played_plugins(&self) -> Vec<String> {
        match &self.current {
            Some(definition) => self.all_feature_closure(&definition.all_features()),
            None => Vec::new(),
        }
    }

    fn all_feature_closure(&self, features: &[String]) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for feature in features {
            for name in self.features.dependency_order(feature).unwrap_or_default() {
                if !all.contains(&name) {
                    all.push(name);
                }
            }
        }
        all
    }
}
