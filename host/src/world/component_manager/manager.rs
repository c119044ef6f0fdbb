//! The component manager's operations on a world: owners, receivers, extension handlers and events, and the
//! init-state system. See the [module docs](super) for why these are `World` methods.

use smallvec::SmallVec;

use super::handlers::{ExtensionHandlers, Recipient};
use super::init_state::{InitStates, Subscription, Watched, LYRA_INIT_STATES};
use super::names::{Name, Names};
use super::queue::{ChargedWork, Work, WorkQueue};
use super::requests::{ComponentRequests, RequestKey};
use super::{HandlerId, OwnerId, SubscriptionId};
use crate::world::{ActorId, ClassKey, World, WorldError, WorldEvent};

/// The built-in extension event names.
pub mod events {
    /// Sent to a class's handlers when an actor of the class (or a subclass) becomes a receiver.
    pub const RECEIVER_ADDED: &str = "ReceiverAdded";
    /// Sent to a class's handlers when an actor of the class stops being a receiver, while it still exists.
    pub const RECEIVER_REMOVED: &str = "ReceiverRemoved";
    /// Sent to a new handler once for each receiver of its class that exists when it is added.
    pub const EXTENSION_ADDED: &str = "ExtensionAdded";
    /// Sent to a handler being removed once for each receiver of its class: the last event it hears about them.
    pub const EXTENSION_REMOVED: &str = "ExtensionRemoved";
    /// Sent to a class's handlers when a modular actor of the class begins play, after it became a receiver.
    pub const GAME_ACTOR_READY: &str = "GameActorReady";
    /// Every built-in event name, each at its [`BuiltIn`] number; any other name is a custom event.
    pub const ALL: [&str; 5] = [RECEIVER_ADDED, RECEIVER_REMOVED, EXTENSION_ADDED, EXTENSION_REMOVED, GAME_ACTOR_READY];

    /// A built-in event by name, for the host's own code: its number is its place in [`ALL`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum BuiltIn {
        /// An actor became a receiver ([`RECEIVER_ADDED`]).
        ReceiverAdded,
        /// An actor stopped being a receiver ([`RECEIVER_REMOVED`]).
        ReceiverRemoved,
        /// A new handler hears of a receiver that already existed ([`EXTENSION_ADDED`]).
        ExtensionAdded,
        /// A removed handler hears of a receiver for the last time ([`EXTENSION_REMOVED`]).
        ExtensionRemoved,
        /// A modular actor began play ([`GAME_ACTOR_READY`]).
        GameActorReady,
    }

    #[cfg(test)]
    #[test]
    fn each_built_in_event_is_named_at_its_number() {
        let named = [
            (BuiltIn::ReceiverAdded, RECEIVER_ADDED),
            (BuiltIn::ReceiverRemoved, RECEIVER_REMOVED),
            (BuiltIn::ExtensionAdded, EXTENSION_ADDED),
            (BuiltIn::ExtensionRemoved, EXTENSION_REMOVED),
            (BuiltIn::GameActorReady, GAME_ACTOR_READY),
        ];
        for (event, name) in named {
            assert_eq!(ALL[event as usize], name);
        }
    }
}

/// The component manager's state in one world.
#[derive(Debug)]
pub struct ComponentManager {
    pub(crate) requests: ComponentRequests,
    pub(crate) handlers: ExtensionHandlers,
    pub(crate) init_states: InitStates,
    pub(crate) names: Names,
    pub(crate) queue: WorkQueue,
    pub(crate) watches: super::PropertyWatches,
    owners: std::collections::HashMap<OwnerId, String>,
    /// The properties each plugin instance asked to come with its `try-change-init-states` batches.
    chain_reads: std::collections::HashMap<OwnerId, Vec<ChainRead>>,
    /// Host calls plugins made into the world (see [`World::plugin_calls`]).
    plugin_calls: u64,
    next_owner: u32,
    built_in: [Name; 5],
}

impl ComponentManager {
    pub(crate) fn new() -> Self {
        let mut names = Names::default();
        let built_in = events::ALL.map(|e| names.intern(e));
        let mut init_states = InitStates::default();
        init_states.set_order(LYRA_INIT_STATES.iter().map(|s| names.intern(s)).collect());
        ComponentManager {
            requests: ComponentRequests::default(),
            handlers: ExtensionHandlers::default(),
            init_states,
            names,
            queue: WorkQueue::default(),
            watches: super::PropertyWatches::default(),
            owners: std::collections::HashMap::from([(OwnerId::HOST, "host".to_string())]),
            chain_reads: std::collections::HashMap::new(),
            plugin_calls: 0,
            next_owner: 1,
            built_in,
        }
    }

    fn event(&self, event: events::BuiltIn) -> Name {
        self.built_in[event as usize]
    }
}

