//! The set of plugins a host installs from registries, as one thing: `gfhost install NAME@RANGE` (with what it
//! depends on), `gfhost install` (exactly the lock), `outdated`, `update [NAME] [--dry-run]`, `update
//! --rollback`, and a publisher's `yank` and `search`.
//!
//! Every change goes the same way: resolve (see `package::resolve`) against the lock, say what changes, pull and
//! check every package that changes (its digest against the lock, its publisher against the trust policy), then
//! install them as one set (`package::install::install_set`), and write the lock last, keeping the one before
//! it for a rollback. Installs in other processes wait for the lock file.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use gamefeature_host::file_lock::{guard_of, FileLock};
use gamefeature_host::package::changes::{changes, Change};
use gamefeature_host::package::install::{install_set, provenance};
use gamefeature_host::package::lock::{LockFile, Locked, Request};
use gamefeature_host::package::resolve::{self, Resolved};
use gamefeature_host::package::{Package, Signature, TrustPolicy, Verdict};

use crate::registry::Registry;

/// Where a change installs and what it trusts.
pub struct Target<'a> {
    /// The plugin directory.
    pub into: &'a Path,
    /// The lock file.
    pub lock: &'a Path,
    /// Which publishers' packages are accepted.
    pub trust: &'a TrustPolicy,
}

/// Installs NAME@RANGE from `registry` with the plugins it depends on; the plugins installed before stay at
/// their locked versions where the new one's ranges allow.
pub fn install(spec: &str, registry: Option<&str>, target: &Target<'_>) -> Result<ExitCode> {
    let Some(registry) = registry else {
        bail!(
            "{spec:?} is not a package file; to install it from a registry, name one with --registry \
             host:port/namespace"
        );
    };
    let (name, range) = spec.split_once('@').unwrap_or((spec, "*"));
    let _: semver::VersionReq =
        range.parse().with_context(|| format!("{spec:?}: {range:?} is not a semver range (e.g. ^1.2)"))?;
    let registry = Registry::new(registry)?;
    let request = Request { name: name.to_string(), version: range.to_string(), source: registry.location() };
    let before = LockFile::read(target.lock).map_err(anyhow::Error::msg)?;
    let location = registry.location();
    one_registry(&before, &location, target.lock)?;
    let what = format!("installing {spec} from {location}");
    change(target, &registry, &what, false, |before| {
        let mut after = before.without(&[name]);
        // A lock written before requests were recorded keeps what it installed as requests of its own.
        if after.requests.is_empty() {
            after.requests = requested(before, &location, Some(target.into)).requests;
        }
        after.request(request);
        after
    })
}

/// `gfhost update`: the named plugins (every plugin, when none is named) moved to the newest versions the
/// requests' ranges allow, the rest kept where they are; with `dry_run`, only what would change is said.
pub fn update(names: &[String], registry: Option<&str>, dry_run: bool, target: &Target<'_>) -> Result<ExitCode> {
    let before = LockFile::read(target.lock).map_err(anyhow::Error::msg)?;
    let registry = Registry::new(&source_of(&before, registry, target.lock)?)?;
    one_registry(&before, &registry.location(), target.lock)?;
    for name in names {
        if before.get(name).is_none() && !before.requests.iter().any(|r| &r.name == name) {
            let installed: Vec<&str> = before.packages.iter().map(|p| p.name.as_str()).collect();
            bail!("{}: no plugin {name} is installed (installed: {})", target.lock.display(), installed.join(", "));
        }
    }
    let what = format!("updating from {}", registry.location());
    change(target, &registry, &what, dry_run, |before| {
        let mut after = requested(before, &registry.location(), Some(target.into));
        if !names.is_empty() {
            let moving: Vec<&str> = names.iter().map(String::as_str).collect();
            after.packages = before.without(&moving).packages;
        }
        after
    })
}

