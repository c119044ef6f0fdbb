//! The world: actors with components, their classes, and the world's net mode.
//!
//! Features never touch this directly; they reach it through the component manager's decisions and through the
//! runtime's host functions, which check every argument. Every actor a world spawns is a *receiver*, as
//! Unreal's modular actors are: it gets the components that live requests ask for, now and whenever a request
//! starts.

mod actor;
mod actor_map;
mod class;
mod class_map;
mod clock;
pub mod component_manager;
mod creation;
mod invariants;
mod net;
mod properties;
mod replication;
mod slots;
mod written;

use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

pub use actor::{Actor, ActorId, Component, ComponentOrigin, PlayerOwner, Value};
pub use actor_map::ActorMap;
pub use class::{
    is_valid_class_name, same_name, ClassError, ClassKey, ClassName, ClassRegistry, BUILT_IN_CLASSES, ROOT_ACTOR_CLASS,
};
pub use class_map::ClassMap;
pub use clock::{Clock, Fired, Frame, TimerId};
pub use creation::{CreationPolicies, CreationPolicy, NotItsClass};
pub use net::{ClientId, NetMode, NetRole, UnknownNetMode};
pub use properties::PropertyMap;
pub use replication::{RepNotify, ReplicatedClasses, Touched};

use crate::timeline::{track, EventKind, Timeline};
use crate::world::component_manager::{
    ComponentManager, OwnerId, RequestFlags, RequestHandle, RequestKey, ValueChange, Work,
};
use slots::Slots;
use written::Written;

/// A world shared by the experience manager and every plugin instance in it. Plugins reach it only through host
/// calls, which lock it for the duration of one call; nothing holds the lock while calling into a plugin.
pub type SharedWorld = Arc<Mutex<World>>;

/// Locks a shared world. World operations keep it consistent at every step, so a panic elsewhere while it was
/// held (a poisoned lock) does not make it unusable.
pub fn lock(world: &SharedWorld) -> std::sync::MutexGuard<'_, World> {
    world.lock().unwrap_or_else(|e| e.into_inner())
}

/// A refused world operation. Plugins get these back as recoverable WIT errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorldError {
    /// No actor of this id is in the world: it was never spawned, or it is gone.
    #[error("no actor {0} in this world")]
    UnknownActor(ActorId),
    /// No class of this name is declared in this world.
    #[error("no class {0:?} in this world")]
    UnknownClass(String),
    /// The actor has no component of this class.
    #[error("actor {actor} has no {component:?} component")]
    NoSuchComponent {
        /// The actor asked about.
        actor: ActorId,
        /// The component class it lacks.
        component: String,
    },
    /// A component request or extension handler named the root class `Actor`, which would extend every actor.
    #[error(
        "component requests and extension handlers on the root class {ROOT_ACTOR_CLASS:?} are refused: they \
         would extend every actor"
    )]
    RootClassRequest,
    /// The world's init-state list has no such state (named, or by its number as `#n`).
    #[error("no init state {0:?} in this world")]
    UnknownState(String),
    /// The actor has no init-state feature of this name registered.
    #[error("actor {actor} has no feature {feature:?}")]
    UnknownFeature {
        /// The actor asked about.
        actor: ActorId,
        /// The feature name it has not registered.
        feature: String,
    },
    /// The caller may not do this (the feature is another plugin's, a budget or name limit is reached, the
    /// component class is never created, a replica is written only by its server...); the text says why.
    #[error("denied: {0}")]
    Denied(String),
    /// An argument cannot be used (an empty name, an init-state list of the wrong length...); the text says why.
    #[error("invalid: {0}")]
    Invalid(String),
    /// A class declaration or class name was refused.
    #[error(transparent)]
    Class(#[from] ClassError),
}

