//! Loaded plugin code and its per-world instances.

use std::collections::hash_map::Entry;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Instance, InstancePre, ResourceTable};
use wasmtime::{Store, UpdateDeadline};

use super::bindings::{direct, init_state_callbacks, lifecycle, types, v0_1_0, GameFeature, GameFeatureIndices};
use super::deadline::{self, CallClock, Verdict};
use super::drive::{Abandoned, WaitBudget};
use super::limits::Limits;
use super::plugin_log::{line_of_plugin, LogBudget, MAX_LINES_PER_CALL};
use super::state::InstanceState;
use super::{epoch, sandbox, CallPath};
use crate::delivery::{
    ActivationContext, CallError, ChainBatch, ChainFacts, ChainWalk, Deactivation, ExtensionBatch, FeatureBatch,
    PluginInstance, PropertyBatch, Refusals, ReplicatedBatch, StateChangeBatch, WORLD_CHANGES_PER_ENTRY,
};
use crate::feature::{ComponentInterface, InstanceEnv, LoadedPlugin, Provenance};
use crate::timeline::LogLevel;

/// A component pre-instantiated as the `game-feature` world of the package version it was built against, with
/// where its exports are.
pub(super) enum Pre {
    /// Called with wasmtime's synchronous API: none of its imports is async (see `direct`).
    Direct(InstancePre<InstanceState>, direct::GameFeatureIndices),
    /// Called on a fiber, with wasmtime's async API.
    Latest(InstancePre<InstanceState>, GameFeatureIndices),
    V0_1(InstancePre<InstanceState>, v0_1_0::GameFeatureIndices),
}

/// An instance whose exports have not been looked up yet: looking them up (and type-checking each) costs about
/// as much as instantiating, so it waits for the first call.
enum Unbound {
    Direct(Instance, direct::GameFeatureIndices),
    Latest(Instance, GameFeatureIndices),
    V0_1(Instance, v0_1_0::GameFeatureIndices),
}

/// An instance's exports, in the world of its version.
enum Bindings {
    Direct(direct::GameFeature),
    Latest(GameFeature),
    V0_1(v0_1_0::GameFeature),
}

/// A plugin's component, compiled and pre-instantiated against the host's linker.
pub struct WasmPlugin {
    pub(super) pre: Pre,
    pub(super) provenance: Provenance,
    pub(super) interface: ComponentInterface,
    pub(super) limits: Limits,
    pub(super) wasi_io: tokio::runtime::Handle,
    pub(super) call_path: CallPath,
}

impl WasmPlugin {
    /// Whether its calls are made directly or on a fiber, and why.
    pub fn call_path(&self) -> &CallPath {
        &self.call_path
    }

