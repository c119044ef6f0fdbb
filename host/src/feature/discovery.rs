//! Finding plugin packages on disk: every folder directly under a plugin directory that holds a `plugin.toml`.

use std::path::PathBuf;

use super::manifest::{PluginManifest, MANIFEST_FILE};

/// What a scan found: the manifests that validated, and one message per problem (naming the file).
#[derive(Debug, Default)]
pub struct DiscoveryReport {
    pub found: Vec<PluginManifest>,
    pub errors: Vec<String>,
}

/// Scans each directory for plugin folders, in name order so results do not depend on the filesystem.
pub fn discover(dirs: &[PathBuf]) -> DiscoveryReport {
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
            match PluginManifest::read(&folder) {
                Ok(manifest) => report.found.push(manifest),
                Err(e) => report.errors.push(e.to_string()),
            }
        }
    }
    report
}
