//! The host-side bindings of the `gamefeature:plugin` WIT package: the only `bindgen!` in the crate.

wasmtime::component::bindgen!({
    world: "game-feature",
    path: "../wit",
});

pub use exports::gamefeature::plugin::lifecycle;
pub use gamefeature::plugin::types;
