//! Creation policies: when the component a request gives an actor is actually created, as Lyra's ability
//! system creation policy (seed 002). Most components exist from the moment their actor is a receiver
//! (`Always`, the default). A `Lazy` one is created on the authority the first time something needs it — a
//! plugin asking for it (`components.ensure-component`) or writing one of its properties — so a thousand props
//! that are never hit cost nothing. A `Never` one is never created: requests for it are refused.
//!
//! A policy is shared state every plugin's requests obey, so it has an owner: a plugin may set the policy only
//! of a component class it declares (`[components] classes`) and no other live plugin declares. A class two
//! plugins declare belongs to neither: only the experience sets its policy. Everything a plugin declared goes
//! with it.

use std::collections::{BTreeSet, HashMap};

use crate::world::component_manager::OwnerId;

/// When a requested component class is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CreationPolicy {
    /// No component of the class is ever created: requests for it are refused.
    Never,
    /// Created on the authority the first time something needs it (a plugin asking for it, or writing one of its
    /// properties).
    Lazy,
    /// Created as soon as a request gives an actor one (the default).
    Always,
}

impl std::fmt::Display for CreationPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CreationPolicy::Never => "never",
            CreationPolicy::Lazy => "lazy",
            CreationPolicy::Always => "always",
        })
    }
}

/// Why a plugin's policy was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("component class {class} is declared by another plugin too: only the experience may set its creation policy")]
pub struct NotItsClass {
    /// The component class whose policy was refused.
    pub class: String,
}

/// The policies declared for a world's component classes: plugins' manifests declare them, an experience may
/// override them, and its word wins.
#[derive(Debug, Default, Clone)]
pub struct CreationPolicies {
    /// The live plugins declaring each component class.
    claims: HashMap<String, BTreeSet<OwnerId>>,
    declared: HashMap<String, (OwnerId, CreationPolicy)>,
    overridden: HashMap<String, CreationPolicy>,
}

impl CreationPolicies {
    /// A plugin declares the component classes it adds (its manifest's `classes`). Returns the classes whose
    /// policy, set by another plugin, no longer applies now that the class has two declarers.
    pub fn claim<'a>(&mut self, owner: OwnerId, classes: impl IntoIterator<Item = &'a str>) -> Vec<(String, OwnerId)> {
        let mut voided = Vec::new();
        for class in classes {
            self.claims.entry(class.to_string()).or_default().insert(owner);
            if let Some((setter, _)) = self.declared.get(class).filter(|(setter, _)| *setter != owner) {
                voided.push((class.to_string(), *setter));
                self.declared.remove(class);
            }
        }
        voided
    }

    /// A plugin's policy for a class it claimed; refused when another live plugin declares the class too.
    pub fn declare(&mut self, owner: OwnerId, class: &str, policy: CreationPolicy) -> Result<(), NotItsClass> {
        let its_own = self.claims.get(class).is_some_and(|owners| owners.len() == 1 && owners.contains(&owner));
        if !its_own {
            return Err(NotItsClass { class: class.to_string() });
        }
        self.declared.insert(class.to_string(), (owner, policy));
        Ok(())
    }

    /// Whether another live plugin declares `class` (then `owner` may not set its policy).
    pub fn declared_by_another(&self, owner: OwnerId, class: &str) -> bool {
        self.claims.get(class).is_some_and(|owners| owners.iter().any(|o| *o != owner))
    }

    /// The experience's word, which no plugin's declaration changes.
    pub fn override_with(&mut self, class: &str, policy: CreationPolicy) {
        self.overridden.insert(class.to_string(), policy);
    }

    /// Takes back everything a plugin declared: its claims and its policies.
    pub fn remove_owner(&mut self, owner: OwnerId) {
        self.declared.retain(|_, (setter, _)| *setter != owner);
        self.claims.retain(|_, owners| {
            owners.remove(&owner);
            !owners.is_empty()
        });
    }

    /// The policy of a class: `Always` unless declared otherwise.
    pub fn of(&self, class: &str) -> CreationPolicy {
        (self.overridden.get(class).copied())
            .or_else(|| self.declared.get(class).map(|(_, policy)| *policy))
            .unwrap_or(CreationPolicy::Always)
    }

    /// Whether any class is lazy (worlds without one skip the bookkeeping).
    pub fn any_lazy(&self) -> bool {
        self.declared
            .values()
            .map(|(_, policy)| policy)
            .chain(self.overridden.values())
            .any(|p| *p == CreationPolicy::Lazy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: OwnerId = OwnerId(1);
    const MOD: OwnerId = OwnerId(2);

    #[test]
    fn the_experience_overrides_plugins_and_the_default_is_always() {
        let mut policies = CreationPolicies::default();
        assert_eq!(policies.of("Health"), CreationPolicy::Always);
        policies.override_with("Health", CreationPolicy::Never);
        policies.claim(GAME, ["Health", "Shield"]);
        policies.declare(GAME, "Health", CreationPolicy::Lazy).unwrap();
        assert_eq!(policies.of("Health"), CreationPolicy::Never);
        policies.declare(GAME, "Shield", CreationPolicy::Lazy).unwrap();
        assert_eq!(policies.of("Shield"), CreationPolicy::Lazy);
        assert!(policies.any_lazy());
    }

    #[test]
    fn a_plugin_sets_the_policy_only_of_a_class_it_alone_declares() {
        let mut policies = CreationPolicies::default();
        policies.claim(GAME, ["Hero"]);
        assert_eq!(policies.declare(MOD, "Hero", CreationPolicy::Never), Err(NotItsClass { class: "Hero".into() }));
        assert_eq!(policies.declare(MOD, "Unclaimed", CreationPolicy::Never).unwrap_err().class, "Unclaimed");
        policies.claim(MOD, ["Hero"]);
        assert!(policies.declare(MOD, "Hero", CreationPolicy::Never).is_err(), "two declarers: neither sets it");
        assert!(policies.declare(GAME, "Hero", CreationPolicy::Never).is_err());
        assert_eq!(policies.of("Hero"), CreationPolicy::Always);
    }

    #[test]
    fn a_policy_set_first_stops_applying_when_another_plugin_declares_the_class() {
        let mut policies = CreationPolicies::default();
        policies.claim(MOD, ["Hero"]);
        policies.declare(MOD, "Hero", CreationPolicy::Never).unwrap();
        assert_eq!(policies.of("Hero"), CreationPolicy::Never);
        assert_eq!(policies.claim(GAME, ["Hero"]), [("Hero".to_string(), MOD)]);
        assert_eq!(policies.of("Hero"), CreationPolicy::Always);
    }

    #[test]
    fn a_plugin_leaving_takes_its_policies_and_claims_with_it() {
        let mut policies = CreationPolicies::default();
        policies.claim(MOD, ["Lazy"]);
        policies.declare(MOD, "Lazy", CreationPolicy::Lazy).unwrap();
        policies.remove_owner(MOD);
        assert_eq!(policies.of("Lazy"), CreationPolicy::Always);
        assert!(!policies.any_lazy());
        policies.claim(GAME, ["Lazy"]);
        policies.declare(GAME, "Lazy", CreationPolicy::Never).unwrap();
        assert_eq!(policies.of("Lazy"), CreationPolicy::Never);
    }
}
