//! Values by class, found by the class's number.
//!
//! Every event and init-state change about an actor looks up, for each class of its chain, the handlers or
//! subscriptions registered on that class; most classes have none. A hash map answers each of those lookups
//! with a hash and a probe; a table indexed by the class's number in its registry answers with one bounds check.

use super::ClassKey;

/// A map from the classes of one registry to values, stored at each class's number. A world has tens of classes,
/// so the table stays small; an entry also holds its key, and a key of another registry (same number, another
/// class) finds nothing.
#[derive(Debug)]
pub struct ClassMap<T> {
    slots: Vec<Option<(ClassKey, T)>>,
    len: usize,
}

impl<T> Default for ClassMap<T> {
    fn default() -> Self {
        ClassMap { slots: Vec::new(), len: 0 }
    }
}

impl<T> ClassMap<T> {
    /// The value of `class`; `None` when it has none (or `class` is another registry's key).
    pub fn get(&self, class: &ClassKey) -> Option<&T> {
        match self.slots.get(class.index())? {
            Some((key, value)) if key == class => Some(value),
            _ => None,
        }
    }

    /// The value of `class` to change in place; `None` as for [`get`](Self::get).
    pub fn get_mut(&mut self, class: &ClassKey) -> Option<&mut T> {
        match self.slots.get_mut(class.index())? {
            Some((key, value)) if key == class => Some(value),
            _ => None,
        }
    }

    /// The value of `class`, made with `T::default()` when it has none. A key of another registry takes the
    /// place of the class holding its number there.
    pub fn get_or_default(&mut self, class: &ClassKey) -> &mut T
    where
        T: Default,
    {
        let index = class.index();
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        let slot = &mut self.slots[index];
        match slot {
            Some((key, _)) if key == class => {}
            Some(_) => *slot = Some((class.clone(), T::default())),
            None => {
                *slot = Some((class.clone(), T::default()));
                self.len += 1;
            }
        }
        &mut slot.as_mut().expect("the slot was just filled").1
    }

    /// Takes the value of `class` out; `None` when it has none.
    pub fn remove(&mut self, class: &ClassKey) -> Option<T> {
        let slot = self.slots.get_mut(class.index())?;
        if !slot.as_ref().is_some_and(|(key, _)| key == class) {
            return None;
        }
        self.len -= 1;
        slot.take().map(|(_, value)| value)
    }

    /// Keeps the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&ClassKey, &mut T) -> bool) {
        for slot in &mut self.slots {
            if let Some((key, value)) = slot {
                if !keep(key, value) {
                    *slot = None;
                    self.len -= 1;
                }
            }
        }
    }

    /// Every value to change in place, in the order the classes were declared.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().flatten().map(|(_, value)| value)
    }

    /// How many classes have a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no class has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::ClassRegistry;

    #[test]
    fn classes_find_their_own_values_and_no_one_elses() {
        let mut registry = ClassRegistry::default();
        registry.declare("Hero", "Character").unwrap();
        let (pawn, hero) = (registry.key("Pawn").unwrap(), registry.key("Hero").unwrap());
        let mut map: ClassMap<Vec<u32>> = ClassMap::default();
        assert!(map.get(&hero).is_none(), "a class past the table");
        map.get_or_default(&hero).push(1);
        map.get_or_default(&hero).push(2);
        map.get_or_default(&pawn).push(3);
        assert_eq!(map.get(&hero), Some(&vec![1, 2]));
        assert_eq!(map.len(), 2);
        assert!(map.get(&registry.key("Character").unwrap()).is_none());

        // Another registry numbers its classes alike: its keys find nothing here.
        let mut other = ClassRegistry::default();
        other.declare("Hero", "Character").unwrap();
        let other_hero = other.key("Hero").unwrap();
        assert_eq!(other_hero.index(), hero.index());
        assert!(map.get(&other_hero).is_none());
        assert!(map.remove(&other_hero).is_none());
        assert_eq!(map.len(), 2);

        map.get_mut(&pawn).unwrap().push(4);
        map.retain(|key, values| key != &pawn && !values.is_empty());
        assert!(map.get(&pawn).is_none());
        assert_eq!(map.values_mut().map(|v| v.len()).sum::<usize>(), 2);
        assert_eq!(map.remove(&hero), Some(vec![1, 2]));
        assert!(map.is_empty());
    }
}
