//! One feature's life in a world: its instance is created and taken through Lyra's order, queued work is
//! delivered to it, and at deactivation (end of play or mid-game) it leaves nothing behind.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::{ExperienceManager, FeatureInWorld};
use crate::delivery::LiveInstance;
use crate::delivery::{within_refusal_budget, CallError, Deactivation, PluginInstance};
use crate::feature::{ActionDef, FeatureError, InstanceEnv, Phase, PluginError, Transition};
use crate::text::{shown, MAX_CAUSE};
use crate::timeline::{track, EventKind, LogLevel};
use crate::world;
use crate::world::component_manager::OwnerId;

/// A snapshot's bytes, shown in the timeline by their size only.
pub(super) struct Carried(pub(super) Vec<u8>);

impl std::fmt::Debug for Carried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.0.len())
    }
}

impl ExperienceManager {
    /// Creates the plugin's instance in this world and runs its actions; on failure, records it and leaves
    /// nothing of the plugin in the world.
    pub(super) async fn run_feature_actions(&mut self, name: &str) {
        self.run_feature_actions_with(name, None).await;
    }

    /// [`run_feature_actions`](Self::run_feature_actions), with the bundles already read (`kept`) rather than
    /// read from disk now.
    async fn run_feature_actions_with(&mut self, name: &str, kept: Option<Arc<crate::assets::Assets>>) {
        let Some(code) = self.features.code(name) else {
            self.fail(name, "ExecutingActions", "plugin is not loaded".into());
            return;
        };
        let manifest = self.features.manifest(name).expect("loaded plugins are installed");
        let assets = if let Some(kept) = kept {
            kept
        } else if manifest.bundles.is_empty() {
            self.assets.clone()
        } else {
            let mut merged = (*self.assets).clone();
            if let Err(e) = merged.add(&manifest.dir, &manifest.bundles, self.net_mode).await {
                self.fail_feature(name, Transition::Loading, format!("{}: {e}", manifest.manifest_path.display()));
                return;
            }
            Arc::new(merged)
        };
        self.start_feature(name, code, &manifest, assets);
    }

    /// Creates the plugin's instance in this world from its compiled `code`, with the bundles it reads, and
    /// takes it through Lyra's order; on failure, records it and leaves nothing of the plugin in the world.
    pub(super) fn start_feature(
        &mut self,
        name: &str,
        code: Arc<dyn crate::feature::LoadedPlugin>,
        manifest: &crate::feature::PluginManifest,
        assets: Arc<crate::assets::Assets>,
    ) {
        let permissions = self.options.grants.effective(name, &manifest.permissions);
        let (data_dir, data_lease) = match self.data_dir(name, manifest.permissions.fs.data, permissions.fs.data) {
            Ok(Some((dir, lease))) => (Some(dir), Some(lease)),
            Ok(None) => (None, None),
            Err(cause) => {
                self.fail_feature(name, Transition::Loading, cause);
                return;
            }
        };
        let owner = {
            let mut w = world::lock(&self.world);
            let owner = w.register_owner(name);
            // Declared before the actions run, so the components they add know they replicate.
            for (class, properties) in &manifest.replicated {
                w.declare_replicated_by(owner, class, properties);
            }
            let classes = manifest.component_classes.iter().chain(manifest.replicated.keys()).map(String::as_str);
            let policies = manifest.creation.iter().map(|(class, policy)| (class.as_str(), *policy));
            match w.declare_plugin_classes(owner, classes, policies) {
                Ok(voided) => {
                    drop(w);
                    for (class, setter) in voided {
                        let line = format!(
                            "{name} declares component class {class} too: the creation policy {setter} set for it \
                             no longer applies (only the experience may set it now)"
                        );
                        tracing::warn!("{line}");
                        // On both plugins' tracks: the one whose policy went hears who took it.
                        for plugin in [name, setter.as_str()] {
                            self.timeline.record(
                                track::instance(plugin, &self.world_name),
                                EventKind::Log(LogLevel::Warn),
                                line.clone(),
                            );
                        }
                    }
                }
                Err(refused) => {
                    w.retire_owner(owner);
                    drop(w);
                    let cause = format!("{}: [components.creation] {refused}", manifest.manifest_path.display());
                    self.fail_feature(name, Transition::Loading, cause);
                    return;
                }
            }
            owner
        };
        let env = InstanceEnv {
            plugin: Arc::from(name),
            owner,
            world_name: self.world_name.clone(),
            net_mode: self.net_mode,
            world: self.world.clone(),
            assets: assets.clone(),
            timeline: self.timeline.clone(),
            log_level: self.options.plugin_log_level,
            permissions: Arc::new(permissions),
            permissions_limited_by: manifest.permissions_limited_by().map(Arc::from),
            data_dir,
            tape: self.tape.as_ref().map(|tape| tape.next_instance(name)),
        };
        let started = Instant::now();
        let cpu_before = crate::cpu_clock::thread_cpu_time();
        let instance = match code.instantiate(env) {
            Ok(instance) => instance,
            Err(e) => {
                self.fail_feature(name, Transition::Loading, format!("instantiating: {e}"));
                return;
            }
        };
        self.timeline.record(
            track::instance(name, &self.world_name),
            EventKind::Load,
            format!("instantiated in {:.1} us", started.elapsed().as_secs_f64() * 1e6),
        );
        let mut live = LiveInstance::new(name, instance);
        // Its start-up code ran in this frame too.
        let cpu_used =
            cpu_before.zip(crate::cpu_clock::thread_cpu_time()).map(|(before, now)| now.saturating_sub(before));
        live.charge(cpu_used.unwrap_or_else(|| started.elapsed()));
        self.instances.insert(owner, live);
        let feature = FeatureInWorld {
            name: name.to_string(),
            owner,
            actions: Vec::new(),
            playing: false,
            assets,
            _data_lease: data_lease,
        };
        self.in_world.push(feature);
        let index = self.in_world.len() - 1;
        match self.activate_instance(index, &manifest.actions) {
            Ok(()) => self.in_world[index].playing = true,
            Err((during, cause)) => {
                let feature = self.in_world.remove(index);
                self.remove_from_world(feature);
                self.fail_feature(name, during, cause);
            }
        }
    }

