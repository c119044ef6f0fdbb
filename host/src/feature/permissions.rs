//! Permissions: what a plugin may do beyond reading its world and extending it through its own handles.
//!
//! A plugin declares what it needs in its manifest (`[permissions]`); the host's configuration grants
//! permissions per plugin. A plugin gets only what it both declared and was granted; anything else is refused
//! with a `denied` error naming the permission, and logged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A set of permissions, as declared in a manifest or granted in host configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Component classes whose properties the plugin may write though its requests did not add them (the
    /// game's, or another plugin's); `"*"` for any. A plugin always writes the properties of its own.
    #[serde(default)]
    pub write_properties: Vec<String>,
    /// Decide whom a server replicates actors to, and put players in relevancy groups (rooms, teams): what
    /// each player sees of the world.
    #[serde(default)]
    pub relevancy: bool,
    /// Filesystem access (`fs.data = true` in TOML).
    #[serde(default)]
    pub fs: FsPermissions,
}

/// What a plugin may reach of the host's filesystem: at most a directory of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsPermissions {
    /// A private, writable data directory, seen by the plugin as `/data`.
    #[serde(default)]
    pub data: bool,
}

impl Permissions {
    /// What is in both sets.
    pub fn intersect(&self, other: &Permissions) -> Permissions {
        Permissions {
            spawn_actors: self.spawn_actors && other.spawn_actors,
            send_events: self.send_events && other.send_events,
            component_requests: intersect_classes(&self.component_requests, &other.component_requests),
            write_properties: intersect_classes(&self.write_properties, &other.write_properties),
            relevancy: self.relevancy && other.relevancy,
            fs: FsPermissions { data: self.fs.data && other.fs.data },
        }
    }

    /// Whether requests on receiver class `class` are allowed.
    pub fn may_request_components_on(&self, class: &str) -> bool {
        self.component_requests.iter().any(|c| c == "*" || c == class)
    }

    /// Whether the properties of `component` may be written though the plugin does not own it.
    pub fn may_write_properties_of(&self, component: &str) -> bool {
        self.write_properties.iter().any(|c| c == "*" || c == component)
    }
}

/// The classes two lists both allow, `"*"` standing for every class.
fn intersect_classes(a: &[String], b: &[String]) -> Vec<String> {
    let any = |list: &[String]| list.iter().any(|c| c == "*");
    match (any(a), any(b)) {
        (true, true) => vec!["*".to_string()],
        (true, false) => b.to_vec(),
        (false, true) => a.to_vec(),
        (false, false) => a.iter().filter(|c| b.contains(c)).cloned().collect(),
    }
}

impl std::fmt::Display for Permissions {
    /// As the permissions are written in TOML, comma-separated; `nothing` when empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.spawn_actors {
            parts.push("spawn-actors".to_string());
        }
        if self.send_events {
            parts.push("send-events".to_string());
        }
        if !self.component_requests.is_empty() {
            parts.push(format!("component-requests on {}", self.component_requests.join(" ")));
        }
        if !self.write_properties.is_empty() {
            parts.push(format!("write-properties of {}", self.write_properties.join(" ")));
        }
        if self.relevancy {
            parts.push("relevancy".to_string());
        }
        if self.fs.data {
            parts.push("fs.data".to_string());
        }
        if parts.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&parts.join(", "))
        }
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

impl GrantPolicy {
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
            write_properties: Vec::new(),
            relevancy: false,
            fs: FsPermissions::default(),
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

    #[test]
    fn permissions_read_as_they_are_written() {
        let mut all = perms(true, true, &["Pawn", "Character"]);
        all.fs.data = true;
        all.relevancy = true;
        assert_eq!(
            all.to_string(),
            "spawn-actors, send-events, component-requests on Pawn Character, relevancy, fs.data"
        );
        assert_eq!(Permissions::default().to_string(), "nothing");
    }
}
