//! `gfhost build`: builds a directory's plugins from source and puts each component beside its manifest, making
//! every folder a complete plugin package. The language of each plugin is its entry file's
//! ([`Language::of`]): Rust crates are built by cargo here, a workspace at a time; Python, JavaScript and C
//! plugins by `gamefeature-builder` with the project's pinned toolchains, side by side.
//!
//! Cargo says which file it built for which crate (`--message-format=json`), and each manifest is read as TOML,
//! so the component lands where `plugin.toml` names it whatever the crate is called, wherever the target
//! directory is (`CARGO_TARGET_DIR` included).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use gamefeature_builder::{BuildTarget, Language, Toolchains};
use gamefeature_host::feature::{PluginManifest, MANIFEST_FILE};

/// The gamefeature home whose toolchains, WIT packages and SDKs `gfhost build` and `gfhost new` use — a checkout
/// of the project, set up by `./dev setup` — found where this `gfhost` runs, never where it was compiled:
/// `$GFHOST_HOME`; else the checkout the running executable is in (`<home>/target/debug/gfhost`); else the one
/// the current folder is in. An error says where it looked and how to point it at one.
pub fn repository() -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("GFHOST_HOME") {
        let home = PathBuf::from(home);
        if is_home(&home) {
            return Ok(home);
        }
        bail!(
            "GFHOST_HOME is {}, which holds no gamefeature checkout (guest-sdk/ and wit/): point it at one",
            home.display()
        );
    }
    let executable = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let current = std::env::current_dir().ok();
    let found = [executable.as_deref(), current.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|start| start.ancestors().find(|dir| is_home(dir)).map(Path::to_path_buf));
    found.with_context(|| {
        format!(
            "gfhost finds no gamefeature checkout (guest-sdk/ and wit/, set up by ./dev setup) above {} or above {}: \
             set GFHOST_HOME to one (GFHOST_HOME=~/gamefeature gfhost ...)",
            executable.as_deref().map_or("the executable".into(), |p| p.display().to_string()),
            current.as_deref().map_or("the current folder".into(), |p| p.display().to_string()),
        )
    })
}

/// Whether `dir` is a gamefeature checkout: it has the SDKs and the WIT packages plugins build against.
fn is_home(dir: &Path) -> bool {
    dir.join("guest-sdk").is_dir() && dir.join("wit").is_dir()
}

/// The target plugins are built for.
pub const PLUGIN_TARGET: &str = "wasm32-wasip2";

/// The file beside a plugin in another language than Rust that records what its component was built from
/// (see `Toolchains::inputs_digest`).
pub const BUILD_STAMP: &str = ".gfhost-build";

/// The lock file beside a plugin that one build of it holds at a time, across processes.
pub const BUILD_LOCK: &str = ".gfhost-build.lock";

/// A plugin whose component was built and put in place.
pub struct Packaged {
    pub plugin: String,
    pub component: PathBuf,
}

/// What a build did: the plugins built, and each failure (a plugin, or a cargo workspace of them), the others
/// built all the same.
#[derive(Default)]
pub struct Built {
    pub packaged: Vec<Packaged>,
    pub failures: Vec<anyhow::Error>,
}

impl Built {
    fn take(&mut self, result: Result<Vec<Packaged>>) {
        match result {
            Ok(packaged) => self.packaged.extend(packaged),
            Err(failure) => self.failures.push(failure),
        }
    }
}

