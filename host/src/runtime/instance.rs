//! Loaded plugin code and its per-world instances.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::Store;

use super::bindings::{lifecycle, types, GameFeature, GameFeaturePre};
use super::host::log::{line_of_plugin, LogBudget, MAX_LINES_PER_CALL};
use super::limits::Limits;
use super::state::InstanceState;
use super::{drive, epoch, sandbox};
use crate::feature::{
    ActivationContext, CallError, ChainBatch, ComponentInterface, Deactivation, ExtensionBatch, FeatureBatch,
    InstanceEnv, LoadedPlugin, PluginInstance, Provenance, Refusals, StateChangeBatch, WORLD_CHANGES_PER_ENTRY,
};
use crate::timeline::LogLevel;

/// A plugin's component, compiled and pre-instantiated against the host's linker.
pub struct WasmPlugin {
    pub(super) pre: GameFeaturePre<InstanceState>,
    pub(super) provenance: Provenance,
    pub(super) interface: ComponentInterface,
    pub(super) limits: Limits,
    pub(super) wasi_io: tokio::runtime::Handle,
}

impl LoadedPlugin for WasmPlugin {
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        let log_budget = Arc::new(LogBudget::default());
        let wasi = sandbox::wasi_context(&env, &log_budget).map_err(CallError::Trapped)?;
        let state = InstanceState {
            wasi,
            log_budget,
            table: ResourceTable::new(),
            limits: sandbox::store_limits(self.limits.memory),
            env,
            refusals: Refusals::default(),
            changes: 0,
            change_cap: self.limits.world_changes,
            handles: 0,
            max_handles: self.limits.handles,
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.limits);
        store.epoch_deadline_trap();
        let mut instance =
            WasmInstance { store, bindings: None, limits: self.limits.clone(), wasi_io: self.wasi_io.clone() };
        let wall = instance.arm(0);
        let call = self.pre.instantiate_async(&mut instance.store);
        let bindings = finish(call, wall, &self.limits, &self.wasi_io)?;
        instance.bindings = Some(bindings);
        Ok(Box::new(instance))
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
    /// Set once instantiated; calls are only made after that.
    bindings: Option<GameFeature>,
    limits: Limits,
    /// Where WASI timers run (see `Runtime`).
    wasi_io: tokio::runtime::Handle,
}

/// Time a batch may spend on each of its entries beyond the per-call deadline, so a batch of ten thousand
/// events is not held to the budget of one.
const PER_ENTRY: Duration = Duration::from_micros(5);

/// Fuel a batch gets per entry, as a share of the per-call budget (the same share as [`PER_ENTRY`] of the
/// default deadline).
const FUEL_SHARE_PER_ENTRY: u64 = 2000;

/// How long after its deadline a call waiting inside a WASI function (not running code, which the epoch
/// stops) is abandoned.
const WAIT_GRACE: Duration = Duration::from_millis(1);

impl WasmInstance {
    /// Gives the store a fresh deadline (and fuel) for a call covering `entries` batch entries; returns the
    /// wall-clock time past which waiting for the call is abandoned.
    fn arm(&mut self, entries: usize) -> Instant {
        let deadline = self.limits.call_deadline + PER_ENTRY * entries as u32;
        self.store.set_epoch_deadline(epoch::ticks(deadline));
        if let Some(fuel) = self.limits.fuel {
            let budget = fuel.saturating_add((fuel / FUEL_SHARE_PER_ENTRY).saturating_mul(entries as u64));
            // Fuel is only unavailable when the engine was built without it, which `Limits` rules out.
            let _ = self.store.set_fuel(budget);
        }
        let state = self.store.data_mut();
        state.log_budget.reset(MAX_LINES_PER_CALL.saturating_add(entries as u32));
        state.changes = 0;
        state.change_cap =
            self.limits.world_changes.saturating_add(WORLD_CHANGES_PER_ENTRY.saturating_mul(entries as u32));
        Instant::now() + deadline + WAIT_GRACE
    }

    /// A finished call's result, unless the plugin flooded the host during it. Log lines it had to drop are
    /// counted in one last line.
    fn after_call<R>(&self, result: Result<R, CallError>) -> Result<R, CallError> {
        let state = self.store.data();
        let dropped = state.log_budget.dropped();
        if dropped > 0 {
            let line = format!("dropped {dropped} log lines past the limit of {MAX_LINES_PER_CALL} per call");
            line_of_plugin(&state.env, LogLevel::Warn, line);
        }
        if result.is_ok() && state.flooded() {
            return Err(CallError::Trapped(format!(
                "flooded the host: tried {} world changes in one call, over its cap of {}",
                state.changes, state.change_cap
            )));
        }
        result
    }
}

/// Runs a call's future to completion and turns its failure into a [`CallError`] naming the cause. WASI
/// timers the plugin starts belong to `wasi_io`, whatever runtime (if any) the caller is in.
fn finish<R>(
    call: impl Future<Output = wasmtime::Result<R>>,
    wall: Instant,
    limits: &Limits,
    wasi_io: &tokio::runtime::Handle,
) -> Result<R, CallError> {
    let _context = wasi_io.enter();
    guard(|| match drive::until_deadline(call, wall) {
        Some(result) => result.map_err(|e| trapped(e, limits)),
        None => Err(CallError::Trapped(format!(
            "waited inside a WASI call past its call deadline ({:?}); plugins must not sleep or block",
            limits.call_deadline
        ))),
    })
}

