//! Actors coming and going, kept for a game that mirrors the world in its own (an engine's entities): the actors
//! plugins spawn, replicas a server sends, and every actor that left for good, in the order they did; and the
//! actors whose components, properties or init-state features changed (by anyone: plugins, the server on a
//! client, the game itself), so that the game reads back only those. Off until the game
//! asks ([`World::follow_actors`](super::World::follow_actors)); the game takes them after each step, so what is
//! kept is one frame's worth.

use rustc_hash::FxHashSet;

use super::ActorId;

/// An actor arriving in the world or leaving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coming {
    /// The actor was spawned (here, by the game or a plugin, or as a server's replica).
    Spawned(ActorId),
    /// The actor left the world for good: its id names nobody from now on.
    Destroyed(ActorId),
}

/// The comings and goings kept for the game.
#[derive(Debug, Default)]
pub(super) struct Comings {
    on: bool,
    kept: Vec<Coming>,
    changed: FxHashSet<ActorId>,
}

impl Comings {
    pub fn set(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.kept = Vec::new();
            self.changed = FxHashSet::default();
        }
    }

    /// A component was added to or removed from `actor`, one of its properties changed, or one of its init-state
    /// features was registered, moved or removed.
    pub fn changed(&mut self, actor: ActorId) {
        if self.on {
            self.changed.insert(actor);
        }
    }

    /// The actors changed since the last take, in no particular order.
    pub fn take_changed(&mut self) -> Vec<ActorId> {
        self.changed.drain().collect()
    }

    pub fn push(&mut self, coming: Coming) {
        if self.on {
            self.kept.push(coming);
        }
    }

    /// What happened since the last take, oldest first.
    pub fn take(&mut self) -> Vec<Coming> {
        std::mem::take(&mut self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::{NetMode, Value, World};

    #[test]
    fn nothing_is_kept_until_the_game_follows() {
        let mut world = World::new("w", NetMode::Standalone);
        world.spawn("Actor").unwrap();
        assert!(world.take_actor_comings().is_empty());
    }

    #[test]
    fn spawns_and_destroys_come_in_order_and_once() {
        let mut world = World::new("w", NetMode::Standalone);
        world.follow_actors(true);
        let a = world.spawn("Actor").unwrap();
        let b = world.spawn_actor("Pawn", None, false).unwrap();
        world.destroy(a).unwrap();
        assert_eq!(world.take_actor_comings(), vec![Coming::Spawned(a), Coming::Spawned(b), Coming::Destroyed(a)]);
        assert!(world.take_actor_comings().is_empty());
        world.follow_actors(false);
        world.destroy(b).unwrap();
        assert!(world.take_actor_comings().is_empty());
    }

    #[test]
    fn actors_whose_components_or_properties_changed_are_kept_once() {
        let mut world = World::new("w", NetMode::Standalone);
        let (a, b, untouched) =
            (world.spawn("Actor").unwrap(), world.spawn("Actor").unwrap(), world.spawn("Actor").unwrap());
        world.attach_native_component(a, "Health").unwrap();
        world.attach_native_component(untouched, "Health").unwrap();
        world.follow_actors(true);
        world.set_property(a, "Health", "points", Value::Integer(3)).unwrap();
        world.set_property(a, "Health", "points", Value::Integer(4)).unwrap();
        world.attach_native_component(b, "Health").unwrap();
        let mut changed = world.take_changed_actors();
        changed.sort();
        assert_eq!(changed, vec![a, b]);
        // Writing the value it already has changes nothing.
        world.set_property(a, "Health", "points", Value::Integer(4)).unwrap();
        assert!(world.take_changed_actors().is_empty());
    }
}