/// Builds plugins from source and puts each component at the path its manifest names. `path` is a plugin
/// folder (a manifest beside its sources) or a directory of plugin folders. In a directory, the members of its
/// cargo workspace (if it has one) are built together, and every crate that is a workspace of its own (as
/// `gfhost new` makes them) on its own — all into one target directory ([`rust_target_dir`], shared with the
/// example plugins), so they share their compiled dependencies; plugins in other languages are built
/// alongside, two at a time. Folders without sources are prebuilt packages and are left as they are. A plugin
/// that fails to build does not stop the others: its failure is in [`Built::failures`].
pub fn build_plugins(path: &Path) -> Result<Built> {
    let mut built = Built::default();
    if path.join(MANIFEST_FILE).is_file() {
        match Language::of(path)? {
            Some(Language::Rust) => {
                let target_dir = rust_target_dir();
                let result = cargo_build(&path.join("Cargo.toml"), target_dir.as_deref());
                built.take(result.and_then(|b| package(&[path.to_path_buf()], &b)))
            }
            Some(language) => built = build_others(&[(path.to_path_buf(), language)]),
            None => bail!(
                "{} has no sources to build (plugin.toml beside Cargo.toml, plugin.py, plugin.js or \
                           plugin.c)",
                path.display()
            ),
        };
        return Ok(built);
    }
    let target_dir = rust_target_dir().unwrap_or_else(|| path.join("target"));
    let mut rust = Vec::new();
    let mut others = Vec::new();
    for folder in plugin_folders(path)? {
        match Language::of(&folder)? {
            Some(Language::Rust) => rust.push(folder),
            Some(language) => others.push((folder, language)),
            None => {}
        }
    }
    if rust.is_empty() && others.is_empty() {
        bail!(
            "{} holds no plugin with sources (a folder with plugin.toml beside Cargo.toml, plugin.py, plugin.js \
             or plugin.c)",
            path.display()
        );
    }
    let (own, members): (Vec<PathBuf>, Vec<PathBuf>) =
        rust.into_iter().partition(|folder| is_own_workspace(&folder.join("Cargo.toml")));
    built = build_others(&others);
    if !members.is_empty() {
        built.take(cargo_build(&path.join("Cargo.toml"), Some(&target_dir)).and_then(|b| package(&members, &b)));
    }
    for folder in &own {
        let result = cargo_build(&folder.join("Cargo.toml"), Some(&target_dir));
        built.take(result.and_then(|b| package(std::slice::from_ref(folder), &b)));
    }
    Ok(built)
}

/// Builds plugins written in other languages than Rust, two at a time (their toolchains are single-threaded
/// and slow: componentize-py and componentize-js take seconds each).
fn build_others(folders: &[(PathBuf, Language)]) -> Built {
    let home = match repository() {
        Ok(home) => home,
        Err(e) => {
            let mut built = Built::default();
            built.failures.push(e);
            return built;
        }
    };
    let toolchains = Toolchains::of_repository(&home);
    let build = |(folder, language): &(PathBuf, Language)| -> Result<Packaged> {
        let target = BuildTarget::read(folder)?;
        // Built from exactly these inputs already: the same component (and so a compile-cache hit) without the
        // toolchain's seconds.
        // This gfhost's own build is an input too: a new one may build differently.
        let inputs = format!("{} {}", toolchains.inputs_digest(*language, folder)?, builder_identity());
        let stamp = folder.join(BUILD_STAMP);
        // Another process building this plugin (a second `gfhost build`, a `play --watch`) finishes first: its
        // stamp then says whether this build has anything left to do.
        let _building = lock_build(folder, &target.name, &target.component)?;
        let fresh = target.component.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|done| done == inputs);
        if fresh {
            eprintln!("       Fresh {} ({language})", target.name);
        } else {
            eprintln!("   Building {} ({language})", target.name);
            let _ = std::fs::remove_file(&stamp);
            toolchains.build(*language, &target)?;
            std::fs::write(&stamp, inputs).with_context(|| format!("writing {}", stamp.display()))?;
        }
        Ok(Packaged { plugin: target.name, component: target.component })
    };
    let mut built = Built::default();
    for pair in folders.chunks(2) {
        let results: Vec<Result<Packaged>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pair.iter().map(|item| scope.spawn(move || build(item))).collect();
            handles.into_iter().map(|h| h.join().expect("a build thread does not panic")).collect()
        });
        for result in results {
            built.take(result.map(|packaged| vec![packaged]));
        }
    }
    built
}

/// Which build of gfhost this is, as precisely as it can tell: its version and when its executable was written.
fn builder_identity() -> String {
    let written = std::env::current_exe()
        .and_then(std::fs::metadata)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("gfhost {} {written}", env!("CARGO_PKG_VERSION"))
}

/// Whether a crate's manifest makes it a workspace of its own.
fn is_own_workspace(cargo_toml: &Path) -> bool {
    let text = std::fs::read_to_string(cargo_toml).unwrap_or_default();
    text.parse::<toml::Table>().is_ok_and(|table| table.contains_key("workspace"))
}

