//! `gamefeature:plugin/init-states`: the init-state system, with subscriptions as resources owned by the calling
//! instance. State names cross the boundary as strings; the world keeps ordinals. Only a feature's implementer
//! changes its state.

use wasmtime::component::Resource;

use super::Call;
use crate::component::SubscriptionId;
use crate::runtime::bindings::gamefeature::plugin::init_states::{ChainRequest, ChainWork, Host, HostSubscription};
use crate::runtime::bindings::types::{ActorId, Error};
use crate::runtime::state::InstanceState;
use crate::world::{ActorId as Actor, World, WorldError};

/// A subscription held by a plugin; dropping it stops the notifications.
pub struct SubscriptionResource {
    id: SubscriptionId,
    tag: u32,
}

fn state_of(world: &World, state: &Option<String>) -> Result<Option<u8>, WorldError> {
    state.as_deref().map(|s| world.state_ordinal(s)).transpose()
}

/// Queues what one `queue-chain-requests` entry stands for, or nothing when it is refused.
fn queue_one_chain_request(w: &mut World, actor: Actor, feature: &str, work: ChainWork) -> Result<(), WorldError> {
    if work == ChainWork::CheckOthersThenContinue {
        // The feature must be there before the others are asked to move, so a refused entry queues nothing.
        w.feature_state(actor, feature)?;
        w.check_default_initialization_for_implementers(actor, feature)?;
    }
    w.continue_init_state_chain(actor, feature)
}

/// The changes an entry counts for: the calls it stands for.
fn changes_of(work: ChainWork) -> u32 {
    match work {
        ChainWork::ContinueChain => 1,
        ChainWork::CheckOthersThenContinue => 2,
    }
}

impl Host for InstanceState {
    fn states(&mut self) -> Vec<String> {
        self.guard(Call::query(), |w, _| Ok(w.init_states().into_iter().map(str::to_string).collect()))
            .unwrap_or_default()
    }

    fn register_feature(&mut self, actor: ActorId, feature: String, implementer: String) -> Result<(), Error> {
        self.guard(
            Call::change().names(&[("feature name", &feature), ("implementer class", &implementer)]),
            |w, caller| Ok(w.register_feature(caller.owner, Actor::from_raw(actor), &feature, &implementer)?),
        )
    }

    fn unregister_feature(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        self.guard(Call::change().names(&[("feature name", &feature)]), |w, caller| {
            Ok(w.unregister_feature(caller.owner, Actor::from_raw(actor), &feature)?)
        })
    }

    fn feature_state(&mut self, actor: ActorId, feature: String) -> Result<Option<String>, Error> {
        self.guard(Call::query().names(&[("feature name", &feature)]), |w, _| {
            let state = w.feature_state(Actor::from_raw(actor), &feature)?;
            Ok(w.state_text(state).map(str::to_string))
        })
    }