    /// The limits its instances run under: the configuration's, fitted to its component.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}

impl LoadedPlugin for WasmPlugin {
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        if let Some(over) =
            env.data_dir.as_deref().and_then(|dir| sandbox::data_over_quota(dir, self.limits.data_quota))
        {
            return Err(CallError::Refused(format!("cannot start: {over}")));
        }
        let log_budget = Arc::new(LogBudget::default());
        // Without a data directory to open, the WASI context waits for the plugin's first WASI call.
        let wasi = match env.data_dir {
            Some(_) => Some(sandbox::wasi_context(&env, &log_budget).map_err(CallError::Trapped)?),
            None => None,
        };
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
            clock: CallClock::start(self.limits.instantiate_deadline),
            host_memory: self.limits.host_memory,
            event_names: Default::default(),
            waits: WaitBudget::new(Duration::ZERO, Duration::ZERO),
            wasi_io: self.wasi_io.clone(),
        };
        let engine = match &self.pre {
            Pre::Direct(pre, _) | Pre::Latest(pre, _) | Pre::V0_1(pre, _) => pre.engine(),
        };
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limits);
        // wasmtime's own caps, from the plugin's limits rather than its defaults (128 MiB copied per host call,
        // 100,000 handles): what one host call may copy out of the plugin, and the handles it may hold.
        store.set_hostcall_fuel(self.limits.hostcall_bytes());
        store.set_max_component_handles(self.limits.component_handles());
        // The epoch only says when to look: whether the call is over its budget is a question of the CPU time
        // it used (see `deadline`).
        store.epoch_deadline_callback(|mut context| match context.data_mut().clock.check() {
            Verdict::Continue(rest) => Ok(UpdateDeadline::Continue(epoch::ticks(rest))),
            Verdict::OverBudget { used } => Err(DeadlineExceeded::Budget { used }.into()),
            Verdict::OverBackstop { elapsed } => Err(DeadlineExceeded::Backstop { elapsed }.into()),
        });
        let mut instance = WasmInstance {
            store,
            bindings: None,
            unbound: None,
            limits: self.limits.clone(),
            wasi_io: self.wasi_io.clone(),
            waited: Duration::ZERO,
            calls: 0,
        };
        // Instantiation runs the component's start-up code (a Python or JavaScript runtime's can take
        // milliseconds): it has its own budget, not a call's.
        let mut waits = instance.arm_for(self.limits.instantiate_deadline, 0);
        let budget = instance_budget(&self.limits);
        let wasm = match &self.pre {
            Pre::Direct(pre, _) => finish_direct(
                || {
                    let mut tries = 0;
                    loop {
                        match pre.instantiate(&mut instance.store) {
                            Err(e) if host_busy(&e) && tries < HOST_BUSY_RETRIES => tries += 1,
                            outcome => return outcome,
                        }
                    }
                },
                &budget,
            )?,
            Pre::Latest(pre, _) | Pre::V0_1(pre, _) => {
                let store = &mut instance.store;
                let instantiating = async move {
                    let mut tries = 0;
                    loop {
                        match pre.instantiate_async(&mut *store).await {
                            Err(e) if host_busy(&e) && tries < HOST_BUSY_RETRIES => tries += 1,
                            outcome => return outcome,
                        }
                    }
                };
                finish(instantiating, &mut waits, &budget, &self.wasi_io)?
            }
        };
        instance.unbound = Some(match &self.pre {
            Pre::Direct(_, indices) => Unbound::Direct(wasm, indices.clone()),
            Pre::Latest(_, indices) => Unbound::Latest(wasm, indices.clone()),
            Pre::V0_1(_, indices) => Unbound::V0_1(wasm, indices.clone()),
        });
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
    /// The exports, looked up at the first call (see [`Unbound`]).
    bindings: Option<Bindings>,
    unbound: Option<Unbound>,
    limits: Limits,
    /// Where WASI timers run (see `Runtime`).
    wasi_io: tokio::runtime::Handle,
    /// Time its calls spent parked inside WASI (a sleep) since this was last asked: no CPU time, but the frame
    /// waited for it.
    waited: Duration,
    /// Calls made into it, counting the one running: a recorded world's tape names a call by this number.
    calls: u64,
}

/// CPU time a batch may spend on each of its entries beyond the per-call deadline, so a batch of events is not
/// held to the budget of one. (Batches hold at most `delivery::MAX_BATCH` entries.)
const PER_ENTRY: Duration = Duration::from_micros(20);

/// Fuel a batch gets per entry, as a share of the per-call budget (the same share as [`PER_ENTRY`] of the
/// default deadline).
const FUEL_SHARE_PER_ENTRY: u64 = 2000;

/// Event names one instance keeps by number for `event-name` (each at most `MAX_NAME_BYTES`): past them, single
/// events of new names go as batches of one, which carry the name.
const MAX_EVENT_NAMES: usize = 4096;

/// How much longer than its deadline a call may wait inside WASI functions (a timer's wake-up is late by a
/// little).
const WAIT_GRACE: Duration = Duration::from_millis(1);

/// A call exceeded its time: the error the epoch callback raises, recognised by [`trapped`].
#[derive(Debug, thiserror::Error)]
enum DeadlineExceeded {
    #[error("used {used:?} of CPU time")]
    Budget { used: Duration },
    #[error("ran {elapsed:?} of wall-clock time")]
    Backstop { elapsed: Duration },
}

/// Limits as they apply to instantiation: its own deadline in place of a call's, so that messages name it.
fn instance_budget(limits: &Limits) -> Limits {
    Limits { call_deadline: limits.instantiate_deadline, ..limits.clone() }
}

