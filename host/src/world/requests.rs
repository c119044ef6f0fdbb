//! Component requests as World's methods: a plugin asks for a component on every receiver of a class, and
//! the world adds and removes it as requests and receivers come and go.

use super::*;

impl World {
    /// Starts a component request for `owner`: every receiver of `receiver_class` (or a subclass), now and
    /// later, gets a `component_class` component while the handle is held. The first request for a pair adds
    /// the component to existing receivers; later requests for the same pair only count.
    pub fn add_component_request(
        &mut self,
        owner: OwnerId,
        receiver_class: &str,
        component_class: &str,
        flags: RequestFlags,
    ) -> Result<RequestHandle, WorldError> {
        if receiver_class == ROOT_ACTOR_CLASS {
            return Err(WorldError::RootClassRequest);
        }
        let Some(receiver) = self.classes.name(receiver_class) else {
            return Err(WorldError::UnknownClass(receiver_class.to_string()));
        };
        if !is_valid_class_name(component_class) {
            return Err(ClassError::InvalidName(component_class.to_string()).into());
        }
        if self.creation.of(component_class) == CreationPolicy::Never {
            return Err(WorldError::Denied(format!(
                "component class {component_class} has creation policy never: no actor gets one"
            )));
        }
        let key = RequestKey { receiver_class: receiver, component_class: self.component_class(component_class) };
        let (handle, first) = self.manager.requests.add(key.clone(), owner, flags);
        if first {
            for actor in self.actors_of_class(receiver_class)? {
                if self.actor(actor)?.receiver {
                    self.add_requested_component(actor, key.clone());
                }
            }
        }
        Ok(handle)
    }

    /// Releases a request handle. When it was the last one for its pair, every component that pair added to an
    /// actor of the receiver class (or a subclass) is removed; components others added stay. Releasing a handle
    /// twice changes nothing.
    pub fn release_component_request(&mut self, handle: RequestHandle) {
        let Some(key) = self.manager.requests.release(handle) else {
            return;
        };
        let owners: Vec<ActorId> = self.actors().filter(|a| a.is_a(&key.receiver_class)).map(|a| a.id).collect();
        for actor in owners {
            self.remove_requested_components(actor, |origin_key| *origin_key == key);
        }
        self.release_component_class(key.component_class);
    }

    /// Removes an actor's components that requests matching `which` added.
    pub(crate) fn remove_requested_components(&mut self, actor: ActorId, which: impl Fn(&RequestKey) -> bool) {
        let components = &mut self.actor_mut(actor).expect("listed actors are alive").components;
        // An actor has a few components: those going are taken out in place, the others keep their order, and
        // an actor losing none (or one) allocates nothing.
        let mut removed: SmallVec<[Component; 1]> = SmallVec::new();
        let mut i = 0;
        while i < components.len() {
            if matches!(&components[i].origin, ComponentOrigin::Request(key) if which(key)) {
                removed.push(components.remove(i));
            } else {
                i += 1;
            }
        }
        for component in removed {
            self.forget_writes(actor, &component);
            if component.replicated {
                self.touch(|| Touched::Component(actor, (&*component.class).into()));
            }
            self.record(|| WorldEvent::ComponentRemoved { actor, component: component.class.to_string() });
            self.comings.changed(actor);
        }
    }

    pub(crate) fn add_requested_component(&mut self, actor: ActorId, key: RequestKey) {
        // A lazy component waits for its first use (see `ensure_component`).
        if self.creation.of(&key.component_class) != CreationPolicy::Always {
            return;
        }
        self.create_requested_component(actor, key);
    }

    /// Creates the component a request gives an actor, whatever its policy. The key is taken, not borrowed: the
    /// component keeps it as its origin, and cloning its shared names costs an atomic count each.
    pub(super) fn create_requested_component(&mut self, actor: ActorId, key: RequestKey) {
        let replicated = self.replicated.is_replicated(&key.component_class);
        // A replicated component is the server's to create; a client receives it.
        if replicated && self.net_mode == NetMode::Client {
            return;
        }
        // A replicated component is one per actor (clients tell components apart by class), as if added unique.
        let unique = self.manager.requests.flags(&key).add_unique || replicated;
        let actor_ref = self.actor(actor).expect("requested actors are alive");
        let present = actor_ref.components.iter().any(|c| {
            same_name(&c.class, &key.component_class)
                && (unique || matches!(&c.origin, ComponentOrigin::Request(k) if *k == key))
        });
        if present {
            return;
        }
        let class = key.component_class.clone();
        let component = self.new_component(class.clone(), ComponentOrigin::Request(key), replicated);
        self.actor_mut(actor).expect("requested actors are alive").components.push(component);
        self.record(|| WorldEvent::ComponentAdded { actor, component: class.to_string() });
        self.comings.changed(actor);
        if replicated {
            self.touch(|| Touched::Component(actor, (&*class).into()));
        }
    }

    /// Live component requests, for leak checks.
    pub fn live_request_handles(&self) -> usize {
        self.manager.requests.live_handles()
    }

    /// Components that features added and that are still on actors, for leak checks.
    pub fn requested_component_count(&self) -> usize {
        self.actors().flat_map(|a| &a.components).filter(|c| matches!(c.origin, ComponentOrigin::Request(_))).count()
    }
}
