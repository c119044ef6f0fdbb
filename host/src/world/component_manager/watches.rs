//! Property watches: a plugin's standing request to hear when one property of one actor's component changes —
//! whether the component exists yet or not (seed 002's deferred change callbacks). A watch set up before a
//! lazy component is created (or, on a client, replicated) hears the changes that create or bring it, in the
//! order they are applied, then the live ones.
//!
//! Every index is an ordered set of watch ids (ids grow, so id order is setup order): removing one watch costs
//! a logarithm, not a scan, so tearing down a plugin's hundred thousand watches on one actor is linear in them.

use std::collections::{BTreeSet, HashMap};

use super::OwnerId;
use crate::world::ActorId;

/// A live property watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchId(pub(crate) u64);

/// Who set up a watch, and under which number it is told of changes.
#[derive(Debug, Clone)]
pub struct Watch {
    /// The plugin instance that set up the watch, which hears the changes.
    pub owner: OwnerId,
    /// The number the plugin gave it.
    pub number: u32,
}

type PropertyKey = (ActorId, String, String);

/// Every watch of a world, by what it watches and by who set it up.
#[derive(Debug, Default)]
pub struct PropertyWatches {
    next: u64,
    by_property: HashMap<PropertyKey, BTreeSet<WatchId>>,
    by_actor: HashMap<ActorId, BTreeSet<WatchId>>,
    by_owner: HashMap<OwnerId, BTreeSet<WatchId>>,
    watches: HashMap<WatchId, (Watch, PropertyKey)>,
}

/// Takes `id` out of the set under `key`, and the set out of `index` once it is empty.
fn unindex<K: std::hash::Hash + Eq>(index: &mut HashMap<K, BTreeSet<WatchId>>, key: &K, id: WatchId) {
    if let Some(ids) = index.get_mut(key) {
        ids.remove(&id);
        if ids.is_empty() {
            index.remove(key);
        }
    }
}

impl PropertyWatches {
    /// Starts a watch of `owner` on `property` of `actor`'s `component` (which need not exist yet); returns its new
    /// id.
    pub fn add(&mut self, owner: OwnerId, actor: ActorId, component: &str, property: &str, number: u32) -> WatchId {
        self.next += 1;
        let id = WatchId(self.next);
        let key = (actor, component.to_string(), property.to_string());
        self.by_property.entry(key.clone()).or_default().insert(id);
        self.by_actor.entry(actor).or_default().insert(id);
        self.by_owner.entry(owner).or_default().insert(id);
        self.watches.insert(id, (Watch { owner, number }, key));
        id
    }

    /// Stops a watch; unknown ids change nothing.
    pub fn remove(&mut self, id: WatchId) {
        let Some((watch, key)) = self.watches.remove(&id) else { return };
        unindex(&mut self.by_property, &key, id);
        unindex(&mut self.by_actor, &key.0, id);
        unindex(&mut self.by_owner, &watch.owner, id);
    }

    /// Stops every watch of an owner; how many there were.
    pub fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let ids = self.by_owner.remove(&owner).unwrap_or_default();
        ids.iter().for_each(|id| self.remove(*id));
        ids.len()
    }

    /// Stops every watch of an actor (it is gone: nothing of it can change any more).
    pub fn remove_actor(&mut self, actor: ActorId) {
        for id in self.by_actor.remove(&actor).unwrap_or_default() {
            self.remove(id);
        }
    }

    /// The watches of one property, in the order they were set up.
    pub fn of(&self, actor: ActorId, component: &str, property: &str) -> Vec<(WatchId, Watch)> {
        if self.watches.is_empty() {
            return Vec::new();
        }
        let key = (actor, component.to_string(), property.to_string());
        self.by_property.get(&key).into_iter().flatten().map(|id| (*id, self.watches[id].0.clone())).collect()
    }

    /// Whether the watch is still set up.
    pub fn is_live(&self, id: WatchId) -> bool {
        self.watches.contains_key(&id)
    }

    /// How many watches are live.
    pub fn len(&self) -> usize {
        self.watches.len()
    }

    /// Whether no watch is live.
    pub fn is_empty(&self) -> bool {
        self.watches.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(found: &[(WatchId, Watch)]) -> Vec<u32> {
        found.iter().map(|(_, w)| w.number).collect()
    }

    #[test]
    fn a_property_hears_its_watches_in_setup_order_and_a_removed_one_no_more() {
        let mut watches = PropertyWatches::default();
        let ids: Vec<WatchId> =
            (0..5).map(|n| watches.add(OwnerId(1 + n % 2), ActorId::from_raw(7), "Health", "hp", n)).collect();
        watches.add(OwnerId(1), ActorId::from_raw(7), "Health", "armor", 9);
        assert_eq!(numbers(&watches.of(ActorId::from_raw(7), "Health", "hp")), [0, 1, 2, 3, 4]);
        watches.remove(ids[2]);
        watches.remove(ids[2]);
        assert_eq!(numbers(&watches.of(ActorId::from_raw(7), "Health", "hp")), [0, 1, 3, 4]);
        assert!(!watches.is_live(ids[2]) && watches.is_live(ids[3]));
    }

    #[test]
    fn an_owner_leaving_takes_only_its_own_watches_from_every_index() {
        let mut watches = PropertyWatches::default();
        for n in 0..100 {
            watches.add(OwnerId(1 + n % 2), ActorId::from_raw(u64::from(n % 3)), "Health", "hp", n);
        }
        assert_eq!(watches.remove_owner(OwnerId(1)), 50);
        assert_eq!(watches.remove_owner(OwnerId(1)), 0);
        assert_eq!(watches.len(), 50);
        assert!(!watches.by_owner.contains_key(&OwnerId(1)));
        for actor in 0..3 {
            let found = watches.of(ActorId::from_raw(actor), "Health", "hp");
            assert!(found.iter().all(|(_, w)| w.owner == OwnerId(2)), "actor {actor}");
        }
        watches.remove_actor(ActorId::from_raw(0));
        assert!(watches.of(ActorId::from_raw(0), "Health", "hp").is_empty());
        let left = watches.len();
        assert_eq!(watches.remove_owner(OwnerId(2)), left);
        assert!(watches.is_empty());
    }

    #[test]
    fn the_last_watch_removed_leaves_no_empty_entry_behind() {
        let mut watches = PropertyWatches::default();
        let ids: Vec<WatchId> = (0..1000).map(|n| watches.add(OwnerId(1), ActorId::from_raw(1), "C", "p", n)).collect();
        ids.iter().rev().for_each(|id| watches.remove(*id));
        assert!(watches.is_empty());
        assert!(watches.by_property.is_empty() && watches.by_actor.is_empty() && watches.by_owner.is_empty());
    }
}
