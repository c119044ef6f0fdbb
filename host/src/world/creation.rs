//! Creation policies: when the component a request gives an actor is actually created, as Lyra's ability
//! system creation policy (seed 002). Most components exist from the moment their actor is a receiver
//! (`Always`, the default). A `Lazy` one is created on the authority the first time something needs it — a
//! plugin asking for it (`components.ensure-component`) or writing one of its properties — so a thousand props
//! that are never hit cost nothing. A `Never` one is never created: requests for it are refused.

use std::collections::HashMap;

/// When a requested component class is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CreationPolicy {
    Never,
    Lazy,
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

/// The policies declared for a world's component classes: plugins' manifests declare them, an experience may
/// override them, and its word wins.
#[derive(Debug, Default, Clone)]
pub struct CreationPolicies {
    declared: HashMap<String, CreationPolicy>,
    overridden: HashMap<String, CreationPolicy>,
}

impl CreationPolicies {
    /// A plugin's declaration; a later declaration of the same class replaces it.
    pub fn declare(&mut self, class: &str, policy: CreationPolicy) {
        self.declared.insert(class.to_string(), policy);
    }

    /// The experience's word, which no plugin's declaration changes.
    pub fn override_with(&mut self, class: &str, policy: CreationPolicy) {
        self.overridden.insert(class.to_string(), policy);
    }

    /// The policy of a class: `Always` unless declared otherwise.
    pub fn of(&self, class: &str) -> CreationPolicy {
        self.overridden.get(class).or_else(|| self.declared.get(class)).copied().unwrap_or(CreationPolicy::Always)
    }

    /// Whether any class is lazy (worlds without one skip the bookkeeping).
    pub fn any_lazy(&self) -> bool {
        self.declared.values().chain(self.overridden.values()).any(|p| *p == CreationPolicy::Lazy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experience_overrides_plugins_and_the_default_is_always() {
        let mut policies = CreationPolicies::default();
        assert_eq!(policies.of("Health"), CreationPolicy::Always);
        policies.override_with("Health", CreationPolicy::Never);
        policies.declare("Health", CreationPolicy::Lazy);
        assert_eq!(policies.of("Health"), CreationPolicy::Never);
        policies.declare("Shield", CreationPolicy::Lazy);
        assert_eq!(policies.of("Shield"), CreationPolicy::Lazy);
        assert!(policies.any_lazy());
    }
}
