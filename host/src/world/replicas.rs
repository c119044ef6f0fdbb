//! What replicates, and a client's replicas, as World's methods: declarations, the journal of what a server
//! touched, and the components and values a client receives.

use super::*;

impl World {
    /// Declares a replicated component class and replicated properties of it (see [`ReplicatedClasses`]).
    pub fn declare_replicated(
        &mut self,
        class: &str,
        properties: impl IntoIterator<Item = impl AsRef<str> + Into<String>>,
    ) {
        self.replicated.declare(class, properties);
    }

    /// Takes back what a plugin's manifest declared: its component classes, creation policies and replicated
    /// classes.
    pub(crate) fn remove_declarations_of(&mut self, owner: OwnerId) {
        self.creation.remove_owner(owner);
        self.replicated.remove_owner(owner);
    }

    /// A plugin's replicated classes (its manifest), taken back when it leaves.
    pub fn declare_replicated_by(&mut self, owner: OwnerId, class: &str, properties: &[String]) {
        self.replicated.declare_by(owner, class, properties);
    }

    /// The component classes that replicate in this world, with their replicated properties.
    pub fn replicated_classes(&self) -> &ReplicatedClasses {
        &self.replicated
    }

    /// Starts noting what this (server) world touches that clients may need to hear about.
    pub fn start_journal(&mut self) {
        self.journal.get_or_insert_with(Vec::new);
    }

    /// What was touched since the last call.
    pub fn take_journal(&mut self) -> Vec<Touched> {
        self.journal.as_mut().map(std::mem::take).unwrap_or_default()
    }

    pub(super) fn touch(&mut self, touched: impl FnOnce() -> Touched) {
        if let Some(journal) = &mut self.journal {
            journal.push(touched());
        }
    }

    pub(super) fn touch_property(&mut self, actor: ActorId, component: &str, name: &str) {
        if self.journal.is_some() && self.replicated.replicates(component, name) {
            self.touch(|| Touched::Property(actor, component.into(), name.into()));
        }
    }

    /// The shared name of a component class.
    pub(crate) fn component_class(&mut self, class: &str) -> ClassName {
        if let Some(name) = self.component_classes.get(class) {
            return name.clone();
        }
        let name: ClassName = class.into();
        self.component_classes.insert(name.clone());
        name
    }

    /// Forgets an interned component class name nothing else holds (no component, request or chain read), so
    /// that names plugins make up and drop do not pile up.
    pub(crate) fn release_component_class(&mut self, name: ClassName) {
        // Held by the set and by `name`: by nothing else.
        if Arc::strong_count(&name) == 2 {
            self.component_classes.remove(&*name);
        }
    }

    /// Reads a component property, the component named by its shared name (see
    /// [`component_class`](Self::component_class)); as [`property`](Self::property).
    pub(crate) fn property_of(
        &self,
        actor: ActorId,
        component: &ClassName,
        name: &str,
    ) -> Result<Option<&Value>, WorldError> {
        // The interned name matches by pointer, without reading its text.
        let found = self.actor(actor)?.components.iter().find(|c| same_name(&c.class, component));
        let found = found.ok_or_else(|| WorldError::NoSuchComponent { actor, component: component.to_string() })?;
        Ok(found.properties.get(name))
    }

    /// A new, empty component with the next serial number.
    pub(super) fn new_component(&mut self, class: ClassName, origin: ComponentOrigin, replicated: bool) -> Component {
        self.next_component += 1;
        Component {
            class,
            serial: self.next_component,
            origin,
            replicated,
            properties: PropertyMap::new(),
            writers: PropertyMap::new(),
        }
    }

    /// Adds a component the game gives an actor itself (not a feature's request); it replicates when its class
    /// does.
    pub fn attach_native_component(&mut self, actor: ActorId, class: &str) -> Result<(), WorldError> {
        let replicated = self.replicated.is_replicated(class);
        let class_name = self.component_class(class);
        let component = self.new_component(class_name, ComponentOrigin::Native, replicated);
        self.actor_mut(actor)?.components.push(component);
        self.record(|| WorldEvent::ComponentAdded { actor, component: class.to_string() });
        self.comings.changed(actor);
        if replicated {
            self.touch(|| Touched::Component(actor, class.into()));
        }
        Ok(())
    }

