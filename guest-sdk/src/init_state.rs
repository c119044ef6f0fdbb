//! The init-state system: features of an actor moving through one ordered list of states.
//!
//! Implement [`Plugin::can_change_init_state`](crate::Plugin::can_change_init_state) and
//! [`Plugin::handle_change_init_state`](crate::Plugin::handle_change_init_state) for the features you register;
//! the host walks their chains when you call [`continue_chain`], after your current call returns.

use std::cell::OnceCell;

pub use crate::bindings::gamefeature::plugin::init_states::{
    change_feature_state, check_default_initialization_for_implementers, continue_init_state_chain, feature_state,
    has_feature_reached, have_all_features_reached, register_feature, states, subscribe_actor, subscribe_class,
    unregister_feature, Subscription,
};
use crate::world::ActorId;
use crate::Error;

/// Lyra's init states, the host's default order.
pub const SPAWNED: &str = "InitState.Spawned";
pub const DATA_AVAILABLE: &str = "InitState.DataAvailable";
pub const DATA_INITIALIZED: &str = "InitState.DataInitialized";
pub const GAMEPLAY_READY: &str = "InitState.GameplayReady";

thread_local! {
    static STATES: OnceCell<Vec<String>> = const { OnceCell::new() };
}

/// The name of a state ordinal as the host sends it (0: none).
pub(crate) fn state_name(ordinal: u8) -> Option<String> {
    let index = (ordinal as usize).checked_sub(1)?;
    STATES.with(|cell| cell.get_or_init(states).get(index).cloned())
}

/// Queues a walk of `feature`'s chain, as far as its `can_change_init_state` allows.
pub fn continue_chain(actor: ActorId, feature: &str) -> Result<(), Error> {
    continue_init_state_chain(actor, feature)
}

/// Unreal's default `CheckDefaultInitialization` for a feature that coordinates others (Lyra's pawn
/// extension): first ask every other feature of the actor to move forward, then walk this one's chain.
pub fn check_default_initialization(actor: ActorId, feature: &str) -> Result<(), Error> {
    check_default_initialization_for_implementers(actor, feature)?;
    continue_init_state_chain(actor, feature)
}

/// Whether `feature` has reached `state` (false when the feature is unknown).
pub fn reached(actor: ActorId, feature: &str, state: &str) -> bool {
    has_feature_reached(actor, feature, state).unwrap_or(false)
}
