//! The feature subsystem: the process-wide registry and state machine of every plugin.
//!
//! This is Unreal's `UGameFeaturesSubsystem`. Plugins move between the destinations
//! `Installed < Registered < Loaded < Active` one step at a time, through transition states, and stop in an
//! error state that carries the cause when a step fails. Dependencies come up first: registered, or activated
//! when the manifest says `activate = true`. Activation is ref-counted: every world (or other user) that
//! activates a plugin holds one activation, and the plugin stays `Active` until the last is released.
//!
//! Transitions of one plugin are serialised by a per-plugin async lock, so independent plugins load in parallel
//! while two users bringing up a shared dependency wait for one load instead of doing it twice.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use super::admission::{Admission, Admitted, Gate};
use super::discovery::{discover, DiscoveryReport};
use super::manifest::PluginManifest;
use super::plugin::{LoadError, LoadedPlugin, PluginLoader};
use super::state::{Destination, PluginError, PluginState, Transition};

/// A refused or failed subsystem request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// No plugin of this name is installed.
    #[error("no plugin named {0:?} is installed")]
    UnknownPlugin(String),
    /// No plugin of this name is installed because its folder was refused (discovery said why; so does this).
    #[error("no plugin named {plugin:?} is installed: {cause}")]
    RefusedPlugin {
        /// The plugin asked for.
        plugin: String,
        /// Why its folder was refused.
        cause: String,
    },
    /// The plugin's folder did not pass the gate: its manifest does not read, or its package is not trusted or
    /// not what was installed.
    #[error("{0}")]
    Refused(String),
    /// Two different folders hold a plugin of the same name; the second was not installed.
    #[error("plugin {name:?} is installed twice: {} and {}", first.display(), second.display())]
    DuplicatePlugin {
        /// The name both manifests give.
        name: String,
        /// The manifest of the plugin already installed.
        first: PathBuf,
        /// The manifest refused.
        second: PathBuf,
    },
    /// The plugins' dependencies form a cycle, so none of them can come up first.
    #[error("{}: dependency cycle {}", manifest.display(), cycle.join(" -> "))]
    DependencyCycle {
        /// The plugins around the cycle, each depending on the next, the first named again last.
        cycle: Vec<String>,
        /// The manifest of the plugin the cycle starts and ends at.
        manifest: PathBuf,
    },
    /// A plugin lists a dependency that is not installed.
    #[error("{}: plugin {plugin:?} depends on {dependency:?}, which is not installed", manifest.display())]
    UnknownDependency {
        /// The plugin that lists the dependency.
        plugin: String,
        /// The missing plugin's name.
        dependency: String,
        /// The manifest listing it.
        manifest: PathBuf,
    },
    /// A plugin's dependency is installed at a version outside the range the plugin names.
    #[error(
        "{}: plugin {plugin:?} needs {dependency} {wanted}, but {dependency} {installed} is installed",
        manifest.display()
    )]
    DependencyVersion {
        /// The plugin that names the range.
        plugin: String,
        /// The dependency.
        dependency: String,
        /// The range it names.
        wanted: String,
        /// The version installed.
        installed: String,
        /// The manifest naming the range.
        manifest: PathBuf,
    },
    /// A plugin failed a step of the state machine (it then rests in an error state with the same error), or its
    /// new version failed to compile.
    #[error("plugin {plugin:?} {error}")]
    Failed {
        /// The plugin that failed.
        plugin: String,
        /// The transition it failed in, and why.
        error: PluginError,
    },
    /// The plugin holds no activation to release, or, for a new version's code, is not loaded.
    #[error("plugin {0:?} is not active")]
    NotActive(String),
    /// The plugin cannot be taken below `Active` while activations are held; release them first.
    #[error("plugin {plugin:?} still has {activations} activation(s); deactivate it first")]
    StillActive {
        /// The plugin asked to move.
        plugin: String,
        /// How many activations it still holds.
        activations: u32,
    },
    /// The plugin cannot be uninstalled while another installed plugin depends on it.
    #[error("plugin {plugin:?} is a dependency of {dependent:?}; uninstall that first")]
    Depended {
        /// The plugin asked to be uninstalled.
        plugin: String,
        /// An installed plugin that lists it as a dependency.
        dependent: String,
    },
}

