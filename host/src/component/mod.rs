//! The component manager: which features extend which actor classes.
//!
//! This is Unreal's `UGameFrameworkComponentManager` as plain Rust bookkeeping. It decides; the
//! [`World`](crate::world::World) applies its decisions to actors. Component requests live here; extension
//! handlers and init states join them as the manager grows.

mod requests;

pub use requests::{ComponentRequests, RequestHandle, RequestKey};
