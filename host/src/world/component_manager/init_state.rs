//! Init-state bookkeeping: the global state order, each actor's features, and subscriptions.
//!
//! States are ordinals: `0` is "no state yet", `n` the n-th state of the order, so "reached" is `>=`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;

use super::names::Name;
use super::{OwnerId, SubscriptionId};
use crate::world::{ActorId, ActorMap, ClassKey, ClassMap};

/// Lyra's init states, registered in this order by its game instance.
pub const LYRA_INIT_STATES: [&str; 4] =
    ["InitState.Spawned", "InitState.DataAvailable", "InitState.DataInitialized", "InitState.GameplayReady"];

/// One feature of one actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureEntry {
    /// The feature's name, unique among the actor's features (registering it again replaces the entry).
    pub feature: Name,
    /// The plugin instance implementing it; its callbacks drive the feature's chain.
    pub owner: OwnerId,
    /// The component class implementing it on the actor.
    pub implementer: Name,
    /// The feature's current init state, as an ordinal: 0 before it reached any, `n` the n-th state of the order.
    pub state: u8,
}

/// What a subscription watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watched {
    /// Changes of one actor's features.
    Actor(ActorId),
    /// Changes of the features of every actor of a class or of its subclasses.
    Class(ClassKey),
}

/// A subscription to init-state changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The plugin instance that subscribed, which hears the changes.
    pub owner: OwnerId,
    /// The plugin's own number for this subscription, returned with every notification.
    pub number: u32,
    /// Whose changes it hears: one actor, or a class.
    pub watched: Watched,
    /// `None`: every feature.
    pub feature: Option<Name>,
    /// `None`: any state; else states at or after this one.
    pub state: Option<u8>,
}

impl Subscription {
    /// Whether a change of `feature` to `state` concerns this subscription (Unreal's filter: the feature
    /// matches, and the new state is at or after the required one).
    pub fn matches(&self, feature: Name, state: u8) -> bool {
        filter_matches(self.feature, self.state, feature, state)
    }
}

/// Unreal's subscription filter: the feature matches (or any), and the new state is at or after the required
/// one (or any).
fn filter_matches(wanted_feature: Option<Name>, wanted_state: Option<u8>, feature: Name, state: u8) -> bool {
    wanted_feature.is_none_or(|f| f == feature) && wanted_state.is_none_or(|required| state >= required)
}

/// What a change needs to know of a subscription watching it, kept in the watched actor's (or class's) list
/// so that notifying does not look each subscription up: the actor's list is all one change touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watcher {
    pub id: SubscriptionId,
    pub owner: OwnerId,
    pub number: u32,
    feature: Option<Name>,
    state: Option<u8>,
}

impl Watcher {
    fn of(id: SubscriptionId, subscription: &Subscription) -> Self {
        let Subscription { owner, number, feature, state, .. } = *subscription;
        Watcher { id, owner, number, feature, state }
    }

    /// [`Subscription::matches`], from the copy.
    fn matches(&self, feature: Name, state: u8) -> bool {
        filter_matches(self.feature, self.state, feature, state)
    }
}

/// The watchers of one actor or class, in registration order. A dropped subscription's watcher is removed at
/// once from a short list holding no stale watchers; otherwise it stays, counted as stale, until the stale ones
/// are half the list, so dropping many subscriptions one by one costs time linear in their number. Only a list
/// holding stale watchers needs each watcher's subscription looked up when notifying.
#[derive(Debug, Default)]
struct Watchers {
    // Inline: an actor has a few watchers, and notifying then reads the map's entry and nothing else.
    list: SmallVec<[Watcher; 2]>,
    stale: usize,
}

impl Watchers {
    /// Lists at most this long drop a watcher at once.
    const EAGER: usize = 32;

    /// Drops subscription `id`'s watcher (`live`: the subscriptions still live, `id` no longer among them).
    fn drop_watcher(&mut self, id: SubscriptionId, live: &HashMap<SubscriptionId, Subscription>) {
        if self.stale == 0 && self.list.len() <= Self::EAGER {
            self.list.retain(|watcher| watcher.id != id);
            return;
        }
        self.stale += 1;
        if self.stale * 2 > self.list.len() {
            self.sweep(live);
        }
    }

    fn sweep(&mut self, live: &HashMap<SubscriptionId, Subscription>) {
        self.list.retain(|watcher| live.contains_key(&watcher.id));
        self.stale = 0;
    }
}

