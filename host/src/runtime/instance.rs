//! Loaded plugin code and its per-world instances.

use wasmtime::component::ResourceTable;
use wasmtime::Store;

use super::bindings::{lifecycle, types, GameFeature, GameFeaturePre};
use super::sandbox;
use super::state::InstanceState;
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
}

impl LoadedPlugin for WasmPlugin {
    fn instantiate(&self, env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        let state = InstanceState {
            wasi: sandbox::wasi_context(),
            table: ResourceTable::new(),
            limits: sandbox::store_limits(self.memory_limit),
            env,
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.limits);
        let bindings = self.pre.instantiate(&mut store).map_err(trapped)?;
        Ok(Box::new(WasmInstance { store, bindings }))
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
}

fn trapped(error: wasmtime::Error) -> CallError {
    CallError::Trapped(format!("{error:#}"))
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
    fn on_registering(&mut self) -> Result<(), CallError> {
        refused_or_trapped(self.bindings.gamefeature_plugin_lifecycle().call_on_registering(&mut self.store))
    }

    fn on_loading(&mut self) -> Result<(), CallError> {
        refused_or_trapped(self.bindings.gamefeature_plugin_lifecycle().call_on_loading(&mut self.store))
    }

    fn on_activating(&mut self, ctx: &ActivationContext) -> Result<(), CallError> {
        let ctx = context(ctx);
        refused_or_trapped(self.bindings.gamefeature_plugin_lifecycle().call_on_activating(&mut self.store, &ctx))
    }

    fn on_activated(&mut self) -> Result<(), CallError> {
        self.bindings.gamefeature_plugin_lifecycle().call_on_activated(&mut self.store).map_err(trapped)
    }

    fn on_deactivating(&mut self, ctx: &ActivationContext) -> Result<Deactivation, CallError> {
        let ctx = context(ctx);
        let lifecycle = self.bindings.gamefeature_plugin_lifecycle();
        lifecycle.call_on_deactivating(&mut self.store, &ctx).map(deactivation).map_err(trapped)
    }

    fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
        let lifecycle = self.bindings.gamefeature_plugin_lifecycle();
        lifecycle.call_poll_deactivation(&mut self.store).map(deactivation).map_err(trapped)
    }

    fn on_unloading(&mut self) -> Result<(), CallError> {
        self.bindings.gamefeature_plugin_lifecycle().call_on_unloading(&mut self.store).map_err(trapped)
    }

    fn on_unregistering(&mut self) -> Result<(), CallError> {
        self.bindings.gamefeature_plugin_lifecycle().call_on_unregistering(&mut self.store).map_err(trapped)
    }

    fn handle_extension_events(&mut self, b: &ExtensionBatch) -> Result<(), CallError> {
        let handlers = self.bindings.gamefeature_plugin_handlers();
        handlers
            .call_handle_extension_events(&mut self.store, &b.handlers, &b.actors, &b.events, &b.names)
            .map_err(trapped)
    }

    fn can_change_init_states(&mut self, b: &ChainBatch) -> Result<Vec<bool>, CallError> {
        let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
        let answers = callbacks
            .call_can_change_init_states(&mut self.store, &b.actors, &b.features, &b.currents, &b.desireds, &b.names)
            .map_err(trapped)?;
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
        let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
        callbacks
            .call_handle_change_init_states(&mut self.store, &b.actors, &b.features, &b.currents, &b.desireds, &b.names)
            .map_err(trapped)
    }

    fn check_default_initializations(&mut self, b: &FeatureBatch) -> Result<(), CallError> {
        let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
        callbacks.call_check_default_initializations(&mut self.store, &b.actors, &b.features, &b.names).map_err(trapped)
    }

    fn on_init_states_changed(&mut self, b: &StateChangeBatch) -> Result<(), CallError> {
        let callbacks = self.bindings.gamefeature_plugin_init_state_callbacks();
        callbacks
            .call_on_init_states_changed(&mut self.store, &b.ids, &b.actors, &b.features, &b.states, &b.names)
            .map_err(trapped)
    }
}
