//! The seam between delivery and the code that runs plugins: one plugin's instance in one world, the calls into it,
//! and what a call may cost before its plugin is quarantined.
//!
//! Delivery and the experience manager call plugins through [`PluginInstance`]; `crate::runtime` implements it
//! with wasmtime, and tests implement it in plain Rust.

use std::time::Duration;

use super::batch::{
    ChainBatch, ChainWalk, ExtensionBatch, FeatureBatch, PropertyBatch, ReplicatedBatch, StateChangeBatch,
};
use crate::world::NetMode;

/// A failed call into a plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The plugin answered with an error of its own; it is still healthy.
    #[error("{0}")]
    Refused(String),
    /// The plugin trapped (panic, bad memory access, limit); its instance must not be called again.
    #[error("trapped: {0}")]
    Trapped(String),
}

impl CallError {
    /// What went wrong, in the plugin's or the sandbox's words, without saying which kind of failure it was.
    pub fn message(&self) -> &str {
        match self {
            CallError::Refused(message) | CallError::Trapped(message) => message,
        }
    }
}

impl crate::error::Error {
    /// A call into `plugin` that failed: refused by the plugin, or trapped.
    pub fn from_call(plugin: &str, error: CallError) -> crate::error::Error {
        let plugin = plugin.to_string();
        match error {
            CallError::Refused(message) => {
                crate::error::Error::Refused { blame: crate::error::Blame::Plugin(plugin), message }
            }
            CallError::Trapped(message) => crate::error::Error::Trapped { plugin, message },
        }
    }
}

/// Whether a plugin has finished deactivating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deactivation {
    /// The plugin has finished undoing what its activation did in this world.
    Done,
    /// Held open, as with an Unreal deactivation pauser: ask again with `poll_deactivation`.
    Pending,
}

/// The context of an activation or deactivation: which world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationContext {
    /// The name the host gave the world, unique in the process.
    pub world_name: String,
    /// The world's net mode, so the plugin can do only what belongs on a server or on a client.
    pub net_mode: NetMode,
}

