//! The host-side bindings of the `gamefeature:plugin` WIT package: the only `bindgen!` in the crate.

wasmtime::component::bindgen!({
    world: "game-feature",
    path: "../wit",
    // Exports are called with wasmtime's async API (see `runtime::drive`); the host's own imports never wait.
    exports: { default: async },
    with: {
        "gamefeature:plugin/components.component-request": crate::runtime::host::components::ComponentRequestResource,
        "gamefeature:plugin/components.extension-handler": crate::runtime::host::components::ExtensionHandlerResource,
        "gamefeature:plugin/init-states.subscription": crate::runtime::host::init_states::SubscriptionResource,
    },
});

pub use exports::gamefeature::plugin::lifecycle;
pub use gamefeature::plugin::types;