/// Something that happened to a world's actors, for timelines and tests. Shown as the timeline shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum WorldEvent {
    /// An actor was spawned, here or as a replica of a server's.
    ActorSpawned {
        /// The actor spawned.
        actor: ActorId,
        /// Its class.
        class: String,
    },
    /// An actor left the world for good, after its components were removed.
    ActorDestroyed {
        /// The actor destroyed; its id is no longer live.
        actor: ActorId,
    },
    /// A component was added to an actor.
    ComponentAdded {
        /// The actor that got the component.
        actor: ActorId,
        /// The component's class.
        component: String,
    },
    /// A component was removed from an actor.
    ComponentRemoved {
        /// The actor that lost the component.
        actor: ActorId,
        /// The component's class.
        component: String,
    },
    /// A custom (not built-in) extension event was sent.
    EventSent {
        /// The actor the event was sent to.
        actor: ActorId,
        /// The event's name.
        event: String,
    },
    /// An init-state feature of an actor reached a new init state.
    InitStateChanged {
        /// The actor the feature belongs to.
        actor: ActorId,
        /// The feature's name.
        feature: String,
        /// The state it is in now.
        state: String,
    },
}

impl std::fmt::Display for WorldEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorldEvent::ActorSpawned { actor, class } => write!(f, "spawned {class} {actor}"),
            WorldEvent::ActorDestroyed { actor } => write!(f, "destroyed {actor}"),
            WorldEvent::ComponentAdded { actor, component } => write!(f, "added {component} to {actor}"),
            WorldEvent::ComponentRemoved { actor, component } => write!(f, "removed {component} from {actor}"),
            WorldEvent::EventSent { actor, event } => write!(f, "event {event} sent to {actor}"),
            WorldEvent::InitStateChanged { actor, feature, state } => write!(f, "{actor} {feature} -> {state}"),
        }
    }
}

/// One world: a level with its actors, in one net mode.
#[derive(Debug)]
pub struct World {
    name: String,
    net_mode: NetMode,
    pub(crate) classes: ClassRegistry,
    slots: Slots,
    // Actors in spawn order, so queries answer in a stable order. Destroyed actors are skipped when read and
    // swept out once they are half the list, so destroying stays O(1) amortised.
    spawn_order: Vec<ActorId>,
    destroyed_in_order: usize,
    /// Destroyed actors whose `ReceiverRemoved` is still queued, and those whose went out with the last take
    /// of the work queue (see [`destroy`](Self::destroy)).
    ending: Vec<ActorId>,
    destroying: Vec<ActorId>,
    written: Written,
    pub(crate) manager: ComponentManager,
    events: Vec<WorldEvent>,
    pub(crate) recording: bool,
    timeline: Option<(Timeline, String)>,
    pub(crate) clock: Clock,
    replicated: ReplicatedClasses,
    creation: CreationPolicies,
    next_component: u64,
    /// Component class names, each stored once: components of a class share its name, so finding one by an
    /// interned name compares pointers, not text.
    component_classes: rustc_hash::FxHashSet<ClassName>,
    /// Live actors plugins spawned: while there are none, no queued work needs charging to a spawner.
    plugin_spawned: usize,
    /// What this world touched that clients may need to hear about; kept only while a server replicates it.
    journal: Option<Vec<Touched>>,
}

impl World {
    /// An empty world with the built-in classes.
    pub fn new(name: impl Into<String>, net_mode: NetMode) -> Self {
        World {
            name: name.into(),
            net_mode,
            classes: ClassRegistry::default(),
            slots: Slots::default(),
            spawn_order: Vec::new(),
            destroyed_in_order: 0,
            ending: Vec::new(),
            destroying: Vec::new(),
            written: Written::default(),
            manager: ComponentManager::new(),
            events: Vec::new(),
            recording: true,
            timeline: None,
            clock: Clock::default(),
            replicated: ReplicatedClasses::default(),
            creation: CreationPolicies::default(),
            next_component: 0,
            component_classes: Default::default(),
            plugin_spawned: 0,
            journal: None,
        }
    }

    /// The world's name, as timelines and errors show it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What this world is: standalone, a dedicated or listen server, or a client.
    pub fn net_mode(&self) -> NetMode {
        self.net_mode
    }

    /// The world's actor and component class hierarchy.
    pub fn classes(&self) -> &ClassRegistry {
        &self.classes
    }

    /// Declares an actor or component class.
    pub fn declare_class(&mut self, class: &str, parent: &str) -> Result<(), WorldError> {
        Ok(self.classes.declare(class, parent)?)
    }

    /// Spawns a modular actor, as the game does: it becomes a receiver (requested components are added and
    /// handlers get `ReceiverAdded`), then begins play (handlers get `GameActorReady`).
    pub fn spawn(&mut self, class: &str) -> Result<ActorId, WorldError> {
        self.spawn_actor(class, None, true)
    }

