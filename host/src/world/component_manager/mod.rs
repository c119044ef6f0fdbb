//! The component manager: how features extend actors they do not own.
//!
//! This is Unreal's `UGameFrameworkComponentManager` as plain Rust: receivers, component requests, extension
//! handlers and the init-state system. Its state lives in the [`World`](crate::world::World) (the manager's
//! operations are `World` methods, in `manager.rs`), because every operation reads and changes actors.
//! Anything that must reach a plugin is queued as [`Work`] and delivered by the world's dispatcher after the
//! plugin's current call returns.

mod handlers;
mod init_state;
mod manager;
#[cfg(test)]
mod model_tests;
mod names;
mod queue;
mod requests;
mod watches;

pub use handlers::{ExtensionHandlers, Handler};
pub use init_state::{FeatureEntry, InitStates, Subscription, Watched, LYRA_INIT_STATES};
pub use manager::{events, ChainRead, ComponentManager, OwnerCleanup, MAX_CHAIN_READS};
pub use names::{Name, Names, MAX_NAMES, MAX_NAMES_PER_PLUGIN};
pub use queue::{Charge, ChargedWork, ValueChange, Work, WorkKind, WorkQueue};
pub use requests::{ComponentRequests, RequestFlags, RequestHandle, RequestKey};
pub use watches::{PropertyWatches, Watch, WatchId};

/// A plugin instance in one world, as the component manager knows it: everything it adds is tagged with it, so
/// deactivating or quarantining the instance removes exactly what it added. [`OwnerId::HOST`] is the game itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(pub u32);

impl OwnerId {
    /// The host's own code and the experience's built-in actions.
    pub const HOST: OwnerId = OwnerId(0);
}

/// A live extension handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandlerId(pub(crate) u64);

/// A live init-state subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscriptionId(pub(crate) u64);
