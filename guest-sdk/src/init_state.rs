//! The init-state system: features of an actor moving through one ordered list of states.
//!
//! Implement [`Plugin::can_change_init_state`](crate::Plugin::can_change_init_state) and
//! [`Plugin::handle_change_init_state`](crate::Plugin::handle_change_init_state) for the features you register;
//! the host walks their chains when you call [`continue_chain`], after your current call returns.

use std::cell::OnceCell;

use crate::bindings::gamefeature::plugin::init_states as host;
pub use crate::bindings::gamefeature::plugin::init_states::{
    check_default_initialization_for_implementers, continue_init_state_chain, states, subscribe_actor, subscribe_class,
    Subscription,
};
use crate::names::same;
use crate::world::ActorId;
use crate::{deferred, facts};
use crate::{Error, Value};

/// Lyra's init states, the host's default order.
pub const SPAWNED: &str = "InitState.Spawned";
pub const DATA_AVAILABLE: &str = "InitState.DataAvailable";
pub const DATA_INITIALIZED: &str = "InitState.DataInitialized";
pub const GAMEPLAY_READY: &str = "InitState.GameplayReady";

thread_local! {
    // Kept for the instance's lifetime (the world's states never change), so naming a state allocates nothing.
    static STATES: OnceCell<&'static [String]> = const { OnceCell::new() };
}

pub(crate) fn known_states() -> &'static [String] {
    STATES.with(|cell| *cell.get_or_init(|| Box::leak(states().into_boxed_slice())))
}

/// The name of a state ordinal as the host sends it (0: none).
pub(crate) fn state_name(ordinal: u8) -> Option<&'static str> {
    name_among(known_states(), ordinal)
}

/// [`state_name`] among `states` (the [`known_states`]), for callers naming many ordinals: the states are
/// looked up once.
pub(crate) fn name_among(states: &'static [String], ordinal: u8) -> Option<&'static str> {
    let index = (ordinal as usize).checked_sub(1)?;
    states.get(index).map(String::as_str)
}

/// The ordinal of a state name (`None` for a name that is not a state).
fn state_ordinal(name: &str) -> Option<u8> {
    known_states().iter().position(|s| same(s, name)).map(|i| i as u8 + 1)
}

/// The feature's current state; `None` before its first change. Answered from the current batch's facts when
/// they cover it (see [`add_chain_read`]).
pub fn feature_state(actor: ActorId, feature: &str) -> Result<Option<String>, Error> {
    match facts::feature_state(actor, feature) {
        Some(ordinal) => Ok(state_name(ordinal).map(str::to_string)),
        None => host::feature_state(actor, feature),
    }
}

/// Whether the feature's state is `state` or later.
pub fn has_feature_reached(actor: ActorId, feature: &str, state: &str) -> Result<bool, Error> {
    match (facts::feature_state(actor, feature), state_ordinal(state)) {
        (Some(current), Some(wanted)) => Ok(current >= wanted),
        _ => host::has_feature_reached(actor, feature, state),
    }
}

/// Whether every feature of the actor, except `excluding`, has reached `state`.
pub fn have_all_features_reached(actor: ActorId, state: &str, excluding: Option<&str>) -> Result<bool, Error> {
    let known = state_ordinal(state).and_then(|wanted| facts::all_reached(actor, wanted, excluding));
    match known {
        Some(all) => Ok(all),
        None => host::have_all_features_reached(actor, state, excluding),
    }
}

/// Registers `feature` on `actor`, implemented by this plugin's `implementer` component.
pub fn register_feature(actor: ActorId, feature: &str, implementer: &str) -> Result<(), Error> {
    facts::forget();
    host::register_feature(actor, feature, implementer)
}

/// Removes a feature this plugin registered.
pub fn unregister_feature(actor: ActorId, feature: &str) -> Result<(), Error> {
    facts::forget();
    host::unregister_feature(actor, feature)
}

/// Sets a feature's state directly (no order enforced).
pub fn change_feature_state(actor: ActorId, feature: &str, state: &str) -> Result<(), Error> {
    facts::forget();
    host::change_feature_state(actor, feature, state)
}

/// Asks the host to send property `property` of `component` of each actor with every chain-step question about
/// `feature` (about every feature when `None`), so that [`world::get_property`](crate::world::get_property) on
/// an actor being asked about needs no host call while
/// [`Plugin::can_change_init_state`](crate::Plugin::can_change_init_state) answers. Call it once, when
/// activating, for each property the decisions read (at most 16), naming the feature whose decisions read it:
/// the host then reads and sends it only with that feature's steps.
pub fn add_chain_read(feature: Option<&str>, component: &str, property: &str) -> Result<(), Error> {
    ChainRead::new(feature, component, property).map(drop)
}

/// A property the host sends with chain-step questions (see [`add_chain_read`]), read by handle: a decision
/// reading it compares no names, where [`world::get_property`](crate::world::get_property) finds the read by
/// its component's and property's names each time.
#[derive(Debug, Clone)]
pub struct ChainRead {
    /// Its index among the reads asked for.
    index: usize,
    component: String,
    property: String,
}

impl ChainRead {
    /// Asks for the read, as [`add_chain_read`] does (once: asking again for the same one is its handle again).
    pub fn new(feature: Option<&str>, component: &str, property: &str) -> Result<ChainRead, Error> {
        let index = match facts::find_read(feature, component, property) {
            Some(index) => index,
            None => {
                host::add_chain_read(feature, component, property)?;
                facts::add_read(feature, component, property).0
            }
        };
        Ok(ChainRead { index, component: component.to_string(), property: property.to_string() })
    }

    /// The property of `actor`, as [`world::get_property`](crate::world::get_property) returns it: from the
    /// facts while a chain-step question about the actor's feature brought it, else from the host.
    pub fn get(&self, actor: ActorId) -> Result<Option<Value>, Error> {
        match facts::read_of(actor, self.index) {
            Some(read) => read,
            None => crate::bindings::gamefeature::plugin::actors::get_property(actor, &self.component, &self.property),
        }
    }
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

/// [`register_feature`], sent with one host call for every registration deferred when the current callback
/// returns, before the deferred walks (which may then walk the features registered). A refusal is logged as a
/// warning, not returned. For a callback setting up a batch of actors: each of their components registers its
/// feature, as Unreal's components do in `OnRegister`, at the cost of one host call for all of them.
pub fn defer_register_feature(actor: ActorId, feature: &str, implementer: &str) {
    deferred::register(actor, feature, implementer);
}

/// [`continue_chain`], sent with one host call for everything deferred when the current callback returns.
/// The walk runs after the callback either way, so deferring changes only when it is queued (after what the
/// callback queued itself) and how a refusal is told: logged as a warning, not returned. Cheaper when a
/// callback handling a batch continues many chains.
pub fn defer_continue_chain(actor: ActorId, feature: &str) {
    defer(actor, feature, host::ChainWork::ContinueChain);
}

/// [`check_default_initialization`], deferred as [`defer_continue_chain`] is.
pub fn defer_check_default_initialization(actor: ActorId, feature: &str) {
    defer(actor, feature, host::ChainWork::CheckOthersThenContinue);
}

fn defer(actor: ActorId, feature: &str, work: host::ChainWork) {
    deferred::walk(actor, feature, work);
}

/// Whether `feature` has reached `state` (false when the feature is unknown).
pub fn reached(actor: ActorId, feature: &str, state: &str) -> bool {
    has_feature_reached(actor, feature, state).unwrap_or(false)
}