/// A plugin entering a state, as observers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    /// The plugin whose state changed.
    pub plugin: String,
    /// The state left.
    pub from: PluginState,
    /// The state entered.
    pub state: PluginState,
}

/// Something told of every plugin state change, like Unreal's `IGameFeatureStateChangeObserver`.
pub type Observer = Arc<dyn Fn(&StateChange) + Send + Sync>;

/// A snapshot of one plugin, for listings.
#[derive(Debug, Clone)]
pub struct PluginInfo {
    /// The plugin's manifest, as currently installed (a hot reload replaces it).
    pub manifest: Arc<PluginManifest>,
    /// Where the plugin is in the state machine, or the error that stopped it.
    pub state: PluginState,
    /// How many activations the plugin holds: one per world (or other user) that activated it.
    pub activations: u32,
}

struct Entry {
    manifest: Arc<PluginManifest>,
    // How the manifest passed the gate: its later versions pass the same one, and its folder is checked again
    // against the package record before its code is compiled.
    admission: Admission,
    // The last stable state reached; the state machine resumes from here after an error.
    stable: Destination,
    state: PluginState,
    code: Option<Arc<dyn LoadedPlugin>>,
    activations: u32,
    // Dependencies this plugin activated on its way to Active; released on its way down.
    held_dependencies: Vec<String>,
    transitions: Arc<tokio::sync::Mutex<()>>,
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The registry and state machine of every plugin in the process.
pub struct FeatureSubsystem {
    loader: Arc<dyn PluginLoader>,
    gate: Arc<Gate>,
    /// Why the last look through the plugin folders refused a folder, by the plugin name it gave: a plugin asked
    /// for by that name is answered with the reason, not only "not installed".
    refused: Mutex<BTreeMap<String, String>>,
    plugins: Mutex<BTreeMap<String, Entry>>,
    observers: Mutex<Vec<Observer>>,
}

impl FeatureSubsystem {
    /// A subsystem whose `Loading` transitions use `loader`, and whose plugins come in through `gate` (a host's
    /// is `package::gate`).
    pub fn new(loader: Arc<dyn PluginLoader>, gate: Gate) -> Arc<Self> {
        Arc::new(FeatureSubsystem {
            loader,
            gate: Arc::new(gate),
            refused: Mutex::new(BTreeMap::new()),
            plugins: Mutex::new(BTreeMap::new()),
            observers: Mutex::new(Vec::new()),
        })
    }

    /// The gate plugins found in the process's own plugin folders come in through.
    pub fn gate(&self) -> &Arc<Gate> {
        &self.gate
    }

    /// Reads the plugin folder `dir` and lets it through this subsystem's gate, to install.
    pub fn admit(&self, dir: &std::path::Path) -> Result<Admitted, FeatureError> {
        let manifest = PluginManifest::read(dir).map_err(|e| FeatureError::Refused(e.to_string()))?;
        self.gate.admit(manifest).map_err(|e| FeatureError::Refused(e.to_string()))
    }

    /// Reads an installed plugin's folder again — its new version — and lets it through the gate its current
    /// version came through (a fetched plugin's limits hold for its updates too).
    pub fn readmit(&self, name: &str) -> Result<Admitted, FeatureError> {
        let (dir, gate, was_checked) = {
            let plugins = self.plugins();
            let entry = plugins.get(name).ok_or_else(|| FeatureError::UnknownPlugin(name.to_string()))?;
            (entry.manifest.dir.clone(), entry.admission.gate.clone(), entry.admission.is_checked())
        };
        let manifest = PluginManifest::read(&dir).map_err(|e| FeatureError::Refused(e.to_string()))?;
        if manifest.name != name {
            return Err(FeatureError::Refused(format!(
                "{}: its manifest now names it {:?}, not {name:?}",
                manifest.manifest_path.display(),
                manifest.name
            )));
        }
        let admitted = gate.admit(manifest).map_err(|e| FeatureError::Refused(e.to_string()))?;
        // A folder installed from a package stays one: with its record gone, its new version would pass as the
        // operator's own, without the package's check or its publisher's ceiling.
        if was_checked && !admitted.is_checked() {
            return Err(FeatureError::Refused(format!(
                "plugin {name:?} refused: {} was installed from a package, and its record of it is gone; reinstall it",
                dir.display()
            )));
        }
        Ok(admitted)
    }

