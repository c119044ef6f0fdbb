//! What replicates, and what a server world changed that its clients must hear about.
//!
//! A component class replicates when a manifest declares replicated properties for it (`[components.replicated]`)
//! or the game does (the native `Possession` component): the server creates it and clients receive it; requests
//! and actions on a client do not create it themselves. Every actor a server spawns replicates. The world does
//! no networking: it notes what it touched (a [`Touched`] journal, kept only on servers), and the server's
//! replication reads the current state of what was touched when it next sends.

use std::collections::{BTreeMap, BTreeSet};

use super::actor::ActorId;

/// Component classes that replicate, with their replicated properties.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplicatedClasses {
    classes: BTreeMap<String, BTreeSet<String>>,
}

impl ReplicatedClasses {
    /// Declares a replicated class and (some of) its replicated properties; declarations add up.
    /// Declaring what is already declared allocates nothing: the game declares its own classes per player.
    pub fn declare(&mut self, class: &str, properties: impl IntoIterator<Item = impl AsRef<str> + Into<String>>) {
        if !self.classes.contains_key(class) {
            self.classes.insert(class.to_string(), BTreeSet::new());
        }
        let known = self.classes.get_mut(class).expect("inserted above");
        for property in properties {
            if !known.contains(property.as_ref()) {
                known.insert(property.into());
            }
        }
    }

    pub fn is_replicated(&self, class: &str) -> bool {
        self.classes.contains_key(class)
    }

    pub fn replicates(&self, class: &str, property: &str) -> bool {
        self.classes.get(class).is_some_and(|properties| properties.contains(property))
    }

    /// The replicated properties of a class.
    pub fn properties(&self, class: &str) -> impl Iterator<Item = &str> {
        self.classes.get(class).into_iter().flatten().map(String::as_str)
    }
}

/// Something a server world changed that clients may need to hear about. Only where to look: what changed is
/// read from the world when the server next sends, so a change undone before then costs nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// Spawned or destroyed.
    Actor(ActorId),
    /// A replicated component added to or removed from an actor.
    Component(ActorId, String),
    /// A replicated property written or removed.
    Property(ActorId, String, String),
}