/// Runs host code serving a plugin, turning a panic into a trap, so a plugin can never take the host down.
fn guard<R>(call: impl FnOnce() -> Result<R, CallError>) -> Result<R, CallError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Err(CallError::Trapped(format!("the host failed serving it: {message}")))
        }
    }
}

/// Describes a trap by its cause first: a deadline, a limit, or what the guest did.
fn trapped(error: wasmtime::Error, limits: &Limits) -> CallError {
    let cause = match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => format!("exceeded its call deadline ({:?})", limits.call_deadline),
        Some(wasmtime::Trap::OutOfFuel) => {
            format!("exhausted its fuel budget ({} units per call)", limits.fuel.unwrap_or_default())
        }
        Some(wasmtime::Trap::StackOverflow) => "overflowed its stack".to_string(),
        Some(wasmtime::Trap::UnreachableCodeReached) => "panicked or aborted (unreachable executed)".to_string(),
        Some(wasmtime::Trap::MemoryOutOfBounds) => {
            "accessed memory out of bounds (a Rust plugin's stack overflow looks like this)".to_string()
        }
        Some(trap) => format!("{trap}"),
        None if error.root_cause().to_string().contains("forcing trap when growing memory") => {
            format!("exceeded its memory limit of {} MiB ({})", limits.memory >> 20, error.root_cause())
        }
        // An error the host raised while serving the plugin (a bad handle, say): what it was, and where in
        // the plugin's code, on one line.
        None => match innermost_function(&error) {
            Some(function) => format!("{} (in {function})", error.root_cause()),
            None => error.root_cause().to_string(),
        },
    };
    CallError::Trapped(cause)
}

/// The plugin function that was running when `error` was raised, when the backtrace names it.
fn innermost_function(error: &wasmtime::Error) -> Option<String> {
    let backtrace = error.downcast_ref::<wasmtime::WasmBacktrace>()?;
    backtrace.frames().iter().find_map(|frame| frame.func_name().map(str::to_string))
}

fn refused_or_trapped(result: Result<Result<(), String>, CallError>) -> Result<(), CallError> {
    result?.map_err(CallError::Refused)
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

/// Calls one export: arms the deadline for `$entries` batch entries, then runs
/// `bindings.$interface().$export(store, args…)` to completion.
macro_rules! call_export {
    ($self:ident, $entries:expr, $interface:ident . $export:ident ( $($arg:expr),* )) => {{
        let wall = $self.arm($entries);
        let bindings = $self.bindings.as_ref().expect("a WasmInstance is only handed out once instantiated");
        let call = bindings.$interface().$export(&mut $self.store $(, $arg)*);
        let result = finish(call, wall, &$self.limits, &$self.wasi_io);
        $self.after_call(result)
    }};
}

impl PluginInstance for WasmInstance {
    fn take_refusals(&mut self) -> Refusals {
        std::mem::take(&mut self.store.data_mut().refusals)
    }

    fn on_registering(&mut self) -> Result<(), CallError> {
        refused_or_trapped(call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_registering()))
    }

    fn on_loading(&mut self) -> Result<(), CallError> {
        refused_or_trapped(call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_loading()))
    }

    fn on_activating(&mut self, ctx: &ActivationContext) -> Result<(), CallError> {
        let ctx = context(ctx);
        refused_or_trapped(call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_activating(&ctx)))
    }

    fn on_activated(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_activated())
    }

    fn on_deactivating(&mut self, ctx: &ActivationContext) -> Result<Deactivation, CallError> {
        let ctx = context(ctx);
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_deactivating(&ctx)).map(deactivation)
    }

    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_poll_deactivation()).map(deactivation)
    }

    fn on_unloading(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_unloading())
    }

    fn on_unregistering(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_unregistering())
    }

    fn handle_extension_events(&mut self, b: &ExtensionBatch) -> Result<(), CallError> {
        call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_handlers.call_handle_extension_events(&b.handlers, &b.actors, &b.events, &b.names)
        )
    }

    fn can_change_init_states(&mut self, b: &ChainBatch) -> Result<Vec<bool>, CallError> {
        let answers = call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_init_state_callbacks.call_can_change_init_states(
                &b.actors,
                &b.features,
                &b.currents,
                &b.desireds,
                &b.names
            )
        )?;
        if answers.len() != b.actors.len() {
            return Err(CallError::Trapped(format!(
                "can-change-init-states answered {} times for {} entries",
                answers.len(),
                b.actors.len()
            )));
        }
        Ok(answers)
    }

    fn handle_change_init_states(&mut self, b: &ChainBatch) -> Result<(), CallError> {
        call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_init_state_callbacks.call_handle_change_init_states(
                &b.actors,
                &b.features,
                &b.currents,
                &b.desireds,
                &b.names
            )
        )
    }

    fn check_default_initializations(&mut self, b: &FeatureBatch) -> Result<(), CallError> {
        call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_init_state_callbacks.call_check_default_initializations(
                &b.actors,
                &b.features,
                &b.names
            )
        )
    }

    fn on_init_states_changed(&mut self, b: &StateChangeBatch) -> Result<(), CallError> {
        call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_init_state_callbacks.call_on_init_states_changed(
                &b.ids,
                &b.actors,
                &b.features,
                &b.states,
                &b.names
            )
        )
    }
}