    fn plugins(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        // Entries are updated with single assignments, so a poisoned lock still holds consistent data.
        self.plugins.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an observer told of every later state change.
    pub fn add_observer(&self, observer: Observer) {
        self.observers.lock().unwrap_or_else(|e| e.into_inner()).push(observer);
    }

    /// Installs every plugin found in `dirs` that passes the gate. Bad manifests, and folders the gate
    /// refuses, are reported and skipped; the rest are installed.
    pub fn discover(&self, dirs: &[PathBuf]) -> DiscoveryReport {
        let mut report = discover(dirs, &|_| Ok(()));
        let manifests = std::mem::take(&mut report.found);
        for manifest in manifests {
            let name = manifest.name.clone();
            let admitted = match self.gate.admit(manifest) {
                Ok(admitted) => admitted,
                Err(e) => {
                    self.refused.lock().unwrap_or_else(|e| e.into_inner()).insert(name, e.to_string());
                    report.errors.push(e.to_string());
                    continue;
                }
            };
            let manifest = admitted.manifest().clone();
            match self.install(admitted) {
                Ok(()) => report.found.push(manifest),
                Err(e) => report.errors.push(e.to_string()),
            }
        }
        report
    }

    /// Installs one plugin, as its gate admitted it.
    pub fn install(&self, admitted: Admitted) -> Result<(), FeatureError> {
        let (manifest, admission) = admitted.into_parts();
        let name = manifest.name.clone();
        {
            let mut plugins = self.plugins();
            if let Some(existing) = plugins.get(&name) {
                if existing.manifest.manifest_path == manifest.manifest_path {
                    return Ok(());
                }
                return Err(FeatureError::DuplicatePlugin {
                    name,
                    first: existing.manifest.manifest_path.clone(),
                    second: manifest.manifest_path,
                });
            }
            plugins.insert(
                name.clone(),
                Entry {
                    manifest: Arc::new(manifest),
                    admission,
                    stable: Destination::Installed,
                    state: PluginState::Stable(Destination::Installed),
                    code: None,
                    activations: 0,
                    held_dependencies: Vec::new(),
                    transitions: Arc::new(tokio::sync::Mutex::new(())),
                },
            );
        }
        self.refused.lock().unwrap_or_else(|e| e.into_inner()).remove(&name);
        let installed = PluginState::Stable(Destination::Installed);
        self.notify(&name, installed.clone(), installed);
        Ok(())
    }

    /// Takes a plugin that no world holds down to `Installed` and forgets it: its compiled code is freed
    /// (unless another plugin shares the same component). Refused while it is active or another installed
    /// plugin depends on it.
    pub async fn uninstall(&self, name: &str) -> Result<(), FeatureError> {
        let dependent = self
            .plugins()
            .values()
            .find(|e| e.manifest.name != name && e.manifest.dependencies.iter().any(|d| d.name == name))
            .map(|e| e.manifest.name.clone());
        if let Some(dependent) = dependent {
            return Err(FeatureError::Depended { plugin: name.to_string(), dependent });
        }
        self.change_target(name, Destination::Installed).await?;
        self.plugins().remove(name);
        Ok(())
    }

    /// Compiles a new version of an installed plugin — its folder read again and admitted — without touching
    /// the version in use: the caller swaps it in with [`swap_code`](Self::swap_code) once it has the old one
    /// out of every world. Its folder is checked against its package first; the checks and the compiler run
    /// off the calling thread.
    pub async fn compile_new_version(&self, admitted: &Admitted) -> Result<Arc<dyn LoadedPlugin>, FeatureError> {
        let name = admitted.name().to_string();
        if self.manifest(&name).is_none() {
            return Err(FeatureError::UnknownPlugin(name));
        }
        let loader = self.loader.clone();
        let admitted = admitted.clone();
        let path = admitted.manifest().component_path.display().to_string();
        tokio::task::spawn_blocking(move || {
            admitted.verify_contents().map_err(|e| LoadError::Refused(e.to_string()))?;
            loader.load(admitted.manifest())
        })
        .await
        .unwrap_or_else(|panic| Err(LoadError::Other { path, cause: format!("loader panicked: {panic}") }))
        .map_err(|e| FeatureError::Failed { plugin: name, error: PluginError::new(Transition::Loading, e.to_string()) })
    }

    /// Puts a plugin's new version in place of the old one (a hot reload): its manifest and its code, which
    /// worlds instantiate from now on. Returns the old manifest and code, to put back if the new version
    /// fails to activate. The plugin must be loaded (its code in use), and keeps its activations.
    pub fn swap_code(
        &self,
        admitted: Admitted,
        code: Arc<dyn LoadedPlugin>,
    ) -> Result<(Admitted, Arc<dyn LoadedPlugin>), FeatureError> {
        let (manifest, admission) = admitted.into_parts();
        let name = manifest.name.clone();
        let mut plugins = self.plugins();
        let entry = plugins.get_mut(&name).ok_or_else(|| FeatureError::UnknownPlugin(name.clone()))?;
        let Some(old_code) = entry.code.replace(code) else {
            entry.code = None;
            return Err(FeatureError::NotActive(name));
        };
        let old_manifest = std::mem::replace(&mut entry.manifest, Arc::new(manifest));
        let old_admission = std::mem::replace(&mut entry.admission, admission);
        Ok((Admitted::from_parts((*old_manifest).clone(), old_admission), old_code))
    }

    /// Clears an error a world recorded (see [`record_error`](Self::record_error)) once the plugin runs again
    /// there: it is back at its last stable state.
    pub fn recover(&self, name: &str) {
        let errored = self.plugins().get(name).is_some_and(|e| e.state.is_error());
        if errored {
            let stable = self.with_entry(name, |e| e.stable);
            self.enter(name, PluginState::Stable(stable));
        }
    }

    /// The plugin's current state.
    pub fn state(&self, name: &str) -> Option<PluginState> {
        self.plugins().get(name).map(|e| e.state.clone())
    }

    /// The plugin's manifest.
    pub fn manifest(&self, name: &str) -> Option<Arc<PluginManifest>> {
        self.plugins().get(name).map(|e| e.manifest.clone())
    }

    /// The plugin's loaded code, when it is `Loaded` or `Active`.
    pub fn code(&self, name: &str) -> Option<Arc<dyn LoadedPlugin>> {
        self.plugins().get(name).and_then(|e| e.code.clone())
    }

    /// How many activations the plugin holds.
    pub fn activations(&self, name: &str) -> u32 {
        self.plugins().get(name).map_or(0, |e| e.activations)
    }

    /// Every installed plugin, by name.
    pub fn list(&self) -> Vec<PluginInfo> {
        self.plugins()
            .values()
            .map(|e| PluginInfo { manifest: e.manifest.clone(), state: e.state.clone(), activations: e.activations })
            .collect()
    }

    /// The plugin's dependencies in the order they must come up: each after its own dependencies, without
    /// repeats, the plugin itself last. Fails on unknown dependencies and cycles, naming the manifest.
    pub fn dependency_order(&self, name: &str) -> Result<Vec<String>, FeatureError> {
        dependency_order_of(&self.plugins(), name)
    }

    /// The plugins that activating `name` activates, in activation order: its `activate = true` dependencies
    /// (recursively, each after its own), then the plugin itself.
    pub fn activation_order(&self, name: &str) -> Result<Vec<String>, FeatureError> {
        self.dependency_order(name)?;
        Ok(activation_order_of(&self.plugins(), name))
    }

    /// Puts the plugin in an error state without moving it: a world reports that the plugin failed there while
    /// its activation stays held until that world releases it.
    pub fn record_error(&self, name: &str, error: PluginError) {
        if self.plugins().contains_key(name) {
            self.fail(name, error);
        }
    }

    /// Brings the plugin (and its dependencies) to `Registered`, or takes it down to it.
    pub async fn register(&self, name: &str) -> Result<(), FeatureError> {
        self.change_target(name, Destination::Registered).await
    }

    /// Brings the plugin (and its dependencies) to `Loaded`, or takes it down to it.
    pub async fn load(&self, name: &str) -> Result<(), FeatureError> {
        self.change_target(name, Destination::Loaded).await
    }

    /// Takes the plugin down to `Registered`: its compiled code is dropped.
    pub async fn unload(&self, name: &str) -> Result<(), FeatureError> {
        self.change_target(name, Destination::Registered).await
    }

    /// Takes the plugin all the way down to `Installed`.
    pub async fn unregister(&self, name: &str) -> Result<(), FeatureError> {
        self.change_target(name, Destination::Installed).await
    }

    /// Takes one activation: the first brings the plugin up to `Active`, activating its `activate = true`
    /// dependencies first; later ones only count.
    pub async fn activate(&self, name: &str) -> Result<(), FeatureError> {
        self.register_dependencies_first(name).await;
        // Activate the dependencies it activates leaves first, each holding one activation of its own
        // dependencies as usual, so that bringing `name` up never recurses down the chain; then let go of the
        // extra activation each got here.
        let mut warmed = Vec::new();
        // A broken dependency graph is left for the plugin's own walk to report, in its error state.
        let order = self.activation_order(name).unwrap_or_default();
        for dep in order.iter().take(order.len().saturating_sub(1)) {
            if self.activations(dep) == 0 && self.activate_boxed(dep.clone()).await.is_ok() {
                warmed.push(dep.clone());
            }
        }
        let result = self.activate_boxed(name.to_string()).await;
        for dep in warmed.into_iter().rev() {
            let _ = self.release(dep, None).await;
        }
        result
    }

    /// Registers a plugin's dependencies leaves first, so that registering each finds its own already done and
    /// no registration recurses down a chain. Failures are left for the plugin's own walk to report.
    async fn register_dependencies_first(&self, name: &str) {
        let Ok(order) = self.dependency_order(name) else { return };
        for dep in order.iter().take(order.len().saturating_sub(1)) {
            let _ = self.change_target_floor(dep, Destination::Registered).await;
        }
    }

    fn activate_boxed(&self, name: String) -> BoxFuture<'_, Result<(), FeatureError>> {
        Box::pin(async move {
            let lock = self.transition_lock(&name)?;
            let _serialised = lock.lock().await;
            if self.activations(&name) > 0 {
                self.with_entry(&name, |e| e.activations += 1);
                return Ok(());
            }
            self.drive(&name, Destination::Active).await?;
            self.with_entry(&name, |e| e.activations = 1);
            Ok(())
        })
    }