/// What removing an owner took away.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OwnerCleanup {
    /// Extension handlers removed, each having queued its last `ExtensionRemoved`.
    pub handlers: usize,
    /// Properties it wrote on components that stay (others' requests, or the game's).
    pub properties: usize,
    /// Component requests released.
    pub requests: usize,
    /// Init-state features it implemented, unregistered.
    pub features: usize,
    /// Init-state subscriptions dropped.
    pub subscriptions: usize,
    /// Items of queued work for it, discarded undelivered.
    pub discarded_work: usize,
    /// Actors it spawned, destroyed.
    pub actors: usize,
    /// Timers it started, stopped.
    pub timers: usize,
    /// Property watches dropped.
    pub watches: usize,
}

/// How many properties one plugin instance may ask to come with its chain-step questions.
pub const MAX_CHAIN_READS: usize = 16;

impl World {
    /// Registers a plugin instance; everything it adds through the manager is tagged with the returned id.
    pub fn register_owner(&mut self, label: &str) -> OwnerId {
        let owner = OwnerId(self.manager.next_owner);
        self.manager.next_owner += 1;
        self.manager.owners.insert(owner, label.to_string());
        owner
    }

    /// The label an owner was registered with (`?` once retired).
    pub fn owner_label(&self, owner: OwnerId) -> &str {
        self.manager.owners.get(&owner).map_or("?", String::as_str)
    }

    /// Forgets an owner for good, after [`remove_owner`](Self::remove_owner): its id is never reused, so
    /// anything still naming it names nobody.
    pub fn retire_owner(&mut self, owner: OwnerId) {
        self.remove_owner(owner);
        // Released only now, not when its instance leaves the world: its last calls (`on-unloading`,
        // `on-unregistering`) still run as it, and must not get a fresh allowance of names.
        self.manager.names.release(owner);
        self.discard_work(owner);
        if owner != OwnerId::HOST {
            self.manager.owners.remove(&owner);
        }
    }

    /// Removes everything an owner added: its queued work is discarded; its handlers are removed, each
    /// delivering `ExtensionRemoved` for every receiver (queued, so the owner's last delivery); its component
    /// requests are released; the properties it wrote on components that stay are removed; the init-state
    /// features it implements and its subscriptions are dropped; and the actors it spawned are destroyed (other
    /// plugins' handlers get `ReceiverRemoved` for them).
    pub fn remove_owner(&mut self, owner: OwnerId) -> OwnerCleanup {
        let before = self.manager.queue.len();
        self.manager.queue.discard_owner(owner);
        let mut cleanup = OwnerCleanup { discarded_work: before - self.manager.queue.len(), ..Default::default() };
        for handler in self.manager.handlers.of_owner(owner) {
            self.remove_extension_handler(handler);
            cleanup.handlers += 1;
        }
        for handle in self.manager.requests.handles_of(owner) {
            self.release_component_request(handle);
            cleanup.requests += 1;
        }
        cleanup.properties = self.remove_written_by(owner);
        let comings = &mut self.comings;
        let (features, subscriptions) =
            self.manager.init_states.remove_owner_telling(owner, |actor| comings.changed(actor));
        cleanup.features = features;
        cleanup.subscriptions = subscriptions;
        cleanup.timers = self.clock.remove_owner(owner);
        cleanup.watches = self.manager.watches.remove_owner(owner);
        self.remove_declarations_of(owner);
        for read in self.manager.chain_reads.remove(&owner).unwrap_or_default() {
            self.release_component_class(read.component);
        }
        if owner != OwnerId::HOST {
            let spawned: Vec<ActorId> = self.actors().filter(|a| a.spawned_by == Some(owner)).map(|a| a.id).collect();
            for actor in spawned {
                if self.destroy(actor).is_ok() {
                    cleanup.actors += 1;
                }
            }
        }
        cleanup
    }

    /// Forgets every queued item for an owner whose instance can no longer be called.
    pub fn discard_work(&mut self, owner: OwnerId) {
        self.manager.queue.discard_owner(owner);
    }

    // ----- receivers and extension events -----

    /// Makes an actor a receiver: for each class of its chain, most derived first, the components requested on
    /// that class are added, then that class's handlers get `ReceiverAdded` (Unreal's AddReceiver).
    pub fn add_receiver(&mut self, actor: ActorId) -> Result<(), WorldError> {
        let found = self.actor_mut(actor)?;
        if found.ending {
            // On its way out: it is never made a receiver again (nobody hears it added after it was removed).
            return Err(WorldError::UnknownActor(actor));
        }
        if found.receiver {
            return Ok(());
        }
        found.receiver = true;
        let levels = found.classes.len();
        let event = self.manager.event(events::BuiltIn::ReceiverAdded);
        // The chain is borrowed anew at each level rather than held: cloning it would cost an atomic count.
        for level in 0..levels {
            let keys: SmallVec<[RequestKey; 4]> = {
                let class = &self.actor(actor)?.classes[level];
                self.manager.requests.components_on(class).cloned().collect()
            };
            for key in keys {
                self.add_requested_component(actor, key);
            }
            let (manager, classes) = self.manager_and_classes_of(actor);
            if let Some(class) = classes.and_then(|chain| chain.get(level)) {
                queue_for_class(manager, class, actor, event, false, None);
            }
        }
        Ok(())
    }

