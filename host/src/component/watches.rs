//! Property watches: a plugin's standing request to hear when one property of one actor's component changes —
//! whether the component exists yet or not (seed 002's deferred change callbacks). A watch set up before a
//! lazy component is created (or, on a client, replicated) hears the changes that create or bring it, in the
//! order they are applied, then the live ones.

use std::collections::HashMap;

use super::OwnerId;
use crate::world::ActorId;

/// A live property watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchId(pub(crate) u64);

#[derive(Debug, Clone)]
pub struct Watch {
    pub owner: OwnerId,
    /// The number the plugin gave it.
    pub number: u32,
}

/// Every watch of a world, by what it watches.
#[derive(Debug, Default)]
pub struct PropertyWatches {
    next: u64,
    by_property: HashMap<(ActorId, String, String), Vec<WatchId>>,
    by_actor: HashMap<ActorId, Vec<WatchId>>,
    watches: HashMap<WatchId, (Watch, (ActorId, String, String))>,
}

impl PropertyWatches {
    pub fn add(&mut self, owner: OwnerId, actor: ActorId, component: &str, property: &str, number: u32) -> WatchId {
        self.next += 1;
        let id = WatchId(self.next);
        let key = (actor, component.to_string(), property.to_string());
        self.by_property.entry(key.clone()).or_default().push(id);
        self.by_actor.entry(actor).or_default().push(id);
        self.watches.insert(id, (Watch { owner, number }, key));
        id
    }

    /// Stops a watch; unknown ids change nothing.
    pub fn remove(&mut self, id: WatchId) {
        let Some((_, key)) = self.watches.remove(&id) else { return };
        if let Some(ids) = self.by_property.get_mut(&key) {
            ids.retain(|w| *w != id);
            if ids.is_empty() {
                self.by_property.remove(&key);
            }
        }
        if let Some(ids) = self.by_actor.get_mut(&key.0) {
            ids.retain(|w| *w != id);
            if ids.is_empty() {
                self.by_actor.remove(&key.0);
            }
        }
    }

    /// Stops every watch of an owner; how many there were.
    pub fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let ids: Vec<WatchId> = self.watches.iter().filter(|(_, (w, _))| w.owner == owner).map(|(id, _)| *id).collect();
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

    pub fn is_live(&self, id: WatchId) -> bool {
        self.watches.contains_key(&id)
    }

    pub fn len(&self) -> usize {
        self.watches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.watches.is_empty()
    }
}