    /// The data directory of a plugin granted `fs.data` (created if needed), with this process's lease on it: two
    /// processes never run one plugin's data folder at once (a second is refused, naming the folder); a warning
    /// when it declared the permission but will not get a directory.
    fn data_dir(
        &self,
        name: &str,
        declared: bool,
        granted: bool,
    ) -> Result<Option<(PathBuf, Arc<crate::file_lock::FolderLease>)>, String> {
        let warn = |why: &str| {
            let line = format!("declared fs.data but {why}: it has no filesystem");
            tracing::warn!(plugin = name, "{line}");
            self.timeline.record(track::instance(name, &self.world_name), EventKind::Log(LogLevel::Warn), line);
        };
        // `granted` is what the plugin both declared and was granted, so it implies `declared`.
        match (&self.options.data_dir, granted) {
            (_, false) => {
                if declared {
                    warn("was not granted it in the host configuration");
                }
                Ok(None)
            }
            (None, true) => {
                warn("the host has no data directory configured ([sandbox] data-dir)");
                Ok(None)
            }
            (Some(root), true) => {
                let dir = root.join(name);
                let lease = crate::file_lock::FolderLease::take(&dir).map_err(|e| match e {
                    crate::file_lock::LockError::Held { .. } => format!(
                        "its data directory {} is in use by another process: give each process its own [sandbox] \
                         data-dir",
                        dir.display()
                    ),
                    e => format!("cannot lock its data directory: {e}"),
                })?;
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create its data directory {}: {e}", dir.display()))?;
                Ok(Some((dir, lease)))
            }
        }
    }

    /// Calls one lifecycle hook of a live instance and records it; `None` when the instance is gone. An
    /// instance that traps is quarantined here, on every path: it leaves the live instances at once and is never
    /// called again (what it added to the world is for the caller to remove).
    pub(super) fn call<R: std::fmt::Debug>(
        &mut self,
        owner: OwnerId,
        hook: &str,
        f: impl FnOnce(&mut dyn PluginInstance) -> Result<R, CallError>,
    ) -> Option<Result<R, CallError>> {
        let live = self.instances.get_mut(owner)?;
        let plugin = live.plugin.clone();
        let (outcome, took) = live.call(f);
        let outcome = within_refusal_budget(live.instance.as_mut(), 0, outcome);
        if let Err(CallError::Trapped(cause)) = &outcome {
            self.record_quarantine(&plugin, hook, cause);
            self.instances.remove(owner);
        }
        self.record_call(&plugin, hook, &outcome, took);
        Some(outcome)
    }

    /// Shows a quarantine on the plugin's track: it trapped, so it is stopped and everything it added removed.
    fn record_quarantine(&mut self, plugin: &str, call: &str, cause: &str) {
        self.quarantines += 1;
        let text = format!("quarantined: {call} {}", shown(cause, MAX_CAUSE));
        self.timeline.record(track::instance(plugin, &self.world_name), EventKind::Failure, text);
    }

