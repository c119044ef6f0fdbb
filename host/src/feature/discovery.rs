//! Finding plugins on disk: every folder directly under a plugin directory that holds a `plugin.toml`.
//!
//! A folder installed from a package is checked again before it is found: it must still be the package it was
//! installed from, signed by a publisher the host trusts; its plugin then asks for no more than that publisher
//! may be granted.

use std::path::PathBuf;

use super::manifest::{PluginManifest, MANIFEST_FILE};
use crate::package::{install::verify_installed, TrustPolicy};

/// What a scan found: the manifests that validated, and one message per problem (naming the file).
#[derive(Debug, Default)]
pub struct DiscoveryReport {
    pub found: Vec<PluginManifest>,
    pub errors: Vec<String>,
}

/// Scans each directory for plugin folders, in name order so results do not depend on the filesystem. Folders
/// installed from packages are found only if `trust` accepts them.
pub fn discover(dirs: &[PathBuf], trust: &TrustPolicy) -> DiscoveryReport {
    let mut report = DiscoveryReport::default();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                report.errors.push(format!("{}: cannot read plugin directory: {e}", dir.display()));
                continue;
            }
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.join(MANIFEST_FILE).is_file())
            .collect();
        folders.sort();
        for folder in folders {
            let mut manifest = match PluginManifest::read(&folder) {
                Ok(manifest) => manifest,
                Err(e) => {
                    report.errors.push(e.to_string());
                    continue;
                }
            };
            match verify_installed(&folder, trust) {
                Ok(verdict) => {
                    if let Some(ceiling) = verdict.as_ref().and_then(|v| v.ceiling()) {
                        manifest.permissions = manifest.permissions.intersect(ceiling);
                    }
                    report.found.push(manifest);
                }
                Err(e) => report.errors.push(format!("plugin {:?} refused: {e}", manifest.name)),
            }
        }
    }
    report
}