    /// Stops an actor being a receiver: every component requests added to it is removed first, then handlers
    /// of its chain get `ReceiverRemoved` (Unreal's RemoveReceiver).
    pub fn remove_receiver(&mut self, actor: ActorId) -> Result<(), WorldError> {
        if !self.actor(actor)?.receiver {
            return Ok(());
        }
        self.remove_requested_components(actor, |_| true);
        self.actor_mut(actor)?.receiver = false;
        let event = self.manager.event(events::BuiltIn::ReceiverRemoved);
        self.queue_for_chain(actor, event, false, None)
    }

    /// The actor begins play: modular actors send `GameActorReady`.
    pub fn begin_play(&mut self, actor: ActorId) -> Result<(), WorldError> {
        let event = self.manager.event(events::BuiltIn::GameActorReady);
        self.queue_for_chain(actor, event, false, None)
    }

    /// Registers a handler for receivers of `receiver_class` (or a subclass). Existing receivers are delivered
    /// `ExtensionAdded` at once (queued).
    pub fn add_extension_handler(
        &mut self,
        owner: OwnerId,
        receiver_class: &str,
        number: u32,
    ) -> Result<HandlerId, WorldError> {
        // Unreal refuses handlers on AActor as it refuses requests on it: they would extend every actor.
        if receiver_class == crate::world::ROOT_ACTOR_CLASS {
            return Err(WorldError::RootClassRequest);
        }
        let Some(class) = self.classes.key(receiver_class) else {
            return Err(WorldError::UnknownClass(receiver_class.to_string()));
        };
        let id = self.manager.handlers.add(owner, &class, number);
        let event = self.manager.event(events::BuiltIn::ExtensionAdded);
        for actor in self.receivers_of(receiver_class) {
            self.manager.queue.push(Work::Extension {
                owner,
                handler: id,
                number,
                actor,
                event,
                final_event: false,
                sender: None,
            });
        }
        Ok(id)
    }

    /// Removes a handler: it is delivered `ExtensionRemoved` for every receiver of its class (delivered even
    /// though the handler is gone by then), after the events queued for it while it was live — Unreal delivers
    /// an event at once to whoever is registered at the time, so an event sent before the removal is heard.
    /// Unknown ids change nothing.
    pub fn remove_extension_handler(&mut self, id: HandlerId) {
        let Some(handler) = self.manager.handlers.remove(id) else {
            return;
        };
        let event = self.manager.event(events::BuiltIn::ExtensionRemoved);
        for actor in self.receivers_of(&handler.receiver_class) {
            self.manager.queue.push(Work::Extension {
                owner: handler.owner,
                handler: id,
                number: handler.number,
                actor,
                event,
                final_event: true,
                sender: None,
            });
        }
    }

    /// Sends an event to every handler registered now for the actor's class chain, most derived class first.
    pub fn send_extension_event(&mut self, actor: ActorId, event: &str) -> Result<(), WorldError> {
        self.send_extension_event_from(None, actor, event)
    }

    /// Sends an event on behalf of a plugin: if the plugin goes before the event is delivered, so does the event.
    pub fn send_extension_event_from(
        &mut self,
        sender: Option<OwnerId>,
        actor: ActorId,
        event: &str,
    ) -> Result<(), WorldError> {
        self.send_named_extension_event_from(sender, actor, (None, event)).map(drop)
    }

    /// [`send_extension_event_from`](Self::send_extension_event_from), with the world's name for the event when
    /// the caller has it: a batch sending one event about many actors interns its name once. Returns the name.
    pub fn send_named_extension_event_from(
        &mut self,
        sender: Option<OwnerId>,
        actor: ActorId,
        (name, event): (Option<Name>, &str),
    ) -> Result<Name, WorldError> {
        if event.is_empty() {
            return Err(WorldError::Invalid("an event name may not be empty".into()));
        }
        self.actor(actor)?;
        if self.recording && !events::ALL.contains(&event) {
            self.record(|| WorldEvent::EventSent { actor, event: event.to_string() });
        }
        if self.heard.is_on() && !events::ALL.contains(&event) {
            self.heard.push(crate::world::HeardEvent { actor, event: event.to_string() });
        }
        let name = match name {
            Some(name) => name,
            None => self.manager.names.admit(event).map_err(WorldError::Denied)?,
        };
        self.queue_for_chain(actor, name, false, sender)?;
        Ok(name)
    }