/// One plugin's instance in one world: the guest's lifecycle exports.
pub trait PluginInstance: Send {
    /// Calls `on-registering`: the plugin is being registered, the first call its instance receives.
    fn on_registering(&mut self) -> Result<(), CallError>;
    /// Calls `on-loading`: the plugin is being loaded, and may read its assets and build its tables.
    fn on_loading(&mut self) -> Result<(), CallError>;
    /// Calls `on-activating`: the plugin starts extending the world, after its manifest's built-in actions were
    /// carried out.
    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), CallError>;
    /// Calls `on-activated`: activation in this world finished.
    fn on_activated(&mut self) -> Result<(), CallError>;
    /// Calls `on-deactivating` at end of play (or when the plugin is deactivated mid-game): it undoes what activation
    /// did, or answers `Pending` to hold deactivation open.
    fn on_deactivating(&mut self, context: &ActivationContext) -> Result<Deactivation, CallError>;
    /// Calls `poll-deactivation`: asked repeatedly while deactivation is pending, until `Done` or its deadline.
    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError>;
    /// Calls `on-unloading`: the plugin is being unloaded from the world.
    fn on_unloading(&mut self) -> Result<(), CallError>;
    /// Calls `on-unregistering`: the plugin is being unregistered; this is the last call its instance receives.
    fn on_unregistering(&mut self) -> Result<(), CallError>;

    /// Delivers extension events.
    fn handle_extension_events(&mut self, batch: &ExtensionBatch) -> Result<(), CallError>;
    /// Delivers one extension event, `name`, which the world numbers `event` (its interned name): cheaper than a
    /// batch of one where the plugin takes single events.
    fn handle_extension_event(&mut self, handler: u32, actor: u64, event: u32, name: &str) -> Result<(), CallError> {
        let _ = event;
        let batch =
            ExtensionBatch { handlers: vec![handler], actors: vec![actor], events: vec![0], names: vec![name.into()] };
        self.handle_extension_events(&batch)
    }
    /// Unreal's `ContinueInitStateChain` for each entry: its feature's steps from its current state, each
    /// decided and, if allowed, its work done before the next, until one is refused or the chain ends; one
    /// answer per entry, how far it went. The host changes the states.
    fn try_change_init_states(&mut self, batch: &ChainBatch) -> Result<Vec<ChainWalk>, CallError>;
    /// Asks each feature to try to move forward.
    fn check_default_initializations(&mut self, batch: &FeatureBatch) -> Result<(), CallError>;
    /// Delivers init-state notifications.
    fn on_init_states_changed(&mut self, batch: &StateChangeBatch) -> Result<(), CallError>;

    /// Timers of the plugin fired in `frame`: each timer's number and how many times. Plugins of an API version
    /// without timers never start any.
    fn on_timers(&mut self, _frame: &crate::world::Frame, _fired: &[(u32, u32)]) -> Result<(), CallError> {
        Ok(())
    }

    /// Rep-notify: replicated properties the plugin declared changed on this client. Plugins of an API version
    /// without it are not told.
    fn on_replicated(&mut self, _batch: &ReplicatedBatch) -> Result<(), CallError> {
        Ok(())
    }

    /// Watched properties changed. Plugins of an API version without watches never set one up.
    fn on_properties_changed(&mut self, _batch: &PropertyBatch) -> Result<(), CallError> {
        Ok(())
    }

    /// Hot reload: the instance's state for its successor; `None` when the plugin keeps none (and for plugins
    /// built against an API version without it).
    fn snapshot(&mut self) -> Result<Option<Vec<u8>>, CallError> {
        Ok(None)
    }

    /// Hot reload: the state its predecessor's [`snapshot`](Self::snapshot) returned, before `on-activating`.
    fn restore(&mut self, _state: &[u8]) -> Result<(), CallError> {
        Ok(())
    }

    /// The plugin's host calls that were refused (returned an error) since this was last asked.
    fn take_refusals(&mut self) -> Refusals {
        Refusals::default()
    }

    /// Time the instance's calls spent parked inside WASI (a sleep) since this was last asked: no CPU time, but
    /// the frame waited for it, so it is charged to the plugin's frame like CPU time.
    fn take_waited(&mut self) -> Duration {
        Duration::ZERO
    }

    /// The CPU time the plugin's code may use per frame (see `delivery::FrameCost`); `None`: unmetered.
    fn frame_budget(&self) -> Option<Duration> {
        None
    }
}

/// Host calls of a plugin that were refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusals {
    /// How many host calls were refused.
    pub count: u32,
    /// The first refusal's error, for the cause of a quarantine.
    pub first: Option<String>,
}

/// World changes (events sent, requests and handlers added, actors spawned, init-state changes, …) one call
/// into a plugin may make by default, beyond [`WORLD_CHANGES_PER_ENTRY`] per batch entry. Each change can queue work for
/// every plugin in the world; a plugin making more than this in one call is flooding the host, and is
/// quarantined when the call returns (its changes past the cap are refused).
pub const WORLD_CHANGES_PER_CALL: u32 = 100_000;

/// Extra world changes a batch allows per entry.
pub const WORLD_CHANGES_PER_ENTRY: u32 = 8;

/// Refused host calls one call into a plugin may make, beyond one per batch entry, before the plugin is
/// quarantined: a plugin hammering the host with bad calls is broken or probing it.
pub const REFUSED_CALLS_BUDGET: u32 = 1000;

/// Checks a finished call against [`REFUSED_CALLS_BUDGET`], turning an over-budget call into a trap.
pub fn within_refusal_budget<R>(
    instance: &mut dyn PluginInstance,
    entries: usize,
    outcome: Result<R, CallError>,
) -> Result<R, CallError> {
    let refusals = instance.take_refusals();
    let budget = REFUSED_CALLS_BUDGET.saturating_add(entries as u32);
    if refusals.count > budget && outcome.is_ok() {
        return Err(CallError::Trapped(format!(
            "made {} refused host calls in one call, over its budget of {budget}; the first: {}",
            refusals.count,
            refusals.first.as_deref().unwrap_or("?")
        )));
    }
    outcome
}