    /// Delivers the world's queued work to the instances, then shows what happened in the timeline. Game code
    /// that changes the world directly calls this afterwards (or uses [`with_world`](Self::with_world)).
    pub fn pump(&mut self) {
        let failures = match self.instances.pump(&self.world, &self.timeline) {
            Ok(failures) => failures,
            Err(overflow) => {
                self.fail("experience", "dispatch", overflow.to_string());
                overflow.failures
            }
        };
        self.report_delivery_failures(failures);
    }

    /// Moves the world to its next frame, `delta` of game time later: each plugin with due timers gets its
    /// `on-timers` calls, then what those calls caused is delivered, then the frame is over and each plugin's
    /// cost in it (since the previous frame ended: commands and reloads between frames count) is held to its
    /// frame budget. A server calls this at its tick rate, a client once per frame, a test as it likes.
    pub fn tick(&mut self, delta: std::time::Duration) -> world::Frame {
        let (frame, mut fired) = world::lock(&self.world).advance(delta);
        // What waited for plugins from an earlier frame (over their frame budget then) goes to them first.
        let held = self.instances.deliver_held(&self.world, &self.timeline);
        self.report_delivery_failures(held);
        for owner in self.instances.with_held_timers() {
            if !fired.iter().any(|f| f.owner == owner) {
                fired.push(world::Fired { owner, timers: Vec::new() });
            }
        }
        let mut failures = Vec::new();
        for owner in &fired {
            if let Err(failure) = self.instances.fire_timers(&self.world, &self.timeline, owner, &frame) {
                failures.push(failure);
            }
        }
        self.report_delivery_failures(failures);
        self.pump();
        let (costs, mut failures) = self.instances.end_frame(&self.world);
        self.last_frame_costs = costs;
        if let Some(tape) = &self.tape {
            // Frame budgets are measured in CPU time, which no two runs spend alike: a recording keeps the
            // verdicts, and a replay (whose budgets are loosened) applies them.
            for failure in failures.iter().filter(|f| f.call == crate::delivery::FRAME_BUDGET_CALL) {
                tape.record_over_budget(frame.number, &failure.plugin, failure.error.message());
            }
            for (plugin, cause) in tape.over_budget_at(frame.number) {
                let owner = self.in_world.iter().find(|f| f.name == plugin).map(|f| f.owner);
                failures
                    .extend(owner.and_then(|owner| self.instances.quarantine_over_budget(&self.world, owner, cause)));
            }
        }
        self.report_delivery_failures(failures);
        self.supervise(&frame);
        frame
    }

    /// What a plugin's code cost in the last frame [`tick`](Self::tick) ended (CPU time, and time parked in
    /// WASI), if it plays in this world.
    pub fn last_frame_cost(&self, plugin: &str) -> Option<std::time::Duration> {
        let owner = self.in_world.iter().find(|f| f.name == plugin)?.owner;
        self.last_frame_costs.iter().find(|(o, _)| *o == owner).map(|(_, spent)| spent.cpu)
    }