impl WasmInstance {
    /// Looks the instance's exports up, once, before its first call.
    fn bind(&mut self) -> Result<(), CallError> {
        if self.bindings.is_some() {
            return Ok(());
        }
        let bound = match self.unbound.take() {
            Some(Unbound::Direct(instance, indices)) => indices.load(&mut self.store, &instance).map(Bindings::Direct),
            Some(Unbound::Latest(instance, indices)) => indices.load(&mut self.store, &instance).map(Bindings::Latest),
            Some(Unbound::V0_1(instance, indices)) => indices.load(&mut self.store, &instance).map(Bindings::V0_1),
            // Binding failed before: the instance was quarantined then, with the cause.
            None => return Err(CallError::Trapped("its exports do not fit the world".to_string())),
        };
        let bound = bound.map_err(|e| CallError::Trapped(format!("its exports do not fit the world: {e}")))?;
        self.bindings = Some(bound);
        Ok(())
    }

    /// In a replay: the cause the recording gives for this call having been stopped by a CPU-time limit, if
    /// it was. Time limits are lifted in a replay (no two runs meet them alike), so the recorded outcome is
    /// applied instead: the call is stopped before it runs (what it did before its limit, it does not do here).
    fn stopped_in_recording(&self) -> Option<String> {
        self.store.data().env.tape.as_ref()?.stopped_call(self.calls)
    }

    /// In a recorded world: a call stopped by a CPU-time limit is recorded, for its replay to stop it too.
    fn record_if_stopped_for_time<R>(&self, result: &Result<R, CallError>) {
        if let (Err(CallError::Trapped(cause)), Some(tape)) = (result, &self.store.data().env.tape) {
            if is_time_limit(cause) {
                tape.record_stopped(self.calls, cause);
            }
        }
    }

    /// Gives the store a fresh deadline (and fuel) for a call covering `entries` batch entries.
    fn arm(&mut self, entries: usize) -> WaitBudget {
        let deadline = self.limits.call_deadline.saturating_add(PER_ENTRY.saturating_mul(entries as u32));
        self.arm_for(deadline, entries)
    }

    /// Starts a call's clock with `deadline` of CPU time, sets its fuel and its per-call budgets.
    fn arm_for(&mut self, deadline: Duration, entries: usize) -> WaitBudget {
        self.store.set_epoch_deadline(CallClock::FIRST_CHECK);
        if self.store.engine().get_consume_fuel() {
            // A plugin without a fuel budget of its own runs unmetered in an engine that meters others.
            let budget = match self.limits.fuel {
                Some(fuel) => fuel.saturating_add((fuel / FUEL_SHARE_PER_ENTRY).saturating_mul(entries as u64)),
                None => u64::MAX,
            };
            // Fuel is only unavailable when the engine was built without it, which the check above rules out.
            let _ = self.store.set_fuel(budget);
        }
        let state = self.store.data_mut();
        state.log_budget.reset(MAX_LINES_PER_CALL.saturating_add(entries as u32));
        state.changes = 0;
        state.change_cap =
            self.limits.world_changes.saturating_add(WORLD_CHANGES_PER_ENTRY.saturating_mul(entries as u32));
        state.clock = CallClock::start(deadline);
        state.waits = WaitBudget::new(deadline.saturating_add(WAIT_GRACE), deadline::backstop(deadline));
        state.waits
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
        // Files it wrote are measured after each call: a plugin can pass its quota by one call's writes at
        // most, then it is stopped.
        if let Some(dir) = &state.env.data_dir {
            if let Some(over) = sandbox::data_over_quota(dir, self.limits.data_quota) {
                return Err(CallError::Trapped(over));
            }
        }
        result
    }
}

/// Runs a call's future to completion and turns its failure into a [`CallError`] naming the cause. WASI
/// timers the plugin starts belong to `wasi_io`, whatever runtime (if any) the caller is in.
fn finish<R>(
    call: impl Future<Output = wasmtime::Result<R>>,
    waits: &mut WaitBudget,
    limits: &Limits,
    wasi_io: &tokio::runtime::Handle,
) -> Result<R, CallError> {
    let _context = wasi_io.enter();
    let call = std::pin::pin!(call);
    guard(|| match waits.wait_for(call) {
        Ok(result) => result.map_err(|e| trapped(e, limits)),
        Err(abandoned) => Err(abandoned_call(abandoned, limits)),
    })
}

/// Times an instantiation the host could not do for a passing reason of its own is tried again.
const HOST_BUSY_RETRIES: u32 = 3;

