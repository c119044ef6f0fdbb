//! The host-side bindings of the `gamefeature:plugin` WIT package: the newest version at the top of this module,
//! each older version the host still loads in a module of its own (its imports are served by delegating to the
//! newest, see `host::v0_1_0`). The only `bindgen!`s in the crate.

wasmtime::component::bindgen!({
    world: "game-feature",
    path: "../wit/0.2.0",
    // Exports are called with wasmtime's async API (see `runtime::drive`); the host's own imports never wait.
    exports: { default: async },
    with: {
        "gamefeature:plugin/components.component-request": crate::runtime::host::components::ComponentRequestResource,
        "gamefeature:plugin/components.extension-handler": crate::runtime::host::components::ExtensionHandlerResource,
        "gamefeature:plugin/init-states.subscription": crate::runtime::host::init_states::SubscriptionResource,
        "gamefeature:plugin/timers.timer": crate::runtime::host::timers::TimerResource,
        "gamefeature:plugin/components.property-watch": crate::runtime::host::components::PropertyWatchResource,
    },
});

pub use exports::gamefeature::plugin::{init_state_callbacks, lifecycle};
pub use gamefeature::plugin::types;

/// `gamefeature:plugin@0.1.0`, whose resources are the same host objects as the newest version's.
pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        world: "game-feature",
        path: "../wit/0.1.0",
        exports: { default: async },
        with: {
            "gamefeature:plugin/components.component-request": crate::runtime::host::components::ComponentRequestResource,
            "gamefeature:plugin/components.extension-handler": crate::runtime::host::components::ExtensionHandlerResource,
            "gamefeature:plugin/init-states.subscription": crate::runtime::host::init_states::SubscriptionResource,
        },
    });

    pub use exports::gamefeature::plugin::lifecycle;
    pub use gamefeature::plugin::types;
}