    /// What each plugin playing in this world spent in the last frame [`tick`](Self::tick) ended, by name.
    pub fn last_frame_spend(&self) -> impl Iterator<Item = (&str, crate::delivery::FrameSpend)> + '_ {
        self.in_world.iter().filter_map(|feature| {
            let spent = self.last_frame_costs.iter().find(|(o, _)| *o == feature.owner)?.1;
            Some((feature.name.as_str(), spent))
        })
    }

    /// How many plugin instances this world has quarantined since it was created.
    pub fn quarantine_count(&self) -> u64 {
        self.quarantines
    }

    /// Shows and records the failures of calls that delivered work (the instances are already gone).
    pub(super) fn report_delivery_failures(&mut self, failures: Vec<crate::delivery::DeliveryFailure>) {
        for failure in failures {
            if let CallError::Trapped(cause) = &failure.error {
                self.record_quarantine(&failure.plugin, failure.call, cause);
            }
            let cause = format!("{}: {}", failure.call, failure.error);
            let phase = self.phase_of(failure.owner);
            self.fail_feature(&failure.plugin, phase, cause);
        }
    }

    /// What a feature was doing in this world: activating (until its `on-activated` returned), playing, or —
    /// once it has left the world's list — deactivating.
    fn phase_of(&self, owner: OwnerId) -> Phase {
        match self.in_world.iter().find(|f| f.owner == owner) {
            Some(feature) if feature.playing => Phase::Playing,
            Some(_) => Transition::Activating.into(),
            None => Transition::Deactivating.into(),
        }
    }

    /// Runs game code on the world, then delivers what it caused to the plugins.
    pub fn with_world<R>(&mut self, f: impl FnOnce(&mut crate::world::World) -> R) -> R {
        let result = f(&mut world::lock(&self.world));
        self.pump();
        result
    }

    /// Plugins this world wants: what its experience (and commands) activated, dependencies first, whether their
    /// instance runs, was quarantined, or failed to activate here — what a new version may replace or bring back.
    pub fn wanted_features(&self) -> Vec<String> {
        self.instance_order()
    }

    fn wants(&self, name: &str) -> bool {
        self.instance_order().iter().any(|f| f == name)
    }

    /// Plugins with a live instance in this world, in activation order.
    pub fn live_features(&self) -> Vec<String> {
        self.in_world.iter().filter(|f| self.instances.contains(f.owner)).map(|f| f.name.clone()).collect()
    }

    /// Lyra's order for one feature: registering, loading, the manifest's built-in actions, activating,
    /// activated; queued work is delivered after each call.
    fn activate_instance(&mut self, index: usize, manifest_actions: &[ActionDef]) -> Result<(), (Transition, String)> {
        let owner = self.in_world[index].owner;
        let gone = || (Transition::Activating, "the instance trapped".to_string());
        let outcome = self.call(owner, "on-registering", |i| i.on_registering()).ok_or_else(gone)?;
        outcome.map_err(|e| (Transition::Registering, format!("on-registering: {e}")))?;
        self.pump();
        let outcome = self.call(owner, "on-loading", |i| i.on_loading()).ok_or_else(gone)?;
        outcome.map_err(|e| (Transition::Loading, format!("on-loading: {e}")))?;
        self.pump();
        // A reload hands over the state of the instance this one replaces.
        if let Some(state) = self.carried.get(&self.in_world[index].name).cloned() {
            let outcome = self.call(owner, "restore", |i| i.restore(&state)).ok_or_else(gone)?;
            outcome.map_err(|e| (Transition::Loading, format!("restore: {e}")))?;
            self.pump();
        }
        // The manifest's built-in actions come first, so the plugin's own code finds the components it declared.
        for action in manifest_actions {
            let result = action.activate(&mut world::lock(&self.world), owner);
            let active = result.map_err(|e| (Transition::Activating, format!("action {}: {e}", action.describe())))?;
            self.in_world[index].actions.push(active);
        }
        let context = self.context();
        let outcome = self.call(owner, "on-activating", |i| i.on_activating(&context)).ok_or_else(gone)?;
        outcome.map_err(|e| (Transition::Activating, format!("on-activating: {e}")))?;
        self.pump();
        let outcome = self.call(owner, "on-activated", |i| i.on_activated()).ok_or_else(gone)?;
        outcome.map_err(|e| (Transition::Activating, format!("on-activated: {e}")))?;
        self.pump();
        if self.instances.contains(owner) {
            Ok(())
        } else {
            Err(gone())
        }
    }

    /// Takes a feature out of the world: what its instance still holds is dropped (its handlers' last
    /// `ExtensionRemoved` delivered while it is still alive), its actions are undone, its instance goes.
    pub(super) fn remove_from_world(&mut self, feature: FeatureInWorld) {
        world::lock(&self.world).remove_owner(feature.owner);
        self.instances.leaving(feature.owner);
        self.pump();
        let mut w = world::lock(&self.world);
        for action in feature.actions {
            action.deactivate(&mut w);
        }
        w.retire_owner(feature.owner);
        drop(w);
        self.instances.remove(feature.owner);
    }

    /// Records a feature's failure in this world: in the report, the timeline, and its plugin's state.
    pub(super) fn fail_feature(&mut self, name: &str, during: impl Into<Phase>, cause: String) {
        let error = PluginError::new(during, shown(&cause, MAX_CAUSE));
        self.fail(name, &error.during.to_string(), error.cause.clone());
        self.features.record_error(name, error);
    }

    /// Deactivates features in the given order: every one is asked to deactivate (and waited for while it
    /// holds deactivation open), then each leaves the world (what it still holds is dropped, its handlers'
    /// last `ExtensionRemoved` delivered, its actions undone), then every one unloads and unregisters.
    pub(super) async fn teardown(&mut self, features: Vec<FeatureInWorld>) {
        let context = self.context();
        let mut pending = Vec::new();
        for feature in &features {
            match self.call(feature.owner, "on-deactivating", |i| i.on_deactivating(&context)) {
                Some(Ok(Deactivation::Pending)) => pending.push(feature.owner),
                // A trapped instance was quarantined by `call`; the world forgets it below, as it does every
                // leaving feature.
                Some(Err(e)) => {
                    self.fail_feature(&feature.name, Transition::Deactivating, format!("on-deactivating: {e}"))
                }
                _ => {}
            }
            self.pump();
        }
        self.wait_for_pausers(&features, pending).await;
        let mut leaving = Vec::new();
        for feature in features {
            let (name, owner) = (feature.name.clone(), feature.owner);
            world::lock(&self.world).remove_owner(owner);
            self.instances.leaving(owner);
            self.pump();
            {
                let mut w = world::lock(&self.world);
                for action in feature.actions {
                    action.deactivate(&mut w);
                }
            }
            // Its data folder stays this process's until its last calls are made.
            leaving.push((name, owner, self.instances.remove(owner), feature._data_lease));
        }
        for (name, _, instance, _) in &mut leaving {
            self.last_call(name, instance, Transition::Unloading, "on-unloading", |i| i.on_unloading());
        }
        for (name, owner, instance, _) in &mut leaving {
            self.last_call(name, instance, Transition::Unregistering, "on-unregistering", |i| i.on_unregistering());
            // Whatever the last calls queued has nobody left to reach.
            world::lock(&self.world).retire_owner(*owner);
        }
    }

    /// One of the calls a leaving instance gets after it left the world. An instance that traps in one is
    /// quarantined (shown, and not called again); there is nothing left of it in the world to remove.
    fn last_call(
        &mut self,
        name: &str,
        instance: &mut Option<LiveInstance>,
        phase: Transition,
        hook: &str,
        f: impl FnOnce(&mut dyn PluginInstance) -> Result<(), CallError>,
    ) {
        let Some(live) = instance else {
            return;
        };
        let (outcome, took) = live.call(f);
        self.record_call(name, hook, &outcome, took);
        if let Err(e) = &outcome {
            if let CallError::Trapped(cause) = e {
                self.record_quarantine(name, hook, cause);
                *instance = None;
            }
            self.fail_feature(name, phase, format!("{hook}: {e}"));
        }
    }

    /// Deactivates one feature mid-game: it leaves this world as at end of play (its handlers get
    /// `ExtensionRemoved`, its components, init-state features and subscriptions go, its queued work is
    /// discarded) while every other feature keeps running. Returns false if the feature is not in this world.
    pub async fn deactivate_feature(&mut self, name: &str) -> bool {
        let Some(index) = self.in_world.iter().position(|f| f.name == name) else {
            return false;
        };
        let feature = self.in_world.remove(index);
        self.forget_supervised(name);
        self.teardown(vec![feature]).await;
        if let Some(position) = self.activated.iter().position(|f| f == name) {
            self.activated.remove(position);
            if let Err(e) = self.features.deactivate(name).await {
                self.fail(name, "Deactivating", e.to_string());
            }
        }
        self.report.active = self.live_features();
        true
    }

    /// Activates one more feature mid-game: it is brought up in the subsystem and its instance applied to the
    /// world as it is now (existing receivers get its components and `ExtensionAdded`).
    pub async fn activate_feature(&mut self, name: &str) -> Result<(), FeatureError> {
        if self.in_world.iter().any(|f| f.name == name) {
            return Ok(());
        }
        self.features.activate(name).await?;
        self.activated.push(name.to_string());
        for plugin in self.features.activation_order(name)? {
            if !self.in_world.iter().any(|f| f.name == plugin) {
                self.run_feature_actions(&plugin).await;
            }
        }
        self.pump();
        self.report.active = self.live_features();
        Ok(())
    }

    async fn wait_for_pausers(&mut self, features: &[FeatureInWorld], mut pending: Vec<OwnerId>) {
        if pending.is_empty() {
            return;
        }
        let deadline = Instant::now() + self.options.deactivation_deadline;
        self.timeline.record(
            track::experience(&self.world_name),
            EventKind::Note,
            format!("waiting for {} plugin(s) holding deactivation open", pending.len()),
        );
        let name_of = |owner: OwnerId| features.iter().find(|f| f.owner == owner).map_or("?", |f| f.name.as_str());
        while !pending.is_empty() {
            if Instant::now() >= deadline {
                for owner in pending.drain(..) {
                    let cause = format!(
                        "still deactivating after {:?}; continuing without it",
                        self.options.deactivation_deadline
                    );
                    self.fail_feature(name_of(owner), Transition::Deactivating, cause);
                }
                break;
            }
            tokio::time::sleep(self.options.deactivation_poll).await;
            let mut still = Vec::new();
            for owner in pending {
                match self.call(owner, "poll-deactivation", |i| i.poll_deactivation()) {
                    Some(Ok(Deactivation::Pending)) => still.push(owner),
                    Some(Err(e)) => {
                        let cause = format!("poll-deactivation: {e}");
                        self.fail_feature(name_of(owner), Transition::Deactivating, cause);
                    }
                    _ => {}
                }
                self.pump();
            }
            pending = still;
        }
    }
}