/// Where watcher lists are kept: by actor in a hash map, by class in a [`ClassMap`].
trait WatcherLists<K> {
    fn list_mut(&mut self, key: &K) -> Option<&mut Watchers>;
    fn drop_list(&mut self, key: &K);
}

impl WatcherLists<ActorId> for HashMap<ActorId, Watchers> {
    fn list_mut(&mut self, key: &ActorId) -> Option<&mut Watchers> {
        self.get_mut(key)
    }

    fn drop_list(&mut self, key: &ActorId) {
        self.remove(key);
    }
}

impl WatcherLists<ClassKey> for ClassMap<Watchers> {
    fn list_mut(&mut self, key: &ClassKey) -> Option<&mut Watchers> {
        self.get_mut(key)
    }

    fn drop_list(&mut self, key: &ClassKey) {
        self.remove(key);
    }
}

/// Changes the watcher list of `key`, if it has one, and drops the list once it is empty: an actor or class
/// nobody watches any more holds nothing.
fn update_list<K>(lists: &mut impl WatcherLists<K>, key: &K, change: impl FnOnce(&mut Watchers)) {
    if let Some(watchers) = lists.list_mut(key) {
        change(watchers);
        if watchers.list.is_empty() {
            lists.drop_list(key);
        }
    }
}

/// The init-state data of one world.
#[derive(Debug, Default)]
pub struct InitStates {
    order: Vec<Name>,
    // By slot, inline: an actor has a few features, and every chain step reads them.
    features: ActorMap<SmallVec<[FeatureEntry; 2]>>,
    subscriptions: HashMap<SubscriptionId, Subscription>,
    actor_subscriptions: HashMap<ActorId, Watchers>,
    class_subscriptions: ClassMap<Watchers>,
    /// Live subscriptions watching a class.
    class_watchers: usize,
    next_id: u64,
}

impl InitStates {
    /// Sets the ordered list of states. Features keep their ordinals, so this is for world set-up.
    pub fn set_order(&mut self, order: Vec<Name>) {
        self.order = order;
    }

    /// The world's init states, in order: the state of ordinal `n` is at index `n - 1`.
    pub fn order(&self) -> &[Name] {
        &self.order
    }

    /// The ordinal of a state name.
    pub fn ordinal(&self, state: Name) -> Option<u8> {
        self.order.iter().position(|s| *s == state).map(|i| i as u8 + 1)
    }

    /// The state name of an ordinal (`None` for 0).
    pub fn state_name(&self, ordinal: u8) -> Option<Name> {
        ordinal.checked_sub(1).and_then(|i| self.order.get(i as usize)).copied()
    }

    /// The features registered on `actor`, in registration order; empty when it has none.
    pub fn features(&self, actor: ActorId) -> &[FeatureEntry] {
        self.features.get(actor).map_or(&[], |entries| entries.as_slice())
    }

    /// The entry of one of `actor`'s features, if it is registered.
    pub fn feature(&self, actor: ActorId, feature: Name) -> Option<&FeatureEntry> {
        self.features(actor).iter().find(|f| f.feature == feature)
    }

    /// Registers (or re-registers, keeping its state) a feature.
    pub fn register(&mut self, actor: ActorId, feature: Name, owner: OwnerId, implementer: Name) {
        let entries = self.features.get_or_default(actor);
        match entries.iter_mut().find(|f| f.feature == feature) {
            Some(entry) => {
                entry.owner = owner;
                entry.implementer = implementer;
            }
            None => entries.push(FeatureEntry { feature, owner, implementer, state: 0 }),
        }
    }

    /// Unregisters one of `actor`'s features; `false` when it was not registered.
    pub fn unregister(&mut self, actor: ActorId, feature: Name) -> bool {
        let Some(entries) = self.features.get_mut(actor) else {
            return false;
        };
        let before = entries.len();
        entries.retain(|f| f.feature != feature);
        before != entries.len()
    }

    /// Sets a feature's state. Returns false when the feature is not registered.
    pub fn set_state(&mut self, actor: ActorId, feature: Name, state: u8) -> bool {
        let entry = self.features.get_mut(actor).and_then(|e| e.iter_mut().find(|f| f.feature == feature));
        match entry {
            Some(entry) => {
                entry.state = state;
                true
            }
            None => false,
        }
    }