/// Copies the component cargo built for each folder's crate to where the folder's manifest names it.
fn package(folders: &[PathBuf], built: &HashMap<PathBuf, PathBuf>) -> Result<Vec<Packaged>> {
    let mut packaged = Vec::new();
    for folder in folders {
        let manifest = PluginManifest::read(folder)?;
        let key = std::fs::canonicalize(folder).with_context(|| format!("reading {}", folder.display()))?;
        let Some(artifact) = built.get(&key) else {
            bail!(
                "plugin {}: cargo built no component for {} (is its crate a workspace member, with crate-type = \
                 [\"cdylib\"]?)",
                manifest.name,
                folder.display()
            );
        };
        let _building = lock_build(folder, &manifest.name, &manifest.component_path)?;
        place_copy(artifact, &manifest.component_path)
            .with_context(|| format!("copying {} to {}", artifact.display(), manifest.component_path.display()))?;
        packaged.push(Packaged { plugin: manifest.name, component: manifest.component_path });
    }
    Ok(packaged)
}

/// Takes the lock one build of the plugin in `folder` holds at a time, across processes (waiting, and saying so,
/// while another holds it), and removes what a build killed before this one left: its component half-written
/// beside `component` (`.building-*`; nobody else writes those while the lock is held).
fn lock_build(folder: &Path, name: &str, component: &Path) -> Result<gamefeature_host::file_lock::FileLock> {
    let lock = gamefeature_host::file_lock::FileLock::exclusive(&folder.join(BUILD_LOCK), || {
        eprintln!("    Blocking waiting for another build of {name}")
    })?;
    let beside = component.parent().unwrap_or(folder);
    for entry in std::fs::read_dir(beside).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(".building-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(lock)
}

/// Copies `from` to `to` whole: into a temporary file beside `to`, then renamed over it, so a host loading the
/// plugin meanwhile reads the old component or the new one, never half of one.
fn place_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    let folder = crate::folder_of(to);
    let mut copy = tempfile::Builder::new().prefix(".building-").tempfile_in(folder)?;
    std::io::copy(&mut std::fs::File::open(from)?, copy.as_file_mut())?;
    gamefeature_builder::readable_by_all(copy.path())?;
    copy.persist(to).map_err(|e| e.error)?;
    Ok(())
}

/// Runs cargo and returns the `.wasm` it built for each crate, by the crate's (canonical) folder. Cargo's own
/// progress and diagnostics go to standard error as usual.
/// Where Rust plugins build: `CARGO_TARGET_DIR` if set; else the target directory of the repository's example
/// plugins, whose SDK and wit-bindgen are compiled already with the same profile (a new plugin anywhere then
/// compiles in seconds, not a minute) — unless it cannot be written, when cargo's own choice stands (`None`).
pub fn rust_target_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(dir));
    }
    let shared = repository().ok()?.join("plugins").join("target");
    let writable = std::fs::create_dir_all(&shared).is_ok()
        && std::fs::metadata(&shared).is_ok_and(|m| !m.permissions().readonly());
    writable.then_some(shared)
}

fn cargo_build(workspace: &Path, target_dir: Option<&Path>) -> Result<HashMap<PathBuf, PathBuf>> {
    if !workspace.is_file() {
        bail!("{} not found: there is nothing to build", workspace.display());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--release", "--target", PLUGIN_TARGET, "--message-format=json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(workspace);
    if let Some(dir) = target_dir {
        command.arg("--target-dir").arg(dir);
    }
    command.env("CARGO_ENCODED_RUSTFLAGS", gamefeature_builder::rust_plugin_rustflags(&repository()?));
    command.env_remove("RUSTFLAGS");
    let mut child =
        command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().context("running cargo (is Rust installed?)")?;
    // Cargo renders the compiler's messages on its standard error: passed on as they come, and read for why a
    // build failed (with `json-render-diagnostics`, they are not among the JSON messages).
    let stderr = child.stderr.take().expect("stderr is piped");
    let diagnosis = std::thread::spawn(move || {
        let mut why = CargoFailure::Other;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            why = why.max(CargoFailure::of(&line));
        }
        why
    });
    let mut built = HashMap::new();
    let stdout = child.stdout.take().expect("stdout is piped");
    for line in std::io::BufReader::new(stdout).lines() {
        let message: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(message) => message,
            Err(_) => continue,
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(manifest), Some(files)) = (message["manifest_path"].as_str(), message["filenames"].as_array()) else {
            continue;
        };
        let wasm = files.iter().filter_map(|f| f.as_str()).find(|f| f.ends_with(".wasm"));
        if let (Some(wasm), Some(folder)) = (wasm, Path::new(manifest).parent()) {
            let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
            built.insert(folder, PathBuf::from(wasm));
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    let why = diagnosis.join().unwrap_or(CargoFailure::Other);
    if !status.success() {
        match why {
            CargoFailure::NoTarget => bail!(
                "building the plugins in {} failed: the {PLUGIN_TARGET} target is not installed (`rustup target add \
                 {PLUGIN_TARGET}`)",
                workspace.display()
            ),
            CargoFailure::Compile => {
                bail!("the plugins in {} did not compile: the compiler's errors are above", workspace.display())
            }
            CargoFailure::Other => {
                bail!("building the plugins in {} failed: cargo says why above", workspace.display())
            }
        }
    }
    Ok(built)
}

/// Why cargo failed, as its standard error says: the most telling line wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum CargoFailure {
    Other,
    Compile,
    NoTarget,
}