    fn queue_for_chain(
        &mut self,
        actor: ActorId,
        event: Name,
        final_event: bool,
        sender: Option<OwnerId>,
    ) -> Result<(), WorldError> {
        let (manager, classes) = self.manager_and_classes_of(actor);
        let Some(classes) = classes else {
            return Err(WorldError::UnknownActor(actor));
        };
        for level in classes {
            queue_for_class(manager, level, actor, event, final_event, sender);
        }
        Ok(())
    }

    /// Live receivers whose class is `class` or a subclass, in spawn order.
    pub fn receivers_of(&self, class: &str) -> Vec<ActorId> {
        self.actors().filter(|a| a.receiver && a.is_a(class)).map(|a| a.id).collect()
    }

    // ----- the work queue -----

    /// Takes the queued work; work queued while it is delivered waits for the next take. Taking also finishes
    /// destroying the actors whose `ReceiverRemoved` the previous take handed out (see
    /// [`destroy`](Self::destroy)).
    pub fn take_work(&mut self) -> Vec<Work> {
        self.settle_ending_actors();
        self.manager.queue.take()
    }

    /// As [`take_work`](Self::take_work), with what each item is charged to. Work about an actor a plugin
    /// spawned is charged to that plugin, whoever's call queued it: a plugin filling the world with actors pays
    /// for what every other plugin is told about them.
    pub fn take_charged_work(&mut self) -> ChargedWork {
        self.settle_ending_actors();
        let mut work = self.manager.queue.take_charged();
        if !self.has_plugin_spawned_actors() {
            return work;
        }
        work.recharge(|item, mut charge| {
            if let Some(spawner) = self.actor(item.actor()).ok().and_then(|a| a.spawned_by) {
                charge.root = Some(spawner);
            }
            charge
        });
        work
    }

    /// Hands back the buffer of a round of work that was delivered, so that later rounds reuse its memory.
    pub fn recycle_work(&mut self, delivered: ChargedWork) {
        self.manager.queue.recycle(delivered);
    }

    /// The plugins whose host calls queued the work still waiting, each once, in the order of their first item.
    pub fn queued_work_senders(&self) -> Vec<OwnerId> {
        let mut senders: Vec<OwnerId> = Vec::new();
        for sender in self.manager.queue.charges().filter_map(|charge| charge.sender) {
            if !senders.contains(&sender) {
                senders.push(sender);
            }
        }
        senders
    }

    /// How many host calls plugins have made into this world: what the init chain's cost is counted in.
    pub fn plugin_calls(&self) -> u64 {
        self.manager.plugin_calls
    }

    /// Runs `f` as `owner` (a plugin's host call): the work it queues is charged to the plugin.
    pub fn acting_as<R>(&mut self, owner: OwnerId, f: impl FnOnce(&mut World) -> R) -> R {
        self.manager.plugin_calls += 1;
        self.manager.queue.act_as(Some(owner));
        self.manager.names.act_as(Some(owner));
        let result = f(self);
        self.manager.names.act_as(None);
        self.manager.queue.act_as(None);
        result
    }

    /// Says whose work the plugins are being handed now (`None`: the host's): the work their calls cause is
    /// charged to that plugin too.
    pub fn delivering_work_of(&mut self, root: Option<OwnerId>) {
        self.manager.queue.delivering(root);
    }

    /// Whether work is queued, waiting to be delivered to plugins.
    pub fn has_work(&self) -> bool {
        !self.manager.queue.is_empty()
    }

    /// Whether queued work still applies. Events and notifications were queued for handlers and subscriptions
    /// live at the time (Unreal would have called them then), so they are always delivered — even when the
    /// plugin dropped the handler or subscription later in the same call; only deactivating or quarantining
    /// the plugin discards them. Chain walks and default-initialization checks act on the world as it is when
    /// they run, so they apply only while their feature is still implemented by the same owner.
    #[inline]
    pub fn is_work_live(&self, work: &Work) -> bool {
        match work {
            Work::Extension { .. } | Work::InitStateChanged { .. } => true,
            Work::PropertyChanged { watch, .. } => self.manager.watches.is_live(*watch),
            Work::ContinueChain { owner, actor, feature }
            | Work::CheckDefaultInitialization { owner, actor, feature } => {
                self.manager.init_states.feature(*actor, *feature).is_some_and(|f| f.owner == *owner)
            }
        }
    }

    /// The text of an interned name.
    pub fn name_text(&self, name: Name) -> &str {
        self.manager.names.text(name)
    }

    /// The world's name for `text`, interning it on first use (names are how events and features are numbered).
    pub fn intern(&mut self, text: &str) -> Name {
        self.manager.names.intern(text)
    }

