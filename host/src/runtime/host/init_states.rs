//! `gamefeature:plugin/init-states`: the init-state system, with subscriptions as resources owned by the calling
//! instance. State names cross the boundary as strings; the world keeps ordinals.

use wasmtime::component::Resource;

use crate::component::SubscriptionId;
use crate::runtime::bindings::gamefeature::plugin::init_states::{Host, HostSubscription};
use crate::runtime::bindings::types::{ActorId, Error};
use crate::runtime::state::InstanceState;
use crate::world::{self, ActorId as Actor, World, WorldError};

/// A subscription held by a plugin; dropping it stops the notifications.
pub struct SubscriptionResource(SubscriptionId);

fn state_of(world: &World, state: &Option<String>) -> Result<Option<u8>, WorldError> {
    state.as_deref().map(|s| world.state_ordinal(s)).transpose()
}

impl Host for InstanceState {
    fn states(&mut self) -> Vec<String> {
        self.read_world(|w| w.init_states().into_iter().map(str::to_string).collect())
    }

    fn register_feature(&mut self, actor: ActorId, feature: String, implementer: String) -> Result<(), Error> {
        self.check_name("feature name", &feature)?;
        self.check_name("implementer class", &implementer)?;
        let owner = self.env.owner;
        self.world_op(|w| w.register_feature(owner, Actor::from_raw(actor), &feature, &implementer))
    }

    fn unregister_feature(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        let owner = self.env.owner;
        self.world_op(|w| w.unregister_feature(owner, Actor::from_raw(actor), &feature))
    }

    fn feature_state(&mut self, actor: ActorId, feature: String) -> Result<Option<String>, Error> {
        self.world_call(|w| {
            let state = w.feature_state(Actor::from_raw(actor), &feature)?;
            Ok(w.state_text(state).map(str::to_string))
        })
    }

    fn has_feature_reached(&mut self, actor: ActorId, feature: String, state: String) -> Result<bool, Error> {
        self.world_call(|w| {
            let wanted = w.state_ordinal(&state)?;
            Ok(w.feature_state(Actor::from_raw(actor), &feature)? >= wanted)
        })
    }

    fn have_all_features_reached(
        &mut self,
        actor: ActorId,
        state: String,
        excluding: Option<String>,
    ) -> Result<bool, Error> {
        self.world_call(|w| {
            let wanted = w.state_ordinal(&state)?;
            Ok(w.have_all_features_reached(Actor::from_raw(actor), wanted, excluding.as_deref()))
        })
    }

    fn change_feature_state(&mut self, actor: ActorId, feature: String, state: String) -> Result<(), Error> {
        self.world_call(|w| {
            let ordinal = w.state_ordinal(&state)?;
            Ok(w.change_feature_state(Actor::from_raw(actor), &feature, ordinal)?)
        })
    }

    fn subscribe_actor(
        &mut self,
        actor: ActorId,
        feature: Option<String>,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        if let Some(feature) = &feature {
            self.check_name("feature name", feature)?;
        }
        self.reserve_handle()?;
        let owner = self.env.owner;
        let subscription = self.world_op(|w| {
            let state = state_of(w, &state)?;
            w.subscribe_actor(owner, Actor::from_raw(actor), feature.as_deref(), state, call_if_reached, id)
        })?;
        self.push_handle(SubscriptionResource(subscription), |w| w.unsubscribe(subscription))
    }

    fn subscribe_class(
        &mut self,
        class: String,
        feature: String,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        self.check_name("class", &class)?;
        self.check_name("feature name", &feature)?;
        self.reserve_handle()?;
        let owner = self.env.owner;
        let subscription = self.world_op(|w| {
            let state = state_of(w, &state)?;
            w.subscribe_class(owner, &class, &feature, state, call_if_reached, id)
        })?;
        self.push_handle(SubscriptionResource(subscription), |w| w.unsubscribe(subscription))
    }

    fn continue_init_state_chain(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        self.world_op(|w| w.continue_init_state_chain(Actor::from_raw(actor), &feature))
    }

    fn check_default_initialization_for_implementers(&mut self, actor: ActorId, except: String) -> Result<(), Error> {
        self.world_op(|w| w.check_default_initialization_for_implementers(Actor::from_raw(actor), &except))
    }
}

impl HostSubscription for InstanceState {
    fn drop(&mut self, subscription: Resource<SubscriptionResource>) -> wasmtime::Result<()> {
        let SubscriptionResource(id) = self.take_handle(subscription)?;
        world::lock(&self.env.world).unsubscribe(id);
        Ok(())
    }
}