    /// A client receives an actor its server spawned, under the server's id, with its role here.
    pub fn spawn_replica(
        &mut self,
        id: ActorId,
        class: &str,
        role: NetRole,
        player: Option<PlayerOwner>,
    ) -> Result<(), WorldError> {
        let Some(classes) = self.classes.shared_chain(class) else {
            return Err(WorldError::UnknownClass(class.to_string()));
        };
        let entry = self.slots.place(id).ok_or_else(|| WorldError::Invalid(format!("actor {id} already exists")))?;
        entry.actor = Some(Actor {
            id,
            classes,
            role,
            components: Vec::new(),
            receiver: false,
            spawned_by: None,
            ending: false,
            player,
            relevancy: super::Relevancy::Always,
        });
        self.spawn_order.push(id);
        self.record(|| WorldEvent::ActorSpawned { actor: id, class: class.to_string() });
        self.comings.push(super::Coming::Spawned(id));
        Ok(())
    }

    /// The server spawns again an actor whose copy here is still ending (it stopped being relevant to this client
    /// and became relevant again before its `ReceiverRemoved` handlers were done): the old copy goes now, so the
    /// id is free for the new one; handlers still to hear of its removal find it gone. Nothing happens to an
    /// actor that is not ending.
    pub fn finish_ending(&mut self, actor: ActorId) {
        if self.actor(actor).is_ok_and(|found| found.ending) {
            self.ending.retain(|a| *a != actor);
            self.destroying.retain(|a| *a != actor);
            let _ = self.finish_destroy(actor);
        }
    }

    /// A client receives a replicated component its server added.
    pub fn attach_replicated_component(&mut self, actor: ActorId, class: &str) -> Result<(), WorldError> {
        if !is_valid_class_name(class) {
            return Err(ClassError::InvalidName(class.to_string()).into());
        }
        // A server replicates one component of a class per actor (see `create_requested_component`): clients
        // tell them apart by class. A second is the server breaking the protocol.
        if self.actor(actor)?.components.iter().any(|c| c.replicated && &*c.class == class) {
            return Err(WorldError::Invalid(format!("actor {actor} has a replicated {class:?} component already")));
        }
        let class_name = self.component_class(class);
        let component = self.new_component(class_name, ComponentOrigin::Replicated, true);
        self.actor_mut(actor)?.components.push(component);
        self.record(|| WorldEvent::ComponentAdded { actor, component: class.to_string() });
        self.comings.changed(actor);
        Ok(())
    }

    /// A client hears its server removed a replicated component.
    pub fn detach_replicated_component(&mut self, actor: ActorId, class: &str) -> Result<(), WorldError> {
        let actor_ref = self.actor_mut(actor)?;
        let Some(index) = actor_ref.components.iter().position(|c| &*c.class == class && c.replicated) else {
            return Err(WorldError::NoSuchComponent { actor, component: class.to_string() });
        };
        let component = actor_ref.components.remove(index);
        self.forget_writes(actor, &component);
        self.record(|| WorldEvent::ComponentRemoved { actor, component: component.class.to_string() });
        self.comings.changed(actor);
        Ok(())
    }

    /// A client applies a replicated property value from its server (`None`: the server removed it); the
    /// value it replaces.
    pub fn apply_replicated_property(
        &mut self,
        actor: ActorId,
        class: &str,
        name: &str,
        value: Option<Value>,
    ) -> Result<Option<Value>, WorldError> {
        let component = self
            .actor_mut(actor)?
            .components
            .iter_mut()
            .find(|c| &*c.class == class && c.replicated)
            .ok_or_else(|| WorldError::NoSuchComponent { actor, component: class.to_string() })?;
        let old = match value.clone() {
            Some(value) => component.properties.insert(name, value),
            None => component.properties.remove(name),
        };
        self.property_changed(actor, class, name, old.clone(), value);
        Ok(old)
    }
}
