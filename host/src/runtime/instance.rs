//! Loaded plugin code and its per-world instances.

use wasmtime::component::ResourceTable;
use wasmtime::Store;

use super::bindings::{lifecycle, types, GameFeature, GameFeaturePre};
use super::state::InstanceState;
use super::{epoch, sandbox};
use crate::feature::{
    ActivationContext, CallError, ChainBatch, ComponentInterface, Deactivation, ExtensionBatch, FeatureBatch,
    InstanceEnv, LoadedPlugin, PluginInstance, Provenance, StateChangeBatch,
};

/// A plugin's component, compiled and pre-instantiated against the host's linker.
pub struct WasmPlugin {
    pub(super) pre: GameFeaturePre<InstanceState>,
    pub(super) provenance: Provenance,
    pub(super) interface: ComponentInterface,
    pub(super) memory_limit: usize,
    pub(super) deadline_ticks: u64,
}

impl LoadedPlugin for WasmPlugin {
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        let state = InstanceState {
            wasi: sandbox::wasi_context(),
            table: ResourceTable::new(),
            limits: sandbox::store_limits(self.memory_limit),
            env,
            refused: 0,
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(self.deadline_ticks);
        let bindings = self.pre.instantiate(&mut store).map_err(trapped)?;
        Ok(Box::new(WasmInstance { store, bindings, deadline_ticks: self.deadline_ticks }))
    }

    fn provenance(&self) -> Provenance {
        self.provenance
    }

    fn interface(&self) -> ComponentInterface {
        self.interface.clone()
    }
}

/// One plugin's instance in one world, with its own store: nothing is shared with other instances.
pub struct WasmInstance {
    store: Store<InstanceState>,
    bindings: GameFeature,
    deadline_ticks: u64,
}

/// Runs a call into the plugin, turning a panic of the host code serving it into a trap, so a plugin can never
/// take the host down. (Today this happens when a plugin writes to its standard output or error while the host
/// runs inside an async runtime: wasmtime-wasi's synchronous stdio blocks on the runtime, which it refuses.)
fn guard<R>(call: impl FnOnce() -> Result<R, CallError>) -> Result<R, CallError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            let cause = if message.contains("Cannot start a runtime from within a runtime") {
                "wrote to its standard output or error, which plugins cannot do while the host runs asynchronously \
                 (a Rust plugin's panic message does this)"
                    .to_string()
            } else {
                format!("the host failed serving it: {message}")
            };
            Err(CallError::Trapped(cause))
        }
    }
}

/// The store, with a fresh deadline for the call about to be made.
fn fresh(store: &mut Store<InstanceState>, deadline_ticks: u64) -> &mut Store<InstanceState> {
    store.set_epoch_deadline(deadline_ticks);
    store
}

/// A batch's deadline: the per-call deadline plus an allowance per entry, so a batch of ten thousand events
/// is not held to the budget of one.
fn batch_ticks(deadline_ticks: u64, entries: usize) -> u64 {
    deadline_ticks + epoch::ticks(PER_ENTRY * entries as u32)
}

/// Time a batch may spend on each of its entries beyond the per-call deadline.
const PER_ENTRY: std::time::Duration = std::time::Duration::from_micros(5);

/// Describes a trap by its cause first: a deadline, a memory limit, or what the guest did.
fn trapped(error: wasmtime::Error) -> CallError {
    let cause = match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => "exceeded its call deadline".to_string(),
        Some(wasmtime::Trap::StackOverflow) => "overflowed its stack".to_string(),
        Some(wasmtime::Trap::UnreachableCodeReached) => "panicked or aborted (unreachable executed)".to_string(),
        Some(wasmtime::Trap::MemoryOutOfBounds) => {
            "accessed memory out of bounds (a Rust plugin's stack overflow looks like this)".to_string()
        }
        Some(trap) => format!("{trap}"),
        None if format!("{error:#}").contains("forcing trap when growing memory") => {
            format!("exceeded its memory limit ({error:#})")
        }
        None => format!("{error:#}"),
    };
    CallError::Trapped(cause)
}

fn refused_or_trapped(result: wasmtime::Result<Result<(), String>>) -> Result<(), CallError> {
    result.map_err(trapped)?.map_err(CallError::Refused)
}

fn deactivation(value: lifecycle::Deactivation) -> Deactivation {
    match value {
        lifecycle::Deactivation::Done => Deactivation::Done,
        lifecycle::Deactivation::Pending => Deactivation::Pending,
    }
}

fn context(context: &ActivationContext) -> types::ActivationContext {
    types::ActivationContext { world_name: context.world_name.clone(), net_mode: context.net_mode.into() }
}

impl PluginInstance for WasmInstance {
    fn take_refused_calls(&mut self) -> u32 {
        std::mem::take(&mut self.store.data_mut().refused)
    }

