//! Watching plugin folders for new versions: file events from the operating system (through `notify`),
//! settled — a build writes a file in several steps, so a file counts as changed once it has been quiet for a
//! moment.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

/// How long a file must be quiet after its last event before it counts as changed.
pub const QUIET: Duration = Duration::from_millis(200);

/// Files that changed, each reported once it has been quiet for [`QUIET`].
#[derive(Debug, Default)]
pub struct Settling {
    last_event: HashMap<PathBuf, Instant>,
}

impl Settling {
    /// A file changed at `at`.
    pub fn touched(&mut self, path: PathBuf, at: Instant) {
        self.last_event.insert(path, at);
    }

    /// The files quiet since `now - QUIET`, each once, sorted.
    pub fn settled(&mut self, now: Instant) -> Vec<PathBuf> {
        let mut settled: Vec<PathBuf> = self
            .last_event
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) >= QUIET)
            .map(|(path, _)| path.clone())
            .collect();
        for path in &settled {
            self.last_event.remove(path);
        }
        settled.sort();
        settled
    }
}

/// Watches folders (not their subfolders) for changed files, and follows a folder replaced whole: a package
/// installed into a plugin directory is renamed into place over the old folder, which takes the old folder's
/// watch away with it. Each folder's parent is watched too, so the new folder is seen, its `plugin.toml` reported
/// as changed, and its watch made again.
pub struct FolderWatcher {
    watcher: notify::RecommendedWatcher,
    watching: std::collections::BTreeSet<PathBuf>,
    /// The folders' parents, watched for folders renamed into place.
    parents: std::collections::BTreeSet<PathBuf>,
    events: Receiver<notify::Result<notify::Event>>,
    settling: Settling,
}

impl FolderWatcher {
    /// Watches `folders` (see [`follow`](Self::follow)).
    pub fn new(folders: &[PathBuf]) -> notify::Result<Self> {
        let (sender, events) = channel();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = sender.send(event);
        })?;
        let mut watcher = FolderWatcher {
            watcher,
            watching: Default::default(),
            parents: Default::default(),
            events,
            settling: Settling::default(),
        };
        watcher.follow(folders)?;
        Ok(watcher)
    }

    /// Watches exactly `folders` from now on: those not watched yet are added (a plugin activated or installed
    /// while the game runs), the others let go (a plugin deactivated or uninstalled).
    pub fn follow(&mut self, folders: &[PathBuf]) -> notify::Result<()> {
        use std::collections::BTreeSet;
        let wanted: BTreeSet<PathBuf> = folders.iter().cloned().collect();
        let parents: BTreeSet<PathBuf> = (wanted.iter())
            .filter_map(|folder| folder.parent())
            .filter(|parent| parent.is_dir() && !wanted.contains(*parent))
            .map(PathBuf::from)
            .collect();
        // Every watch let go first, then every one made: a folder that was a parent and is now watched for its
        // own sake (or the other way round) keeps a watch.
        for gone in self.watching.difference(&wanted).chain(self.parents.difference(&parents)) {
            // The folder may have been deleted already, which ends its watch by itself.
            let _ = self.watcher.unwatch(gone);
        }
        let (watched_before, parents_before) = (std::mem::take(&mut self.watching), std::mem::take(&mut self.parents));
        for folder in wanted {
            if !watched_before.contains(&folder) || parents_before.contains(&folder) {
                self.watcher.watch(&folder, RecursiveMode::NonRecursive)?;
            }
            self.watching.insert(folder);
        }
        for parent in parents {
            if !parents_before.contains(&parent) || watched_before.contains(&parent) {
                self.watcher.watch(&parent, RecursiveMode::NonRecursive)?;
            }
            self.parents.insert(parent);
        }
        Ok(())
    }

    /// The files that changed and have settled since the last call.
    pub fn changed(&mut self) -> Vec<PathBuf> {
        let now = Instant::now();
        let mut replaced = std::collections::BTreeSet::new();
        while let Ok(event) = self.events.try_recv() {
            let Ok(event) = event else { continue };
            if event.kind.is_modify() || event.kind.is_create() {
                for path in event.paths {
                    if self.watching.contains(&path) {
                        replaced.insert(path.clone());
                    }
                    self.settling.touched(path, now);
                }
            }
        }
        for folder in replaced {
            // The watch went with the old folder: watch the one now in its place, and report its manifest, so
            // the plugin's new version is read whole.
            let _ = self.watcher.unwatch(&folder);
            if self.watcher.watch(&folder, RecursiveMode::NonRecursive).is_ok() {
                self.settling.touched(folder.join(crate::feature::MANIFEST_FILE), now);
            }
        }
        self.settling.settled(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_counts_as_changed_once_it_has_been_quiet() {
        let mut settling = Settling::default();
        let start = Instant::now();
        settling.touched("a.wasm".into(), start);
        settling.touched("a.wasm".into(), start + Duration::from_millis(100));
        assert!(settling.settled(start + Duration::from_millis(250)).is_empty(), "still being written");
        assert_eq!(settling.settled(start + Duration::from_millis(300)), [PathBuf::from("a.wasm")]);
        assert!(settling.settled(start + Duration::from_secs(5)).is_empty(), "reported once");
    }
}