    /// Releases one activation; the last one takes the plugin down to `Loaded` and releases the dependencies it
    /// activated.
    pub async fn deactivate(&self, name: &str) -> Result<(), FeatureError> {
        self.release(name.to_string(), None).await
    }

    /// Releases one activation because using it failed in a world (the plugin refused activation, say). The
    /// plugin goes down like [`deactivate`](Self::deactivate) when it was the last activation, and then rests in
    /// an error state with the cause, so listings show it until it is next asked to change state.
    pub async fn deactivate_with_error(&self, name: &str, error: PluginError) -> Result<(), FeatureError> {
        self.release(name.to_string(), Some(error)).await
    }

    /// Releases one activation of `name`; when it was the last, the plugin goes down to `Loaded` and then the
    /// dependencies it held are released, last held first — with a work list rather than recursion, so a chain
    /// of thousands of plugins goes down without a deep stack.
    fn release(&self, name: String, error: Option<PluginError>) -> BoxFuture<'_, Result<(), FeatureError>> {
        Box::pin(async move {
            let held = self.release_one(&name, error).await?;
            let mut pending: Vec<String> = held;
            while let Some(dep) = pending.pop() {
                // A dependency we activated is active until we release it; failure here means it is already down.
                if let Ok(held) = self.release_one(&dep, None).await {
                    pending.extend(held);
                }
            }
            Ok(())
        })
    }

