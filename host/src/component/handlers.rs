//! Extension handlers: which plugin wants events about which receiver class.

use rustc_hash::FxHashMap as HashMap;

use super::{HandlerId, OwnerId};

/// A registered handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    pub id: HandlerId,
    pub owner: OwnerId,
    pub receiver_class: String,
    /// The plugin's own number for this handler, returned with every event.
    pub number: u32,
}

/// The live handlers of one world, in registration order.
#[derive(Debug, Default)]
pub struct ExtensionHandlers {
    live: HashMap<HandlerId, Handler>,
    order: Vec<HandlerId>,
    next_id: u64,
}

impl ExtensionHandlers {
    pub fn add(&mut self, owner: OwnerId, receiver_class: &str, number: u32) -> HandlerId {
        self.next_id += 1;
        let id = HandlerId(self.next_id);
        self.live.insert(id, Handler { id, owner, receiver_class: receiver_class.to_string(), number });
        self.order.push(id);
        id
    }

    pub fn remove(&mut self, id: HandlerId) -> Option<Handler> {
        let handler = self.live.remove(&id)?;
        self.order.retain(|h| *h != id);
        Some(handler)
    }

    pub fn get(&self, id: HandlerId) -> Option<&Handler> {
        self.live.get(&id)
    }

    pub fn is_live(&self, id: HandlerId) -> bool {
        self.live.contains_key(&id)
    }

    /// Handlers registered on exactly `class`, in registration order.
    pub fn on_class<'a>(&'a self, class: &'a str) -> impl Iterator<Item = &'a Handler> + 'a {
        self.order.iter().map(|id| &self.live[id]).filter(move |h| h.receiver_class == class)
    }

    /// Handlers of one plugin instance.
    pub fn of_owner(&self, owner: OwnerId) -> Vec<HandlerId> {
        self.order.iter().copied().filter(|id| self.live[id].owner == owner).collect()
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}
