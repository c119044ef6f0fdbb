//! What a resolution changes in what is installed: the plugins it adds, moves to another version, or no longer
//! needs, each with the installed plugins that depend on it — what `gfhost update --dry-run` lists before
//! anything is fetched, and `gfhost update` says as it installs.

use std::fmt;

use super::lock::LockFile;
use super::resolve::Resolved;

/// One plugin a resolution changes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // fields: the plugin, its versions before and after, and the plugins that need it
pub enum Change {
    /// Not installed before.
    Added { name: String, version: String },
    /// Installed at another version (or other bytes of the same version) before.
    Moved { name: String, from: String, to: String, dependents: Vec<String> },
    /// Installed before, and needed no more.
    Removed { name: String, version: String },
}

impl Change {
    /// The plugin changed.
    pub fn name(&self) -> &str {
        match self {
            Change::Added { name, .. } | Change::Moved { name, .. } | Change::Removed { name, .. } => name,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Added { name, version } => write!(f, "add {name} {version}"),
            Change::Moved { name, from, to, dependents } => {
                let verb = match (semver::Version::parse(from), semver::Version::parse(to)) {
                    (Ok(from), Ok(to)) if to < from => "downgrade",
                    _ if from == to => "reinstall",
                    _ => "update",
                };
                write!(f, "{verb} {name} {from} -> {to}")?;
                if !dependents.is_empty() {
                    write!(f, " (used by {})", dependents.join(", "))?;
                }
                Ok(())
            }
            Change::Removed { name, version } => write!(f, "remove {name} {version} (no longer needed)"),
        }
    }
}

/// What installing `after` changes where `before` is installed, in name order.
pub fn changes(before: &LockFile, after: &[Resolved]) -> Vec<Change> {
    let mut changes = Vec::new();
    for resolved in after {
        let version = resolved.version.to_string();
        match before.get(&resolved.name) {
            None => changes.push(Change::Added { name: resolved.name.clone(), version }),
            Some(locked) if locked.version == version && locked.digest == resolved.digest => {}
            Some(locked) => {
                let dependents = after
                    .iter()
                    .filter(|other| other.dependencies.contains(&resolved.name))
                    .map(|other| other.name.clone())
                    .collect();
                changes.push(Change::Moved {
                    name: resolved.name.clone(),
                    from: locked.version.clone(),
                    to: version,
                    dependents,
                });
            }
        }
    }
    for locked in &before.packages {
        if !after.iter().any(|resolved| resolved.name == locked.name) {
            changes.push(Change::Removed { name: locked.name.clone(), version: locked.version.clone() });
        }
    }
    changes.sort_by(|a, b| a.name().cmp(b.name()));
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::lock::Locked;

    fn locked(name: &str, version: &str) -> Locked {
        Locked {
            name: name.into(),
            version: version.into(),
            digest: format!("sha256:{name}-{version}"),
            publisher: None,
            source: "registry".into(),
        }
    }

    fn resolved(name: &str, version: &str, dependencies: &[&str]) -> Resolved {
        Resolved {
            name: name.into(),
            version: version.parse().unwrap(),
            digest: format!("sha256:{name}-{version}"),
            dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn a_resolution_lists_what_it_adds_moves_and_drops_with_the_dependents_touched() {
        let mut before = LockFile::default();
        for (name, version) in [("base-gameplay", "1.0.0"), ("shooter-core", "0.1.0"), ("old-hud", "0.3.0")] {
            before.record(locked(name, version));
        }
        let after = [
            resolved("base-gameplay", "1.1.0", &[]),
            resolved("map-pack", "2.0.0", &["base-gameplay"]),
            resolved("shooter-core", "0.1.0", &["base-gameplay"]),
        ];
        let said: Vec<String> = changes(&before, &after).iter().map(Change::to_string).collect();
        assert_eq!(
            said,
            [
                "update base-gameplay 1.0.0 -> 1.1.0 (used by map-pack, shooter-core)",
                "add map-pack 2.0.0",
                "remove old-hud 0.3.0 (no longer needed)",
            ]
        );
        let back = changes(&before, &[resolved("base-gameplay", "0.9.0", &[])]);
        assert_eq!(back[0].to_string(), "downgrade base-gameplay 1.0.0 -> 0.9.0");
    }
}