    /// Releases one activation; returns the dependencies to release when it was the last.
    async fn release_one(&self, name: &str, error: Option<PluginError>) -> Result<Vec<String>, FeatureError> {
        let lock = self.transition_lock(name)?;
        let _serialised = lock.lock().await;
        let remaining = match self.activations(name) {
            0 => return Err(FeatureError::NotActive(name.to_string())),
            n => n - 1,
        };
        self.with_entry(name, |e| e.activations = remaining);
        let mut held = Vec::new();
        if remaining == 0 {
            held = self.with_entry(name, |e| std::mem::take(&mut e.held_dependencies));
            self.drive(name, Destination::Loaded).await?;
        }
        if let Some(error) = error {
            self.fail(name, error);
        }
        Ok(held)
    }

    /// Moves the plugin to a destination below `Active`. Refused while activations are held: those are released
    /// with [`deactivate`](Self::deactivate).
    pub async fn change_target(&self, name: &str, target: Destination) -> Result<(), FeatureError> {
        if target > Destination::Installed {
            self.register_dependencies_first(name).await;
        }
        self.change_target_boxed(name.to_string(), target).await
    }

    fn change_target_boxed(&self, name: String, target: Destination) -> BoxFuture<'_, Result<(), FeatureError>> {
        Box::pin(async move {
            if target == Destination::Active {
                return self.activate_boxed(name).await;
            }
            let lock = self.transition_lock(&name)?;
            let _serialised = lock.lock().await;
            let activations = self.activations(&name);
            if activations > 0 {
                return Err(FeatureError::StillActive { plugin: name, activations });
            }
            self.drive(&name, target).await
        })
    }

    fn transition_lock(&self, name: &str) -> Result<Arc<tokio::sync::Mutex<()>>, FeatureError> {
        self.plugins().get(name).map(|e| e.transitions.clone()).ok_or_else(|| self.unknown(name))
    }

    /// The error for a plugin that is not installed: with why its folder was refused, if it was.
    fn unknown(&self, name: &str) -> FeatureError {
        match self.refused.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
            Some(cause) => FeatureError::RefusedPlugin { plugin: name.to_string(), cause: cause.clone() },
            None => FeatureError::UnknownPlugin(name.to_string()),
        }
    }

    fn with_entry<R>(&self, name: &str, f: impl FnOnce(&mut Entry) -> R) -> R {
        f(self.plugins().get_mut(name).expect("entries are never removed"))
    }

    /// Steps from the last stable state to `target`, one destination at a time. The caller holds the
    /// plugin's transition lock.
    async fn drive(&self, name: &str, target: Destination) -> Result<(), FeatureError> {
        loop {
            let stable = self.with_entry(name, |e| e.stable);
            if stable == target {
                // Arriving again clears an error left by an earlier attempt.
                if self.state(name).is_some_and(|s| s.is_error()) {
                    self.enter(name, PluginState::Stable(stable));
                }
                return Ok(());
            }
            let result = if stable < target {
                self.step_up(name, stable).await
            } else {
                self.step_down(name, stable).await;
                Ok(())
            };
            if let Err(error) = result {
                self.fail(name, error.clone());
                return Err(FeatureError::Failed { plugin: name.to_string(), error });
            }
        }
    }

    async fn step_up(&self, name: &str, from: Destination) -> Result<(), PluginError> {
        let manifest = self.manifest(name).expect("entry exists");
        match from {
            Destination::Installed => {
                self.enter(name, PluginState::Transition(Transition::WaitingForDependencies));
                let failed = |cause: String| PluginError::new(Transition::WaitingForDependencies, cause);
                self.dependency_order(name).map_err(|e| failed(e.to_string()))?;
                for dep in &manifest.dependencies {
                    self.change_target_floor(&dep.name, Destination::Registered)
                        .await
                        .map_err(|e| failed(format!("dependency {:?} failed: {e}", dep.name)))?;
                }
                self.enter(name, PluginState::Transition(Transition::Registering));
                self.arrive(name, Destination::Registered);
            }
            Destination::Registered => {
                self.enter(name, PluginState::Transition(Transition::Loading));
                let loader = self.loader.clone();
                let owned = manifest.clone();
                let admission = self.with_entry(name, |e| e.admission.clone());
                let code = tokio::task::spawn_blocking(move || {
                    // The folder is checked against its package right before its code is read: a folder changed
                    // since it was admitted is refused here, with why.
                    admission.verify_contents(&owned).map_err(|e| LoadError::Refused(e.to_string()))?;
                    loader.load(&owned)
                })
                .await
                .unwrap_or_else(|panic| {
                    Err(LoadError::Other {
                        path: manifest.component_path.display().to_string(),
                        cause: format!("loader panicked: {panic}"),
                    })
                })
                .map_err(|e| PluginError::new(Transition::Loading, e.to_string()))?;
                self.with_entry(name, |e| e.code = Some(code));
                self.arrive(name, Destination::Loaded);
            }
            Destination::Loaded => {
                self.enter(name, PluginState::Transition(Transition::ActivatingDependencies));
                for dep in manifest.dependencies.iter().filter(|d| d.activate) {
                    if let Err(e) = self.activate_boxed(dep.name.clone()).await {
                        self.release_held_dependencies(name).await;
                        let cause = format!("dependency {:?} failed: {e}", dep.name);
                        return Err(PluginError::new(Transition::ActivatingDependencies, cause));
                    }
                    self.with_entry(name, |e| e.held_dependencies.push(dep.name.clone()));
                }
                self.enter(name, PluginState::Transition(Transition::Activating));
                self.arrive(name, Destination::Active);
            }
            Destination::Active => unreachable!("nothing is above Active"),
        }
        Ok(())
    }

    async fn step_down(&self, name: &str, from: Destination) {
        match from {
            Destination::Active => {
                self.enter(name, PluginState::Transition(Transition::Deactivating));
                self.release_held_dependencies(name).await;
                self.arrive(name, Destination::Loaded);
            }
            Destination::Loaded => {
                self.enter(name, PluginState::Transition(Transition::Unloading));
                self.with_entry(name, |e| e.code = None);
                if let Some(manifest) = self.manifest(name) {
                    self.loader.unloaded(&manifest);
                }
                self.arrive(name, Destination::Registered);
            }
            Destination::Registered => {
                self.enter(name, PluginState::Transition(Transition::Unregistering));
                self.arrive(name, Destination::Installed);
            }
            Destination::Installed => unreachable!("nothing is below Installed"),
        }
    }

    /// Brings a dependency at least to `floor`, leaving it where it is when it is already higher.
    fn change_target_floor<'a>(&'a self, name: &'a str, floor: Destination) -> BoxFuture<'a, Result<(), FeatureError>> {
        Box::pin(async move {
            let lock = self.transition_lock(name)?;
            let _serialised = lock.lock().await;
            let (stable, errored) = self.with_entry(name, |e| (e.stable, e.state.is_error()));
            if stable >= floor && !errored {
                return Ok(());
            }
            self.drive(name, floor.max(stable)).await
        })
    }

    async fn release_held_dependencies(&self, name: &str) {
        let held = self.with_entry(name, |e| std::mem::take(&mut e.held_dependencies));
        for dep in held.iter().rev() {
            // A dependency we activated is active until we release it; failure here means it is already down.
            let _ = self.release(dep.clone(), None).await;
        }
    }

    fn enter(&self, name: &str, state: PluginState) {
        let from = self.with_entry(name, |e| std::mem::replace(&mut e.state, state.clone()));
        self.notify(name, from, state);
    }

    fn arrive(&self, name: &str, destination: Destination) {
        self.with_entry(name, |e| e.stable = destination);
        self.enter(name, PluginState::Stable(destination));
    }

    fn fail(&self, name: &str, error: PluginError) {
        self.enter(name, PluginState::Error(error));
    }

    fn notify(&self, plugin: &str, from: PluginState, state: PluginState) {
        let observers = self.observers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let change = StateChange { plugin: plugin.to_string(), from, state };
        for observer in observers {
            observer(&change);
        }
    }
}

