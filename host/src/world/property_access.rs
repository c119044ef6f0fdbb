//! Reading and writing component properties, and watching them, as World's methods: every write is checked
//! against the component's existence and its writer, counted against the writer's memory, and reported to
//! watchers and replication.

use super::*;

impl World {
    /// Reads a component property; `None` when the component exists but the property was never set.
    pub fn property(&self, actor: ActorId, component: &str, name: &str) -> Result<Option<&Value>, WorldError> {
        let actor_ref = self.actor(actor)?;
        let component_ref = actor_ref
            .component(component)
            .ok_or_else(|| WorldError::NoSuchComponent { actor, component: component.to_string() })?;
        Ok(component_ref.properties.get(name))
    }

    /// Writes a component property on behalf of a plugin, charging its bytes to the plugin (and crediting the
    /// plugin that wrote it before): refused when the plugin's properties would hold more than `budget` bytes.
    /// What a plugin wrote is removed with it ([`remove_owner`](Self::remove_owner)).
    pub fn set_property_by(
        &mut self,
        owner: OwnerId,
        budget: usize,
        actor: ActorId,
        component: &str,
        name: &str,
        value: Value,
    ) -> Result<(), WorldError> {
        let missing = || WorldError::NoSuchComponent { actor, component: component.to_string() };
        self.create_if_lazy(actor, component)?;
        let found = self.actor(actor)?.component(component).ok_or_else(missing)?;
        if found.replicated && self.actor(actor)?.role != NetRole::Authority {
            return Err(WorldError::Denied(format!(
                "the {component} of actor {actor} replicates from the server: only the authority writes it"
            )));
        }
        let previous = found.properties.get(name).map(|old| (written::charge_of(name, old), found.writers.get(name)));
        let (old_bytes, old_writer) = match previous {
            Some((bytes, writer)) => (bytes, writer.copied()),
            None => (0, None),
        };
        let bytes = written::charge_of(name, &value);
        // Saturating: the game (or a replica) may have replaced the plugin's value since, with a costlier one the
        // plugin was never charged for.
        let mine_before =
            self.written.bytes_of(owner).saturating_sub(if old_writer == Some(owner) { old_bytes } else { 0 });
        if mine_before + bytes > budget {
            return Err(WorldError::Denied(format!(
                "the plugin's properties would hold {} bytes of host memory, over its budget of {budget}",
                mine_before + bytes
            )));
        }
        let key = (actor, component.to_string(), name.to_string());
        if let Some(writer) = old_writer {
            self.written.credit(writer, &key, old_bytes);
        }
        self.written.charge(owner, key, bytes);
        let found = self.actor_mut(actor)?.component_mut(component).ok_or_else(missing)?;
        let old = found.properties.insert(name, value.clone());
        found.writers.insert(name, owner);
        self.property_changed(actor, component, name, old, Some(value));
        Ok(())
    }

    /// The bytes of host memory the properties a plugin wrote hold.
    pub fn property_bytes_of(&self, owner: OwnerId) -> usize {
        self.written.bytes_of(owner)
    }

    /// Removes the properties a plugin wrote that are still its own.
    pub(crate) fn remove_written_by(&mut self, owner: OwnerId) -> usize {
        let mut removed = 0;
        for (actor, component, name) in self.written.take_owner(owner) {
            let Ok(actor_ref) = self.actor_mut(actor) else { continue };
            let Some(found) = actor_ref.component_mut(&component) else { continue };
            if found.writers.get(&name) == Some(&owner) {
                found.writers.remove(&name);
                let old = found.properties.remove(&name);
                removed += 1;
                self.property_changed(actor, &component, &name, old, None);
            }
        }
        removed
    }

    /// Credits the writers of a component's properties when it goes.
    pub(super) fn forget_writes(&mut self, actor: ActorId, component: &Component) {
        for (name, writer) in &component.writers {
            if let Some(value) = component.properties.get(name) {
                let key = (actor, component.class.to_string(), name.to_string());
                self.written.credit(*writer, &key, written::charge_of(name, value));
            }
        }
    }

