//! The data of one plugin instance's store.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::StoreLimits;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::deadline::CallClock;
use super::drive::WaitBudget;
use super::plugin_log::LogBudget;
use crate::delivery::Refusals;
use crate::feature::InstanceEnv;

/// What host calls of one instance can reach: its WASI context, its limits and its view of the world.
pub struct InstanceState {
    /// Made at the instance's first WASI call (see [`WasiView::ctx`]): a plugin that never prints, reads the
    /// clock or asks for randomness never pays for one (seeding its random generators is most of the cost).
    /// A plugin with a data directory gets its context when it is instantiated, so that a directory it cannot
    /// open fails the instantiation rather than its first file operation. (WASI's monotonic clock counts from
    /// the context's making; its zero is unspecified either way.)
    pub(crate) wasi: Option<WasiCtx>,
    pub(crate) table: ResourceTable,
    pub(crate) limits: StoreLimits,
    pub(crate) env: InstanceEnv,
    /// Host calls refused since the instance was last asked (see `PluginInstance::take_refusals`).
    pub(crate) refusals: Refusals,
    /// World changes made in the current call, and how many it may make.
    pub(crate) changes: u32,
    pub(crate) change_cap: u32,
    /// Log lines the current call may still write.
    pub(crate) log_budget: Arc<LogBudget>,
    /// Handles the plugin holds, and how many it may.
    pub(crate) handles: u32,
    pub(crate) max_handles: u32,
    /// The clock of the current call (or instantiation), read when its epoch deadline comes due.
    pub(crate) clock: CallClock,
    /// How long the current call may still wait inside blocking WASI functions (direct calls; see `direct`).
    pub(crate) waits: WaitBudget,
    /// The runtime WASI timers belong to (see `Runtime`).
    pub(crate) wasi_io: tokio::runtime::Handle,
    /// Bytes of host memory the properties the plugin writes may hold.
    pub(crate) host_memory: usize,
    /// The event names this instance was sent by number (`handle-extension-event`), for `event-name`. At most
    /// one entry per name the world interned.
    pub(crate) event_names: HashMap<u32, Box<str>>,
}

impl WasiView for InstanceState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (env, budget) = (&self.env, &self.log_budget);
        let ctx = self.wasi.get_or_insert_with(|| super::sandbox::plain_wasi_context(env, budget));
        WasiCtxView { ctx, table: &mut self.table }
    }
}
