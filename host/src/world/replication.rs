//! What replicates, and what a server world changed that its clients must hear about.
//!
//! A component class replicates when a manifest declares replicated properties for it (`[components.replicated]`)
//! or the game does (the native `Possession` component): the server creates it and clients receive it; requests
//! and actions on a client do not create it themselves. Every actor a server spawns replicates. The world does
//! no networking: it notes what it touched (a [`Touched`] journal, kept only on servers), and the server's
//! replication reads the current state of what was touched when it next sends.

use std::collections::{BTreeMap, BTreeSet};

use compact_str::CompactString;

use super::actor::{ActorId, Value};
use super::ClientId;
use crate::world::component_manager::OwnerId;

/// Component classes that replicate, with their replicated properties.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplicatedClasses {
    /// What every declaration adds up to: what the world reads.
    classes: BTreeMap<String, BTreeSet<String>>,
    /// What each plugin declared, taken back when it leaves (the game's own declarations stay).
    by_owner: BTreeMap<OwnerId, BTreeMap<String, BTreeSet<String>>>,
    /// What the game declared.
    game: BTreeMap<String, BTreeSet<String>>,
}

/// Adds a class's properties to `classes`, allocating nothing for what is already there.
fn add_to<'a>(
    classes: &mut BTreeMap<String, BTreeSet<String>>,
    class: &str,
    properties: impl IntoIterator<Item = &'a str>,
) -> bool {
    let mut added = false;
    if !classes.contains_key(class) {
        classes.insert(class.to_string(), BTreeSet::new());
        added = true;
    }
    let known = classes.get_mut(class).expect("inserted above");
    for property in properties {
        if !known.contains(property) {
            known.insert(property.to_string());
            added = true;
        }
    }
    added
}

impl ReplicatedClasses {
    /// The game declares a replicated class and (some of) its replicated properties; declarations add up.
    /// Declaring what is already declared allocates nothing: the game declares its own classes per player.
    pub fn declare(&mut self, class: &str, properties: impl IntoIterator<Item = impl AsRef<str> + Into<String>>) {
        let properties: Vec<_> = properties.into_iter().collect();
        if add_to(&mut self.game, class, properties.iter().map(AsRef::as_ref)) {
            add_to(&mut self.classes, class, properties.iter().map(AsRef::as_ref));
        }
    }

    /// A plugin declares a replicated class and properties of it (its manifest), until it leaves.
    pub fn declare_by(&mut self, owner: OwnerId, class: &str, properties: &[String]) {
        add_to(self.by_owner.entry(owner).or_default(), class, properties.iter().map(String::as_str));
        add_to(&mut self.classes, class, properties.iter().map(String::as_str));
    }

    /// Takes back what a plugin declared; what the game or another plugin declared too stays.
    pub fn remove_owner(&mut self, owner: OwnerId) {
        if self.by_owner.remove(&owner).is_none() {
            return;
        }
        let mut classes = self.game.clone();
        for declared in self.by_owner.values() {
            for (class, properties) in declared {
                add_to(&mut classes, class, properties.iter().map(String::as_str));
            }
        }
        self.classes = classes;
    }

    /// Whether components of `class` replicate: the game or a live plugin declared it replicated.
    pub fn is_replicated(&self, class: &str) -> bool {
        self.classes.contains_key(class)
    }

    /// Whether `property` of `class` replicates: its value is sent from the server to clients.
    pub fn replicates(&self, class: &str, property: &str) -> bool {
        self.classes.get(class).is_some_and(|properties| properties.contains(property))
    }

    /// The replicated properties of a class.
    pub fn properties(&self, class: &str) -> impl Iterator<Item = &str> {
        self.classes.get(class).into_iter().flatten().map(String::as_str)
    }
}

/// Something a server world changed that clients may need to hear about. Only where to look: what changed is
/// read from the world when the server next sends, so a change undone before then costs nothing. Names are
/// compact strings, as in property maps: a journal entry of names up to 24 bytes allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// Spawned or destroyed.
    Actor(ActorId),
    /// A replicated component added to or removed from an actor.
    Component(ActorId, CompactString),
    /// A replicated property written or removed.
    Property(ActorId, CompactString, CompactString),
    /// An actor's relevancy changed: which clients have it may change.
    Relevancy(ActorId),
    /// A client's relevancy groups changed: which actors it has may change.
    ClientGroups(ClientId),
}

/// A replicated property that changed on this client: the plugin that declared it is told (rep-notify).
#[derive(Debug, Clone, PartialEq)]
pub struct RepNotify {
    /// The actor whose component changed.
    pub actor: ActorId,
    /// The component's class.
    pub component: CompactString,
    /// The property that changed.
    pub property: CompactString,
    /// Its value before; `None` when it had none.
    pub old: Option<Value>,
    /// Its value now, as the server sent it.
    pub new: Value,
}
