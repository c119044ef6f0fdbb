//! Permissions: what a plugin may do beyond reading its world and extending it through its own handles.
//!
//! A plugin declares what it needs in its manifest (`[permissions]`); the host's configuration grants
//! permissions per plugin. A plugin gets only what it both declared and was granted; anything else is refused
//! with a `denied` error naming the permission, and logged.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// A set of permissions, as declared in a manifest or granted in host configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Permissions {
    /// Spawn and destroy actors, and make actors receivers or stop them being ones.
    #[serde(default)]
    pub spawn_actors: bool,
    /// Send extension events to actors.
    #[serde(default)]
    pub send_events: bool,
    /// Receiver classes the plugin may request components on; `"*"` for any.
    #[serde(default)]
    pub component_requests: Vec<String>,
}

impl Permissions {
    /// What is in both sets.
    pub fn intersect(&self, other: &Permissions) -> Permissions {
        let any = |list: &[String]| list.iter().any(|c| c == "*");
        let component_requests = match (any(&self.component_requests), any(&other.component_requests)) {
            (true, true) => vec!["*".to_string()],
            (true, false) => other.component_requests.clone(),
            (false, true) => self.component_requests.clone(),
            (false, false) => {
                self.component_requests.iter().filter(|c| other.component_requests.contains(c)).cloned().collect()
            }
        };
        Permissions {
            spawn_actors: self.spawn_actors && other.spawn_actors,
            send_events: self.send_events && other.send_events,
            component_requests,
        }
    }

    /// Whether requests on receiver class `class` are allowed.
    pub fn may_request_components_on(&self, class: &str) -> bool {
        self.component_requests.iter().any(|c| c == "*" || c == class)
    }
}

/// How a host decides what each plugin is granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantPolicy {
    /// Grant every plugin what its manifest declares: for plugins the operator wrote or reviewed.
    Declared,
    /// Grant each plugin what the configuration lists for it, and nothing to plugins it does not list.
    Explicit(BTreeMap<String, Permissions>),
}

impl Default for GrantPolicy {
    /// Nothing is granted unless configured.
    fn default() -> Self {
        GrantPolicy::Explicit(BTreeMap::new())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrantsFile {
    #[serde(default)]
    grants: BTreeMap<String, Permissions>,
}

/// A host configuration file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct GrantsError {
    pub path: std::path::PathBuf,
    pub problem: String,
}

impl GrantPolicy {
    /// Reads `[grants.<plugin>]` tables from a host configuration file.
    pub fn from_file(path: &Path) -> Result<Self, GrantsError> {
        let error = |problem: String| GrantsError { path: path.to_path_buf(), problem };
        let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read it: {e}")))?;
        let file: GrantsFile =
            toml::from_str(&text).map_err(|e| error(format!("malformed TOML: {}", e.to_string().trim_end())))?;
        Ok(GrantPolicy::Explicit(file.grants))
    }

    /// What `plugin`, declaring `declared`, may actually do.
    pub fn effective(&self, plugin: &str, declared: &Permissions) -> Permissions {
        match self {
            GrantPolicy::Declared => declared.clone(),
            GrantPolicy::Explicit(grants) => {
                grants.get(plugin).map_or_else(Permissions::default, |g| declared.intersect(g))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perms(spawn: bool, send: bool, classes: &[&str]) -> Permissions {
        Permissions {
            spawn_actors: spawn,
            send_events: send,
            component_requests: classes.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn a_plugin_gets_what_it_declared_and_was_granted() {
        let declared = perms(true, true, &["Pawn", "Character"]);
        let policy =
            GrantPolicy::Explicit(BTreeMap::from([("p".to_string(), perms(false, true, &["Character", "HUD"]))]));
        assert_eq!(policy.effective("p", &declared), perms(false, true, &["Character"]));
        assert_eq!(policy.effective("stranger", &declared), Permissions::default());
        assert_eq!(GrantPolicy::Declared.effective("p", &declared), declared);
        let wildcard = GrantPolicy::Explicit(BTreeMap::from([("p".to_string(), perms(true, true, &["*"]))]));
        assert!(wildcard.effective("p", &declared).may_request_components_on("Pawn"));
        assert!(!wildcard.effective("p", &declared).may_request_components_on("HUD"));
    }
}