    /// Unreal's `HaveAllFeaturesReachedInitState`.
    pub fn all_reached(&self, actor: ActorId, state: u8, excluding: Option<Name>) -> bool {
        self.features(actor).iter().filter(|f| Some(f.feature) != excluding).all(|f| f.state >= state)
    }

    /// Adds a subscription; returns its new id.
    pub fn subscribe(&mut self, subscription: Subscription) -> SubscriptionId {
        self.next_id += 1;
        let id = SubscriptionId(self.next_id);
        match &subscription.watched {
            Watched::Actor(actor) => {
                self.actor_subscriptions.entry(*actor).or_default().list.push(Watcher::of(id, &subscription))
            }
            Watched::Class(class) => {
                self.class_watchers += 1;
                self.class_subscriptions.get_or_default(class).list.push(Watcher::of(id, &subscription))
            }
        }
        self.subscriptions.insert(id, subscription);
        id
    }

    /// Drops a subscription; what it was, or `None` if it was not live.
    pub fn unsubscribe(&mut self, id: SubscriptionId) -> Option<Subscription> {
        let subscription = self.subscriptions.remove(&id)?;
        let live = &self.subscriptions;
        let drop_watcher = |watchers: &mut Watchers| watchers.drop_watcher(id, live);
        match &subscription.watched {
            Watched::Actor(actor) => update_list(&mut self.actor_subscriptions, actor, drop_watcher),
            Watched::Class(class) => {
                self.class_watchers -= 1;
                update_list(&mut self.class_subscriptions, class, drop_watcher);
            }
        }
        Some(subscription)
    }

    /// Whether any subscription watches a class (rather than one actor).
    pub fn has_class_subscriptions(&self) -> bool {
        self.class_watchers > 0
    }

    /// The live subscription of this id, if there is one.
    pub fn subscription(&self, id: SubscriptionId) -> Option<&Subscription> {
        self.subscriptions.get(&id)
    }