    /// Spawns an actor, owned by `owner` when a plugin spawns it; a `receiver` is a modular actor (see
    /// [`spawn`](Self::spawn)).
    pub fn spawn_actor(&mut self, class: &str, owner: Option<OwnerId>, receiver: bool) -> Result<ActorId, WorldError> {
        let Some(classes) = self.classes.shared_chain(class) else {
            return Err(WorldError::UnknownClass(class.to_string()));
        };
        // A client's own actors keep out of the slots its server's replicas take.
        let id = self.slots.allocate(self.net_mode == NetMode::Client);
        let entry = self.slots.slot_mut(id).expect("just allocated");
        entry.actor = Some(Actor {
            id,
            classes,
            // Locally spawned actors are owned by this world; replicas arrive with other roles.
            role: NetRole::Authority,
            components: Vec::new(),
            receiver: false,
            spawned_by: owner,
            ending: false,
            player: None,
        });
        self.spawn_order.push(id);
        self.plugin_spawned += usize::from(owner.is_some());
        self.record(|| WorldEvent::ActorSpawned { actor: id, class: class.to_string() });
        self.touch(|| Touched::Actor(id));
        if receiver {
            self.add_receiver(id)?;
            self.begin_play(id)?;
        }
        Ok(id)
    }

    /// Destroys an actor, as Unreal does: it stops being a receiver (its requested components go, handlers get
    /// `ReceiverRemoved`) while it still exists, so those handlers can still query it; it is gone once they
    /// have heard it — when the work queue is next taken after the round delivering `ReceiverRemoved` (see
    /// [`take_work`](Self::take_work)). Until then it is `ending`: left out of the world's lists, destroying
    /// it again changes nothing. With nobody to tell, it goes at once.
    pub fn destroy(&mut self, actor: ActorId) -> Result<(), WorldError> {
        if self.actor(actor)?.ending {
            return Ok(());
        }
        self.touch(|| Touched::Actor(actor));
        let queued = self.manager.queue.len();
        if self.actor(actor)?.receiver {
            self.remove_receiver(actor)?;
        }
        self.manager.init_states.remove_actor(actor);
        if self.manager.queue.len() == queued {
            return self.finish_destroy(actor);
        }
        self.actor_mut(actor)?.ending = true;
        self.ending.push(actor);
        Ok(())
    }

    /// Frees a destroyed actor's slot: its id names nobody from now on.
    fn finish_destroy(&mut self, actor: ActorId) -> Result<(), WorldError> {
        let removed = self.slots.free(actor).ok_or(WorldError::UnknownActor(actor))?;
        self.plugin_spawned -= usize::from(removed.spawned_by.is_some());
        self.manager.watches.remove_actor(actor);
        self.destroyed_in_order += 1;
        if self.destroyed_in_order * 2 > self.spawn_order.len() {
            let slots = &self.slots;
            self.spawn_order.retain(|a| slots.is_live(*a));
            self.destroyed_in_order = 0;
        }
        for component in removed.components {
            self.forget_writes(actor, &component);
            self.record(|| WorldEvent::ComponentRemoved { actor, component: component.class.to_string() });
        }
        self.record(|| WorldEvent::ActorDestroyed { actor });
        Ok(())
    }

    /// Finishes destroying actors whose `ReceiverRemoved` went out with the previous take of the work queue
    /// (those calls have returned), and hands the ones destroyed since to this take. With no work left,
    /// every ending actor goes: nothing is left to tell about it.
    pub(crate) fn settle_ending_actors(&mut self) {
        for actor in std::mem::take(&mut self.destroying) {
            let _ = self.finish_destroy(actor);
        }
        if self.manager.queue.is_empty() {
            for actor in std::mem::take(&mut self.ending) {
                let _ = self.finish_destroy(actor);
            }
        } else {
            self.destroying = std::mem::take(&mut self.ending);
        }
    }

    /// Whether any live actor was spawned by a plugin.
    pub(crate) fn has_plugin_spawned_actors(&self) -> bool {
        self.plugin_spawned > 0
    }