    /// The text of an interned name, shared (cheap to keep past the world's lock).
    pub fn name_shared(&self, name: Name) -> std::sync::Arc<str> {
        self.manager.names.text(name).clone()
    }

    // ----- init states -----

    /// Replaces the ordered init-state list (done when an experience declares its own).
    pub fn set_init_states(&mut self, states: &[String]) -> Result<(), WorldError> {
        if states.is_empty() || states.len() > u8::MAX as usize {
            return Err(WorldError::Invalid(format!("an init-state list needs 1 to 255 states, not {}", states.len())));
        }
        let order: Vec<Name> = states.iter().map(|s| self.manager.names.intern(s)).collect();
        self.manager.init_states.set_order(order);
        Ok(())
    }

    /// The init states, first to last.
    pub fn init_states(&self) -> Vec<&str> {
        self.manager.init_states.order().iter().map(|n| &**self.manager.names.text(*n)).collect()
    }

    /// The ordinal of a state name (1 for the first).
    pub fn state_ordinal(&self, state: &str) -> Result<u8, WorldError> {
        self.manager
            .names
            .get(state)
            .and_then(|n| self.manager.init_states.ordinal(n))
            .ok_or_else(|| WorldError::UnknownState(state.to_string()))
    }

    /// The name of a state ordinal (`None` for 0 and out of range).
    pub fn state_text(&self, ordinal: u8) -> Option<&str> {
        self.manager.init_states.state_name(ordinal).map(|n| &**self.manager.names.text(n))
    }

    fn feature_name(&self, actor: ActorId, feature: &str) -> Result<Name, WorldError> {
        self.registered_feature(actor, feature).map(|(name, _)| name)
    }

    /// A feature registered on `actor`: its name, and the plugin implementing it.
    fn registered_feature(&self, actor: ActorId, feature: &str) -> Result<(Name, OwnerId), WorldError> {
        self.registered_named(actor, self.manager.names.get(feature), feature)
    }

    /// [`registered_feature`](Self::registered_feature), the feature's name looked up already (`None`: a name
    /// the world never saw); `text` names it in the error.
    fn registered_named(&self, actor: ActorId, name: Option<Name>, text: &str) -> Result<(Name, OwnerId), WorldError> {
        let found = name.and_then(|n| self.manager.init_states.feature(actor, n));
        match (name, found) {
            (Some(name), Some(found)) => Ok((name, found.owner)),
            _ => Err(WorldError::UnknownFeature { actor, feature: text.to_string() }),
        }
    }

    /// The world's name for `text`, if it has one: a caller naming one feature many times (a plugin's batch)
    /// looks it up once.
    pub fn known_name(&self, text: &str) -> Option<Name> {
        self.manager.names.get(text)
    }

    /// Names `owner` introduced into this world.
    pub fn names_introduced_by(&self, owner: OwnerId) -> u32 {
        self.manager.names.introduced_by(owner)
    }

    /// Registers `feature` on `actor`, implemented by `owner`'s `implementer` component on it.
    pub fn register_feature(
        &mut self,
        owner: OwnerId,
        actor: ActorId,
        feature: &str,
        implementer: &str,
    ) -> Result<(), WorldError> {
        // Interned once the registration is accepted: one lookup each, and a refused name is never interned.
        self.register_named_feature(owner, actor, (None, feature), (None, implementer))
    }

    /// [`register_feature`](Self::register_feature), each name with the world's name for it when the caller
    /// looked it up already ([`known_name`](Self::known_name)): a batch of registrations naming the same few
    /// features looks each up once. A name the world does not know yet is interned once the registration is
    /// accepted.
    pub fn register_named_feature(
        &mut self,
        owner: OwnerId,
        actor: ActorId,
        (feature_name, feature): (Option<Name>, &str),
        (implementer_name, implementer): (Option<Name>, &str),
    ) -> Result<(), WorldError> {
        let actor_ref = self.actor(actor)?;
        if actor_ref.component(implementer).is_none() {
            return Err(WorldError::NoSuchComponent { actor, component: implementer.to_string() });
        }
        if feature.is_empty() {
            return Err(WorldError::Invalid("a feature name may not be empty".into()));
        }
        let name = match feature_name {
            Some(name) => name,
            None => self.manager.names.admit(feature).map_err(WorldError::Denied)?,
        };
        if let Some(existing) = self.manager.init_states.feature(actor, name) {
            if existing.owner != owner {
                return Err(WorldError::Denied(format!(
                    "feature {feature:?} of actor {actor} is implemented by {}",
                    self.owner_label(existing.owner)
                )));
            }
        }
        let implementer = match implementer_name {
            Some(name) => name,
            None => self.manager.names.admit(implementer).map_err(WorldError::Denied)?,
        };
        self.manager.init_states.register(actor, name, owner, implementer);
        self.comings.changed(actor);
        Ok(())
    }

