//! A component's named values: its properties, and who wrote each.
//!
//! A component holds a handful of properties, and the init chain reads them for every pawn, round after round
//! (each chain question carries the properties its plugin reads). A `BTreeMap` gave every component with a
//! value a node of several hundred bytes, with each name behind a pointer of its own. Here the first two
//! entries sit in the component itself (more spill into one allocation), and so do their names up to 24 bytes
//! (`CompactString`): a read touches the component and nothing else, and writing a component's first values
//! allocates nothing. Entries are kept sorted by name, so iterating (what replication sends) goes in a stable
//! order.

use compact_str::CompactString;
use smallvec::SmallVec;

/// Values by name, sorted by name.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyMap<V> {
    entries: SmallVec<[(CompactString, V); 2]>,
}

impl<V> Default for PropertyMap<V> {
    fn default() -> Self {
        PropertyMap { entries: SmallVec::new() }
    }
}

impl<V> PropertyMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `name` is, or where it would go.
    fn find(&self, name: &str) -> Result<usize, usize> {
        // A component's few names: a scan finds one sooner than a search would, comparing lengths first.
        match self.entries.iter().position(|(key, _)| key.as_str() == name) {
            Some(found) => Ok(found),
            None => Err(self.entries.partition_point(|(key, _)| key.as_str() < name)),
        }
    }

    /// The value of `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<&V> {
        self.find(name).ok().map(|i| &self.entries[i].1)
    }

    /// Whether `name` has a value.
    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Sets `name` to `value`; the value it replaces, if any.
    pub fn insert(&mut self, name: &str, value: V) -> Option<V> {
        match self.find(name) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(at) => {
                self.entries.insert(at, (CompactString::new(name), value));
                None
            }
        }
    }

    /// Takes `name` out; the value it had, if any.
    pub fn remove(&mut self, name: &str) -> Option<V> {
        self.find(name).ok().map(|i| self.entries.remove(i).1)
    }

    /// The entries, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> + '_ {
        self.into_iter()
    }

    /// How many names have a value.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no name has a value.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// An entry as the map lends it.
fn lent<V>((key, value): &(CompactString, V)) -> (&str, &V) {
    (key.as_str(), value)
}

impl<'a, V> IntoIterator for &'a PropertyMap<V> {
    type Item = (&'a str, &'a V);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (CompactString, V)>, fn(&'a (CompactString, V)) -> (&'a str, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(lent as fn(&'a (CompactString, V)) -> (&'a str, &'a V))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, u8),
        Remove(String),
    }

    fn op() -> impl Strategy<Value = Op> {
        let name = prop_oneof![Just(""), Just("hp"), Just("ar"), Just("controller"), Just("player-state"), Just("x")];
        prop_oneof![
            (name.clone(), any::<u8>()).prop_map(|(n, v)| Op::Insert(n.to_string(), v)),
            name.prop_map(|n| Op::Remove(n.to_string())),
        ]
    }

    proptest! {
        /// Any sequence of writes and removals leaves the map answering as a `BTreeMap` would, in its order.
        #[test]
        fn answers_as_a_sorted_map(ops in proptest::collection::vec(op(), 0..40)) {
            let (mut map, mut model) = (PropertyMap::new(), BTreeMap::new());
            for op in ops {
                match op {
                    Op::Insert(name, value) => prop_assert_eq!(map.insert(&name, value), model.insert(name, value)),
                    Op::Remove(name) => prop_assert_eq!(map.remove(&name), model.remove(&name)),
                }
                for name in ["", "hp", "ar", "controller", "player-state", "x", "absent"] {
                    prop_assert_eq!(map.get(name), model.get(name));
                    prop_assert_eq!(map.contains_key(name), model.contains_key(name));
                }
                let listed: Vec<(&str, &u8)> = map.iter().collect();
                let expected: Vec<(&str, &u8)> = model.iter().map(|(k, v)| (k.as_str(), v)).collect();
                prop_assert_eq!(listed, expected);
                prop_assert_eq!(map.len(), model.len());
            }
        }
    }
}