    fn has_feature_reached(&mut self, actor: ActorId, feature: String, state: String) -> Result<bool, Error> {
        self.guard(Call::query().names(&[("feature name", &feature), ("state", &state)]), |w, _| {
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
        let excluded = excluding.as_deref().unwrap_or_default();
        self.guard(Call::query().names(&[("state", &state), ("feature name", excluded)]), |w, _| {
            let wanted = w.state_ordinal(&state)?;
            Ok(w.have_all_features_reached(Actor::from_raw(actor), wanted, excluding.as_deref()))
        })
    }

    fn change_feature_state(&mut self, actor: ActorId, feature: String, state: String) -> Result<(), Error> {
        self.guard(Call::change().names(&[("feature name", &feature), ("state", &state)]), |w, caller| {
            let actor = Actor::from_raw(actor);
            if w.feature_implementer(actor, &feature)? != caller.owner {
                return Err(Error::Denied(format!(
                    "feature {feature:?} of actor {actor} is implemented by {}; only its implementer changes its state",
                    w.owner_label(w.feature_implementer(actor, &feature)?)
                )));
            }
            let ordinal = w.state_ordinal(&state)?;
            Ok(w.change_feature_state(actor, &feature, ordinal)?)
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
        let names =
            [("feature name", feature.as_deref().unwrap_or_default()), ("state", state.as_deref().unwrap_or_default())];
        let subscription = self.guard(Call::new_handle().names(&names), |w, caller| {
            let state = state_of(w, &state)?;
            Ok(w.subscribe_actor(caller.owner, Actor::from_raw(actor), feature.as_deref(), state, call_if_reached, id)?)
        })?;
        self.push_handle(SubscriptionResource { id: subscription, tag: id }, |w| w.unsubscribe(subscription))
    }

    fn subscribe_class(
        &mut self,
        class: String,
        feature: String,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        let names =
            [("class", class.as_str()), ("feature name", &feature), ("state", state.as_deref().unwrap_or_default())];
        let subscription = self.guard(Call::new_handle().names(&names), |w, caller| {
            let state = state_of(w, &state)?;
            Ok(w.subscribe_class(caller.owner, &class, &feature, state, call_if_reached, id)?)
        })?;
        self.push_handle(SubscriptionResource { id: subscription, tag: id }, |w| w.unsubscribe(subscription))
    }

    fn continue_init_state_chain(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        self.guard(Call::change().names(&[("feature name", &feature)]), |w, _| {
            Ok(w.continue_init_state_chain(Actor::from_raw(actor), &feature)?)
        })
    }

    fn queue_chain_requests(&mut self, requests: Vec<ChainRequest>, names: Vec<String>) -> Vec<(u32, Error)> {
        // Each entry passes `guard`'s checks for a change (its name, the change budget, counted as the calls it
        // stands for) and is refused as its own call would be; each name is checked once, and the world's lock
        // is taken once for all of them. Past the change budget the rest are refused with the same error,
        // without further work.
        let name_problems: Vec<Option<Error>> =
            names.iter().map(|name| super::name_problem("feature name", name)).collect();
        let world = self.env.world.clone();
        let owner = self.env.owner;
        let mut refused = Vec::new();
        crate::world::lock(&world).acting_as(owner, |w| {
            for (index, request) in requests.iter().enumerate() {
                let counted = (0..changes_of(request.work)).try_for_each(|_| self.count_change());
                if let Err(flooded) = counted {
                    refused.extend((index..requests.len()).map(|i| (i as u32, flooded.clone())));
                    break;
                }
                let named = request.feature as usize;
                let problem = match name_problems.get(named) {
                    Some(Some(problem)) => Some(problem.clone()),
                    Some(None) => {
                        queue_one_chain_request(w, Actor::from_raw(request.actor), &names[named], request.work)
                            .err()
                            .map(Error::from)
                    }
                    None => Some(Error::Invalid(format!(
                        "chain request {index} names feature {named}, but only {} names were sent",
                        names.len()
                    ))),
                };
                if let Some(problem) = problem {
                    refused.push((index as u32, self.refuse(problem)));
                }
            }
        });
        refused
    }

    fn add_chain_read(&mut self, component: String, property: String) -> Result<(), Error> {
        self.guard(
            Call::change().names(&[("component class", &component), ("property name", &property)]),
            |w, caller| Ok(w.add_chain_read(caller.owner, &component, &property)?),
        )
    }

    fn check_default_initialization_for_implementers(&mut self, actor: ActorId, except: String) -> Result<(), Error> {
        self.guard(Call::change().names(&[("feature name", &except)]), |w, _| {
            Ok(w.check_default_initialization_for_implementers(Actor::from_raw(actor), &except)?)
        })
    }
}

impl HostSubscription for InstanceState {
    fn id(&mut self, subscription: Resource<SubscriptionResource>) -> u32 {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&subscription).map(|r| r.tag).unwrap_or_default()
    }

    fn drop(&mut self, subscription: Resource<SubscriptionResource>) -> wasmtime::Result<()> {
        let SubscriptionResource { id, .. } = self.take_handle(subscription)?;
        let _ = self.guard(Call::release(), |w, _| {
            w.unsubscribe(id);
            Ok(())
        });
        Ok(())
    }
}