/// Why a reload was refused; the version that was running keeps running.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReloadError {
    /// The plugin is not playing in this world (or, when preparing a new version, not installed at all).
    #[error("plugin {0:?} is not active in this world")]
    NotInWorld(String),
    /// The new version was refused: it could not be read or compiled, its manifest names another plugin, or the
    /// plugin is no longer loaded.
    #[error("the new version of {plugin:?} was refused: {cause}")]
    Refused {
        /// The plugin being reloaded.
        plugin: String,
        /// Why its new version was refused.
        cause: String,
    },
    /// The new version failed to activate, so it was taken out and the old version activated again.
    #[error("the new version of {plugin:?} failed to activate ({cause}); the old version runs again")]
    Failed {
        /// The plugin being reloaded.
        plugin: String,
        /// Why its new version failed to activate.
        cause: String,
    },
    /// The new version failed to activate and so did the old version brought back: the plugin is out of this
    /// world, and so are the features of this world that depend on it.
    #[error(
        "the new version of {plugin:?} failed to activate ({cause}), and the old version brought back failed too \
         ({old_cause}): {plugin:?} is out of this world"
    )]
    Lost {
        /// The plugin being reloaded, now out of this world.
        plugin: String,
        /// Why its new version failed to activate.
        cause: String,
        /// Why the old version, brought back, failed too.
        old_cause: String,
    },
}

