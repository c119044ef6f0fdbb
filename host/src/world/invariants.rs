//! What must hold of a world between any two host calls, whatever plugins did: the component manager's model
//! (as `component_manager/model_tests.rs` states it), checked on the real structures. Fuzz targets check it
//! after arbitrary host calls; a broken invariant is a host bug, never a plugin's.

use super::component_manager::RequestKey;
use super::{ComponentOrigin, CreationPolicy, NetRole, World};

impl World {
    /// Checks the component model: an actor carries at most one component of a class; a component a request
    /// added sits on a receiver whose class (or an ancestor) the request names, and that request is live;
    /// every receiver carries a component of each live request on its class chain whose component class is
    /// created eagerly where it is. Returns the first broken invariant, described.
    pub fn check_invariants(&self) -> Result<(), String> {
        let requests = &self.manager.requests;
        for actor in self.actors() {
            let chain: Vec<&str> = actor.classes.iter().map(|class| &**class.name()).collect();
            for (at, component) in actor.components.iter().enumerate() {
                if actor.components[..at].iter().any(|c| c.class == component.class) {
                    return Err(format!("actor {} carries two {} components", actor.id, component.class));
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
                // Lazy components wait for their first use; replicated ones come from the authority.
                let eager = self.creation_policy(class) == CreationPolicy::Always
                    && (actor.role == NetRole::Authority || !self.replicated_classes().is_replicated(class));
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
