//! The host-side bindings of the `gamefeature:plugin` WIT package: the newest version at the top of this module
//! (its exports twice: called on a fiber, and called directly, see `runtime::direct`), each older version the
//! host still loads in a module of its own (its imports are served by delegating to the newest, see
//! `host::v0_1_0`). The only `bindgen!`s in the crate.

wasmtime::component::bindgen!({
    world: "game-feature",
    path: "../wit/0.2.0",
    // Exports of plugins called on a fiber (see `runtime::direct`) are called with wasmtime's async API; the
    // host's own imports never wait.
    exports: { default: async },
    with: {
        "gamefeature:plugin/components.component-request": crate::runtime::resources::ComponentRequestResource,
        "gamefeature:plugin/components.extension-handler": crate::runtime::resources::ExtensionHandlerResource,
        "gamefeature:plugin/init-states.subscription": crate::runtime::resources::SubscriptionResource,
        "gamefeature:plugin/timers.timer": crate::runtime::resources::TimerResource,
        "gamefeature:plugin/components.property-watch": crate::runtime::resources::PropertyWatchResource,
    },
});

pub use exports::gamefeature::plugin::{init_state_callbacks, lifecycle};
pub use gamefeature::plugin::types;

/// The newest version's exports for calls made with wasmtime's synchronous API (see `runtime::direct`); its
/// imports are the ones above.
pub mod direct {
    wasmtime::component::bindgen!({
        world: "game-feature",
        path: "../wit/0.2.0",
        with: {
            "gamefeature:plugin/types": crate::runtime::bindings::types,
            "gamefeature:plugin/log": crate::runtime::bindings::gamefeature::plugin::log,
            "gamefeature:plugin/actors": crate::runtime::bindings::gamefeature::plugin::actors,
            "gamefeature:plugin/assets": crate::runtime::bindings::gamefeature::plugin::assets,
            "gamefeature:plugin/components": crate::runtime::bindings::gamefeature::plugin::components,
            "gamefeature:plugin/init-states": crate::runtime::bindings::gamefeature::plugin::init_states,
            "gamefeature:plugin/timers": crate::runtime::bindings::gamefeature::plugin::timers,
        },
    });
}

/// `gamefeature:plugin@0.1.0`, whose resources are the same host objects as the newest version's.
pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        world: "game-feature",
        path: "../wit/0.1.0",
        exports: { default: async },
        with: {
            "gamefeature:plugin/components.component-request": crate::runtime::resources::ComponentRequestResource,
            "gamefeature:plugin/components.extension-handler": crate::runtime::resources::ExtensionHandlerResource,
            "gamefeature:plugin/init-states.subscription": crate::runtime::resources::SubscriptionResource,
        },
    });

    pub use exports::gamefeature::plugin::lifecycle;
    pub use gamefeature::plugin::types;
}