/// A plugin's new version, read and compiled while the old one keeps running: the first half of a hot reload,
/// which needs no world, so a game runs it off its frame thread and applies it between frames with
/// [`ExperienceManager::apply_new_version`].
pub struct NewVersion {
    manifest: crate::feature::Admitted,
    code: Arc<dyn crate::feature::LoadedPlugin>,
    old: Arc<crate::feature::PluginManifest>,
}

impl NewVersion {
    /// Reads the plugin's files as they are now and compiles its component (on a blocking-task thread).
    /// Its folder passes the gate its current version came through, as [`FeatureSubsystem::readmit`] says.
    ///
    /// [`FeatureSubsystem::readmit`]: crate::feature::FeatureSubsystem::readmit
    pub async fn prepare(features: &crate::feature::FeatureSubsystem, name: &str) -> Result<Self, ReloadError> {
        if features.manifest(name).is_none() {
            return Err(ReloadError::NotInWorld(name.to_string()));
        }
        let refused = |cause: String| ReloadError::Refused { plugin: name.to_string(), cause };
        let admitted = features.readmit(name).map_err(|e| refused(e.to_string()))?;
        Self::prepare_admitted(features, admitted).await
    }

    /// Compiles a new version admitted from a folder of its own (a package fetched into the mods cache, say);
    /// the plugin comes from there from now on. Crate-private: the caller answers for having admitted it through
    /// the gate the plugin's first version passed (a client's fetched update through its mod-sync gate); from
    /// outside, a new version comes through [`prepare`](Self::prepare), which re-admits it through that gate.
    pub(crate) async fn prepare_admitted(
        features: &crate::feature::FeatureSubsystem,
        admitted: crate::feature::Admitted,
    ) -> Result<Self, ReloadError> {
        let name = admitted.name().to_string();
        let old = features.manifest(&name).ok_or_else(|| ReloadError::NotInWorld(name.clone()))?;
        let refused = |cause: String| ReloadError::Refused { plugin: name.clone(), cause };
        let code = features.compile_new_version(&admitted).await.map_err(|e| refused(e.to_string()))?;
        Ok(NewVersion { manifest: admitted, code, old })
    }

    /// The name of the plugin this is a new version of.
    pub fn plugin(&self) -> &str {
        self.manifest.name()
    }
}

/// A reload that took place: the versions before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// The plugin reloaded.
    pub plugin: String,
    /// The version that ran before (the old manifest's `version`).
    pub from: String,
    /// The version that runs now.
    pub to: String,
    /// Whether the new version started without the old one's state: the old one had failed here (quarantined,
    /// or its activation failed), so there was no instance to take a snapshot of, or its snapshot failed.
    pub fresh: bool,
}

impl std::fmt::Display for Reloaded {
    /// `hud reloaded: 1.0.0 -> 1.0.1`, saying when the new version starts fresh.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} reloaded: {} -> {}", self.plugin, self.from, self.to)?;
        if self.fresh {
            write!(f, " (it starts fresh: the version before it handed over no state)")?;
        }
        Ok(())
    }
}

