//! `gamefeature:plugin/actors`: the plugin's world, through the same checks the host's own code goes through.

use super::MAX_TEXT_BYTES;
use crate::runtime::bindings::gamefeature::plugin::actors::Host;
use crate::runtime::bindings::types::{ActorId, Error, NetMode, Value};
use crate::runtime::state::InstanceState;
use crate::world::{self, World, WorldError};

impl InstanceState {
    /// Runs a query that cannot fail on the world.
    pub(crate) fn read_world<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        f(&mut world::lock(&self.env.world))
    }

    /// Runs one world operation that changes the world, counting it against the call's change cap and a
    /// refusal against the recoverable-error budget.
    pub(crate) fn world_op<T>(&mut self, f: impl FnOnce(&mut World) -> Result<T, WorldError>) -> Result<T, Error> {
        self.count_change()?;
        self.world_call(|w| f(w).map_err(Error::from))
    }

    /// Counts one world change against the call's cap; past it, the change is refused.
    pub(crate) fn count_change(&mut self) -> Result<(), Error> {
        self.changes = self.changes.saturating_add(1);
        if self.changes > self.change_cap {
            let message =
                format!("more than {} world changes in one call: the plugin is flooding the host", self.change_cap);
            return Err(self.refuse(Error::Denied(message)));
        }
        Ok(())
    }

    /// Whether the current call went past its change cap.
    pub(crate) fn flooded(&self) -> bool {
        self.changes > self.change_cap
    }

    /// Runs a fallible call on the world, counting refusals for the recoverable-error budget.
    pub(crate) fn world_call<T>(&mut self, f: impl FnOnce(&mut World) -> Result<T, Error>) -> Result<T, Error> {
        let result = f(&mut world::lock(&self.env.world));
        result.map_err(|error| self.refuse(error))
    }
}

fn actor(id: ActorId) -> world::ActorId {
    world::ActorId::from_raw(id)
}

impl Host for InstanceState {
    fn current_net_mode(&mut self) -> NetMode {
        self.env.net_mode.into()
    }

    fn world_name(&mut self) -> String {
        self.env.world_name.to_string()
    }

    fn actor_class(&mut self, id: ActorId) -> Result<String, Error> {
        self.world_call(|w| Ok(w.actor(actor(id))?.class.clone()))
    }

    fn is_a(&mut self, id: ActorId, class: String) -> Result<bool, Error> {
        self.world_call(|w| Ok(w.is_a(actor(id), &class)?))
    }

    fn actors_of_class(&mut self, class: String) -> Result<Vec<ActorId>, Error> {
        self.world_call(|w| Ok(w.actors_of_class(&class)?.into_iter().map(world::ActorId::to_raw).collect()))
    }

    fn has_authority(&mut self, id: ActorId) -> Result<bool, Error> {
        self.world_call(|w| Ok(w.has_authority(actor(id))?))
    }

    fn components_of(&mut self, id: ActorId) -> Result<Vec<String>, Error> {
        self.world_call(|w| Ok(w.actor(actor(id))?.components.iter().map(|c| c.class.clone()).collect()))
    }

    fn get_property(&mut self, id: ActorId, component: String, name: String) -> Result<Option<Value>, Error> {
        self.world_call(|w| Ok(w.property(actor(id), &component, &name)?.cloned().map(Value::from)))
    }

    fn set_property(&mut self, id: ActorId, component: String, name: String, value: Value) -> Result<(), Error> {
        self.check_name("property name", &name)?;
        if let Value::Text(text) = &value {
            self.check_size("text value", text.len(), MAX_TEXT_BYTES)?;
        }
        self.count_change()?;
        self.world_call(|w| Ok(w.set_property(actor(id), &component, &name, value.into())?))
    }

    fn spawn_actor(&mut self, class: String, receiver: bool) -> Result<ActorId, Error> {
        self.check_name("class", &class)?;
        self.require(self.env.permissions.spawn_actors, "spawn-actors")?;
        self.count_change()?;
        let owner = self.env.owner;
        self.world_call(|w| Ok(w.spawn_actor(&class, Some(owner), receiver)?.to_raw()))
    }

    fn destroy_actor(&mut self, id: ActorId) -> Result<(), Error> {
        self.require(self.env.permissions.spawn_actors, "spawn-actors")?;
        self.count_change()?;
        let owner = self.env.owner;
        self.world_call(|w| {
            if w.actor(actor(id))?.spawned_by != Some(owner) {
                return Err(Error::Denied(format!("actor {} was not spawned by this plugin", actor(id))));
            }
            Ok(w.destroy(actor(id))?)
        })
    }
}
