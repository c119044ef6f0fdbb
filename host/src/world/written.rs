//! Properties plugins wrote: who wrote which, and how many bytes of the host's memory each plugin's properties
//! hold, so that a plugin cannot grow the host without bound one small write at a time, and what it wrote
//! goes with it.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::actor::Value;
use super::ActorId;
use crate::world::component_manager::OwnerId;

/// Bytes a property is charged: its name, its value, and a fixed share for the map entry holding it.
pub fn charge_of(name: &str, value: &Value) -> usize {
    const ENTRY: usize = 48;
    let value = match value {
        Value::Text(text) => text.len(),
        _ => 8,
    };
    ENTRY + name.len() + value
}

/// A property, by actor, component class and name.
pub type PropertyKey = (ActorId, String, String);

/// The properties each plugin wrote and what they cost.
#[derive(Debug, Default)]
pub struct Written {
    by_owner: HashMap<OwnerId, OwnerWrites>,
}

#[derive(Debug, Default)]
struct OwnerWrites {
    bytes: usize,
    properties: HashSet<PropertyKey>,
}

impl Written {
    /// The bytes `owner`'s properties hold.
    pub fn bytes_of(&self, owner: OwnerId) -> usize {
        self.by_owner.get(&owner).map_or(0, |w| w.bytes)
    }

    /// Records that `owner` now holds `key`, costing `bytes`.
    pub fn charge(&mut self, owner: OwnerId, key: PropertyKey, bytes: usize) {
        let writes = self.by_owner.entry(owner).or_default();
        writes.bytes += bytes;
        writes.properties.insert(key);
    }

    /// Records that `owner` no longer holds `key`, which cost `bytes`.
    pub fn credit(&mut self, owner: OwnerId, key: &PropertyKey, bytes: usize) {
        if let Some(writes) = self.by_owner.get_mut(&owner) {
            writes.bytes = writes.bytes.saturating_sub(bytes);
            writes.properties.remove(key);
        }
    }

    /// Forgets everything `owner` wrote, returning the properties to remove.
    pub fn take_owner(&mut self, owner: OwnerId) -> Vec<PropertyKey> {
        self.by_owner.remove(&owner).map(|w| w.properties.into_iter().collect()).unwrap_or_default()
    }
}
