//! Which of the game's actors each plugin heard about in one dispatch: a plugin may cause work in proportion
//! to them (`DispatchLimits::per_game_actor`), each counted once however many handlers it holds.
//!
//! One bit per actor slot per plugin, kept from dispatch to dispatch and cleared for the plugins marked in the
//! last one. A frame delivering the game's events about a thousand actors to a hundred plugins marks 100,000
//! of them: a hash set of (plugin, actor) pairs, grown afresh each dispatch, took a quarter of such a frame.

use rustc_hash::FxHashMap as HashMap;

use crate::world::component_manager::OwnerId;
use crate::world::ActorId;

#[derive(Debug, Default)]
pub(super) struct HeardOf {
    /// A bit per actor slot, per plugin (by [`slot_of`](Self::slot_of)).
    bits: Vec<Vec<u64>>,
    slots: HashMap<OwnerId, usize>,
    /// The plugins marked since the last [`clear`](Self::clear), by slot.
    marked: Vec<usize>,
}

impl HeardOf {
    /// Forgets the last dispatch: nobody heard of anything.
    pub fn clear(&mut self) {
        for slot in self.marked.drain(..) {
            self.bits[slot].fill(0);
        }
    }

    /// Where `owner`'s bits are, for [`hear_in`](Self::hear_in): looked up once per run of the game's work, not
    /// per actor.
    pub fn slot_of(&mut self, owner: OwnerId) -> usize {
        let bits = &mut self.bits;
        let slot = *self.slots.entry(owner).or_insert_with(|| {
            bits.push(Vec::new());
            bits.len() - 1
        });
        if !self.marked.contains(&slot) {
            self.marked.push(slot);
        }
        slot
    }

    /// Marks that `owner` heard of each of `actors`; how many it had not heard of before in the dispatch.
    pub fn hear_all(&mut self, owner: OwnerId, actors: impl Iterator<Item = ActorId>) -> usize {
        let slot = self.slot_of(owner);
        actors.filter(|actor| self.hear_in(slot, *actor)).count()
    }

    /// Marks that the plugin at `slot` heard of `actor`; whether it had not before.
    #[inline]
    pub fn hear_in(&mut self, slot: usize, actor: ActorId) -> bool {
        let bits = &mut self.bits[slot];
        let (word, bit) = (actor.slot() / 64, 1u64 << (actor.slot() % 64));
        if word >= bits.len() {
            bits.resize(word + 1, 0);
        }
        let new = bits[word] & bit == 0;
        bits[word] |= bit;
        new
    }

    /// Forgets a plugin that has left (its bits are reused by the next plugin to come).
    pub fn forget(&mut self, owner: OwnerId) {
        if let Some(slot) = self.slots.remove(&owner) {
            self.bits[slot].fill(0);
            let last = self.bits.len() - 1;
            if slot != last {
                // The last plugin's bits move into the freed place.
                self.bits.swap(slot, last);
                if let Some(moved) = self.slots.values_mut().find(|s| **s == last) {
                    *moved = slot;
                }
                for marked in &mut self.marked {
                    if *marked == last {
                        *marked = slot;
                    }
                }
            }
            self.bits.pop();
            self.marked.retain(|marked| *marked < self.bits.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hear(heard: &mut HeardOf, owner: OwnerId, slots: &[u32]) -> usize {
        let slot = heard.slot_of(owner);
        slots.iter().filter(|actor| heard.hear_in(slot, ActorId::new(**actor, 0))).count()
    }

    #[test]
    fn each_actor_counts_once_per_plugin_per_dispatch() {
        let (a, b, c) = (OwnerId(1), OwnerId(2), OwnerId(3));
        let mut heard = HeardOf::default();
        assert_eq!(hear(&mut heard, a, &[3, 3, 700, 64]), 3);
        assert_eq!(hear(&mut heard, a, &[3, 5]), 1, "a later round: only the new one");
        assert_eq!(hear(&mut heard, b, &[3, 700]), 2, "another plugin hears for itself");
        // An actor spawned in a slot of a destroyed one is the same slot: it counts once a dispatch as well.
        let slot = heard.slot_of(a);
        assert!(!heard.hear_in(slot, ActorId::new(3, 1)));
        heard.clear();
        assert_eq!(hear(&mut heard, a, &[3, 700]), 2, "the next dispatch starts again");
        assert_eq!(hear(&mut heard, c, &[9]), 1);
        // A plugin leaving hands its place to the last one, which keeps what it heard.
        heard.forget(a);
        assert_eq!(hear(&mut heard, c, &[9, 10]), 1);
        assert_eq!(hear(&mut heard, a, &[3]), 1, "a plugin back starts afresh");
        heard.clear();
        assert_eq!(hear(&mut heard, c, &[9]), 1);
    }
}