    /// Removes a feature `owner` registered.
    pub fn unregister_feature(&mut self, owner: OwnerId, actor: ActorId, feature: &str) -> Result<(), WorldError> {
        let name = self.feature_name(actor, feature)?;
        let entry = self.manager.init_states.feature(actor, name).expect("checked above");
        if entry.owner != owner {
            return Err(WorldError::Denied(format!("feature {feature:?} of actor {actor} is not this plugin's")));
        }
        self.manager.init_states.unregister(actor, name);
        self.comings.changed(actor);
        Ok(())
    }

    /// The plugin implementing a feature of an actor: the only one that may change its state.
    pub fn feature_implementer(&self, actor: ActorId, feature: &str) -> Result<OwnerId, WorldError> {
        self.actor(actor)?;
        let name = self.feature_name(actor, feature)?;
        Ok(self.manager.init_states.feature(actor, name).expect("checked above").owner)
    }

    /// A feature's state ordinal (0: none yet).
    pub fn feature_state(&self, actor: ActorId, feature: &str) -> Result<u8, WorldError> {
        self.actor(actor)?;
        let name = self.feature_name(actor, feature)?;
        Ok(self.manager.init_states.feature(actor, name).expect("checked above").state)
    }

    /// Unreal's `HaveAllFeaturesReachedInitState`: false for an unknown actor, true with no features.
    pub fn have_all_features_reached(&self, actor: ActorId, state: u8, excluding: Option<&str>) -> bool {
        // An actor on its way out (destroyed earlier in the same call) has no features left: "all of none" would
        // hold, and a plugin waiting on it would go on with a dead actor. It answers as an unknown one does.
        if self.actor(actor).is_err() || self.changeable(actor).is_err() {
            return false;
        }
        let excluding = excluding.and_then(|f| self.manager.names.get(f));
        self.manager.init_states.all_reached(actor, state, excluding)
    }

    /// Sets a feature's state (no order enforced) and queues the matching subscriptions' notifications, with
    /// this state as their snapshot.
    pub fn change_feature_state(&mut self, actor: ActorId, feature: &str, state: u8) -> Result<(), WorldError> {
        self.actor(actor)?;
        let name = self.feature_name(actor, feature)?;
        if state == 0 || self.manager.init_states.state_name(state).is_none() {
            return Err(WorldError::UnknownState(format!("#{state}")));
        }
        self.advance_feature(actor, name, state);
        Ok(())
    }

    /// Asks for property `property` of component `component` of each actor to come with `owner`'s chain-step
    /// questions about `feature` (about every feature when `None`; see [`chain_reads`](Self::chain_reads)); a
    /// read already asked for changes nothing.
    pub fn add_chain_read(
        &mut self,
        owner: OwnerId,
        feature: Option<&str>,
        component: &str,
        property: &str,
    ) -> Result<(), WorldError> {
        let feature = feature.map(|f| self.manager.names.admit(f)).transpose().map_err(WorldError::Denied)?;
        let reads = self.manager.chain_reads.get(&owner).map_or(&[][..], Vec::as_slice);
        if reads.iter().any(|r| r.feature == feature && *r.component == *component && r.property == property) {
            return Ok(());
        }
        if reads.len() >= MAX_CHAIN_READS {
            return Err(WorldError::Invalid(format!(
                "a plugin may ask for at most {MAX_CHAIN_READS} properties with its chain steps"
            )));
        }
        let component = self.component_class(component);
        let read = ChainRead { feature, component, property: property.to_string() };
        self.manager.chain_reads.entry(owner).or_default().push(read);
        Ok(())
    }

    /// The properties `owner` asked to come with its chain-step questions, in the order asked.
    pub fn chain_reads(&self, owner: OwnerId) -> &[ChainRead] {
        self.manager.chain_reads.get(&owner).map_or(&[], Vec::as_slice)
    }