/// Whether an instantiation failed for a passing reason of the host's, not the plugin's: the kernel answering
/// "busy" or "try again" while the instance's memory is set up (sealing a copy-on-write image can meet pages
/// another thread holds for a moment on a loaded machine).
fn host_busy(error: &wasmtime::Error) -> bool {
    error.chain().filter_map(|cause| cause.downcast_ref::<std::io::Error>()).any(|io| {
        matches!(io.raw_os_error(), Some(libc::EBUSY | libc::EAGAIN | libc::EINTR))
            || matches!(io.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock)
    })
}

/// Runs a direct call (see `direct`: its waits are driven inside it) and turns its failure into a
/// [`CallError`] naming the cause.
fn finish_direct<R>(call: impl FnOnce() -> wasmtime::Result<R>, limits: &Limits) -> Result<R, CallError> {
    guard(|| call().map_err(|e| trapped(e, limits)))
}

/// A call abandoned while it waited, described.
/// Whether a trap's cause (as [`trapped`] and [`abandoned_call`] word it) is a limit of time — CPU time, the
/// wall-clock backstop, waiting inside WASI — which depends on the machine and its load, not on the plugin alone.
fn is_time_limit(cause: &str) -> bool {
    [
        "exceeded its call deadline",
        "exceeded its wall-clock backstop",
        "waited inside a WASI call past",
        "was still waiting",
    ]
    .iter()
    .any(|prefix| cause.starts_with(prefix))
}