/// `gfhost outdated`: each installed plugin's locked version beside the version `update` would move it to, and
/// the newest published; yanked versions installed are named with their reason.
pub fn outdated(registry: Option<&str>, lock_path: &Path) -> Result<ExitCode> {
    let lock = LockFile::read(lock_path).map_err(anyhow::Error::msg)?;
    if lock.packages.is_empty() {
        println!("{} lists no packages", lock_path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let registry = Registry::new(&source_of(&lock, registry, lock_path)?)?;
    let tokio = runtime()?;
    let index = RegistryIndex { registry: &registry, tokio: &tokio };
    let wanted =
        resolve::resolve(&index, &requests_of(&requested(&lock, &registry.location(), None))?, &LockFile::default())
            .with_context(|| format!("resolving the lock's requests against {}", registry.location()))?;
    let mut rows = vec![["plugin".to_string(), "locked".into(), "update to".into(), "newest".into()]];
    let mut notes = Vec::new();
    let mut behind = 0;
    for locked in &lock.packages {
        let newest = tokio.block_on(newest_version(&registry, &locked.name))?;
        let update_to = wanted.iter().find(|r| r.name == locked.name).map(|r| r.version.to_string());
        let yanks = tokio.block_on(registry.yanked(&locked.name))?;
        if let Some(yank) = yanks.iter().find(|y| y.version.to_string() == locked.version) {
            notes.push(yanked_note(&locked.name, yank));
        }
        if update_to.as_deref() != Some(locked.version.as_str()) || newest.as_deref() != Some(&locked.version) {
            behind += 1;
        }
        let dash = || "-".to_string();
        rows.push([
            locked.name.clone(),
            locked.version.clone(),
            update_to.unwrap_or_else(dash),
            newest.unwrap_or_else(dash),
        ]);
    }
    print_table(&rows);
    for note in notes {
        println!("{note}");
    }
    if behind == 0 {
        println!("every plugin is at its newest version");
    }
    Ok(ExitCode::SUCCESS)
}

/// `gfhost update --rollback`: the lock before the last change installed exactly, and made the lock (the one it
/// replaces kept in its place, so a second rollback goes forward again).
pub fn rollback(target: &Target<'_>) -> Result<ExitCode> {
    let _guard = lock_exclusively(target.lock)?;
    let previous_path = LockFile::previous_path(target.lock);
    if !previous_path.exists() {
        bail!("there is nothing to roll back to: {} does not exist", previous_path.display());
    }
    let previous = LockFile::read(&previous_path).map_err(anyhow::Error::msg)?;
    let current = LockFile::read(target.lock).map_err(anyhow::Error::msg)?;
    let after: Vec<Resolved> = previous
        .packages
        .iter()
        .map(|p| Resolved {
            name: p.name.clone(),
            version: p.version.parse().unwrap_or(semver::Version::new(0, 0, 0)),
            digest: p.digest.clone(),
            dependencies: Vec::new(),
        })
        .collect();
    let changed = changes(&current, &after);
    for change in &changed {
        println!("{change}");
    }
    install_exactly(&previous, &current, target, LockedFrom::Registries)?;
    // The lock first: a process stopped before the removals leaves a folder the lock no longer names, never a
    // lock naming a folder that is gone.
    previous.write_keeping_previous(target.lock).map_err(anyhow::Error::msg)?;
    remove_dropped(&changed, &current, target.into)?;
    println!(
        "rolled {} back to the lock before its last change (the one it replaced is now {}: roll back again to return)",
        target.lock.display(),
        previous_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `gfhost install` with no package: exactly what the lock file lists, each package by digest from where it
/// came (or from a mirror), by the publisher recorded; all of them or none. Installing from a mirror with no
/// lock file takes the mirror's lock as this host's.
pub fn install_locked(target: &Target<'_>, from: LockedFrom<'_>) -> Result<ExitCode> {
    let _guard = lock_exclusively(target.lock)?;
    let mut lock = LockFile::read(target.lock).map_err(anyhow::Error::msg)?;
    let adopted = match from {
        LockedFrom::Mirror(folder) if lock.packages.is_empty() => {
            let mirrored = folder.join(gamefeature_host::package::lock::LOCK_FILE);
            lock = LockFile::read(&mirrored).map_err(anyhow::Error::msg)?;
            true
        }
        _ => false,
    };
    if lock.packages.is_empty() {
        bail!("{} lists no packages: install one with `gfhost install NAME@RANGE --registry …`", target.lock.display());
    }
    install_exactly(&lock, &LockFile::default(), target, from)?;
    if adopted {
        lock.write_keeping_previous(target.lock).map_err(anyhow::Error::msg)?;
        println!("wrote {} from the mirror's lock", target.lock.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `gfhost yank NAME@VERSION`: the version withdrawn from resolution (or put back, with `undo`).
pub fn yank(spec: &str, registry: &str, reason: Option<&str>, undo: bool) -> Result<ExitCode> {
    let Some((name, version)) = spec.split_once('@') else {
        bail!("{spec:?}: name the version to yank, as NAME@VERSION");
    };
    let exact: semver::Version =
        version.parse().with_context(|| format!("{spec:?}: {version:?} is not one version (e.g. 1.2.0)"))?;
    let registry = Registry::new(registry)?;
    runtime()?.block_on(registry.yank(name, &exact.to_string(), reason, undo))?;
    match undo {
        true => {
            println!("{name} {exact} in {} is no longer yanked: resolutions may choose it again", registry.location())
        }
        false => println!(
            "yanked {name} {exact} in {}: resolutions pass over it; lock files that hold it still install it",
            registry.location()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// `gfhost search [TERM]`: the plugins of a registry's namespace whose name or description holds `term`, each
/// with its newest version, its description and its versions.
pub fn search(term: Option<&str>, registry: &str) -> Result<ExitCode> {
    let registry = Registry::new(registry)?;
    let tokio = runtime()?;
    let term = term.map(str::to_lowercase);
    let mut rows = vec![["plugin".to_string(), "newest".into(), "description".into()]];
    for name in tokio.block_on(registry.plugins())? {
        let Some(newest) = tokio.block_on(newest_version(&registry, &name))? else { continue };
        let description = tokio.block_on(registry.description(&name, &newest))?;
        let description = gamefeature_host::text::shown(&description, gamefeature_host::text::MAX_CAUSE);
        let matches = term.as_ref().is_none_or(|term| {
            name.to_lowercase().contains(term.as_str()) || description.to_lowercase().contains(term.as_str())
        });
        if matches {
            rows.push([name, newest, description]);
        }
    }
    if rows.len() == 1 {
        println!("no plugin in {} matches", registry.location());
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&rows);
    Ok(ExitCode::SUCCESS)
}

/// The newest version of `name` not yanked.
async fn newest_version(registry: &Registry, name: &str) -> Result<Option<String>> {
    let yanked: Vec<semver::Version> = registry.yanked(name).await?.into_iter().map(|y| y.version).collect();
    let versions = registry.versions(name).await?;
    Ok(versions.into_iter().rev().find(|v| !yanked.contains(v)).map(|v| v.to_string()))
}

fn yanked_note(name: &str, yank: &crate::registry::Yank) -> String {
    let shown = |r: &str| gamefeature_host::text::shown(r, gamefeature_host::text::MAX_CAUSE);
    let reason = yank.reason.as_deref().map(|r| format!(": {}", shown(r))).unwrap_or_default();
    format!("{name} {} was yanked by its publisher{reason}; `gfhost update {name}` moves off it", yank.version)
}

/// Prints `rows` as columns, the first row a header.
fn print_table<const N: usize>(rows: &[[String; N]]) {
    let widths: Vec<usize> = (0..N).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:width$}")).collect();
        println!("{}", cells.join("  ").trim_end());
    }
}

/// The registry the lock resolves from: `registry` if given, else the one its requests (or packages) name.
fn source_of(lock: &LockFile, registry: Option<&str>, lock_path: &Path) -> Result<String> {
    if let Some(registry) = registry {
        return Ok(registry.to_string());
    }
    let mut sources: Vec<&str> = lock.requests.iter().map(|r| r.source.as_str()).collect();
    sources.extend(lock.packages.iter().map(|p| p.source.as_str()));
    sources.sort_unstable();
    sources.dedup();
    match sources.as_slice() {
        [one] => Ok(one.to_string()),
        [] => bail!(
            "{} lists no packages: install one with `gfhost install NAME@RANGE --registry …`",
            lock_path.display()
        ),
        many => bail!(
            "{} names several registries ({}): name the one to use with --registry",
            lock_path.display(),
            many.join(", ")
        ),
    }
}

/// The lock's requests, with none of its packages: what a full update resolves. A lock written before requests
/// were recorded asks for each of its packages that no other installed one (in `into`, when known) depends on,
/// within its version's caret range (Cargo's default).
fn requested(lock: &LockFile, source: &str, into: Option<&Path>) -> LockFile {
    let mut requests = lock.requests.clone();
    if requests.is_empty() {
        let needed: Vec<String> = into
            .into_iter()
            .flat_map(|into| lock.packages.iter().map(move |p| into.join(&p.name)))
            .filter_map(|folder| gamefeature_host::feature::PluginManifest::read(&folder).ok())
            .flat_map(|manifest| manifest.dependencies.into_iter().map(|d| d.name))
            .collect();
        requests = lock
            .packages
            .iter()
            .filter(|p| !needed.contains(&p.name))
            .map(|p| Request { name: p.name.clone(), version: format!("^{}", p.version), source: source.to_string() })
            .collect();
    }
    LockFile { requests, packages: Vec::new() }
}

/// Refuses a change from `location` to a lock that holds plugins from another registry: one lock resolves from
/// one registry.
fn one_registry(lock: &LockFile, location: &str, lock_path: &Path) -> Result<()> {
    let requested = lock.requests.iter().map(|r| (&r.name, &r.source));
    let mut sources = requested.chain(lock.packages.iter().map(|p| (&p.name, &p.source)));
    if let Some((other, source)) = sources.find(|(_, s)| *s != location) {
        bail!(
            "{}: {other} was installed from {source}, and one lock resolves from one registry: use {source}, or \
             mirror its plugins into {location}",
            lock_path.display()
        );
    }
    Ok(())
}

/// The requests of `lock`, as resolution takes them.
fn requests_of(lock: &LockFile) -> Result<Vec<(String, semver::VersionReq)>> {
    lock.requests
        .iter()
        .map(|r| {
            let range = r
                .version
                .parse()
                .with_context(|| format!("the request for {}: {:?} is not a semver range", r.name, r.version))?;
            Ok((r.name.clone(), range))
        })
        .collect()
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting tokio")
}

/// The lock file held for this process alone, so that installs in other processes each read what the one
/// before wrote.
fn lock_exclusively(lock_path: &Path) -> Result<FileLock> {
    let guard = guard_of(lock_path);
    Ok(FileLock::exclusive(&guard, || eprintln!("waiting for another install to finish with {}", lock_path.display()))?)
}

/// One change of the installed set: `plan` gives, from the lock as it is, the lock to resolve (its requests, and
/// the packages that stay where they are); what the resolution changes is said, then (unless `dry_run`)
/// installed as one set, and locked.
fn change(
    target: &Target<'_>,
    registry: &Registry,
    what: &str,
    dry_run: bool,
    plan: impl FnOnce(&LockFile) -> LockFile,
) -> Result<ExitCode> {
    let _guard = lock_exclusively(target.lock)?;
    let before = LockFile::read(target.lock).map_err(anyhow::Error::msg)?;
    let planned = plan(&before);
    let tokio = runtime()?;
    let index = RegistryIndex { registry, tokio: &tokio };
    let resolved = resolve::resolve(&index, &requests_of(&planned)?, &planned).with_context(|| what.to_string())?;
    let changed = changes(&before, &resolved);
    if dry_run {
        for change in &changed {
            println!("{change}");
        }
        match changed.is_empty() {
            true => println!("nothing to change"),
            false => println!("(a dry run: nothing was fetched or installed)"),
        }
        return Ok(ExitCode::SUCCESS);
    }

    // Every package that is not installed as resolved is pulled (by digest) and checked before any is installed.
    let mut pulled: Vec<(Package, Option<Signature>)> = Vec::new();
    let mut after = LockFile { requests: planned.requests.clone(), packages: Vec::new() };
    for chosen in &resolved {
        let version = chosen.version.to_string();
        let already = before.get(&chosen.name).filter(|l| l.digest == chosen.digest && l.version == version);
        if let Some(locked) =
            already.filter(|_| installed_digest(target.into, &chosen.name) == Some(chosen.digest.clone()))
        {
            after.record(locked.clone());
            continue;
        }
        let (package, signature) = tokio.block_on(registry.pull(&chosen.name, &version, Some(&chosen.digest)))?;
        let what = format!("{} {} from {}", chosen.name, package.version(), registry.location());
        // A version is installed as the bytes first locked: the same version served with other bytes
        // (republished, or a registry that lies) is refused, never written over the lock.
        if let Some(locked) = before.get(package.name()).filter(|l| l.version == package.version()) {
            if locked.digest != package.digest() {
                bail!(
                    "{what}: refused: {} locks {} {} as {}, but the registry now serves {}; if the publisher \
                     really republished it, remove its entry from the lock file to accept the new bytes",
                    target.lock.display(),
                    locked.name,
                    locked.version,
                    locked.digest,
                    package.digest()
                );
            }
        }
        let verdict =
            target.trust.check(package.summary(), signature.as_ref()).with_context(|| format!("{what}: refused"))?;
        after.record(Locked {
            name: package.name().to_string(),
            version: package.version().to_string(),
            digest: package.digest().to_string(),
            publisher: publisher_of(&verdict),
            source: registry.location(),
        });
        pulled.push((package, signature));
    }
    install_pulled(&pulled, target)?;
    for change in changed.iter().filter(|c| !matches!(c, Change::Added { .. })) {
        println!("{change}");
    }
    after.write_keeping_previous(target.lock).map_err(anyhow::Error::msg)?;
    remove_dropped(&changed, &before, target.into)?;
    if changed.is_empty() && pulled.is_empty() {
        println!("nothing to change: every plugin is at the version its lock and ranges give");
    }
    Ok(ExitCode::SUCCESS)
}

/// Where an install from the lock takes its packages.
#[derive(Clone, Copy)]
pub enum LockedFrom<'a> {
    /// Each from the registry its entry names.
    Registries,
    /// From a folder `gfhost mirror` wrote (a LAN party's share, no network).
    Mirror(&'a Path),
}

/// Installs exactly the packages `lock` lists (those installed as listed already are left alone), each checked
/// against its digest and its recorded publisher; `current` is the lock they replace.
fn install_exactly(lock: &LockFile, current: &LockFile, target: &Target<'_>, from: LockedFrom<'_>) -> Result<()> {
    let tokio = runtime()?;
    let mut pulled = Vec::new();
    for locked in &lock.packages {
        let unchanged = current.get(&locked.name).is_some_and(|c| c.digest == locked.digest);
        if unchanged && installed_digest(target.into, &locked.name).as_deref() == Some(&locked.digest) {
            continue;
        }
        let (package, signature, what) = match from {
            LockedFrom::Registries => {
                let registry = Registry::new(&locked.source)?;
                let (package, signature) =
                    tokio.block_on(registry.pull(&locked.name, &locked.version, Some(&locked.digest)))?;
                // A yank is the registry's word, unsigned: it warns, and never stops an install from the lock.
                match tokio.block_on(registry.yanked(&locked.name)) {
                    Ok(yanks) => {
                        if let Some(yank) = yanks.iter().find(|y| y.version.to_string() == locked.version) {
                            eprintln!("warning: {}", yanked_note(&locked.name, yank));
                        }
                    }
                    Err(e) => {
                        eprintln!("warning: cannot tell whether {} {} was yanked: {e:#}", locked.name, locked.version)
                    }
                }
                (
                    package,
                    signature,
                    format!("{} {} ({}) from {}", locked.name, locked.version, locked.digest, locked.source),
                )
            }
            LockedFrom::Mirror(folder) => {
                let file = folder.join(mirrored_file(locked));
                let (package, signature) = crate::packages::read_package(&file)?;
                (
                    package,
                    signature,
                    format!("{} {} ({}) from {}", locked.name, locked.version, locked.digest, file.display()),
                )
            }
        };
        if package.name() != locked.name || package.digest() != locked.digest || package.version() != locked.version {
            bail!("{what}: refused: it holds {} {} ({}) instead", package.name(), package.version(), package.digest());
        }
        let verdict =
            target.trust.check(package.summary(), signature.as_ref()).with_context(|| format!("{what}: refused"))?;
        let publisher = publisher_of(&verdict);
        if publisher != locked.publisher {
            let locked_by = locked.publisher.as_deref().unwrap_or("nobody");
            bail!("{what}: refused: the lock file says it was published by {locked_by}, not {publisher:?}");
        }
        pulled.push((package, signature));
    }
    install_pulled(&pulled, target)
}

/// The package of `locked`, pulled by digest from where it came and checked (digest, publisher), installed into
/// the plugin folder `into`: its folder.
pub fn fetch_locked(locked: &Locked, into: &Path, trust: &TrustPolicy) -> Result<std::path::PathBuf> {
    let lock = LockFile { requests: Vec::new(), packages: vec![locked.clone()] };
    // The target's lock file is not written: only `into` receives the package.
    let unwritten = into.join(".unwritten.lock");
    let target = Target { into, lock: &unwritten, trust };
    install_exactly(&lock, &LockFile::default(), &target, LockedFrom::Registries)?;
    Ok(into.join(&locked.name))
}

/// The file a mirror keeps a locked package in.
fn mirrored_file(locked: &Locked) -> String {
    format!("{}-{}.{}", locked.name, locked.version, gamefeature_host::package::archive::EXTENSION)
}

/// `gfhost mirror --to FOLDER`: every package the lock lists, pulled by digest and checked, written to `folder`
/// as package files with their signatures, beside a copy of the lock: what `gfhost install --offline FOLDER`
/// installs with no network (a LAN party, an air-gapped server).
pub fn mirror(lock_path: &Path, folder: &Path, trust: &TrustPolicy) -> Result<ExitCode> {
    let lock = LockFile::read(lock_path).map_err(anyhow::Error::msg)?;
    if lock.packages.is_empty() {
        bail!("{} lists no packages: install one with `gfhost install NAME@RANGE --registry …`", lock_path.display());
    }
    std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let tokio = runtime()?;
    let mut bytes = 0;
    for locked in &lock.packages {
        let registry = Registry::new(&locked.source)?;
        let (package, signature) =
            tokio.block_on(registry.pull(&locked.name, &locked.version, Some(&locked.digest)))?;
        let what = format!("{} {} from {}", locked.name, locked.version, locked.source);
        if package.digest() != locked.digest {
            bail!("{what}: refused: the registry served {} instead of {}", package.digest(), locked.digest);
        }
        trust.check(package.summary(), signature.as_ref()).with_context(|| format!("{what}: refused"))?;
        let archive = gamefeature_host::package::archive::write(&package, signature.as_ref());
        let file = folder.join(mirrored_file(locked));
        let mut staged = tempfile::NamedTempFile::new_in(folder)?;
        std::io::Write::write_all(&mut staged, &archive)?;
        staged.persist(&file).map_err(|e| e.error).with_context(|| format!("cannot write {}", file.display()))?;
        bytes += archive.len();
        println!("mirrored {} {} ({}) to {}", locked.name, locked.version, locked.digest, file.display());
    }
    lock.write(&folder.join(gamefeature_host::package::lock::LOCK_FILE)).map_err(anyhow::Error::msg)?;
    println!(
        "{} packages ({bytes} bytes) in {}: install them with `gfhost install --offline {}`",
        lock.packages.len(),
        folder.display(),
        folder.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Installs the packages pulled as one set, saying what each is.
fn install_pulled(pulled: &[(Package, Option<Signature>)], target: &Target<'_>) -> Result<()> {
    let set: Vec<(&Package, Option<&Signature>)> = pulled.iter().map(|(p, s)| (p, s.as_ref())).collect();
    let installed = install_set(&set, target.into, target.trust).context("refused; nothing was installed")?;
    for ((package, _), (folder, verdict)) in pulled.iter().zip(installed) {
        let from = match verdict {
            Verdict::Trusted { publisher, .. } => format!("published by {publisher}"),
            Verdict::AllowedUntrusted => "from a publisher not trusted (allowed by [packages] allow-untrusted)".into(),
        };
        println!(
            "installed {} {} ({}) into {}, {from}",
            package.name(),
            package.version(),
            package.digest(),
            folder.display()
        );
    }
    Ok(())
}

/// Removes the folders of the plugins `changed` drops, where they are what was installed from a package (an
/// operator's own folder of the same name is left alone).
fn remove_dropped(changed: &[Change], locked_before: &LockFile, into: &Path) -> Result<()> {
    for change in changed {
        let Change::Removed { name, .. } = change else { continue };
        let Some(locked) = locked_before.get(name) else { continue };
        // Only the very package the lock installed: a folder of the same name the operator put there is theirs.
        if installed_digest(into, name).as_deref() == Some(locked.digest.as_str()) {
            let folder = into.join(name);
            std::fs::remove_dir_all(&folder).with_context(|| format!("cannot remove {}", folder.display()))?;
        }
    }
    Ok(())
}

/// The digest of the package the folder of `name` in `into` was installed from, if it was.
fn installed_digest(into: &Path, name: &str) -> Option<String> {
    provenance(&into.join(name)).ok().flatten().map(|p| p.package.digest)
}

fn publisher_of(verdict: &Verdict) -> Option<String> {
    match verdict {
        Verdict::Trusted { publisher, .. } => Some(publisher.clone()),
        Verdict::AllowedUntrusted => None,
    }
}

/// A registry as resolution reads it: versions from its tags, each version's facts from its manifest, yanks
/// from their records.
struct RegistryIndex<'a> {
    registry: &'a Registry,
    tokio: &'a tokio::runtime::Runtime,
}

impl resolve::Index for RegistryIndex<'_> {
    fn versions(&self, name: &str) -> Result<Vec<semver::Version>, String> {
        match self.tokio.block_on(self.registry.versions(name)) {
            Ok(versions) => Ok(versions),
            // A plugin the registry does not hold has no versions: the resolution says so, with the others' needs.
            Err(e) if format!("{e:#}").contains("NAME_UNKNOWN") => Ok(Vec::new()),
            Err(e) => Err(format!("{e:#}")),
        }
    }

    fn candidate(&self, name: &str, version: &semver::Version) -> Result<resolve::Candidate, String> {
        self.tokio.block_on(self.registry.candidate(name, &version.to_string())).map_err(|e| format!("{e:#}"))
    }

    fn yanked(&self, name: &str) -> Result<Vec<semver::Version>, String> {
        let yanked = self.tokio.block_on(self.registry.yanked(name)).map_err(|e| format!("{e:#}"))?;
        Ok(yanked.into_iter().map(|y| y.version).collect())
    }
}