    /// The features registered on an actor, with their states (0: none yet), in registration order.
    pub fn feature_states(&self, actor: ActorId) -> impl Iterator<Item = (Name, u8)> + '_ {
        self.manager.init_states.features(actor).iter().map(|f| (f.feature, f.state))
    }

    /// Moves a live actor's registered feature to `state` and queues its subscribers' notifications (a chain
    /// walk's step, or a plugin's change); a feature no longer registered (or an actor gone, whose features went
    /// with it) changes nothing.
    pub fn advance_feature(&mut self, actor: ActorId, feature: Name, state: u8) {
        if !self.manager.init_states.set_state(actor, feature, state) {
            return;
        }
        self.comings.changed(actor);
        if self.recording {
            let feature_text = self.manager.names.text(feature).to_string();
            let state_text = self.state_text(state).unwrap_or("?").to_string();
            self.record(|| WorldEvent::InitStateChanged { actor, feature: feature_text, state: state_text });
        }
        let (manager, classes) = self.manager_and_classes_of(actor);
        // Class subscriptions are rare; only walk the actor's class chain when there are some.
        let chain = classes.filter(|_| manager.init_states.has_class_subscriptions()).unwrap_or_default();
        for watcher in manager.init_states.subscribers(actor, chain, feature, state) {
            let (owner, subscription, number) = (watcher.owner, watcher.id, watcher.number);
            manager.queue.push(Work::InitStateChanged { owner, subscription, number, actor, feature, state });
        }
    }

    /// Queues one subscription's notification that `feature` of `actor` reached `state`.
    fn queue_notification(&mut self, id: SubscriptionId, actor: ActorId, feature: Name, state: u8) {
        let subscription = self.manager.init_states.subscription(id).expect("notified subscriptions are live");
        let (owner, number) = (subscription.owner, subscription.number);
        self.manager.queue.push(Work::InitStateChanged { owner, subscription: id, number, actor, feature, state });
    }

    /// Subscribes `owner` to changes of one actor's features (all when `feature` is `None`) reaching `state` or
    /// later (any change when `None`). With `call_if_reached`, features already there are notified (queued).
    pub fn subscribe_actor(
        &mut self,
        owner: OwnerId,
        actor: ActorId,
        feature: Option<&str>,
        state: Option<u8>,
        call_if_reached: bool,
        number: u32,
    ) -> Result<SubscriptionId, WorldError> {
        self.actor(actor)?;
        let feature = feature.map(|f| self.manager.names.admit(f)).transpose().map_err(WorldError::Denied)?;
        let subscription = Subscription { owner, number, watched: Watched::Actor(actor), feature, state };
        let id = self.manager.init_states.subscribe(subscription);
        if call_if_reached {
            self.queue_reached(id, actor);
        }
        Ok(id)
    }

    /// Subscribes `owner` to changes of `feature` (every feature when `None`) on every actor of `class` (or a
    /// subclass), now and later.
    pub fn subscribe_class(
        &mut self,
        owner: OwnerId,
        class: &str,
        feature: Option<&str>,
        state: Option<u8>,
        call_if_reached: bool,
        number: u32,
    ) -> Result<SubscriptionId, WorldError> {
        let Some(key) = self.classes.key(class) else {
            return Err(WorldError::UnknownClass(class.to_string()));
        };
        let feature = feature.map(|f| self.manager.names.admit(f)).transpose().map_err(WorldError::Denied)?;
        let subscription = Subscription { owner, number, watched: Watched::Class(key), feature, state };
        let id = self.manager.init_states.subscribe(subscription);
        if call_if_reached {
            for actor in self.actors_of_class(class)? {
                self.queue_reached(id, actor);
            }
        }
        Ok(id)
    }

    fn queue_reached(&mut self, id: SubscriptionId, actor: ActorId) {
        let subscription = self.manager.init_states.subscription(id).expect("just subscribed");
        let reached: Vec<(Name, u8)> = self
            .manager
            .init_states
            .features(actor)
            .iter()
            .filter(|f| f.state > 0 && subscription.matches(f.feature, f.state))
            .map(|f| (f.feature, f.state))
            .collect();
        for (feature, state) in reached {
            self.queue_notification(id, actor, feature, state);
        }
    }

    /// Drops a subscription. Notifications queued for it while it was live are still delivered (see
    /// [`is_work_live`](Self::is_work_live)). Unknown ids change nothing.
    pub fn unsubscribe(&mut self, id: SubscriptionId) {
        self.manager.init_states.unsubscribe(id);
    }

    /// Queues a walk of the feature's chain, driven through its implementer's callbacks.
    pub fn continue_init_state_chain(&mut self, actor: ActorId, feature: &str) -> Result<(), WorldError> {
        self.queue_chain_request(actor, feature, false)
    }

    /// [`continue_init_state_chain`](Self::continue_init_state_chain), after asking every other feature of the
    /// actor to move forward when `others_first` (Unreal's `CheckDefaultInitialization` of a coordinating
    /// feature): the feature is looked up once for both, and a feature not registered queues nothing.
    pub fn queue_chain_request(&mut self, actor: ActorId, feature: &str, others_first: bool) -> Result<(), WorldError> {
        self.queue_named_chain_request(actor, self.manager.names.get(feature), feature, others_first)
    }

    /// [`queue_chain_request`](Self::queue_chain_request), the feature's name looked up already with
    /// [`known_name`](Self::known_name); `text` names it in errors.
    pub fn queue_named_chain_request(
        &mut self,
        actor: ActorId,
        feature: Option<Name>,
        text: &str,
        others_first: bool,
    ) -> Result<(), WorldError> {
        self.actor(actor)?;
        let (name, owner) = self.registered_named(actor, feature, text)?;
        if others_first {
            self.queue_implementer_checks(actor, Some(name));
        }
        self.manager.queue.push(Work::ContinueChain { owner, actor, feature: name });
        Ok(())
    }

    /// Queues `check-default-initializations` for every feature of the actor except `except`.
    pub fn check_default_initialization_for_implementers(
        &mut self,
        actor: ActorId,
        except: &str,
    ) -> Result<(), WorldError> {
        self.actor(actor)?;
        let except = self.manager.names.get(except);
        self.queue_implementer_checks(actor, except);
        Ok(())
    }

    /// Queues `check-default-initializations` for every feature of the actor but `except`.
    fn queue_implementer_checks(&mut self, actor: ActorId, except: Option<Name>) {
        let manager = &mut self.manager;
        for f in manager.init_states.features(actor).iter().filter(|f| Some(f.feature) != except) {
            manager.queue.push(Work::CheckDefaultInitialization { owner: f.owner, actor, feature: f.feature });
        }
    }

    /// The next state of a feature's chain and its current one, or `None` at the end of the chain or when the
    /// feature is gone.
    pub fn next_chain_step(&self, actor: ActorId, feature: Name) -> Option<(u8, u8)> {
        let current = self.manager.init_states.feature(actor, feature)?.state;
        let next = current.checked_add(1)?;
        self.manager.init_states.state_name(next).map(|_| (current, next))
    }

    // ----- leak counters -----

    /// How many extension handlers are live in the world: with the counts below, what a world still holds, to
    /// find leaks.
    pub fn live_handlers(&self) -> usize {
        self.manager.handlers.len()
    }

    /// How many init-state subscriptions are live in the world.
    pub fn live_subscriptions(&self) -> usize {
        self.manager.init_states.subscription_count()
    }

    /// How many init-state features are registered in the world, over every actor.
    pub fn live_features(&self) -> usize {
        self.manager.init_states.feature_count()
    }

    /// How many items of work are queued, waiting for delivery.
    pub fn queued_work(&self) -> usize {
        self.manager.queue.len()
    }
}

