//! `gamefeature:plugin/actors`: the plugin's world, through the same checks the host's own code goes through,
//! plus ownership: a plugin writes the properties of components its requests added (others' need the
//! `write-properties` permission) and destroys only actors it spawned. Relevancy (whom a server replicates an
//! actor to, the groups a player is in) decides what players see: it needs the `relevancy` permission.

use super::{Call, Caller};
use crate::runtime::bindings::gamefeature::plugin::actors::{Host, Relevancy};
use crate::runtime::bindings::types::{ActorId, Error, NetMode, NetRole, Value};
use crate::runtime::state::InstanceState;
use crate::world::{self, World};

fn actor(id: ActorId) -> world::ActorId {
    world::ActorId::from_raw(id)
}

/// Refuses to let `caller` act on an actor it did not spawn.
pub(super) fn spawned_by_caller(w: &World, caller: &Caller, id: ActorId) -> Result<(), Error> {
    if w.actor(actor(id))?.spawned_by != Some(caller.owner) {
        return Err(Error::Denied(format!("actor {} was not spawned by this plugin", actor(id))));
    }
    Ok(())
}

impl Host for InstanceState {
    fn current_net_mode(&mut self) -> NetMode {
        self.env.net_mode.into()
    }

    fn world_name(&mut self) -> String {
        self.env.world_name.to_string()
    }

    fn actor_class(&mut self, id: ActorId) -> Result<String, Error> {
        self.guard(Call::query(), |w, _| Ok(w.actor(actor(id))?.class().to_string()))
    }

    fn is_a(&mut self, id: ActorId, class: String) -> Result<bool, Error> {
        self.guard(Call::query().names(&[("class", &class)]), |w, _| Ok(w.is_a(actor(id), &class)?))
    }

    fn actors_of_class(&mut self, class: String) -> Result<Vec<ActorId>, Error> {
        self.guard(Call::query().names(&[("class", &class)]), |w, _| {
            Ok(w.actors_of_class(&class)?.into_iter().map(world::ActorId::to_raw).collect())
        })
    }

    fn has_authority(&mut self, id: ActorId) -> Result<bool, Error> {
        self.guard(Call::query(), |w, _| Ok(w.has_authority(actor(id))?))
    }

    fn local_role(&mut self, id: ActorId) -> Result<NetRole, Error> {
        self.guard(Call::query(), |w, _| Ok(w.actor(actor(id))?.role.into()))
    }

    fn is_locally_controlled(&mut self, id: ActorId) -> Result<bool, Error> {
        self.guard(Call::query(), |w, _| Ok(w.is_locally_controlled(actor(id))?))
    }

    fn components_of(&mut self, id: ActorId) -> Result<Vec<String>, Error> {
        self.guard(Call::query(), |w, _| {
            Ok(w.actor(actor(id))?.components.iter().map(|c| c.class.to_string()).collect())
        })
    }

    fn get_property(&mut self, id: ActorId, component: String, name: String) -> Result<Option<Value>, Error> {
        self.guard(Call::query().names(&[("component class", &component), ("property name", &name)]), |w, _| {
            Ok(w.property(actor(id), &component, &name)?.cloned().map(Value::from))
        })
    }

    fn set_property(&mut self, id: ActorId, component: String, name: String, value: Value) -> Result<(), Error> {
        let text = if let Value::Text(text) = &value { text.len() } else { 0 };
        let limit = self.env.permissions_limited_by.clone();
        self.guard(
            Call::change_of(id).names(&[("component class", &component), ("property name", &name)]).text(text),
            |w, caller| {
                // Writing a lazy component's property is its first use: it is created, then written.
                w.create_if_lazy(actor(id), &component)?;
                let owned = w.owns_component(caller.owner, actor(id), &component)?;
                if !owned && !caller.permissions.may_write_properties_of(&component) {
                    let allowed_by = limit.map(|limit| format!(", declared, granted and allowed by {limit}"));
                    return Err(Error::Denied(format!(
                        "the {component} of actor {} was not added by this plugin's requests; writing its properties \
                     needs the write-properties permission for {component}{}",
                        actor(id),
                        allowed_by.unwrap_or_default()
                    )));
                }
                Ok(w.set_property_by(caller.owner, caller.host_memory, actor(id), &component, &name, value.into())?)
            },
        )
    }

    fn spawn_actor(&mut self, class: String, receiver: bool) -> Result<ActorId, Error> {
        self.guard(
            Call::change_of_world()
                .names(&[("class", &class)])
                .permission("spawn-actors", self.env.permissions.spawn_actors),
            |w, caller| Ok(w.spawn_actor(&class, Some(caller.owner), receiver)?.to_raw()),
        )
    }

    fn destroy_actor(&mut self, id: ActorId) -> Result<(), Error> {
        self.guard(Call::change_of(id).permission("spawn-actors", self.env.permissions.spawn_actors), |w, caller| {
            spawned_by_caller(w, caller, id)?;
            Ok(w.destroy(actor(id))?)
        })
    }

    fn set_relevancy(&mut self, id: ActorId, relevancy: Relevancy) -> Result<(), Error> {
        let groups = match &relevancy {
            Relevancy::Groups(groups) => self.group_names(groups)?,
            Relevancy::Always | Relevancy::OwnerOnly => Vec::new(),
        };
        let call = Call::change_of(id).names(&groups).permission("relevancy", self.env.permissions.relevancy);
        self.guard(call, |w, _| {
            let relevancy = match &relevancy {
                Relevancy::Always => world::Relevancy::Always,
                Relevancy::OwnerOnly => world::Relevancy::OwnerOnly,
                Relevancy::Groups(groups) => {
                    world::Relevancy::Groups(world::check_groups(groups.iter().map(String::as_str))?)
                }
            };
            Ok(w.set_relevancy(actor(id), relevancy)?)
        })
    }

    fn set_player_groups(&mut self, player: ActorId, groups: Vec<String>) -> Result<(), Error> {
        let names = self.group_names(&groups)?;
        let call = Call::change_of(player).names(&names).permission("relevancy", self.env.permissions.relevancy);
        self.guard(call, |w, _| {
            let groups = world::check_groups(groups.iter().map(String::as_str))?;
            Ok(w.set_player_groups(actor(player), groups)?)
        })
    }
}

impl InstanceState {
    /// A list of relevancy groups as names for [`Call::names`] to check; a list longer than an actor or player
    /// may be in is refused before its names are looked at.
    fn group_names<'a>(&mut self, groups: &'a [String]) -> Result<Vec<(&'static str, &'a str)>, Error> {
        if groups.len() > world::MAX_GROUPS {
            let message = format!("{} relevancy groups, more than the {} allowed", groups.len(), world::MAX_GROUPS);
            return Err(self.refuse(Error::Invalid(message)));
        }
        Ok(groups.iter().map(|group| ("relevancy group", group.as_str())).collect())
    }
}
