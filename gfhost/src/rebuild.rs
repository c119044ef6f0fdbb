//! Rebuild on save, for `--watch`: a plugin whose *source* changes (any file [`Language::sources`] lists: Rust
//! under `src/` and its `Cargo.toml`, `plugin.py`, `plugin.js`, `plugin.c` and what they include) is built
//! again off the frame thread with its toolchain; the component that lands is then seen by the watcher like
//! any new version and hot-reloaded with its state. A build that fails is shown, and the running version stays
//! (as `spin watch` and `wash dev` do).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use gamefeature_builder::Language;
use gamefeature_host::feature::MANIFEST_FILE;
use gamefeature_host::live::FolderWatcher;
use tokio::task::JoinHandle;

use crate::build::{build_plugins, plugin_folders, Built};

/// A path as the watcher reports it: absolute, links resolved (the file itself may be gone for a moment while
/// an editor replaces it, so its folder is what is resolved).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent().and_then(|dir| dir.canonicalize().ok()), absolute.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => absolute,
    }
}

/// The folders to watch for `plugin_folders`: each one, and every folder below it holding one of its sources
/// (a Rust plugin's `src/`), so that a save anywhere in the sources is seen.
pub fn watched_folders(plugin_folders: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = BTreeSet::new();
    for folder in plugin_folders {
        let folder = folder.canonicalize().unwrap_or_else(|_| folder.clone());
        if let Ok(Some(language)) = Language::of(&folder) {
            folders.extend(language.sources(&folder).iter().filter_map(|s| s.parent().map(Path::to_path_buf)));
        }
        folders.insert(folder);
    }
    folders.into_iter().collect()
}

/// The plugin folders among `plugin_folders` one of whose sources is among `changed`, each once.
pub fn with_changed_sources(plugin_folders: &[PathBuf], changed: &[PathBuf]) -> Vec<PathBuf> {
    let changed: BTreeSet<PathBuf> = changed.iter().map(|path| resolved(path)).collect();
    let mut found = Vec::new();
    for folder in plugin_folders {
        let Ok(Some(language)) = Language::of(folder) else { continue };
        if language.sources(folder).iter().any(|source| changed.contains(&resolved(source))) && !found.contains(folder)
        {
            found.push(folder.clone());
        }
    }
    found
}

/// Builds under way, one per plugin folder at most.
#[derive(Default)]
pub struct Rebuilds {
    running: Vec<(PathBuf, JoinHandle<anyhow::Result<Built>>)>,
    /// Folders whose sources changed again while they were being built: built once more when that build ends.
    again: BTreeSet<PathBuf>,
}

impl Rebuilds {
    /// Starts building `folder` (or, if it is being built already, builds it once more afterwards); returns what
    /// to show.
    pub fn start(&mut self, tokio: &tokio::runtime::Runtime, folder: PathBuf) -> Option<String> {
        if self.running.iter().any(|(running, _)| *running == folder) {
            self.again.insert(folder);
            return None;
        }
        let said = format!("building {} (its sources changed)", folder.display());
        let task = {
            let folder = folder.clone();
            tokio.spawn_blocking(move || build_plugins(&folder))
        };
        self.running.push((folder, task));
        Some(said)
    }

    /// Builds again the plugins among `plugin_folders` whose sources are among `changed`, and collects the
    /// builds that ended: what to show of both (a step of a watching game loop).
    pub fn follow(
        &mut self,
        tokio: &tokio::runtime::Runtime,
        plugin_folders: &[PathBuf],
        changed: &[PathBuf],
    ) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for folder in with_changed_sources(plugin_folders, changed) {
            lines.extend(self.start(tokio, folder));
        }
        lines.extend(self.finished(tokio));
        lines
    }

    /// The builds that ended since the last call, as lines to show: a new component is reloaded when the
    /// watcher sees it; a failure leaves the running version as it is.
    pub fn finished(&mut self, tokio: &tokio::runtime::Runtime) -> Vec<String> {
        let (done, running): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.running).into_iter().partition(|(_, t)| t.is_finished());
        self.running = running;
        let mut lines = Vec::new();
        for (folder, task) in done {
            let outcome = tokio.block_on(task).map_err(anyhow::Error::from).and_then(|built| built);
            match outcome {
                Ok(built) => {
                    for packaged in &built.packaged {
                        lines.push(format!("{} built: {}", packaged.plugin, packaged.component.display()));
                    }
                    for failure in &built.failures {
                        lines.push(format!("error: the build failed, so the running version stays: {failure:#}"));
                    }
                }
                Err(failure) => {
                    lines.push(format!("error: building {}: {failure:#} (the running version stays)", folder.display()))
                }
            }
            if self.again.remove(&folder) {
                lines.extend(self.start(tokio, folder));
            }
        }
        lines
    }
}

