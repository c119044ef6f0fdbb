//! Where a world keeps its actors: generational slots in two ranges.
//!
//! Replicas on a client carry the ids their server gave them, so that an actor id means the same actor on every
//! machine (in logs, in properties holding actor ids, in what plugins compare). Actors a client spawns for
//! itself (cosmetic, client-only) must then never take a slot the server may use: they live in a range of their
//! own, marked by the top bit of the slot number.

use super::actor::{Actor, ActorId};

/// Slot numbers with this bit set are a client's own actors.
const LOCAL_BIT: u32 = 1 << 31;

/// How far past the replicas a client has placed a replica's slot may be: a server hands out slots in order (a
/// slot is never beyond the actors it ever had), so a slot far beyond is a broken or hostile server, not a reason
/// to allocate. Counted from the replicas placed, not from the slots there are, so spawns that each reach the gap
/// further on cannot grow a client's slots by the gap each time.
const MAX_SLOT_GAP: usize = 1 << 16;

#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) generation: u32,
    pub(super) actor: Option<Actor>,
}

#[derive(Debug, Default)]
struct Range {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Replicas placed in this range so far (a client's main range).
    placed: usize,
}

/// The actor slots of one world.
#[derive(Debug, Default)]
pub(super) struct Slots {
    main: Range,
    local: Range,
}

impl Slots {
    fn range_of(&self, slot: u32) -> (&Range, usize) {
        match slot & LOCAL_BIT {
            0 => (&self.main, slot as usize),
            _ => (&self.local, (slot & !LOCAL_BIT) as usize),
        }
    }

    fn range_of_mut(&mut self, slot: u32) -> (&mut Range, usize) {
        match slot & LOCAL_BIT {
            0 => (&mut self.main, slot as usize),
            _ => (&mut self.local, (slot & !LOCAL_BIT) as usize),
        }
    }

    /// The slot an id names, whatever its generation.
    pub(super) fn slot(&self, id: ActorId) -> Option<&Slot> {
        let (range, index) = self.range_of(id.slot() as u32);
        range.slots.get(index)
    }

    pub(super) fn slot_mut(&mut self, id: ActorId) -> Option<&mut Slot> {
        let (range, index) = self.range_of_mut(id.slot() as u32);
        range.slots.get_mut(index)
    }

    /// The actor an id names, if it is the one now in its slot.
    pub(super) fn live_actor(&self, id: ActorId) -> Option<&super::Actor> {
        self.slot(id).filter(|s| s.generation == id.generation()).and_then(|s| s.actor.as_ref())
    }

    /// [`live_actor`](Self::live_actor), to change.
    pub(super) fn live_actor_mut(&mut self, id: ActorId) -> Option<&mut super::Actor> {
        self.slot_mut(id).filter(|s| s.generation == id.generation()).and_then(|s| s.actor.as_mut())
    }

    /// Whether an id names the actor now in its slot.
    pub(super) fn is_live(&self, id: ActorId) -> bool {
        self.live_actor(id).is_some()
    }

    /// An empty slot for a new actor, from the client-only range when `local`; the id the actor gets.
    pub(super) fn allocate(&mut self, local: bool) -> ActorId {
        let (range, bit) = if local { (&mut self.local, LOCAL_BIT) } else { (&mut self.main, 0) };
        let index = match range.free.pop() {
            Some(index) => index,
            None => {
                range.slots.push(Slot::default());
                (range.slots.len() - 1) as u32
            }
        };
        ActorId::new(index | bit, range.slots[index as usize].generation)
    }

    /// The slot of a replica's id, made ready for it: `None` when it is in the client-only range, far beyond the
    /// slots there are, or holds a live actor (the server never hands out a live actor's slot).
    pub(super) fn place(&mut self, id: ActorId) -> Option<&mut Slot> {
        let slot = id.slot() as u32;
        if slot & LOCAL_BIT != 0 {
            return None;
        }
        let index = slot as usize;
        if index > self.main.placed + MAX_SLOT_GAP {
            return None;
        }
        if self.main.slots.len() <= index {
            self.main.slots.resize_with(index + 1, Slot::default);
        }
        let entry = &mut self.main.slots[index];
        if entry.actor.is_some() {
            return None;
        }
        entry.generation = id.generation();
        self.main.placed += 1;
        Some(&mut self.main.slots[index])
    }

    /// Empties a live actor's slot for reuse: the id names nobody from now on.
    pub(super) fn free(&mut self, id: ActorId) -> Option<Actor> {
        let (range, index) = self.range_of_mut(id.slot() as u32);
        let entry = range.slots.get_mut(index).filter(|s| s.generation == id.generation())?;
        let actor = entry.actor.take()?;
        entry.generation = entry.generation.wrapping_add(1);
        range.free.push(index as u32);
        Some(actor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_take_the_server_slots_and_local_actors_their_own_range() {
        let mut server = Slots::default();
        let a = server.allocate(false);
        let b = server.allocate(false);
        let mut client = Slots::default();
        let own = client.allocate(true);
        assert!(client.place(b).is_some());
        assert!(client.place(a).is_some());
        assert_ne!(own.slot(), a.slot());
        assert_ne!(own.slot(), b.slot());
        assert!(client.place(own).is_none(), "a replica never lands in the client-only range");
        assert!(client.place(ActorId::new(0x7fff_fff0, 0)).is_none(), "nor gigabytes beyond the slots there are");
    }

    /// A hostile server spawning each replica a gap further on grows a client's slots by the gap once, not each
    /// time.
    #[test]
    fn replicas_placed_ever_further_away_are_refused_past_one_gap() {
        let mut client = Slots::default();
        let mut refused = 0;
        for step in 1..=100u32 {
            let far = ActorId::new(step * MAX_SLOT_GAP as u32, 0);
            refused += usize::from(client.place(far).is_none());
        }
        assert_eq!(refused, 99);
        assert!(client.main.slots.len() <= 2 * MAX_SLOT_GAP + 1, "{}", client.main.slots.len());
    }
}
