//! Values kept per actor, stored by the actor's slot.
//!
//! The init-state tables are read for every pawn on every round of a chain walk. Keyed by actor in a hash map,
//! each read hashes the id and touches the map's control bytes and then its bucket, and the map rehashes
//! (copying every entry) as the world grows. Stored by slot, a read indexes a vector and compares the id, whose
//! generation tells a reused slot's new actor from the one before; the vectors grow to the most actors alive at
//! once, and slots are reused.

use super::actor::ActorId;

/// Slot numbers with this bit set are a client's own actors (see `slots`): they get a vector of their own.
const LOCAL_BIT: usize = 1 << 31;

/// A value per actor.
#[derive(Debug, Clone)]
pub struct ActorMap<T> {
    main: Vec<Option<(ActorId, T)>>,
    local: Vec<Option<(ActorId, T)>>,
    len: usize,
}

impl<T> Default for ActorMap<T> {
    fn default() -> Self {
        ActorMap { main: Vec::new(), local: Vec::new(), len: 0 }
    }
}

impl<T> ActorMap<T> {
    /// The vector and index of `actor`'s slot.
    fn place(actor: ActorId) -> (bool, usize) {
        let slot = actor.slot();
        (slot & LOCAL_BIT != 0, slot & !LOCAL_BIT)
    }

    fn range(&self, local: bool) -> &Vec<Option<(ActorId, T)>> {
        if local {
            &self.local
        } else {
            &self.main
        }
    }

    fn range_mut(&mut self, local: bool) -> &mut Vec<Option<(ActorId, T)>> {
        if local {
            &mut self.local
        } else {
            &mut self.main
        }
    }

    /// `actor`'s value; `None` when it has none, or the value was left by an earlier actor of its slot.
    pub fn get(&self, actor: ActorId) -> Option<&T> {
        let (local, index) = Self::place(actor);
        match self.range(local).get(index) {
            Some(Some((id, value))) if *id == actor => Some(value),
            _ => None,
        }
    }

    /// `actor`'s value to change in place; `None` as for [`get`](Self::get).
    pub fn get_mut(&mut self, actor: ActorId) -> Option<&mut T> {
        let (local, index) = Self::place(actor);
        match self.range_mut(local).get_mut(index) {
            Some(Some((id, value))) if *id == actor => Some(value),
            _ => None,
        }
    }

    /// `actor`'s value, made with `T::default()` if it has none. A value left by an earlier actor of the slot
    /// is dropped.
    pub fn get_or_default(&mut self, actor: ActorId) -> &mut T
    where
        T: Default,
    {
        let (local, index) = Self::place(actor);
        let range = if local { &mut self.local } else { &mut self.main };
        if range.len() <= index {
            range.resize_with(index + 1, || None);
        }
        let entry = &mut range[index];
        if !matches!(entry, Some((id, _)) if *id == actor) {
            self.len += usize::from(entry.is_none());
            *entry = Some((actor, T::default()));
        }
        &mut entry.as_mut().expect("just filled").1
    }

    /// Takes `actor`'s value out; `None` when it has none (a value an earlier actor of the slot left stays).
    pub fn remove(&mut self, actor: ActorId) -> Option<T> {
        let (local, index) = Self::place(actor);
        let entry = self.range_mut(local).get_mut(index)?;
        if !matches!(entry, Some((id, _)) if *id == actor) {
            return None;
        }
        let (_, value) = entry.take()?;
        self.len -= 1;
        Some(value)
    }

    /// Every value, by slot (not in spawn order), including any a reused slot's earlier actor left.
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.main.iter().chain(&self.local).flatten().map(|(_, value)| value)
    }

    /// Every value to change in place, as [`values`](Self::values) lists them.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.main.iter_mut().chain(&mut self.local).flatten().map(|(_, value)| value)
    }

    /// Every actor with its value to change in place, as [`values`](Self::values) lists them.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (ActorId, &mut T)> + '_ {
        self.main.iter_mut().chain(&mut self.local).flatten().map(|(actor, value)| (*actor, value))
    }

    /// Actors with a value (including any a reused slot's earlier actor left).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no actor has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_slot_holds_the_new_actors_value_only() {
        let mut map: ActorMap<Vec<u32>> = ActorMap::default();
        let (old, new) = (ActorId::new(3, 0), ActorId::new(3, 1));
        let local = ActorId::new((1 << 31) | 3, 0);
        map.get_or_default(old).push(1);
        map.get_or_default(local).push(7);
        assert_eq!(map.get(old), Some(&vec![1]));
        assert_eq!(map.get(new), None, "another generation of the slot");
        assert_eq!(map.get(ActorId::new(4, 0)), None, "past the slots");
        map.get_or_default(new).push(2);
        assert_eq!((map.get(old), map.get(new)), (None, Some(&vec![2])), "the earlier actor's value is dropped");
        assert_eq!(map.get(local), Some(&vec![7]), "a client's own actors have slots of their own");
        assert_eq!(map.len(), 2);
        assert_eq!(map.remove(old), None);
        assert_eq!(map.remove(new), Some(vec![2]));
        map.values_mut().for_each(|v| v.push(8));
        assert_eq!(map.values().collect::<Vec<_>>(), [&vec![7, 8]]);
        assert_eq!(map.len(), 1);
        assert!(map.main.len() <= 4, "slots, not ids, size the vectors");
    }
}