    /// Writes a component property as the host (the game's own code). The component must exist on the actor.
    pub fn set_property(
        &mut self,
        actor: ActorId,
        component: &str,
        name: &str,
        value: Value,
    ) -> Result<(), WorldError> {
        self.create_if_lazy(actor, component)?;
        let component_ref = self
            .actor_mut(actor)?
            .component_mut(component)
            .ok_or_else(|| WorldError::NoSuchComponent { actor, component: component.to_string() })?;
        let old = component_ref.properties.insert(name, value.clone());
        // The value is the host's now: the plugin that wrote the old one is credited its bytes.
        let writer = component_ref.writers.remove(name);
        if let (Some(writer), Some(old)) = (writer, &old) {
            let key = (actor, component.to_string(), name.to_string());
            self.written.credit(writer, &key, written::charge_of(name, old));
        }
        self.property_changed(actor, component, name, old, Some(value));
        Ok(())
    }

    /// A property changed: clients will hear of it (when it replicates), and the plugins watching it are told.
    pub(super) fn property_changed(
        &mut self,
        actor: ActorId,
        component: &str,
        name: &str,
        old: Option<Value>,
        new: Option<Value>,
    ) {
        self.touch_property(actor, component, name);
        if Value::identical(old.as_ref(), new.as_ref()) {
            return;
        }
        self.comings.changed(actor);
        for (watch, found) in self.manager.watches.of(actor, component, name) {
            let change = Box::new(ValueChange { old: old.clone(), new: new.clone() });
            self.manager.queue.push(Work::PropertyChanged {
                owner: found.owner,
                watch,
                number: found.number,
                actor,
                change,
            });
        }
    }

    /// Starts telling `owner` (as watch `number`) when a property of an actor's component changes, whether the
    /// component exists yet or not (see [`PropertyWatches`](crate::world::component_manager::PropertyWatches)).
    pub fn watch_property(
        &mut self,
        owner: OwnerId,
        actor: ActorId,
        component: &str,
        property: &str,
        number: u32,
    ) -> Result<crate::world::component_manager::WatchId, WorldError> {
        self.actor(actor)?;
        if !is_valid_class_name(component) {
            return Err(ClassError::InvalidName(component.to_string()).into());
        }
        Ok(self.manager.watches.add(owner, actor, component, property, number))
    }

    /// Stops a watch; unknown ids change nothing.
    pub fn unwatch_property(&mut self, watch: crate::world::component_manager::WatchId) {
        self.manager.watches.remove(watch);
    }

    /// Live property watches, for leak checks.
    pub fn live_watches(&self) -> usize {
        self.manager.watches.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::world::component_manager::{OwnerId, RequestFlags};
    use crate::world::{NetMode, Value, World};

    /// The game writing over a plugin's value takes it over: the plugin is credited what it was charged, and
    /// its next write is counted from there (it underflowed when the game's value cost more).
    #[test]
    fn a_value_the_game_writes_over_is_credited_to_the_plugin_that_wrote_it() {
        let mut world = World::new("w", NetMode::Standalone);
        let pawn = world.spawn("Character").unwrap();
        let plugin = OwnerId(7);
        let _request = world.add_component_request(plugin, "Character", "Tag", RequestFlags::default()).unwrap();
        world.set_property_by(plugin, 1 << 20, pawn, "Tag", "label", Value::Text(String::new())).unwrap();
        assert!(world.property_bytes_of(plugin) > 0);
        world.set_property(pawn, "Tag", "label", Value::Text("x".repeat(1000))).unwrap();
        assert_eq!(world.property_bytes_of(plugin), 0, "the value is the game's now");
        world.set_property_by(plugin, 1 << 20, pawn, "Tag", "label", Value::Integer(1)).unwrap();
        assert!(world.property_bytes_of(plugin) > 0);
    }
}
