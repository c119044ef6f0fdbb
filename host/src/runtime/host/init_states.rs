//! `gamefeature:plugin/init-states`: the init-state system, with subscriptions as resources owned by the calling
//! instance. State names cross the boundary as strings; the world keeps ordinals. Only a feature's implementer
//! changes its state.

use wasmtime::component::Resource;

use super::Call;
use crate::runtime::bindings::gamefeature::plugin::init_states::{ChainWork, Host, HostSubscription};
use crate::runtime::bindings::types::{ActorId, Error};
use crate::runtime::resources::SubscriptionResource;
use crate::runtime::state::InstanceState;
use crate::world::{ActorId as Actor, World, WorldError};

fn state_of(world: &World, state: &Option<String>) -> Result<Option<u8>, WorldError> {
    state.as_deref().map(|s| world.state_ordinal(s)).transpose()
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
            Call::change_of(actor).names(&[("feature name", &feature), ("implementer class", &implementer)]),
            |w, caller| Ok(w.register_feature(caller.owner, Actor::from_raw(actor), &feature, &implementer)?),
        )
    }

    fn unregister_feature(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        self.guard(Call::change_of(actor).names(&[("feature name", &feature)]), |w, caller| {
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
        self.guard(Call::change_of(actor).names(&[("feature name", &feature), ("state", &state)]), |w, caller| {
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
        let subscription = self.guard(Call::new_handle_of(actor).names(&names), |w, caller| {
            let state = state_of(w, &state)?;
            Ok(w.subscribe_actor(caller.owner, Actor::from_raw(actor), feature.as_deref(), state, call_if_reached, id)?)
        })?;
        self.push_handle(SubscriptionResource { id: subscription, number: id }, |w| w.unsubscribe(subscription))
    }

    fn subscribe_class(
        &mut self,
        class: String,
        feature: Option<String>,
        state: Option<String>,
        call_if_reached: bool,
        id: u32,
    ) -> Result<Resource<SubscriptionResource>, Error> {
        let names = [
            ("class", class.as_str()),
            ("feature name", feature.as_deref().unwrap_or_default()),
            ("state", state.as_deref().unwrap_or_default()),
        ];
        let subscription = self.guard(Call::new_handle_of_world().names(&names), |w, caller| {
            let state = state_of(w, &state)?;
            Ok(w.subscribe_class(caller.owner, &class, feature.as_deref(), state, call_if_reached, id)?)
        })?;
        self.push_handle(SubscriptionResource { id: subscription, number: id }, |w| w.unsubscribe(subscription))
    }

    fn continue_init_state_chain(&mut self, actor: ActorId, feature: String) -> Result<(), Error> {
        self.guard(Call::change_of(actor).names(&[("feature name", &feature)]), |w, _| {
            Ok(w.continue_init_state_chain(Actor::from_raw(actor), &feature)?)
        })
    }

    fn queue_chain_requests(
        &mut self,
        actors: Vec<u64>,
        features: Vec<u32>,
        works: Vec<ChainWork>,
        names: Vec<String>,
    ) -> Vec<(u32, Error)> {
        let lists = [("actors", actors.len()), ("features", features.len()), ("works", works.len())];
        let mut known = super::KnownNames::of(&names);
        self.run_batch(
            &lists,
            &names,
            "feature name",
            |i| changes_of(works[i]),
            |i| actors[i],
            |w, _, i, named| {
                let text = named.get(features[i])?;
                let feature = known.get(w, features[i], text);
                let others_first = works[i] == ChainWork::CheckOthersThenContinue;
                Ok(w.queue_named_chain_request(Actor::from_raw(actors[i]), feature, text, others_first)?)
            },
        )
    }

    fn register_features(
        &mut self,
        actors: Vec<u64>,
        features: Vec<u32>,
        implementers: Vec<u32>,
        names: Vec<String>,
    ) -> Vec<(u32, Error)> {
        let lists = [("actors", actors.len()), ("features", features.len()), ("implementers", implementers.len())];
        let mut known = super::KnownNames::of(&names);
        self.run_batch(
            &lists,
            &names,
            "name",
            |_| 1,
            |i| actors[i],
            |w, owner, i, named| {
                let (feature, implementer) = (named.get(features[i])?, named.get(implementers[i])?);
                let feature = (known.get(w, features[i], feature), feature);
                let implementer = (known.get(w, implementers[i], implementer), implementer);
                Ok(w.register_named_feature(owner, Actor::from_raw(actors[i]), feature, implementer)?)
            },
        )
    }

    fn add_chain_read(&mut self, feature: Option<String>, component: String, property: String) -> Result<(), Error> {
        let names = [
            ("feature name", feature.as_deref().unwrap_or_default()),
            ("component class", &component),
            ("property name", &property),
        ];
        self.guard(Call::change_of_world().names(&names), |w, caller| {
            Ok(w.add_chain_read(caller.owner, feature.as_deref(), &component, &property)?)
        })
    }

    fn check_default_initialization_for_implementers(&mut self, actor: ActorId, except: String) -> Result<(), Error> {
        self.guard(Call::change_of(actor).names(&[("feature name", &except)]), |w, _| {
            Ok(w.check_default_initialization_for_implementers(Actor::from_raw(actor), &except)?)
        })
    }
}

impl HostSubscription for InstanceState {
    fn id(&mut self, subscription: Resource<SubscriptionResource>) -> u32 {
        // The canonical ABI only lets a live handle of this instance through.
        self.table.get(&subscription).map(|r| r.number).unwrap_or_default()
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
