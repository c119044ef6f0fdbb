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
    /// Per plugin, a bit per actor slot.
    bits: HashMap<OwnerId, Vec<u64>>,
    /// The plugins marked since the last [`clear`](Self::clear).
    marked: Vec<OwnerId>,
}

impl HeardOf {
    /// Forgets the last dispatch: nobody heard of anything.
    pub fn clear(&mut self) {
        for owner in self.marked.drain(..) {
            if let Some(bits) = self.bits.get_mut(&owner) {
                bits.fill(0);
            }
        }
    }

    /// Marks that `owner` heard of each of `actors`; returns how many it had not heard of before.
    pub fn hear(&mut self, owner: OwnerId, actors: impl Iterator<Item = ActorId>) -> usize {
        let bits = self.bits.entry(owner).or_default();
        if !self.marked.contains(&owner) {
            self.marked.push(owner);
        }
        let mut new = 0;
        for actor in actors {
            let (word, bit) = (actor.slot() / 64, 1u64 << (actor.slot() % 64));
            if word >= bits.len() {
                bits.resize(word + 1, 0);
            }
            if bits[word] & bit == 0 {
                bits[word] |= bit;
                new += 1;
            }
        }
        new
    }

    /// Forgets a plugin that has left.
    pub fn forget(&mut self, owner: OwnerId) {
        self.bits.remove(&owner);
        self.marked.retain(|marked| *marked != owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_actor_counts_once_per_plugin_per_dispatch() {
        let (a, b) = (OwnerId(1), OwnerId(2));
        let actors = |slots: &[u32]| slots.iter().map(|slot| ActorId::new(*slot, 0)).collect::<Vec<_>>();
        let mut heard = HeardOf::default();
        assert_eq!(heard.hear(a, actors(&[3, 3, 700, 64]).into_iter()), 3);
        assert_eq!(heard.hear(a, actors(&[3, 5]).into_iter()), 1, "a later round: only the new one");
        assert_eq!(heard.hear(b, actors(&[3, 700]).into_iter()), 2, "another plugin hears for itself");
        // An actor spawned in a slot of a destroyed one is the same slot: it counts once a dispatch as well.
        assert_eq!(heard.hear(a, [ActorId::new(3, 1)].into_iter()), 0);
        heard.clear();
        assert_eq!(heard.hear(a, actors(&[3, 700]).into_iter()), 2, "the next dispatch starts again");
        heard.forget(a);
        assert_eq!(heard.hear(a, actors(&[3]).into_iter()), 1);
    }
}