/// The plugin's dependencies, each after its own, without repeats, the plugin last: a depth-first walk with
/// an explicit stack, so a chain of thousands of plugins costs no deeper recursion than a chain of two.
fn dependency_order_of(plugins: &BTreeMap<String, Entry>, name: &str) -> Result<Vec<String>, FeatureError> {
    if !plugins.contains_key(name) {
        return Err(FeatureError::UnknownPlugin(name.to_string()));
    }
    let mut order: Vec<String> = Vec::new();
    let mut done: HashSet<&str> = HashSet::new();
    // The path from `name` to the plugin being visited, each with the index of its next dependency.
    let mut path: Vec<(&str, usize)> = vec![(name, 0)];
    while let Some((current, next)) = path.last_mut() {
        let entry = &plugins[*current];
        let Some(dep) = entry.manifest.dependencies.get(*next) else {
            done.insert(current);
            order.push(current.to_string());
            path.pop();
            continue;
        };
        *next += 1;
        let Some((dep_name, dep_entry)) = plugins.get_key_value(&dep.name) else {
            return Err(FeatureError::UnknownDependency {
                plugin: current.to_string(),
                dependency: dep.name.clone(),
                manifest: entry.manifest.manifest_path.clone(),
            });
        };
        if let Some(wanted) = &dep.version {
            let installed = &dep_entry.manifest.version;
            if !semver::Version::parse(installed).is_ok_and(|v| wanted.matches(&v)) {
                return Err(FeatureError::DependencyVersion {
                    plugin: current.to_string(),
                    dependency: dep.name.clone(),
                    wanted: wanted.to_string(),
                    installed: installed.clone(),
                    manifest: entry.manifest.manifest_path.clone(),
                });
            }
        }
        if done.contains(dep_name.as_str()) {
            continue;
        }
        if let Some(start) = path.iter().position(|(n, _)| *n == dep_name) {
            let mut cycle: Vec<String> = path[start..].iter().map(|(n, _)| n.to_string()).collect();
            cycle.push(dep_name.clone());
            return Err(FeatureError::DependencyCycle { cycle, manifest: dep_entry.manifest.manifest_path.clone() });
        }
        path.push((dep_name.as_str(), 0));
    }
    Ok(order)
}

