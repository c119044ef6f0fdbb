//! Creation policies and lazy components, as World's methods: which component classes exist from the start,
//! and which only once something needs them.

use super::*;

impl World {
    /// The game's own policy for a component class: trusted like the experience's word, which it is part of.
    pub fn declare_creation(&mut self, class: &str, policy: CreationPolicy) {
        self.creation.override_with(class, policy);
    }

    /// A plugin's component classes (its manifest's `classes`), then its creation policies, each for a class it
    /// alone declares (see [`CreationPolicies`]). Returns the classes whose policy, set by another plugin, no
    /// longer applies now that this one declares them too. A policy for a class another plugin declares is
    /// refused before anything changes: the world is left as it was.
    pub fn declare_plugin_classes<'a>(
        &mut self,
        owner: OwnerId,
        classes: impl IntoIterator<Item = &'a str> + Clone,
        policies: impl IntoIterator<Item = (&'a str, CreationPolicy)> + Clone,
    ) -> Result<Vec<(String, String)>, creation::NotItsClass> {
        for (class, _) in policies.clone() {
            if self.creation.declared_by_another(owner, class) {
                return Err(creation::NotItsClass { class: class.to_string() });
            }
        }
        let voided = self.creation.claim(owner, classes);
        for (class, policy) in policies {
            self.creation.declare(owner, class, policy)?;
        }
        Ok(voided.into_iter().map(|(class, setter)| (class, self.owner_label(setter).to_string())).collect())
    }

    /// Overrides a component class's creation policy (the experience's word).
    pub fn override_creation(&mut self, class: &str, policy: CreationPolicy) {
        self.creation.override_with(class, policy);
    }

    /// When components of `class` are created: the experience's override, else the policy of the plugin owning
    /// the class, else `Always`.
    pub fn creation_policy(&self, class: &str) -> CreationPolicy {
        self.creation.of(class)
    }

    /// First use of a lazy component (the seed's `GetAbilitySystemComponent`): creates it on `actor` when a live
    /// request gives the actor one and the world has authority over the actor. `true` when it was created now,
    /// `false` when it already existed.
    pub fn ensure_component(&mut self, actor: ActorId, class: &str) -> Result<bool, WorldError> {
        let found = self.actor(actor)?;
        if found.component(class).is_some() {
            return Ok(false);
        }
        let missing = || WorldError::NoSuchComponent { actor, component: class.to_string() };
        if found.role != NetRole::Authority || !found.receiver || found.ending {
            return Err(missing());
        }
        let levels: Vec<&str> = found.classes.iter().map(|c| &**c).collect();
        let key = self.manager.requests.components_for(&levels).find(|k| &*k.component_class == class).cloned();
        let key = key.ok_or_else(missing)?;
        self.create_requested_component(actor, key);
        // A replicated class is the server's to create: on a client nothing was.
        match self.actor(actor)?.component(class) {
            Some(_) => Ok(true),
            None => Err(missing()),
        }
    }

    /// Before a write: a lazy component that does not exist yet is created by it (its first use). Anything else
    /// is left to the write to judge.
    pub fn create_if_lazy(&mut self, actor: ActorId, class: &str) -> Result<(), WorldError> {
        let absent = self.actor(actor)?.component(class).is_none();
        if absent && self.creation.of(class) == CreationPolicy::Lazy {
            self.ensure_component(actor, class)?;
        }
        Ok(())
    }

    /// Lazy components that exist, and those avoided: (actor, class) pairs a live request gives a lazy component
    /// that was never needed.
    pub fn lazy_components(&self) -> (usize, usize) {
        if !self.creation.any_lazy() {
            return (0, 0);
        }
        let (mut existing, mut avoided) = (0, 0);
        for actor in self.actors().filter(|a| a.receiver) {
            let chain: Vec<&str> = actor.classes.iter().map(|c| &**c).collect();
            let mut seen = std::collections::HashSet::new();
            for key in self.manager.requests.components_for(&chain) {
                if self.creation.of(&key.component_class) != CreationPolicy::Lazy || !seen.insert(&key.component_class)
                {
                    continue;
                }
                if actor.component(&key.component_class).is_some() {
                    existing += 1;
                } else {
                    avoided += 1;
                }
            }
        }
        (existing, avoided)
    }
}