/// A property a plugin asked to come with its chain-step questions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainRead {
    /// The feature whose questions carry it; `None`: every feature's.
    pub feature: Option<Name>,
    /// The component class whose property is read, on the actor the question is about.
    pub component: crate::world::ClassName,
    /// The property's name.
    pub property: String,
}

impl ChainRead {
    /// Whether a question about `feature` carries this read.
    pub fn concerns(&self, feature: Name) -> bool {
        self.feature.is_none_or(|wanted| wanted == feature)
    }
}

/// Queues `event` about `actor` for every handler registered on `class`, in registration order.
fn queue_for_class(
    manager: &mut ComponentManager,
    class: &ClassKey,
    actor: ActorId,
    event: Name,
    final_event: bool,
    sender: Option<OwnerId>,
) {
    let event_for = |handler: &Recipient| Work::Extension {
        owner: handler.owner,
        handler: handler.id,
        number: handler.number,
        actor,
        event,
        final_event,
        sender,
    };
    match manager.handlers.on_class_all_live(class) {
        Some(handlers) => manager.queue.push_all(handlers.iter().map(event_for)),
        None => manager.queue.push_all(manager.handlers.on_class(class).map(|handler| event_for(&handler))),
    }
}

#[cfg(test)]
mod tests {
    use crate::world::component_manager::RequestFlags;
    use crate::world::{NetMode, World};

    /// An actor destroyed earlier in the same call (on its way out while its handlers hear of it) has not
    /// reached anything: it answers as an unknown actor does, so a plugin waiting on it does not go on.
    #[test]
    fn an_actor_on_its_way_out_has_not_reached_every_state() {
        let mut w = World::new("w", NetMode::Standalone);
        w.set_init_states(&["Spawned".to_string(), "Ready".to_string()]).unwrap();
        let owner = w.register_owner("p");
        let pawn = w.spawn("Character").unwrap();
        let _hero = w.add_component_request(owner, "Character", "Hero", RequestFlags::default()).unwrap();
        w.register_feature(owner, pawn, "Hero", "Hero").unwrap();
        let _handler = w.add_extension_handler(owner, "Character", 1).unwrap();
        let spawned = w.state_ordinal("Spawned").unwrap();
        w.change_feature_state(pawn, "Hero", spawned).unwrap();
        assert!(w.have_all_features_reached(pawn, spawned, None));
        w.destroy(pawn).unwrap();
        assert!(w.actor(pawn).is_ok_and(|a| a.ending), "its handlers are still to hear of it");
        assert!(!w.have_all_features_reached(pawn, spawned, None));
    }
}
