//! Extension handlers: which plugin wants events about which receiver class.

use rustc_hash::FxHashMap as HashMap;

use super::{HandlerId, OwnerId};
use crate::world::{ClassKey, ClassMap};

/// A registered handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// The handler's id in this world, never reused.
    pub id: HandlerId,
    /// The plugin instance that added it, which hears its events.
    pub owner: OwnerId,
    /// The receiver class it listens to: it hears about actors of this class and of its subclasses.
    pub receiver_class: String,
    /// The plugin's own number for this handler, returned with every event.
    pub number: u32,
}

/// What an event for a handler needs of it: who gets it, under which number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipient {
    pub id: HandlerId,
    pub owner: OwnerId,
    pub number: u32,
}

/// The live handlers of one world, in registration order, with an index by receiver class. Removed handlers
/// leave their ids in the orders until those are swept (once they outnumber the live ones), so that removing
/// handlers — one by one, or all of a plugin's — costs time linear in their number. The index holds what an
/// event needs of each handler, so that while none was removed, sending an event looks up nothing but its class.
#[derive(Debug, Default)]
pub struct ExtensionHandlers {
    live: HashMap<HandlerId, Handler>,
    order: Vec<HandlerId>,
    by_class: ClassMap<Vec<Recipient>>,
    stale: usize,
    next_id: u64,
}

impl ExtensionHandlers {
    /// Registers a handler of `owner` on `receiver_class`, under the plugin's own `number`; returns its new id.
    pub fn add(&mut self, owner: OwnerId, receiver_class: &ClassKey, number: u32) -> HandlerId {
        self.next_id += 1;
        let id = HandlerId(self.next_id);
        self.live.insert(id, Handler { id, owner, receiver_class: receiver_class.to_string(), number });
        self.order.push(id);
        self.by_class.get_or_default(receiver_class).push(Recipient { id, owner, number });
        id
    }

    /// Unregisters a handler; the handler it was, or `None` if it was not live.
    pub fn remove(&mut self, id: HandlerId) -> Option<Handler> {
        let handler = self.live.remove(&id)?;
        self.stale += 1;
        if self.stale > self.live.len().max(64) {
            let live = &self.live;
            self.order.retain(|h| live.contains_key(h));
            for recipients in self.by_class.values_mut() {
                recipients.retain(|r| live.contains_key(&r.id));
            }
            self.by_class.retain(|_, ids| !ids.is_empty());
            self.stale = 0;
        }
        Some(handler)
    }

    /// The live handler of this id, if there is one.
    pub fn get(&self, id: HandlerId) -> Option<&Handler> {
        self.live.get(&id)
    }

    /// Whether the handler is still registered.
    pub fn is_live(&self, id: HandlerId) -> bool {
        self.live.contains_key(&id)
    }

    /// Handlers registered on exactly `class`, in registration order.
    pub fn on_class<'a>(&'a self, class: &ClassKey) -> impl Iterator<Item = Recipient> + 'a {
        let check_live = self.stale > 0;
        let recipients = self.by_class.get(class).into_iter().flatten();
        recipients.filter(move |r| !check_live || self.live.contains_key(&r.id)).copied()
    }

    /// Handlers registered on exactly `class`, in registration order, as a slice while none of them can have been
    /// removed (`None` otherwise: ask [`on_class`](Self::on_class)). A slice's length is known, so queueing an
    /// event for each is one reservation and a copy per handler.
    pub fn on_class_all_live(&self, class: &ClassKey) -> Option<&[Recipient]> {
        (self.stale == 0).then(|| self.by_class.get(class).map_or(&[][..], Vec::as_slice))
    }

    /// Handlers of one plugin instance, in registration order.
    pub fn of_owner(&self, owner: OwnerId) -> Vec<HandlerId> {
        self.order.iter().copied().filter(|id| self.live.get(id).is_some_and(|h| h.owner == owner)).collect()
    }

    /// How many handlers are live.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no handler is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Removing a hundred thousand handlers takes time linear in their number, and the index stays exact.
    #[test]
    fn many_handlers_are_removed_in_linear_time() {
        let pawn = crate::world::ClassRegistry::default().key("Pawn").unwrap();
        let mut handlers = ExtensionHandlers::default();
        let ids: Vec<HandlerId> = (0..100_000).map(|i| handlers.add(OwnerId(1), &pawn, i)).collect();
        let kept = handlers.add(OwnerId(2), &pawn, 7);
        for id in handlers.of_owner(OwnerId(1)) {
            handlers.remove(id);
        }
        assert_eq!(handlers.on_class(&pawn).map(|h| h.id).collect::<Vec<_>>(), [kept]);
        let mut few = ExtensionHandlers::default();
        let (gone, stays) = (few.add(OwnerId(1), &pawn, 1), few.add(OwnerId(2), &pawn, 2));
        few.remove(gone);
        let heard: Vec<Recipient> = few.on_class(&pawn).collect();
        assert_eq!(heard, [Recipient { id: stays, owner: OwnerId(2), number: 2 }], "removed, not yet swept");
        assert!(ids.iter().all(|id| !handlers.is_live(*id)));
        assert_eq!(handlers.len(), 1);
    }
}
