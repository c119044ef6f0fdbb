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
mod comings;
pub mod component_manager;
mod creation;
pub mod heard;
mod invariants;
mod lazy;
mod net;
mod properties;
mod property_access;
mod relevancy;
mod replicas;
mod replication;
mod requests;
mod slots;
mod time;
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
pub use comings::Coming;
pub use creation::{CreationPolicies, CreationPolicy, NotItsClass};
pub use heard::HeardEvent;
pub use net::{ClientId, NetMode, NetRole, UnknownNetMode};
pub use properties::PropertyMap;
pub use relevancy::{check_groups, is_relevant, Relevancy, MAX_GROUPS, MAX_GROUP_NAME};
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
    /// The relevancy groups each client is in (on a server).
    client_groups: relevancy::ClientGroups,
    /// Custom events sent to actors, kept for the game while it listens.
    heard: heard::Heard,
    /// Actors coming and going, kept for the game while it follows them.
    comings: comings::Comings,
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
            heard: Default::default(),
            comings: Default::default(),
            timeline: None,
            clock: Clock::default(),
            replicated: ReplicatedClasses::default(),
            creation: CreationPolicies::default(),
            next_component: 0,
            component_classes: Default::default(),
            plugin_spawned: 0,
            journal: None,
            client_groups: relevancy::ClientGroups::default(),
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
            relevancy: Relevancy::Always,
        });
        self.spawn_order.push(id);
        self.plugin_spawned += usize::from(owner.is_some());
        self.record(|| WorldEvent::ActorSpawned { actor: id, class: class.to_string() });
        self.comings.push(Coming::Spawned(id));
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
        self.comings.push(Coming::Destroyed(actor));
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

    /// Keeps (or stops keeping) the custom events plugins send to actors, for the game to
    /// [`take_heard_events`](Self::take_heard_events).
    pub fn hear_events(&mut self, on: bool) {
        self.heard.set(on);
    }

    /// The custom events sent to actors since the last take (while [`hear_events`](Self::hear_events) is on),
    /// oldest first, and how many were dropped because more than [`heard::MOST_HEARD`] waited.
    pub fn take_heard_events(&mut self) -> (Vec<HeardEvent>, u64) {
        self.heard.take()
    }

    /// Keeps (or stops keeping) the actors spawned and destroyed, for a game that mirrors them in its own
    /// entities to [`take_actor_comings`](Self::take_actor_comings).
    pub fn follow_actors(&mut self, on: bool) {
        self.comings.set(on);
    }

    /// The actors spawned and destroyed since the last take (while [`follow_actors`](Self::follow_actors) is
    /// on), oldest first. An actor both spawned and destroyed since is in it twice.
    pub fn take_actor_comings(&mut self) -> Vec<Coming> {
        self.comings.take()
    }

    /// The actors that got or lost a component, or whose properties or init-state features changed, since the
    /// last take (while [`follow_actors`](Self::follow_actors) is on), each once, in no particular order: what a
    /// game mirroring the world reads back after a step.
    pub fn take_changed_actors(&mut self) -> Vec<ActorId> {
        self.comings.take_changed()
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

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<WorldError> for crate::error::Error {
    fn from(error: WorldError) -> crate::error::Error {
        let message = error.to_string();
        match error {
            WorldError::UnknownActor(actor) => crate::error::Error::NotFound { name: actor.to_string(), message },
            WorldError::UnknownClass(name) | WorldError::UnknownState(name) => {
                crate::error::Error::NotFound { name, message }
            }
            WorldError::NoSuchComponent { component: name, .. } | WorldError::UnknownFeature { feature: name, .. } => {
                crate::error::Error::NotFound { name, message }
            }
            WorldError::RootClassRequest | WorldError::Denied(_) | WorldError::Invalid(_) | WorldError::Class(_) => {
                crate::error::Error::refused(message)
            }
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
        let voided = w.declare_plugin_classes(hostile, ["Shield"], []).unwrap();
        assert_eq!(voided, [("Shield".to_string(), "game".to_string())], "the class, and whose policy went");
        assert_eq!(w.creation_policy("Shield"), CreationPolicy::Always);
    }
}