impl ExperienceManager {
    /// Hot-reloads a feature from its files as they are now (`plugin.toml` read again, the component compiled
    /// off this thread while the old version keeps running): the old instance leaves the world as at
    /// deactivation, the new one is activated and applied to every existing actor (a feature this world wants
    /// whose activation failed is activated, see `bring_back`). A new version that does not
    /// read, compile or fit is refused and the old one keeps running; one that fails to activate is taken out
    /// and the old version activated again. The features of this world depending on it are deactivated
    /// before it and activated again after it. (Plugins of WIT 0.1.0 reload without their state.)
    pub async fn reload_feature(&mut self, name: &str) -> Result<Reloaded, ReloadError> {
        if !self.wants(name) {
            return Err(ReloadError::NotInWorld(name.to_string()));
        }
        let new = NewVersion::prepare(&self.features, name).await?;
        self.apply_new_version(new).await
    }

    /// The second half of a reload (see [`NewVersion::prepare`] for the first), between frames: the old
    /// instance (and its dependents in this world) out, the new version in.
    pub async fn apply_new_version(&mut self, new: NewVersion) -> Result<Reloaded, ReloadError> {
        let NewVersion { manifest, code, old } = new;
        let name = manifest.name().to_string();
        let name = name.as_str();
        self.forget_supervised(name);
        if !self.in_world.iter().any(|f| f.name == name) {
            if !self.wants(name) {
                return Err(ReloadError::NotInWorld(name.to_string()));
            }
            return self.bring_back(name, &old, manifest, code).await;
        }
        let to = manifest.manifest().version.clone();
        // The features of this world that depend on it leave first and come back after it, in dependency
        // order, so none runs against a dependency that is not there.
        let dependents = self.dependents_in_world(name);
        for dependent in dependents.iter().rev() {
            let index = self.in_world.iter().position(|f| &f.name == dependent).expect("listed from in_world");
            let feature = self.in_world.remove(index);
            self.carry_state(&feature);
            self.teardown(vec![feature]).await;
        }
        let index = self.in_world.iter().position(|f| f.name == name).expect("checked above");
        let feature = self.in_world.remove(index);
        let carried = self.carry_state(&feature);
        let old_assets = feature.assets.clone();
        self.teardown(vec![feature]).await;
        let outcome = self.activate_new_version(name, (&old, old_assets), manifest, code, to).await;
        // A snapshot that failed carried nothing: the new version starts fresh, and says so.
        let outcome = outcome.map(|reloaded| Reloaded { fresh: !carried, ..reloaded });
        // Dependents come back only to a dependency that runs: with it out, they stay out, and say why.
        let lost = matches!(outcome, Err(ReloadError::Lost { .. }));
        for dependent in &dependents {
            if lost {
                let cause = format!("its dependency {name} is out of this world after a failed reload");
                self.fail_feature(dependent, Transition::Activating, cause);
            } else {
                self.run_feature_actions(dependent).await;
            }
        }
        self.carried.clear();
        self.report.active = self.live_features();
        outcome
    }

    /// Activates a new version of a feature this world wants but lost (its activation failed here, at load or at
    /// a reload), as the world is now. There is no old instance to fall back to: if it fails too, it stays out.
    async fn bring_back(
        &mut self,
        name: &str,
        old: &crate::feature::PluginManifest,
        manifest: crate::feature::Admitted,
        code: Arc<dyn crate::feature::LoadedPlugin>,
    ) -> Result<Reloaded, ReloadError> {
        let to = manifest.manifest().version.clone();
        let refused = |cause: String| ReloadError::Refused { plugin: name.to_string(), cause };
        drop(self.features.swap_code(manifest, code).map_err(|e| refused(e.to_string()))?);
        let failures_before = self.report.failures.len();
        self.run_feature_actions(name).await;
        self.report.active = self.live_features();
        if self.in_world.iter().any(|f| f.name == name && self.instances.contains(f.owner)) {
            self.features.recover(name);
            let note = format!("{to} activated in place of {}, which had failed: it starts fresh", old.version);
            self.timeline.record(track::plugin(name), EventKind::Note, note);
            return Ok(Reloaded { plugin: name.to_string(), from: old.version.clone(), to, fresh: true });
        }
        let cause = self.report.last_cause_of(name, failures_before);
        Err(ReloadError::Failed { plugin: name.to_string(), cause })
    }