/// What a console shows of a new version still compiling a second after its reload began (a Python or
/// JavaScript component takes seconds): the wait is the host's, not a hang.
pub fn compiling(plugin: &str) -> String {
    format!("compiling {plugin}'s new version")
}

/// The plugin folders `paths` name: each a plugin folder, or a directory of them.
fn folders_of(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for path in paths {
        if path.join(MANIFEST_FILE).is_file() {
            folders.push(path.clone());
        } else {
            folders.extend(plugin_folders(path).unwrap_or_default());
        }
    }
    folders
}

/// `gfhost build --watch`: runs `first_build`, then builds each plugin again whenever one of its sources is
/// saved, until interrupted. The folders are watched from before the first build, so a save made while it runs
/// is built once it ends. Plugin folders added to a watched directory are followed.
pub fn watch_and_build(paths: &[PathBuf], first_build: impl FnOnce()) -> anyhow::Result<()> {
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let mut folders = folders_of(paths);
    let mut watcher = FolderWatcher::new(&watched_folders(&folders)).context("watching the plugin folders")?;
    // The directories themselves too, for plugin folders made while it watches.
    watcher.follow(&[watched_folders(&folders), paths.to_vec()].concat())?;
    first_build();
    println!("watching the sources of {} plugin(s); interrupt to stop", folders.len());
    let mut rebuilds = Rebuilds::default();
    loop {
        let changed = watcher.changed();
        if !changed.is_empty() {
            folders = folders_of(paths);
            watcher.follow(&[watched_folders(&folders), paths.to_vec()].concat())?;
        }
        for folder in with_changed_sources(&folders, &changed) {
            if let Some(line) = rebuilds.start(&tokio, folder) {
                println!("{line}");
            }
        }
        for line in rebuilds.finished(&tokio) {
            println!("{line}");
        }
        std::thread::sleep(POLL);
    }
}

/// How often `gfhost build --watch` looks at what changed.
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_change_names_its_plugin_whatever_the_path_form_and_outputs_do_not() {
        let root = tempfile::tempdir().unwrap();
        let c = root.path().join("greeter");
        std::fs::create_dir_all(c.join("data")).unwrap();
        for file in ["plugin.c", "plugin.toml", "greeter.wasm", "data/notes.c"] {
            std::fs::write(c.join(file), "x").unwrap();
        }
        let rust = root.path().join("tally");
        std::fs::create_dir_all(rust.join("src/parts")).unwrap();
        for file in ["Cargo.toml", "plugin.toml", "src/lib.rs", "src/parts/count.rs"] {
            std::fs::write(rust.join(file), "x").unwrap();
        }
        let folders = [c.clone(), rust.clone()];
        let canonical = |p: &Path| p.canonicalize().unwrap();
        let watched = watched_folders(&folders);
        for folder in
            [canonical(&c), canonical(&rust), canonical(&rust.join("src")), canonical(&rust.join("src/parts"))]
        {
            assert!(watched.contains(&folder), "{folder:?} in {watched:?}");
        }
        // The watcher's absolute paths, a source named relative to here, outputs and data.
        let changed = [canonical(&rust.join("src/parts/count.rs"))];
        assert_eq!(with_changed_sources(&folders, &changed), std::slice::from_ref(&rust));
        let here = std::env::current_dir().unwrap();
        let relative = pathdiff(&c.join("plugin.c"), &here);
        assert_eq!(with_changed_sources(&folders, &[relative]), std::slice::from_ref(&c));
        let outputs = [c.join("greeter.wasm"), c.join("plugin.toml"), c.join("data/notes.c")];
        assert!(with_changed_sources(&folders, &outputs).is_empty(), "outputs, manifests and data are not sources");
    }

    /// `path` relative to `base` (both absolute), climbing with `..` as far as needed.
    fn pathdiff(path: &Path, base: &Path) -> PathBuf {
        let (path, base) = (path.canonicalize().unwrap(), base.canonicalize().unwrap());
        let common = path.components().zip(base.components()).take_while(|(a, b)| a == b).count();
        let up = base.components().count() - common;
        let mut relative: PathBuf = std::iter::repeat_n("..", up).collect();
        relative.extend(path.components().skip(common));
        relative
    }
}