    /// Whether `owner` holds a component request that added `actor`'s `component`: the plugins whose
    /// requests made a component own it, and may write its properties.
    pub fn owns_component(&self, owner: OwnerId, actor: ActorId, component: &str) -> Result<bool, WorldError> {
        let found = self.actor(actor)?.component(component);
        let found = found.ok_or_else(|| WorldError::NoSuchComponent { actor, component: component.to_string() })?;
        Ok(match &found.origin {
            ComponentOrigin::Request(key) => self.manager.requests.held_by(owner, key),
            ComponentOrigin::Native | ComponentOrigin::Replicated => false,
        })
    }

    /// The actor with this id, if it is alive.
    // Built lazily, the error costs nothing when the actor is found; built eagerly, it is dropped through
    // `WorldError`'s drop glue (a call) on every lookup, and lookups are the init chain's most frequent step.
    #[allow(clippy::unnecessary_lazy_evaluations)]
    pub fn actor(&self, actor: ActorId) -> Result<&Actor, WorldError> {
        self.slots.live_actor(actor).ok_or_else(|| WorldError::UnknownActor(actor))
    }

    /// Refuses a change of an actor on its way out (destroyed, its handlers not all told yet: Unreal's pending
    /// kill). It still answers queries, but nothing may be added to it, nor may it be revived: to whoever would
    /// change it, it is gone. An actor that is not alive at all is left for the change itself to report.
    pub fn changeable(&self, actor: ActorId) -> Result<(), WorldError> {
        // Almost always no actor is on its way out: then nothing is looked up (batches check every entry).
        if self.ending.is_empty() && self.destroying.is_empty() {
            return Ok(());
        }
        match self.slots.live_actor(actor) {
            Some(found) if found.ending => Err(WorldError::UnknownActor(actor)),
            _ => Ok(()),
        }
    }

    /// The component manager, and `actor`'s class chain beside it (`None` for an actor not alive): what queuing
    /// work about an actor for every level of its class needs, without holding the chain by a reference count.
    pub(crate) fn manager_and_classes_of(&mut self, actor: ActorId) -> (&mut ComponentManager, Option<&[ClassKey]>) {
        (&mut self.manager, self.slots.live_actor(actor).map(|a| &*a.classes))
    }

    #[allow(clippy::unnecessary_lazy_evaluations)] // As `actor`.
    pub(crate) fn actor_mut(&mut self, actor: ActorId) -> Result<&mut Actor, WorldError> {
        self.slots.live_actor_mut(actor).ok_or_else(|| WorldError::UnknownActor(actor))
    }

    /// Every live actor, in spawn order.
    pub fn actors(&self) -> impl Iterator<Item = &Actor> {
        self.spawn_order.iter().filter_map(|id| self.actor(*id).ok()).filter(|a| !a.ending)
    }

    /// Live actors whose class is `class` or derives from it, in spawn order.
    pub fn actors_of_class(&self, class: &str) -> Result<Vec<ActorId>, WorldError> {
        if !self.classes.contains(class) {
            return Err(WorldError::UnknownClass(class.to_string()));
        }
        Ok(self.actors().filter(|a| a.is_a(class)).map(|a| a.id).collect())
    }

    /// Whether `actor`'s class is `class` or derives from it.
    pub fn is_a(&self, actor: ActorId, class: &str) -> Result<bool, WorldError> {
        if !self.classes.contains(class) {
            return Err(WorldError::UnknownClass(class.to_string()));
        }
        Ok(self.actor(actor)?.is_a(class))
    }

    /// Whether this world is authoritative for the actor.
    pub fn has_authority(&self, actor: ActorId) -> Result<bool, WorldError> {
        Ok(self.actor(actor)?.role == NetRole::Authority)
    }

    /// Whether the actor belongs to a player playing on this machine: on a client, its own player's actors (the
    /// autonomous proxies); on a standalone game or a listen server, the local players' actors; never on a
    /// dedicated server.
    pub fn is_locally_controlled(&self, actor: ActorId) -> Result<bool, WorldError> {
        let actor = self.actor(actor)?;
        Ok(match self.net_mode {
            NetMode::Client => actor.role == NetRole::AutonomousProxy,
            NetMode::DedicatedServer => false,
            NetMode::Standalone | NetMode::ListenServer => actor.player == Some(PlayerOwner::Local),
        })
    }

    // ----- time -----

