//! What must hold of a world between any two host calls, whatever plugins did: the component manager's model
//! (as `component_manager/model_tests.rs` states it), checked on the real structures. Fuzz targets check it
//! after arbitrary host calls; a broken invariant is a host bug, never a plugin's.

use super::component_manager::RequestKey;
use super::{ComponentOrigin, CreationPolicy, NetRole, World};

impl World {
    /// Checks the component model: an actor carries at most one component per request (two requests for one
    /// component class on different classes of its chain give it two, as in Unreal) and at most one of a class
    /// from any other origin; a component a request added sits on a receiver whose class (or an ancestor) the
    /// request names, and that request is live;
    /// every receiver carries a component of each live request on its class chain whose component class is
    /// created eagerly where it is (unless the request was added unique). Returns the first broken invariant, described.
    pub fn check_invariants(&self) -> Result<(), crate::Error> {
        self.first_broken_invariant()
            .map_err(|broken| crate::Error::host(format!("a world invariant is broken: {broken}")))
    }

    fn first_broken_invariant(&self) -> Result<(), String> {
        let requests = &self.manager.requests;
        for actor in self.actors() {
            let chain: Vec<&str> = actor.classes.iter().map(|class| &**class.name()).collect();
            for (at, component) in actor.components.iter().enumerate() {
                let same = |c: &&super::Component| c.class == component.class && c.origin == component.origin;
                if actor.components[..at].iter().any(|c| same(&c)) {
                    return Err(format!("actor {} carries two {} components of one origin", actor.id, component.class));
                }
                let ComponentOrigin::Request(key) = &component.origin else { continue };
                let RequestKey { receiver_class, component_class } = key;
                if !actor.receiver {
                    return Err(format!("actor {} is no receiver, yet carries requested {component_class}", actor.id));
                }
                if !chain.contains(&&**receiver_class) {
                    return Err(format!(
                        "actor {} ({}) carries {component_class}, requested on {receiver_class}",
                        actor.id, chain[0]
                    ));
                }
                if requests.count(key) == 0 {
                    return Err(format!("actor {} carries {component_class} for a released request", actor.id));
                }
            }
            if !actor.receiver {
                continue;
            }
            for key in requests.components_for(&chain) {
                let class = &key.component_class;
                // Lazy components wait for their first use; replicated ones come from the authority; a request
                // added unique skipped an actor that had one then, and (as in Unreal) does not fill in when that
                // one goes.
                let eager = self.creation_policy(class) == CreationPolicy::Always
                    && (actor.role == NetRole::Authority || !self.replicated_classes().is_replicated(class))
                    && !requests.flags(key).add_unique;
                if eager && !actor.components.iter().any(|c| c.class == *class) {
                    return Err(format!(
                        "receiver {} ({}) lacks {class}, requested on {}",
                        actor.id, chain[0], key.receiver_class
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::world::component_manager::{OwnerId, RequestFlags};
    use crate::world::{NetMode, World};

    #[test]
    fn two_requests_for_one_class_on_a_chain_give_two_components_and_a_stray_one_is_caught() {
        let mut world = World::new("w", NetMode::Standalone);
        let pawn = world.spawn("Character").unwrap();
        let _on_pawn = world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
        let on_character =
            world.add_component_request(OwnerId::HOST, "Character", "Health", RequestFlags::default()).unwrap();
        let healths = world.actor(pawn).unwrap().components.iter().filter(|c| &*c.class == "Health").count();
        assert_eq!(healths, 2, "one per request, as in Unreal");
        assert_eq!(world.check_invariants(), Ok(()));

        // A component left behind by a released request breaks the model.
        let stray = world.actor(pawn).unwrap().components.iter().find(|c| &*c.class == "Health").unwrap().clone();
        world.release_component_request(on_character);
        assert_eq!(world.check_invariants(), Ok(()));
        world.actor_mut(pawn).unwrap().components.push(stray.clone());
        let broken = world.check_invariants().unwrap_err().to_string();
        assert!(broken.contains("Health"), "{broken}");

        // So does a requested component on an actor that is no receiver.
        world.actor_mut(pawn).unwrap().components.pop();
        assert_eq!(world.check_invariants(), Ok(()));
        let prop = world.spawn_actor("Actor", None, false).unwrap();
        world.actor_mut(prop).unwrap().components.push(stray);
        assert!(world.check_invariants().unwrap_err().to_string().contains("no receiver"));
    }

    /// Found by the host_calls fuzz target: a request added unique skipped an actor that had the class from
    /// another request; when that one goes, the actor has none, as in Unreal.
    #[test]
    fn a_unique_request_that_skipped_an_actor_does_not_fill_in_later() {
        let mut world = World::new("w", NetMode::Standalone);
        let character = world.spawn("Character").unwrap();
        let on_pawn = world.add_component_request(OwnerId::HOST, "Pawn", "Badge", RequestFlags::default()).unwrap();
        let unique = RequestFlags { add_unique: true };
        let _unique = world.add_component_request(OwnerId::HOST, "Character", "Badge", unique).unwrap();
        world.release_component_request(on_pawn);
        assert!(world.actor(character).unwrap().component("Badge").is_none());
        assert_eq!(world.check_invariants(), Ok(()));
    }
}
