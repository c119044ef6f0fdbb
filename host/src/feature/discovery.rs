//! Finding plugins on disk: every folder directly under a plugin directory that holds a `plugin.toml`, each
//! vetted by the caller before it is found (the session checks folders installed from packages again).

use std::path::PathBuf;

use super::manifest::{PluginManifest, MANIFEST_FILE};

/// Checks a plugin folder's manifest before it is found, and may narrow it (what it may ask for); an error
/// refuses the folder, with why.
pub type Vet<'a> = &'a dyn Fn(&mut PluginManifest) -> Result<(), String>;

/// What a scan found: the manifests that validated, and one message per problem (naming the file).
#[derive(Debug, Default)]
pub struct DiscoveryReport {
    /// The manifests that validated and were accepted, in scan order.
    pub found: Vec<PluginManifest>,
    /// One message per problem (an unreadable directory, an invalid manifest, a refused folder), naming the file.
    pub errors: Vec<String>,
}

/// Scans each directory for plugin folders, in name order so results do not depend on the filesystem; each
/// manifest is found only if `vet` accepts it.
pub fn discover(dirs: &[PathBuf], vet: Vet<'_>) -> DiscoveryReport {
    let mut report = DiscoveryReport::default();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                report.errors.push(format!("{}: cannot read plugin directory: {e}", dir.display()));
                continue;
            }
        };
        // Hidden folders are never plugins: an install stages a package in `.installing-*` until it is whole,
        // and one killed midway leaves it there.
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| !path.file_name().is_some_and(|name| name.to_string_lossy().starts_with('.')))
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
            match vet(&mut manifest) {
                Ok(()) => report.found.push(manifest),
                Err(e) => report.errors.push(format!("plugin {:?} refused: {e}", manifest.name)),
            }
        }
    }
    report
}