fn abandoned_call(abandoned: Abandoned, limits: &Limits) -> CallError {
    CallError::Trapped(match abandoned {
        Abandoned::Waited(_) => format!(
            "waited inside a WASI call past its call deadline ({:?}); plugins must not sleep or block",
            limits.call_deadline
        ),
        Abandoned::Backstop => format!(
            "was still waiting inside a WASI call at its wall-clock backstop ({:?})",
            super::deadline::backstop(limits.call_deadline)
        ),
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
    if let Some(exceeded) = error.downcast_ref::<DeadlineExceeded>() {
        let cause = match exceeded {
            DeadlineExceeded::Budget { .. } => {
                format!("exceeded its call deadline ({:?} of CPU time)", limits.call_deadline)
            }
            DeadlineExceeded::Backstop { elapsed } => format!(
                "exceeded its wall-clock backstop: {elapsed:?} without finishing (its deadline is {:?} of CPU time)",
                limits.call_deadline
            ),
        };
        return CallError::Trapped(cause);
    }
    if let Some(abandoned) = error.downcast_ref::<Abandoned>() {
        return abandoned_call(*abandoned, limits);
    }
    // Not the plugin's doing: the host is out of instance slots. The plugin is refused, not quarantined.
    if let Some(full) = error.downcast_ref::<wasmtime::PoolConcurrencyLimitError>() {
        return CallError::Refused(format!(
            "cannot start: the host's instance pool is full ({full}); end other worlds or plugins, or raise the \
             pool's size (RuntimeConfig::max_instances)"
        ));
    }
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

/// The chain facts of a batch as the newest version's `chain-facts` record, in the bindings `$module` of
/// `init-state-callbacks` (a record an export defines is a type of each bindings of it).
macro_rules! chain_facts {
    ($module:path, $facts:expr) => {{
        use $module as callbacks;
        let facts: &ChainFacts = $facts;
        callbacks::ChainFacts {
            feature_starts: facts.feature_starts.clone(),
            feature_names: facts.feature_names.clone(),
            feature_states: facts.feature_states.clone(),
            read_starts: facts.read_starts.clone(),
            read_kinds: facts.reads.kinds.clone(),
            read_values: facts.reads.values.clone(),
            read_texts: facts.reads.texts.clone(),
            read_errors: facts.reads.errors.iter().map(|e| types::Error::from(e.clone())).collect(),
        }
    }};
}

/// What a plugin answered to `on-deactivating` or `poll-deactivation`, in each bindings of `lifecycle`.
macro_rules! deactivation_from {
    ($($ty:ty),*) => {$(
        impl From<$ty> for Deactivation {
            fn from(value: $ty) -> Self {
                match value {
                    <$ty>::Done => Deactivation::Done,
                    <$ty>::Pending => Deactivation::Pending,
                }
            }
        }
    )*};
}

deactivation_from!(
    lifecycle::Deactivation,
    direct::exports::gamefeature::plugin::lifecycle::Deactivation,
    v0_1_0::lifecycle::Deactivation
);

fn context(context: &ActivationContext) -> types::ActivationContext {
    types::ActivationContext { world_name: context.world_name.clone(), net_mode: context.net_mode.into() }
}

fn context_v0_1(context: &ActivationContext) -> v0_1_0::types::ActivationContext {
    let net_mode = types::NetMode::from(context.net_mode).into();
    v0_1_0::types::ActivationContext { world_name: context.world_name.clone(), net_mode }
}

/// Calls one export: arms the deadline for `$entries` batch entries, then runs the call for the instance's
/// package version and call path to completion. An export with the same shape in every version is written once,
/// `interface.export(args…)` (followed by `v0_1: |bindings, store| …` when 0.1.0 lacks it); otherwise one call
/// per bindings, `|bindings, store| …`: a direct call's expression is its result, the others' a future of it.
macro_rules! call_export {
    ($self:ident, $entries:expr, $interface:ident . $export:ident ( $($arg:expr),* )) => {
        call_export!(
            $self,
            $entries,
            $interface.$export($($arg),*),
            v0_1: |b, store| b.$interface().$export(store $(, $arg)*)
        )
    };
    (
        $self:ident,
        $entries:expr,
        $interface:ident . $export:ident ( $($arg:expr),* ),
        v0_1: |$b1:ident, $store1:ident| $v0_1:expr
    ) => {
        call_export!(
            $self,
            $entries,
            direct: |b, store| b.$interface().$export(store $(, $arg)*),
            latest: |b, store| b.$interface().$export(store $(, $arg)*),
            v0_1: |$b1, $store1| $v0_1
        )
    };
    (
        $self:ident,
        $entries:expr,
        direct: |$bd:ident, $stored:ident| $direct:expr,
        latest: |$b:ident, $store:ident| $latest:expr,
        v0_1: |$b1:ident, $store1:ident| $v0_1:expr
    ) => {{
        $self.bind()?;
        $self.calls += 1;
        if let Some(cause) = $self.stopped_in_recording() {
            return Err(CallError::Trapped(cause));
        }
        let mut waits = $self.arm($entries);
        let bindings = $self.bindings.as_ref().expect("bound just now");
        let result = match bindings {
            Bindings::Direct($bd) => {
                let $stored = &mut $self.store;
                finish_direct(|| $direct, &$self.limits)
            }
            Bindings::Latest($b) => {
                let $store = &mut $self.store;
                finish($latest, &mut waits, &$self.limits, &$self.wasi_io)
            }
            Bindings::V0_1($b1) => {
                let $store1 = &mut $self.store;
                finish($v0_1, &mut waits, &$self.limits, &$self.wasi_io)
            }
        };
        // A direct call's waits are driven in its store's budget, a fiber call's in this copy.
        $self.waited += waits.waited().max($self.store.data().waits.waited());
        $self.record_if_stopped_for_time(&result);
        $self.after_call(result)
    }};
}

impl PluginInstance for WasmInstance {
    fn take_refusals(&mut self) -> Refusals {
        std::mem::take(&mut self.store.data_mut().refusals)
    }

    fn frame_budget(&self) -> Option<std::time::Duration> {
        Some(self.limits.frame_budget)
    }

    fn take_waited(&mut self) -> Duration {
        std::mem::take(&mut self.waited)
    }

    fn on_registering(&mut self) -> Result<(), CallError> {
        refused_or_trapped(call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_registering()))
    }

    fn on_loading(&mut self) -> Result<(), CallError> {
        refused_or_trapped(call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_loading()))
    }

    fn on_activating(&mut self, ctx: &ActivationContext) -> Result<(), CallError> {
        let (latest, v0_1) = (context(ctx), context_v0_1(ctx));
        refused_or_trapped(call_export!(
            self,
            0,
            gamefeature_plugin_lifecycle.call_on_activating(&latest),
            v0_1: |b, store| b.gamefeature_plugin_lifecycle().call_on_activating(store, &v0_1)
        ))
    }

    fn on_activated(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_activated())
    }

    fn on_deactivating(&mut self, ctx: &ActivationContext) -> Result<Deactivation, CallError> {
        let (latest, v0_1) = (context(ctx), context_v0_1(ctx));
        call_export!(
            self,
            0,
            direct: |b, store| b.gamefeature_plugin_lifecycle().call_on_deactivating(store, &latest).map(Into::into),
            latest: |b, store| async {
                b.gamefeature_plugin_lifecycle().call_on_deactivating(store, &latest).await.map(Into::into)
            },
            v0_1: |b, store| async {
                b.gamefeature_plugin_lifecycle().call_on_deactivating(store, &v0_1).await.map(Into::into)
            }
        )
    }

    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
        call_export!(
            self,
            0,
            direct: |b, store| b.gamefeature_plugin_lifecycle().call_poll_deactivation(store).map(Into::into),
            latest: |b, store| async {
                b.gamefeature_plugin_lifecycle().call_poll_deactivation(store).await.map(Into::into)
            },
            v0_1: |b, store| async {
                b.gamefeature_plugin_lifecycle().call_poll_deactivation(store).await.map(Into::into)
            }
        )
    }

    fn on_unloading(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_unloading())
    }

    fn on_unregistering(&mut self) -> Result<(), CallError> {
        call_export!(self, 0, gamefeature_plugin_lifecycle.call_on_unregistering())
    }

    fn on_timers(&mut self, frame: &crate::world::Frame, fired: &[(u32, u32)]) -> Result<(), CallError> {
        let frame = types::Frame::from(*frame);
        let ids: Vec<u32> = fired.iter().map(|(id, _)| *id).collect();
        let counts: Vec<u32> = fired.iter().map(|(_, count)| *count).collect();
        call_export!(
            self,
            fired.len(),
            gamefeature_plugin_timer_callbacks.call_on_timers(frame, &ids, &counts),
            // 0.1.0 has no timers, so none of its plugins' can fire.
            v0_1: |_b, _store| async { Ok(()) }
        )
    }

    fn on_replicated(&mut self, batch: &ReplicatedBatch) -> Result<(), CallError> {
        let olds: Vec<Option<types::Value>> = batch.olds.iter().map(|v| v.clone().map(Into::into)).collect();
        let news: Vec<types::Value> = batch.news.iter().map(|v| v.clone().into()).collect();
        call_export!(
            self,
            batch.actors.len(),
            gamefeature_plugin_replication_callbacks.call_on_replicated(
                &batch.actors,
                &batch.components,
                &batch.properties,
                &olds,
                &news,
                &batch.names
            ),
            // 0.1.0 has no rep-notify.
            v0_1: |_b, _store| async { Ok(()) }
        )
    }

    fn on_properties_changed(&mut self, batch: &PropertyBatch) -> Result<(), CallError> {
        let olds: Vec<Option<types::Value>> = batch.olds.iter().map(|v| v.clone().map(Into::into)).collect();
        let news: Vec<Option<types::Value>> = batch.news.iter().map(|v| v.clone().map(Into::into)).collect();
        call_export!(
            self,
            batch.ids.len(),
            gamefeature_plugin_property_callbacks.call_on_properties_changed(
                &batch.ids,
                &batch.actors,
                &olds,
                &news
            ),
            // 0.1.0 has no property watches.
            v0_1: |_b, _store| async { Ok(()) }
        )
    }

    fn snapshot(&mut self) -> Result<Option<Vec<u8>>, CallError> {
        call_export!(
            self,
            0,
            gamefeature_plugin_lifecycle.call_snapshot(),
            // 0.1.0 has no snapshot: its plugins reload without state.
            v0_1: |_b, _store| async { Ok(None) }
        )
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), CallError> {
        refused_or_trapped(call_export!(
            self,
            0,
            gamefeature_plugin_lifecycle.call_restore(state),
            v0_1: |_b, _store| async { Ok(Ok(())) }
        ))
    }

    fn handle_extension_events(&mut self, b: &ExtensionBatch) -> Result<(), CallError> {
        call_export!(
            self,
            b.actors.len(),
            gamefeature_plugin_handlers.call_handle_extension_events(&b.handlers, &b.actors, &b.events, &b.names)
        )
    }

    fn handle_extension_event(&mut self, handler: u32, actor: u64, event: u32, name: &str) -> Result<(), CallError> {
        self.bind()?;
        let names = &mut self.store.data_mut().event_names;
        let room = names.len() < MAX_EVENT_NAMES;
        // One lookup: the name is kept by number as the event is sent (0.1.0 instances are never sent numbers).
        let numbered = !matches!(self.bindings, Some(Bindings::V0_1(_)))
            && match names.entry(event) {
                Entry::Occupied(_) => true,
                Entry::Vacant(slot) if room => {
                    slot.insert(name.into());
                    true
                }
                Entry::Vacant(_) => false,
            };
        if !numbered {
            // 0.1.0 takes events in batches only; past its share of numbered names, an instance gets the name
            // itself.
            let batch = ExtensionBatch {
                handlers: vec![handler],
                actors: vec![actor],
                events: vec![0],
                names: vec![name.to_string()],
            };
            return self.handle_extension_events(&batch);
        }
        call_export!(
            self,
            1,
            gamefeature_plugin_handlers.call_handle_extension_event(handler, actor, event),
            v0_1: |_b, _store| async { Ok(()) }
        )
    }

    fn try_change_init_states(&mut self, b: &ChainBatch) -> Result<Vec<ChainWalk>, CallError> {
        // The facts are converted for the newest version only (into the record of the bindings called).
        macro_rules! try_with_facts {
            ($bindings:ident, $store:ident, $callbacks:path) => {
                $bindings.gamefeature_plugin_init_state_callbacks().call_try_change_init_states(
                    $store,
                    &b.actors,
                    &b.features,
                    &b.currents,
                    &b.desireds,
                    &b.names,
                    &chain_facts!($callbacks, &b.facts),
                )
            };
        }
        // Each bindings' `chain-walks` lists, as the host's walks (a refused index past the batch is a trap).
        macro_rules! walks {
            ($answers:expr) => {
                ChainWalk::from_lists(&$answers.steps, &$answers.refused)
                    .map_err(|fault| wasmtime::Error::msg(format!("try-change-init-states answered a {fault}")))
            };
        }
        let answers = call_export!(
            self,
            b.actors.len(),
            direct: |b_, store| {
                try_with_facts!(b_, store, direct::exports::gamefeature::plugin::init_state_callbacks)
                    .and_then(|answers| walks!(answers))
            },
            latest: |b_, store| async move {
                try_with_facts!(b_, store, init_state_callbacks).await.and_then(|answers| walks!(answers))
            },
            // 0.1.0 decides one step at a time, without facts, and prepares the steps it allowed in a second call
            // (below).
            v0_1: |b_, store| {
                let asked = b_.gamefeature_plugin_init_state_callbacks().call_can_change_init_states(
                    store,
                    &b.actors,
                    &b.features,
                    &b.currents,
                    &b.desireds,
                    &b.names,
                );
                async move { asked.await.map(|answers| answers.into_iter().map(ChainWalk::one_step).collect()) }
            }
        )?;
        if answers.len() != b.actors.len() {
            return Err(CallError::Trapped(format!(
                "try-change-init-states answered {} times for {} entries",
                answers.len(),
                b.actors.len()
            )));
        }
        if matches!(self.bindings, Some(Bindings::V0_1(_))) && answers.iter().any(|walk| walk.steps > 0) {
            let allowed: Vec<bool> = answers.iter().map(|walk| walk.steps > 0).collect();
            let allowed = b.only(&allowed);
            call_export!(
                self,
                allowed.actors.len(),
                direct: |_b, _store| Ok(()),
                latest: |_b, _store| async { Ok(()) },
                v0_1: |b_, store| b_.gamefeature_plugin_init_state_callbacks().call_handle_change_init_states(
                    store,
                    &allowed.actors,
                    &allowed.features,
                    &allowed.currents,
                    &allowed.desireds,
                    &allowed.names
                )
            )?;
        }
        Ok(answers)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hosts_passing_troubles_are_tried_again() {
        let busy = wasmtime::Error::new(std::io::Error::from_raw_os_error(libc::EBUSY)).context("sealing an image");
        assert!(host_busy(&busy));
        assert!(!host_busy(&wasmtime::Error::msg("out of bounds memory access")));
        assert!(!host_busy(&wasmtime::Error::new(std::io::Error::from_raw_os_error(libc::ENOMEM))));
    }
}