    /// Keeps what a leaving instance's `snapshot` returns, for its next instance's `restore`. A plugin that
    /// keeps no state carries nothing; one whose snapshot fails (an error, a trap, its deadline) carries
    /// nothing either — its successor starts fresh — and the failure is listed like any other. Whether the
    /// state was handed over (false: the snapshot failed).
    fn carry_state(&mut self, feature: &FeatureInWorld) -> bool {
        let snapshot = self.call(feature.owner, "snapshot", |i| i.snapshot().map(|state| state.map(Carried)));
        match snapshot {
            Some(Ok(Some(Carried(state)))) => {
                self.carried.insert(feature.name.clone(), state);
                true
            }
            Some(Err(e)) => {
                self.fail_feature(&feature.name, Transition::Deactivating, format!("snapshot: {e}"));
                false
            }
            Some(Ok(None)) => true,
            None => false,
        }
    }

    /// The features of this world that depend on `name`, directly or not, each after its own dependencies.
    fn dependents_in_world(&self, name: &str) -> Vec<String> {
        let names: Vec<String> = self.in_world.iter().map(|f| f.name.clone()).collect();
        names
            .into_iter()
            .filter(|f| f != name)
            .filter(|f| self.features.dependency_order(f).is_ok_and(|order| order.iter().any(|d| d == name)))
            .collect()
    }

    /// Swaps in and activates a reloaded plugin's new version, or brings the old one back if it fails.
    async fn activate_new_version(
        &mut self,
        name: &str,
        (old, old_assets): (&crate::feature::PluginManifest, Arc<crate::assets::Assets>),
        manifest: crate::feature::Admitted,
        code: Arc<dyn crate::feature::LoadedPlugin>,
        to: String,
    ) -> Result<Reloaded, ReloadError> {
        let refused = |cause: String| ReloadError::Refused { plugin: name.to_string(), cause };
        let (old_manifest, old_code) = self.features.swap_code(manifest, code).map_err(|e| refused(e.to_string()))?;
        self.run_feature_actions(name).await;
        let track = track::plugin(name);
        if self.in_world.iter().any(|f| f.name == name && self.instances.contains(f.owner)) {
            self.features.recover(name);
            self.timeline.record(&track, EventKind::Note, format!("reloaded {} -> {to}", old.version));
            return Ok(Reloaded { plugin: name.to_string(), from: old.version.clone(), to, fresh: false });
        }
        let cause = self.report.last_cause_of(name, 0);
        let new_version = self.features.swap_code(old_manifest, old_code);
        drop(new_version);
        let failures_before = self.report.failures.len();
        self.run_feature_actions_with(name, Some(old_assets)).await;
        // What the old version brought back failed of is its own failure: said so, not listed as the new one's.
        for failure in self.report.failures[failures_before..].iter_mut().filter(|f| f.source == name) {
            failure.cause = format!("the old version {} brought back: {}", old.version, failure.cause);
        }
        if self.in_world.iter().any(|f| f.name == name && self.instances.contains(f.owner)) {
            self.features.recover(name);
            self.timeline.record(&track, EventKind::Note, format!("reload to {to} failed; {} runs again", old.version));
            return Err(ReloadError::Failed { plugin: name.to_string(), cause });
        }
        let old_cause = self.report.last_cause_of(name, 0);
        self.timeline.record(
            &track,
            EventKind::Failure,
            format!("reload to {to} failed, and {} failed too", old.version),
        );
        Err(ReloadError::Lost { plugin: name.to_string(), cause, old_cause })
    }

    /// Installs a plugin folder while the game runs (it goes `Installed`; activate it to use it), once it
    /// passes the process's gate as the folders found at start do. Returns its name, and whether it was new:
    /// installing a folder already installed changes nothing.
    pub fn install_plugin(&mut self, dir: &std::path::Path) -> Result<(String, bool), crate::Error> {
        let admitted = self.features.admit(dir)?;
        // Asked for by a person at a console: a folder that is not its package is refused now, not at activation.
        admitted.verify_contents()?;
        let name = admitted.name().to_string();
        let new = self.features.manifest(&name).is_none();
        self.features.install(admitted)?;
        Ok((name, new))
    }

    /// Takes a plugin out of this world if it is in it, then out of the process: its compiled code is freed.
    /// (Other worlds holding it must deactivate it first.)
    pub async fn uninstall_plugin(&mut self, name: &str) -> Result<(), FeatureError> {
        self.deactivate_feature(name).await;
        self.features.uninstall(name).await
    }
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<ReloadError> for crate::error::Error {
    fn from(error: ReloadError) -> crate::error::Error {
        let message = error.to_string();
        match error {
            ReloadError::NotInWorld(name) => crate::error::Error::NotFound { name, message },
            ReloadError::Refused { plugin, .. }
            | ReloadError::Failed { plugin, .. }
            | ReloadError::Lost { plugin, .. } => {
                crate::error::Error::Refused { blame: crate::error::Blame::Plugin(plugin), message }
            }
        }
    }
}