    /// The world's current frame.
    pub fn now(&self) -> Frame {
        self.clock.now()
    }

    /// Moves the world to its next frame, `delta` of game time later; the timers that came due, by owner.
    pub fn advance(&mut self, delta: std::time::Duration) -> (Frame, Vec<Fired>) {
        self.clock.advance(delta)
    }

    /// Starts a timer for a plugin instance (see [`Clock::start`]).
    pub fn start_timer(&mut self, owner: OwnerId, period_us: u64, repeating: bool, number: u32) -> TimerId {
        self.clock.start(owner, period_us, repeating, number)
    }

    /// Stops a timer (a no-op when it already stopped).
    pub fn stop_timer(&mut self, timer: TimerId) {
        self.clock.stop(timer);
    }

    /// Timers running in this world.
    pub fn live_timers(&self) -> usize {
        self.clock.timers()
    }

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
        let mine_before = self.written.bytes_of(owner) - if old_writer == Some(owner) { old_bytes } else { 0 };
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
    fn forget_writes(&mut self, actor: ActorId, component: &Component) {
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
        self.property_changed(actor, component, name, old, Some(value));
        Ok(())
    }

    /// A property changed: clients will hear of it (when it replicates), and the plugins watching it are told.
    fn property_changed(
        &mut self,
        actor: ActorId,
        component: &str,
        name: &str,
        old: Option<Value>,
        new: Option<Value>,
    ) {
        self.touch_property(actor, component, name);
        if old == new {
            return;
        }
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

    // ----- creation policies -----

    /// The game's own policy for a component class: trusted like the experience's word, which it is part of.
    pub fn declare_creation(&mut self, class: &str, policy: CreationPolicy) {
        self.creation.override_with(class, policy);
    }

    /// A plugin's component classes (its manifest's `classes`), then its creation policies, each for a class it
    /// alone declares (see [`CreationPolicies`]). Returns the classes whose policy, set by another plugin, no
    /// longer applies now that this one declares them too. A policy for a class another plugin declares is
    /// refused before anything changes: the world is left as it was.
    pub fn declare_plugin_classes<'a>(
        &mut self,
        owner: OwnerId,
        classes: impl IntoIterator<Item = &'a str> + Clone,
        policies: impl IntoIterator<Item = (&'a str, CreationPolicy)> + Clone,
    ) -> Result<Vec<String>, creation::NotItsClass> {
        for (class, _) in policies.clone() {
            if self.creation.declared_by_another(owner, class) {
                return Err(creation::NotItsClass { class: class.to_string() });
            }
        }
        let voided = self.creation.claim(owner, classes);
        for (class, policy) in policies {
            self.creation.declare(owner, class, policy)?;
        }
        Ok(voided)
    }

    /// Overrides a component class's creation policy (the experience's word).
    pub fn override_creation(&mut self, class: &str, policy: CreationPolicy) {
        self.creation.override_with(class, policy);
    }

    /// When components of `class` are created: the experience's override, else the policy of the plugin owning
    /// the class, else `Always`.
    pub fn creation_policy(&self, class: &str) -> CreationPolicy {
        self.creation.of(class)
    }

    /// First use of a lazy component (the seed's `GetAbilitySystemComponent`): creates it on `actor` when a live
    /// request gives the actor one and the world has authority over the actor. `true` when it was created now,
    /// `false` when it already existed.
    pub fn ensure_component(&mut self, actor: ActorId, class: &str) -> Result<bool, WorldError> {
        let found = self.actor(actor)?;
        if found.component(class).is_some() {
            return Ok(false);
        }
        let missing = || WorldError::NoSuchComponent { actor, component: class.to_string() };
        if found.role != NetRole::Authority || !found.receiver || found.ending {
            return Err(missing());
        }
        let levels: Vec<&str> = found.classes.iter().map(|c| &**c).collect();
        let key = self.manager.requests.components_for(&levels).find(|k| &*k.component_class == class).cloned();
        let key = key.ok_or_else(missing)?;
        self.create_requested_component(actor, key);
        // A replicated class is the server's to create: on a client nothing was.
        match self.actor(actor)?.component(class) {
            Some(_) => Ok(true),
            None => Err(missing()),
        }
    }

    /// Before a write: a lazy component that does not exist yet is created by it (its first use). Anything else
    /// is left to the write to judge.
    pub fn create_if_lazy(&mut self, actor: ActorId, class: &str) -> Result<(), WorldError> {
        let absent = self.actor(actor)?.component(class).is_none();
        if absent && self.creation.of(class) == CreationPolicy::Lazy {
            self.ensure_component(actor, class)?;
        }
        Ok(())
    }

    /// Lazy components that exist, and those avoided: (actor, class) pairs a live request gives a lazy component
    /// that was never needed.
    pub fn lazy_components(&self) -> (usize, usize) {
        if !self.creation.any_lazy() {
            return (0, 0);
        }
        let (mut existing, mut avoided) = (0, 0);
        for actor in self.actors().filter(|a| a.receiver) {
            let chain: Vec<&str> = actor.classes.iter().map(|c| &**c).collect();
            let mut seen = std::collections::HashSet::new();
            for key in self.manager.requests.components_for(&chain) {
                if self.creation.of(&key.component_class) != CreationPolicy::Lazy || !seen.insert(&key.component_class)
                {
                    continue;
                }
                if actor.component(&key.component_class).is_some() {
                    existing += 1;
                } else {
                    avoided += 1;
                }
            }
        }
        (existing, avoided)
    }

    // ----- replication -----

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

    fn touch(&mut self, touched: impl FnOnce() -> Touched) {
        if let Some(journal) = &mut self.journal {
            journal.push(touched());
        }
    }

    fn touch_property(&mut self, actor: ActorId, component: &str, name: &str) {
        if self.journal.is_some() && self.replicated.replicates(component, name) {
            self.touch(|| Touched::Property(actor, component.to_string(), name.to_string()));
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
    fn new_component(&mut self, class: ClassName, origin: ComponentOrigin, replicated: bool) -> Component {
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
        if replicated {
            self.touch(|| Touched::Component(actor, class.to_string()));
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
        });
        self.spawn_order.push(id);
        self.record(|| WorldEvent::ActorSpawned { actor: id, class: class.to_string() });
        Ok(())
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

    /// Starts a component request for `owner`: every receiver of `receiver_class` (or a subclass), now and
    /// later, gets a `component_class` component while the handle is held. The first request for a pair adds
    /// the component to existing receivers; later requests for the same pair only count.
    pub fn add_component_request(
        &mut self,
        owner: OwnerId,
        receiver_class: &str,
        component_class: &str,
        flags: RequestFlags,
    ) -> Result<RequestHandle, WorldError> {
        if receiver_class == ROOT_ACTOR_CLASS {
            return Err(WorldError::RootClassRequest);
        }
        let Some(receiver) = self.classes.name(receiver_class) else {
            return Err(WorldError::UnknownClass(receiver_class.to_string()));
        };
        if !is_valid_class_name(component_class) {
            return Err(ClassError::InvalidName(component_class.to_string()).into());
        }
        if self.creation.of(component_class) == CreationPolicy::Never {
            return Err(WorldError::Denied(format!(
                "component class {component_class} has creation policy never: no actor gets one"
            )));
        }
        let key = RequestKey { receiver_class: receiver, component_class: self.component_class(component_class) };
        let (handle, first) = self.manager.requests.add(key.clone(), owner, flags);
        if first {
            for actor in self.actors_of_class(receiver_class)? {
                if self.actor(actor)?.receiver {
                    self.add_requested_component(actor, key.clone());
                }
            }
        }
        Ok(handle)
    }

    /// Releases a request handle. When it was the last one for its pair, every component that pair added to an
    /// actor of the receiver class (or a subclass) is removed; components others added stay. Releasing a handle
    /// twice changes nothing.
    pub fn release_component_request(&mut self, handle: RequestHandle) {
        let Some(key) = self.manager.requests.release(handle) else {
            return;
        };
        let owners: Vec<ActorId> = self.actors().filter(|a| a.is_a(&key.receiver_class)).map(|a| a.id).collect();
        for actor in owners {
            self.remove_requested_components(actor, |origin_key| *origin_key == key);
        }
        self.release_component_class(key.component_class);
    }

    /// Removes an actor's components that requests matching `which` added.
    pub(crate) fn remove_requested_components(&mut self, actor: ActorId, which: impl Fn(&RequestKey) -> bool) {
        let components = &mut self.actor_mut(actor).expect("listed actors are alive").components;
        // An actor has a few components: those going are taken out in place, the others keep their order, and
        // an actor losing none (or one) allocates nothing.
        let mut removed: SmallVec<[Component; 1]> = SmallVec::new();
        let mut i = 0;
        while i < components.len() {
            if matches!(&components[i].origin, ComponentOrigin::Request(key) if which(key)) {
                removed.push(components.remove(i));
            } else {
                i += 1;
            }
        }
        for component in removed {
            self.forget_writes(actor, &component);
            if component.replicated {
                self.touch(|| Touched::Component(actor, component.class.to_string()));
            }
            self.record(|| WorldEvent::ComponentRemoved { actor, component: component.class.to_string() });
        }
    }

    pub(crate) fn add_requested_component(&mut self, actor: ActorId, key: RequestKey) {
        // A lazy component waits for its first use (see `ensure_component`).
        if self.creation.of(&key.component_class) != CreationPolicy::Always {
            return;
        }
        self.create_requested_component(actor, key);
    }

    /// Creates the component a request gives an actor, whatever its policy. The key is taken, not borrowed: the
    /// component keeps it as its origin, and cloning its shared names costs an atomic count each.
    fn create_requested_component(&mut self, actor: ActorId, key: RequestKey) {
        let replicated = self.replicated.is_replicated(&key.component_class);
        // A replicated component is the server's to create; a client receives it.
        if replicated && self.net_mode == NetMode::Client {
            return;
        }
        // A replicated component is one per actor (clients tell components apart by class), as if added unique.
        let unique = self.manager.requests.flags(&key).add_unique || replicated;
        let actor_ref = self.actor(actor).expect("requested actors are alive");
        let present = actor_ref.components.iter().any(|c| {
            same_name(&c.class, &key.component_class)
                && (unique || matches!(&c.origin, ComponentOrigin::Request(k) if *k == key))
        });
        if present {
            return;
        }
        let class = key.component_class.clone();
        let component = self.new_component(class.clone(), ComponentOrigin::Request(key), replicated);
        self.actor_mut(actor).expect("requested actors are alive").components.push(component);
        self.record(|| WorldEvent::ComponentAdded { actor, component: class.to_string() });
        if replicated {
            self.touch(|| Touched::Component(actor, class.to_string()));
        }
    }

    /// Live component requests, for leak checks.
    pub fn live_request_handles(&self) -> usize {
        self.manager.requests.live_handles()
    }

    /// Components that features added and that are still on actors, for leak checks.
    pub fn requested_component_count(&self) -> usize {
        self.actors().flat_map(|a| &a.components).filter(|c| matches!(c.origin, ComponentOrigin::Request(_))).count()
    }

    /// Takes the events recorded since the last call (when no timeline is attached).
    pub fn drain_events(&mut self) -> Vec<WorldEvent> {
        std::mem::take(&mut self.events)
    }

    /// Turns the event record on or off (off for large simulations whose events nobody reads).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }

    /// Sends the world's events to a timeline as they happen, instead of keeping them for
    /// [`drain_events`](Self::drain_events).
    pub fn attach_timeline(&mut self, timeline: Timeline) {
        self.timeline = Some((timeline, track::world(&self.name)));
    }

    pub(crate) fn record(&mut self, event: impl FnOnce() -> WorldEvent) {
        if !self.recording {
            return;
        }
        match &self.timeline {
            Some((timeline, track)) => {
                timeline.record(track, EventKind::World, event().to_string());
            }
            None => self.events.push(event()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World::new("test", NetMode::Standalone)
    }

    #[test]
    fn stale_ids_never_name_new_actors() {
        let mut w = world();
        let a = w.spawn("Pawn").unwrap();
        w.destroy(a).unwrap();
        let b = w.spawn("Pawn").unwrap();
        assert_eq!(a.slot(), b.slot());
        assert_eq!(w.actor(a).unwrap_err(), WorldError::UnknownActor(a));
        assert!(w.actor(b).is_ok());
        assert_eq!(w.destroy(a), Err(WorldError::UnknownActor(a)));
    }

    #[test]
    fn actors_stay_in_spawn_order_through_destruction_and_slot_reuse() {
        let mut w = world();
        let spawned: Vec<ActorId> = (0..6).map(|_| w.spawn("Pawn").unwrap()).collect();
        for gone in [1, 3, 4, 5] {
            w.destroy(spawned[gone]).unwrap();
        }
        let reused = w.spawn("Pawn").unwrap();
        assert_eq!(reused.slot(), spawned[5].slot(), "the last freed slot is reused");
        let order: Vec<ActorId> = w.actors().map(|a| a.id).collect();
        assert_eq!(order, [spawned[0], spawned[2], reused]);
        assert_eq!(w.actors_of_class("Pawn").unwrap(), order);
    }

    #[test]
    fn requests_reach_existing_and_future_subclass_actors() {
        let mut w = world();
        let pawn = w.spawn("Pawn").unwrap();
        let character = w.spawn("Character").unwrap();
        let state = w.spawn("PlayerState").unwrap();
        let handle = w.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
        let later = w.spawn("Character").unwrap();
        for actor in [pawn, character, later] {
            assert!(w.actor(actor).unwrap().component("Health").is_some());
        }
        assert!(w.actor(state).unwrap().component("Health").is_none());
        w.release_component_request(handle);
        assert_eq!(w.requested_component_count(), 0);
        let after = w.spawn("Pawn").unwrap();
        assert!(w.actor(after).unwrap().component("Health").is_none());
    }

    #[test]
    fn shared_requests_remove_components_with_the_last_handle() {
        let mut w = world();
        let pawn = w.spawn("Pawn").unwrap();
        let first = w.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
        let second = w.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
        w.release_component_request(first);
        assert!(w.actor(pawn).unwrap().component("Health").is_some());
        w.release_component_request(second);
        assert!(w.actor(pawn).unwrap().component("Health").is_none());
    }

    #[test]
    fn root_and_unknown_classes_are_refused() {
        let mut w = world();
        assert_eq!(
            w.add_component_request(OwnerId::HOST, "Actor", "Health", RequestFlags::default()).unwrap_err(),
            WorldError::RootClassRequest
        );
        assert_eq!(
            w.add_component_request(OwnerId::HOST, "Dragon", "Health", RequestFlags::default()).unwrap_err(),
            WorldError::UnknownClass("Dragon".into())
        );
        assert_eq!(w.live_request_handles(), 0);
        // Unreal refuses extension handlers on AActor as it refuses requests on it.
        w.spawn("Pawn").unwrap();
        assert_eq!(w.add_extension_handler(OwnerId::HOST, "Actor", 1).unwrap_err(), WorldError::RootClassRequest);
        assert_eq!((w.live_handlers(), w.queued_work()), (0, 0));
    }

    #[test]
    fn properties_need_the_component() {
        let mut w = world();
        let pawn = w.spawn("Pawn").unwrap();
        assert!(matches!(
            w.set_property(pawn, "Health", "hp", Value::Integer(1)),
            Err(WorldError::NoSuchComponent { .. })
        ));
        let _h = w.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
        w.set_property(pawn, "Health", "hp", Value::Integer(7)).unwrap();
        assert_eq!(w.property(pawn, "Health", "hp").unwrap(), Some(&Value::Integer(7)));
        assert_eq!(w.property(pawn, "Health", "armor").unwrap(), None);
    }

    #[test]
    fn a_refused_creation_policy_leaves_every_other_plugins_as_it_was() {
        let mut w = World::new("w", NetMode::Standalone);
        let (game, hostile) = (w.register_owner("game"), w.register_owner("hostile"));
        w.declare_plugin_classes(game, ["Shield"], [("Shield", CreationPolicy::Lazy)]).unwrap();
        // Another plugin declares the class too and asks for a policy: refused, and the first one's stands.
        let refused = w.declare_plugin_classes(hostile, ["Shield"], [("Shield", CreationPolicy::Never)]);
        assert_eq!(refused.unwrap_err().class, "Shield");
        assert_eq!(w.creation_policy("Shield"), CreationPolicy::Lazy);
        // Declaring the class without a policy takes the class from both: only the experience sets it now.
        assert_eq!(w.declare_plugin_classes(hostile, ["Shield"], []).unwrap(), ["Shield"]);
        assert_eq!(w.creation_policy("Shield"), CreationPolicy::Always);
    }
}