/// The plugins activating `name` activates: its `activate = true` dependencies, each after its own, then the
/// plugin itself (walked with an explicit stack, as [`dependency_order_of`]; cycles were refused there).
fn activation_order_of(plugins: &BTreeMap<String, Entry>, name: &str) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut path: Vec<(&str, usize)> = vec![(name, 0)];
    while let Some((current, next)) = path.last_mut() {
        let activated: Vec<&str> = plugins
            .get(*current)
            .map(|e| e.manifest.dependencies.iter().filter(|d| d.activate).map(|d| d.name.as_str()).collect())
            .unwrap_or_default();
        match activated.get(*next) {
            Some(dep) => {
                *next += 1;
                if !order.iter().any(|n| n == dep) && !path.iter().any(|(n, _)| n == dep) {
                    path.push((dep, 0));
                }
            }
            None => {
                if !order.iter().any(|n| n == current) {
                    order.push(current.to_string());
                }
                path.pop();
            }
        }
    }
    order
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<FeatureError> for crate::error::Error {
    fn from(error: FeatureError) -> crate::error::Error {
        let message = error.to_string();
        match error {
            FeatureError::UnknownPlugin(name)
            | FeatureError::RefusedPlugin { plugin: name, .. }
            | FeatureError::NotActive(name) => crate::error::Error::NotFound { name, message },
            FeatureError::DuplicatePlugin { second: file, .. }
            | FeatureError::DependencyCycle { manifest: file, .. }
            | FeatureError::UnknownDependency { manifest: file, .. }
            | FeatureError::DependencyVersion { manifest: file, .. } => crate::error::Error::BadInput { file, message },
            FeatureError::Failed { plugin, .. } => {
                crate::error::Error::Refused { blame: crate::error::Blame::Plugin(plugin), message }
            }
            FeatureError::Refused(_) | FeatureError::StillActive { .. } | FeatureError::Depended { .. } => {
                crate::error::Error::Refused { blame: crate::error::Blame::Caller, message }
            }
        }
    }
}
