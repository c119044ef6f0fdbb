//! Who shares a relevancy group with whom, both ways, so that replication weighs a change of groups against the
//! actors or clients that share one — a handful — and not against the whole world.
//!
//! A server of a thousand players whose pawns walk between cells changes some groups every frame. Checked
//! against every actor (for a client whose groups changed) or every client (for an actor whose groups changed),
//! each change costs as much as the world is large, and a frame's changes grow with the players too: the
//! frame's cost grows with the square of the players. With the index, a change costs what the group holds.

use std::collections::BTreeSet;
use std::hash::Hash;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

/// The groups of each member (actors, or clients), and the members of each group.
#[derive(Debug)]
pub(super) struct GroupIndex<K> {
    groups_of: FxHashMap<K, BTreeSet<CompactString>>,
    members: FxHashMap<CompactString, FxHashSet<K>>,
}

impl<K> Default for GroupIndex<K> {
    fn default() -> Self {
        GroupIndex { groups_of: FxHashMap::default(), members: FxHashMap::default() }
    }
}

impl<K: Copy + Eq + Hash> GroupIndex<K> {
    /// `member` is in `groups` now, and in no other (none: in no group).
    pub(super) fn set(&mut self, member: K, groups: &BTreeSet<CompactString>) {
        if self.groups_of.get(&member) == Some(groups) {
            return;
        }
        self.remove(member);
        if groups.is_empty() {
            return;
        }
        for group in groups {
            self.members.entry(group.clone()).or_default().insert(member);
        }
        self.groups_of.insert(member, groups.clone());
    }

    /// `member` is gone: in no group.
    pub(super) fn remove(&mut self, member: K) {
        for group in self.groups_of.remove(&member).unwrap_or_default() {
            if let Some(members) = self.members.get_mut(&group) {
                members.remove(&member);
                if members.is_empty() {
                    self.members.remove(&group);
                }
            }
        }
    }

    /// The members in at least one of `groups` (each once).
    pub(super) fn sharing(&self, groups: &BTreeSet<CompactString>) -> FxHashSet<K> {
        let mut found = FxHashSet::default();
        for members in groups.iter().filter_map(|group| self.members.get(group)) {
            found.extend(members.iter().copied());
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> BTreeSet<CompactString> {
        names.iter().map(|n| CompactString::from(*n)).collect()
    }

    #[test]
    fn members_are_found_by_any_group_they_share_and_forgotten_when_they_move_or_go() {
        let mut index = GroupIndex::default();
        index.set(1u32, &groups(&["red", "lobby"]));
        index.set(2, &groups(&["blue"]));
        index.set(3, &groups(&["lobby"]));
        let found = |index: &GroupIndex<u32>, names: &[&str]| {
            let mut found: Vec<u32> = index.sharing(&groups(names)).into_iter().collect();
            found.sort_unstable();
            found
        };
        assert_eq!(found(&index, &["lobby"]), vec![1, 3]);
        assert_eq!(found(&index, &["red", "lobby", "blue"]), vec![1, 2, 3]);
        assert_eq!(found(&index, &["green"]), Vec::<u32>::new());
        index.set(1, &groups(&["blue"]));
        assert_eq!(found(&index, &["lobby"]), vec![3]);
        assert_eq!(found(&index, &["blue"]), vec![1, 2]);
        index.remove(2);
        index.set(3, &groups(&[]));
        assert_eq!(found(&index, &["blue", "lobby"]), vec![1]);
        // A group with no member left is not kept.
        assert_eq!(index.members.len(), 1);
    }
}