    fn on_registering(&mut self) -> Result<(), CallError> {
        guard(|| {
            refused_or_trapped(
                self.bindings
                    .gamefeature_plugin_lifecycle()
                    .call_on_registering(fresh(&mut self.store, self.deadline_ticks)),
            )
        })
    }

    fn on_loading(&mut self) -> Result<(), CallError> {
        guard(|| {
            refused_or_trapped(
                self.bindings
                    .gamefeature_plugin_lifecycle()
                    .call_on_loading(fresh(&mut self.store, self.deadline_ticks)),
            )
        })
    }

    fn on_activating(&mut self, ctx: &ActivationContext) -> Result<(), CallError> {
        guard(|| {
            let ctx = context(ctx);
            refused_or_trapped(
                self.bindings
                    .gamefeature_plugin_lifecycle()
                    .call_on_activating(fresh(&mut self.store, self.deadline_ticks), &ctx),
            )
        })
    }

    fn on_activated(&mut self) -> Result<(), CallError> {
        guard(|| {
            self.bindings
                .gamefeature_plugin_lifecycle()
                .call_on_activated(fresh(&mut self.store, self.deadline_ticks))
                .map_err(trapped)
        })
    }

    fn on_deactivating(&mut self, ctx: &ActivationContext) -> Result<Deactivation, CallError> {
        guard(|| {
            let ctx = context(ctx);
            let lifecycle = self.bindings.gamefeature_plugin_lifecycle();
            lifecycle
                .call_on_deactivating(fresh(&mut self.store, self.deadline_ticks), &ctx)
                .map(deactivation)
                .map_err(trapped)
        })
    }

    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
        guard(|| {
            let lifecycle = self.bindings.gamefeature_plugin_lifecycle();
            lifecycle
                .call_poll_deactivation(fresh(&mut self.store, self.deadline_ticks))
                .map(deactivation)
                .map_err(trapped)
        })
    }

    fn on_unloading(&mut self) -> Result<(), CallError> {
        guard(|| {
            self.bindings
                .gamefeature_plugin_lifecycle()
                .call_on_unloading(fresh(&mut self.store, self.deadline_ticks))
                .map_err(trapped)
        })
    }

    fn on_unregistering(&mut self) -> Result<(), CallError> {
        guard(|| {
            self.bindings
                .gamefeature_plugin_lifecycle()
                .call_on_unregistering(fresh(&mut self.store, self.deadline_ticks))
                .map_err(trapped)
        })
    }

    fn handle_extension_events(&mut self, b: &ExtensionBatch) -> Result<(), CallError> {
        guard(|| {
            let handlers = self.bindings.gamefeature_plugin_handlers();
            handlers
                .call_handle_extension_events(
                    fresh(&mut self.store, batch_ticks(self.deadline_ticks, b.actors.len())),
                    &b.handlers,
                    &b.actors,
                    &b.events,
                    &b.names,
                )
                .map_err(trapped)
        })
    }

    fn can_change_init_states(&mut self, b: &ChainBatch) -> Result<Vec<bool>, CallError> {
        guard(|| {
            let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
            let answers = callbacks
                .call_can_change_init_states(
                    fresh(&mut self.store, batch_ticks(self.deadline_ticks, b.actors.len())),
                    &b.actors,
                    &b.features,
                    &b.currents,
                    &b.desireds,
                    &b.names,
                )
                .map_err(trapped)?;
            if answers.len() != b.actors.len() {
                return Err(CallError::Trapped(format!(
                    "can-change-init-states answered {} times for {} entries",
                    answers.len(),
                    b.actors.len()
                )));
            }
            Ok(answers)
        })
    }

    fn handle_change_init_states(&mut self, b: &ChainBatch) -> Result<(), CallError> {
        guard(|| {
            let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
            callbacks
                .call_handle_change_init_states(
                    fresh(&mut self.store, batch_ticks(self.deadline_ticks, b.actors.len())),
                    &b.actors,
                    &b.features,
                    &b.currents,
                    &b.desireds,
                    &b.names,
                )
                .map_err(trapped)
        })
    }

    fn check_default_initializations(&mut self, b: &FeatureBatch) -> Result<(), CallError> {
        guard(|| {
            let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
            callbacks
                .call_check_default_initializations(
                    fresh(&mut self.store, batch_ticks(self.deadline_ticks, b.actors.len())),
                    &b.actors,
                    &b.features,
                    &b.names,
                )
                .map_err(trapped)
        })
    }

    fn on_init_states_changed(&mut self, b: &StateChangeBatch) -> Result<(), CallError> {
        guard(|| {
            let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
            callbacks
                .call_on_init_states_changed(
                    fresh(&mut self.store, batch_ticks(self.deadline_ticks, b.actors.len())),
                    &b.ids,
                    &b.actors,
                    &b.features,
                    &b.states,
                    &b.names,
                )
                .map_err(trapped)
        })
    }
}
