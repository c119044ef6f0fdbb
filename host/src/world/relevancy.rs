//! Which clients an actor is replicated to (Unreal's relevancy, as `bOnlyRelevantToOwner` and replication
//! graph groups do it): every client, only its owner's, or the clients in a group it is in.
//!
//! A client always has its own player's actors. Otherwise an actor [`Always`](Relevancy::Always) relevant goes
//! to every client, an [`OwnerOnly`](Relevancy::OwnerOnly) one to nobody else, and one in
//! [`Groups`](Relevancy::Groups) to the clients put in one of its groups ([`World::set_client_groups`]): a
//! room, a team, an area of the map. When an actor stops being relevant to a client, the client's copy is
//! destroyed; when it becomes relevant again, it is spawned again with its current values. So a server's
//! traffic grows with what each player needs, not with the square of the players.

use std::collections::{BTreeMap, BTreeSet};

use compact_str::CompactString;

use super::replication::Touched;
use super::{ActorId, ClientId, PlayerOwner, World, WorldError};

/// Groups an actor or a client may be in at most, and the longest a group's name may be.
pub const MAX_GROUPS: usize = 64;
/// The longest a group's name may be, in bytes.
pub const MAX_GROUP_NAME: usize = 64;

/// Which clients an actor is replicated to, besides its own player's (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Relevancy {
    /// Every client (the default).
    #[default]
    Always,
    /// Only the client whose player the actor belongs to.
    OwnerOnly,
    /// The clients in at least one of these groups.
    Groups(BTreeSet<CompactString>),
}

/// Whether an actor of `relevancy`, belonging to `owner`'s player, is replicated to `client`, which is in
/// `client_groups`.
pub fn is_relevant(
    relevancy: &Relevancy,
    owner: Option<PlayerOwner>,
    client: ClientId,
    client_groups: Option<&BTreeSet<CompactString>>,
) -> bool {
    if owner == Some(PlayerOwner::Remote(client)) {
        return true;
    }
    match relevancy {
        Relevancy::Always => true,
        Relevancy::OwnerOnly => false,
        Relevancy::Groups(groups) => client_groups.is_some_and(|theirs| !groups.is_disjoint(theirs)),
    }
}

/// Checks a set of groups a plugin or the game gives: at most [`MAX_GROUPS`], each a non-empty name of at most
/// [`MAX_GROUP_NAME`] bytes.
pub fn check_groups<'a>(groups: impl IntoIterator<Item = &'a str>) -> Result<BTreeSet<CompactString>, WorldError> {
    let mut checked = BTreeSet::new();
    for group in groups {
        if group.is_empty() || group.len() > MAX_GROUP_NAME {
            return Err(WorldError::Invalid(format!(
                "a relevancy group's name must be 1 to {MAX_GROUP_NAME} bytes, not {}",
                group.len()
            )));
        }
        checked.insert(CompactString::from(group));
        if checked.len() > MAX_GROUPS {
            return Err(WorldError::Invalid(format!("more than {MAX_GROUPS} relevancy groups")));
        }
    }
    Ok(checked)
}

/// The groups each client is in, as the server's game and plugins put them.
#[derive(Debug, Default)]
pub(super) struct ClientGroups {
    groups: BTreeMap<ClientId, BTreeSet<CompactString>>,
}

impl World {
    /// Sets which clients an actor is replicated to (on a server; a client's own actors are not replicated).
    pub fn set_relevancy(&mut self, actor: ActorId, relevancy: Relevancy) -> Result<(), WorldError> {
        let found = self.actor_mut(actor)?;
        if found.relevancy != relevancy {
            found.relevancy = relevancy;
            self.touch(|| Touched::Relevancy(actor));
        }
        Ok(())
    }

    /// Puts a client in these groups, in place of those it was in: actors in one of them are replicated to it.
    pub fn set_client_groups(&mut self, client: ClientId, groups: BTreeSet<CompactString>) {
        let before = if groups.is_empty() {
            self.client_groups.groups.remove(&client)
        } else {
            self.client_groups.groups.insert(client, groups.clone())
        };
        if before.unwrap_or_default() != groups {
            self.touch(|| Touched::ClientGroups(client));
        }
    }

    /// The groups a client is in.
    pub fn client_groups(&self, client: ClientId) -> Option<&BTreeSet<CompactString>> {
        self.client_groups.groups.get(&client)
    }

    /// Whether `actor` is replicated to `client` now (false for an actor that is not alive).
    pub fn is_relevant_to(&self, actor: ActorId, client: ClientId) -> bool {
        self.actor(actor).is_ok_and(|found| {
            !found.ending && is_relevant(&found.relevancy, found.player, client, self.client_groups(client))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> BTreeSet<CompactString> {
        check_groups(names.iter().copied()).unwrap()
    }

    #[test]
    fn an_actor_goes_to_its_owner_always_and_to_others_as_its_relevancy_says() {
        let (me, other) = (ClientId(1), ClientId(2));
        let mine = Some(PlayerOwner::Remote(me));
        for relevancy in [Relevancy::Always, Relevancy::OwnerOnly, Relevancy::Groups(groups(&["red"]))] {
            assert!(is_relevant(&relevancy, mine, me, None), "{relevancy:?}");
        }
        assert!(is_relevant(&Relevancy::Always, mine, other, None));
        assert!(!is_relevant(&Relevancy::OwnerOnly, mine, other, None));
        assert!(!is_relevant(&Relevancy::OwnerOnly, None, other, None));
        let red = Relevancy::Groups(groups(&["red", "lobby"]));
        assert!(!is_relevant(&red, None, other, None));
        assert!(!is_relevant(&red, None, other, Some(&groups(&["blue"]))));
        assert!(is_relevant(&red, None, other, Some(&groups(&["blue", "lobby"]))));
    }

    #[test]
    fn groups_are_bounded_and_named() {
        assert!(check_groups([""]).is_err());
        assert!(check_groups(["x".repeat(MAX_GROUP_NAME + 1).as_str()]).is_err());
        let many: Vec<String> = (0..=MAX_GROUPS).map(|i| format!("g{i}")).collect();
        assert!(check_groups(many.iter().map(String::as_str)).is_err());
        assert_eq!(check_groups(["a", "a", "b"]).unwrap().len(), 2);
    }
}
