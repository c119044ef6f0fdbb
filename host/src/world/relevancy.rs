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
use super::{ActorId, ClientId, NetRole, PlayerOwner, World, WorldError};

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
    /// A replica (a client's copy) is refused: its server decides.
    pub fn set_relevancy(&mut self, actor: ActorId, relevancy: Relevancy) -> Result<(), WorldError> {
        let found = self.actor_mut(actor)?;
        if found.role != NetRole::Authority {
            return Err(WorldError::Denied(format!(
                "actor {actor} replicates from the server: only the server decides whom it replicates to"
            )));
        }
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

    /// Puts the player `actor` belongs to (its pawn, controller or player state) in these groups: a connected
    /// player's client, as [`set_client_groups`](Self::set_client_groups) does. A local player sees the whole
    /// world, so its groups change nothing; an actor of no player, or a replica, is refused.
    pub fn set_player_groups(&mut self, actor: ActorId, groups: BTreeSet<CompactString>) -> Result<(), WorldError> {
        let found = self.actor(actor)?;
        if found.role != NetRole::Authority {
            return Err(WorldError::Denied(format!(
                "actor {actor} replicates from the server: only the server puts players in groups"
            )));
        }
        match found.player {
            Some(PlayerOwner::Remote(client)) => self.set_client_groups(client, groups),
            Some(PlayerOwner::Local) => {}
            None => return Err(WorldError::Invalid(format!("actor {actor} belongs to no player"))),
        }
        Ok(())
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
    fn a_players_groups_are_its_clients_and_a_local_or_no_players_are_not() {
        let mut w = World::new("w", crate::world::NetMode::ListenServer);
        let [remote, local, nobody] = ["Pawn", "Pawn", "Pawn"].map(|class| w.spawn(class).unwrap());
        w.actor_mut(remote).unwrap().player = Some(PlayerOwner::Remote(ClientId(7)));
        w.actor_mut(local).unwrap().player = Some(PlayerOwner::Local);
        w.set_player_groups(remote, groups(&["red"])).unwrap();
        assert_eq!(w.client_groups(ClientId(7)), Some(&groups(&["red"])));
        w.set_player_groups(local, groups(&["blue"])).unwrap();
        assert!(matches!(w.set_player_groups(nobody, groups(&["red"])), Err(WorldError::Invalid(_))));
        w.set_player_groups(remote, groups(&[])).unwrap();
        assert_eq!(w.client_groups(ClientId(7)), None);
        // A client's copy is its server's to place.
        w.actor_mut(nobody).unwrap().role = NetRole::SimulatedProxy;
        assert!(matches!(w.set_relevancy(nobody, Relevancy::OwnerOnly), Err(WorldError::Denied(_))));
        assert!(matches!(w.set_player_groups(nobody, groups(&["red"])), Err(WorldError::Denied(_))));
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