    /// Subscriptions to notify of a change, in Unreal's order: the actor's, in registration order, then each
    /// class's of the actor's chain (most derived first), in registration order.
    pub fn subscribers<'a>(
        &'a self,
        actor: ActorId,
        class_chain: &'a [ClassKey],
        feature: Name,
        state: u8,
    ) -> impl Iterator<Item = Watcher> + 'a {
        let lists = self.actor_subscriptions.get(&actor).into_iter();
        let lists = lists.chain(class_chain.iter().filter_map(|class| self.class_subscriptions.get(class)));
        lists
            .flat_map(move |watchers| {
                let check_live = watchers.stale > 0;
                watchers.list.iter().filter(move |watcher| {
                    watcher.matches(feature, state) && (!check_live || self.subscriptions.contains_key(&watcher.id))
                })
            })
            .copied()
    }

    /// Forgets an actor: its features and the subscriptions watching it. Returns those subscriptions' ids.
    pub fn remove_actor(&mut self, actor: ActorId) -> Vec<SubscriptionId> {
        self.features.remove(actor);
        let ids: Vec<SubscriptionId> = self
            .actor_subscriptions
            .remove(&actor)
            .unwrap_or_default()
            .list
            .iter()
            .map(|watcher| watcher.id)
            .filter(|id| self.subscriptions.remove(id).is_some())
            .collect();
        ids
    }

    /// Forgets everything of one plugin instance: the features it implements and its subscriptions.
    /// Returns (features removed, subscriptions removed).
    pub fn remove_owner(&mut self, owner: OwnerId) -> (usize, usize) {
        self.remove_owner_telling(owner, |_| {})
    }

    /// [`remove_owner`](Self::remove_owner), calling `lost` with each actor that lost a feature.
    pub fn remove_owner_telling(&mut self, owner: OwnerId, mut lost: impl FnMut(ActorId)) -> (usize, usize) {
        let mut features = 0;
        for (actor, entries) in self.features.iter_mut() {
            let before = entries.len();
            entries.retain(|f| f.owner != owner);
            if entries.len() < before {
                features += before - entries.len();
                lost(actor);
            }
        }
        // Only the lists that watched the owner's subscriptions are swept, each once: time linear in what the
        // owner held and in those lists.
        let (mut actors, mut classes) = (HashSet::default(), HashSet::default());
        let mut removed = 0;
        self.subscriptions.retain(|_, s| {
            let keep = s.owner != owner;
            if !keep {
                removed += 1;
                match &s.watched {
                    Watched::Actor(actor) => drop(actors.insert(*actor)),
                    Watched::Class(class) => {
                        self.class_watchers -= 1;
                        classes.insert(class.clone());
                    }
                }
            }
            keep
        });
        let live = &self.subscriptions;
        for actor in actors {
            update_list(&mut self.actor_subscriptions, &actor, |watchers| watchers.sweep(live));
        }
        for class in classes {
            update_list(&mut self.class_subscriptions, &class, |watchers| watchers.sweep(live));
        }
        (features, removed)
    }

    /// How many features are registered, over every actor.
    pub fn feature_count(&self) -> usize {
        self.features.values().map(|entries| entries.len()).sum()
    }

    /// How many subscriptions are live.
    pub fn subscription_count(&self) -> usize {
        self.subscriptions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::component_manager::names::Names;

    /// A class subscription naming no feature hears every feature of every actor of the class (or a
    /// subclass) that reaches its state, after the actor's own subscriptions.
    #[test]
    fn a_class_subscription_without_a_feature_hears_every_feature_after_the_actors_own() {
        let mut names = Names::default();
        let (hero, extension) = (names.intern("Hero"), names.intern("PawnExtension"));
        let mut states = InitStates::default();
        let pawn = ActorId::from_raw(1);
        let classes = crate::world::ClassRegistry::default();
        let class = Watched::Class(classes.key("Pawn").unwrap());
        let every = states.subscribe(Subscription {
            owner: OwnerId(1),
            number: 1,
            watched: class,
            feature: None,
            state: Some(2),
        });
        let own = Subscription {
            owner: OwnerId(2),
            number: 2,
            watched: Watched::Actor(pawn),
            feature: Some(hero),
            state: None,
        };
        let own = states.subscribe(own);
        let chain = classes.shared_chain("Character").unwrap();
        let heard = |feature, state| states.subscribers(pawn, &chain, feature, state).map(|w| w.id).collect::<Vec<_>>();
        assert_eq!(heard(hero, 2), [own, every]);
        assert_eq!(heard(extension, 3), [every]);
        assert_eq!(heard(extension, 1), [], "below the state it waits for");
        assert_eq!(heard(hero, 1), [own]);
        let elsewhere = classes.shared_chain("PlayerState").unwrap();
        assert_eq!(states.subscribers(pawn, &elsewhere, extension, 3).count(), 0, "an actor of another class");
    }

    /// Removing a plugin's subscriptions — all at once, or one by one — takes time linear in their number: a
    /// hundred thousand of them on one actor or class used to take minutes.
    #[test]
    fn many_subscriptions_are_removed_in_linear_time() {
        let mut names = Names::default();
        let feature = names.intern("F");
        let mut states = InitStates::default();
        let actor = ActorId::from_raw(1);
        let (owner, other) = (OwnerId(1), OwnerId(2));
        let pawn_class = crate::world::ClassRegistry::default().key("Pawn").unwrap();
        let subscribe = |states: &mut InitStates, owner, watched: Watched| {
            states.subscribe(Subscription { owner, number: 0, watched, feature: Some(feature), state: None })
        };
        let mut mine = Vec::new();
        for i in 0..100_000 {
            let watched = if i % 2 == 0 { Watched::Actor(actor) } else { Watched::Class(pawn_class.clone()) };
            mine.push(subscribe(&mut states, owner, watched));
        }
        let kept = subscribe(&mut states, other, Watched::Actor(actor));
        assert_eq!(states.remove_owner(owner), (0, 100_000));
        assert!(!states.has_class_subscriptions());
        let pawn = [pawn_class];
        assert_eq!(states.subscribers(actor, &pawn, feature, 1).map(|w| w.id).collect::<Vec<_>>(), [kept]);

        let many: Vec<_> = (0..100_000).map(|_| subscribe(&mut states, owner, Watched::Actor(actor))).collect();
        for id in many {
            states.unsubscribe(id);
        }
        assert_eq!(states.subscription_count(), 1);
        let left = &states.actor_subscriptions[&actor];
        assert!(left.list.len() <= 2 * (1 + left.stale), "stale watchers are swept");
        assert_eq!(states.subscribers(actor, &pawn, feature, 1).map(|w| w.id).collect::<Vec<_>>(), [kept]);
        assert!(mine.iter().all(|id| states.subscription(*id).is_none()));
        assert!(states.class_subscriptions.is_empty(), "the class nobody watches holds no list");
        states.unsubscribe(kept);
        assert!(states.actor_subscriptions.is_empty(), "nor the actor");
    }
}