impl CargoFailure {
    fn of(line: &str) -> Self {
        if line.contains("target may not be installed") || line.contains("can't find crate for `core`") {
            CargoFailure::NoTarget
        } else if line.starts_with("error: could not compile") || line.starts_with("error[E") {
            CargoFailure::Compile
        } else {
            CargoFailure::Other
        }
    }
}

/// The sub-folders of `dir` holding a plugin manifest, sorted.
pub(crate) fn plugin_folders(dir: &Path) -> Result<Vec<PathBuf>> {
    let listing = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow::anyhow!(
            "there is no folder {}: name a plugin's folder or a folder of plugins (gfhost build mods/hello), or give \
             --plugins DIR",
            dir.display()
        ),
        _ => anyhow::Error::new(e).context(format!("reading {}", dir.display())),
    })?;
    let mut folders: Vec<PathBuf> = listing
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join(MANIFEST_FILE).is_file())
        .collect();
    folders.sort();
    Ok(folders)
}

/// Why a plugin built from sources beside its manifest is stale — its component is not what its sources make
/// now — if it is; plugins without sources never are. The rule `gfhost build` decides by, so that the two never
/// disagree: a plugin in Python, JavaScript or C is stale when the digest of its inputs differs from the one its
/// last build recorded (so an edit undone, or a `git checkout` that only touched files, leaves it fresh); a Rust
/// plugin, as cargo decides, when a source changed after its component was written. A component built without
/// `gfhost build` (no record) is judged by the times too.
pub fn staleness(manifest: &PluginManifest) -> Option<String> {
    let language = Language::of(&manifest.dir).ok()??;
    let component = manifest.component_path.display();
    if language != Language::Rust && manifest.component_path.is_file() {
        let recorded = std::fs::read_to_string(manifest.dir.join(BUILD_STAMP)).ok();
        let inputs = repository()
            .ok()
            .and_then(|home| Toolchains::of_repository(&home).inputs_digest(language, &manifest.dir).ok());
        if let (Some(recorded), Some(inputs)) = (recorded, inputs) {
            // The record is the inputs' digest and the builder's identity: a new gfhost builds again, but the
            // sources are what make a component stale.
            return (recorded.split(' ').next() != Some(inputs.as_str()))
                .then(|| format!("{component} was built from other sources than these"));
        }
    }
    let Some(built) = modified(&manifest.component_path) else {
        return Some(format!("{component} was never built"));
    };
    let newer = language.sources(&manifest.dir).into_iter().filter(|s| modified(s).is_some_and(|t| t > built));
    newer.max_by_key(|s| modified(s)).map(|source| format!("{component} is older than {}", source.display()))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::CargoFailure;

    /// A build fails for want of the target, for the plugin's own errors, or for something else cargo says: the
    /// message that follows names the right one (a type error is not a missing target).
    #[test]
    fn why_cargo_failed_is_read_from_what_it_printed() {
        let why = |lines: &[&str]| lines.iter().map(|line| CargoFailure::of(line)).max().unwrap_or(CargoFailure::Other);
        assert_eq!(
            why(&["error[E0308]: mismatched types", "error: could not compile `hello` (lib)"]),
            CargoFailure::Compile
        );
        assert_eq!(
            why(&[
                "error[E0463]: can't find crate for `core`",
                "  = note: the `wasm32-wasip2` target may not be installed"
            ]),
            CargoFailure::NoTarget
        );
        assert_eq!(why(&["error: failed to parse manifest at `/x/Cargo.toml`"]), CargoFailure::Other);
    }
}
