//! `gfhost bisect RECORDING`: which mod makes a recorded failure come. The recording is replayed (see
//! `replay::bisect`) with only some of its plugins in a plugin folder of its own — each kept plugin with the
//! plugins it depends on, linked from the replayer's plugin folders — until one plugin (or a pair) is named.
//!
//! With `--against LOCK` (`gfhost.lock.previous`, the lock before the last update), the plugins bisected are
//! those the update changed, and one not kept plays at its version in that lock (pulled by digest and checked)
//! rather than being left out: which update broke it.
//!
//! A replay fails when a plugin is quarantined or refused in it, or, with `--until TEXT`, when a plugin says
//! or fails with a line holding TEXT.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use gamefeature_host::experience::ExperienceDefinition;
use gamefeature_host::feature::PluginManifest;
use gamefeature_host::package::lock::{LockFile, Locked};
use gamefeature_host::recording::{Record, Recording};
use gamefeature_host::replay::bisect::{bisect, Finding};
use gamefeature_host::replay::{self, ReplayOptions};
use gamefeature_host::SessionOptions;

/// What `gfhost bisect` is given.
pub struct BisectArgs<'a> {
    /// The recording that ends in the failure.
    pub recording: &'a Path,
    /// The folders holding the recording's plugins.
    pub plugin_dirs: Vec<PathBuf>,
    /// Where the folders of each replay's plugins are made (beside the compile cache, on its file system).
    pub scratch: PathBuf,
    /// The failure to look for, when not a plugin failing.
    pub until: Option<String>,
    /// Bisect the plugins an update changed, rolling back rather than leaving out.
    pub against: Option<Against>,
}

/// Puts the package of a locked entry into a plugin folder under the given directory; its folder.
pub type FetchLocked = Box<dyn Fn(&Locked, &Path) -> Result<PathBuf>>;

/// The two locks of an update, and the folders of the versions before it.
pub struct Against {
    /// Each plugin's version now, as the lock says.
    pub current: LockFile,
    /// Each plugin's version before.
    pub previous: LockFile,
    /// Fetches a version before the update.
    pub fetch: FetchLocked,
}

/// A plugin of the recording: its folder, and the plugins it depends on.
struct Candidate {
    name: String,
    folder: PathBuf,
    needs: Vec<String>,
}

pub fn run(args: BisectArgs<'_>, session: SessionOptions) -> Result<ExitCode> {
    let recording = Recording::read(args.recording)?;
    let tokio = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let candidates = candidates(&recording, &args.plugin_dirs, &tokio)?;
    std::fs::create_dir_all(&args.scratch).with_context(|| format!("cannot create {}", args.scratch.display()))?;
    // In a rollback bisection: the plugins the update changed, and the folder of each one's version before.
    let mut before: Vec<(String, Option<PathBuf>)> = Vec::new();
    let previous_dir = tempfile::Builder::new().prefix("previous-").tempdir_in(&args.scratch)?;
    if let Some(against) = &args.against {
        for candidate in &candidates {
            let now = against.current.get(&candidate.name).map(|l| l.digest.clone());
            let then = against.previous.get(&candidate.name);
            if now.is_none() || then.map(|l| &l.digest) == now.as_ref() {
                continue;
            }
            let folder = then.map(|locked| (against.fetch)(locked, previous_dir.path())).transpose()?;
            before.push((candidate.name.clone(), folder));
        }
        if before.is_empty() {
            bail!("the update changed none of the recording's plugins: nothing to roll back");
        }
    }
    let names: Vec<String> = match args.against {
        Some(_) => before.iter().map(|(name, _)| name.clone()).collect(),
        None => candidates.iter().map(|c| c.name.clone()).collect(),
    };
    let (verb, what) = match args.against {
        Some(_) => ("updated", "plugins the update changed"),
        None => ("kept", "plugins"),
    };
    println!("bisecting {} over its {} {what}: {}", args.recording.display(), names.len(), names.join(", "));
    let mut count = 0;
    let mut fails = |kept: &[String]| -> Result<bool> {
        count += 1;
        let folder = tempfile::Builder::new().prefix("bisect-").tempdir_in(&args.scratch)?;
        // What a kept plugin needs is kept with it: as it is now (a rolled-back dependency could refuse it).
        let with_needs = closure(kept, &candidates);
        match args.against {
            // Every plugin plays: those kept (and those the update left alone) as now, the rest as before.
            Some(_) => {
                for candidate in &candidates {
                    let rolled_back =
                        before.iter().find(|(name, _)| name == &candidate.name && !with_needs.contains(name));
                    match rolled_back {
                        None => link_folder(&candidate.folder, &folder.path().join(&candidate.name))?,
                        Some((_, Some(old))) => link_folder(old, &folder.path().join(&candidate.name))?,
                        Some((_, None)) => {}
                    }
                }
            }
            None => {
                for candidate in candidates.iter().filter(|c| with_needs.contains(&c.name)) {
                    link_folder(&candidate.folder, &folder.path().join(&candidate.name))?;
                }
            }
        }
        let options = ReplayOptions {
            plugin_dirs: Some(vec![folder.path().to_path_buf()]),
            follow_recorded: false,
            session: session.clone(),
            mod_sync: None,
            through_differences: true,
        };
        let report = replay::replay(&recording, options, tokio.handle().clone())?;
        // Only what the plugins played did: a plugin left out is refused by the experience, as expected.
        let played = |line: &String| {
            args.against.is_some() || with_needs.iter().any(|name| line.starts_with(&format!("{name} failed")))
        };
        let failures: Vec<String> = report.failures.iter().filter(|line| played(line)).cloned().collect();
        let failure = failure_in(&report.said, &failures, args.until.as_deref());
        let kept_shown = match kept.len() {
            0 => "none".to_string(),
            n if n == names.len() => "all".to_string(),
            _ => kept.join(", "),
        };
        let outcome = failure.as_deref().map_or("no failure".to_string(), |f| format!("failed: {f}"));
        println!("replay {count}: {kept_shown} {verb} ({} of {}): {outcome}", kept.len(), names.len());
        Ok(failure.is_some())
    };
    let bisection = bisect(&names, &mut fails)?;
    match bisection.finding {
        Finding::NotReproduced => {
            println!(
                "the failure does not come back when the recording is replayed with every plugin: nothing to bisect"
            );
            if args.until.is_none() {
                println!("(a replay fails when a plugin is quarantined or refused; --until TEXT looks for a line)");
            }
            Ok(ExitCode::from(1))
        }
        Finding::WithoutMods => {
            println!("the failure comes with every plugin left out: it is not a plugin's doing");
            Ok(ExitCode::from(1))
        }
        Finding::Culprits(mut culprits) => {
            // A plugin kept with what it needs may be named for a dependency's failure: one more replay tells.
            if let (None, [culprit]) = (&args.against, culprits.as_slice()) {
                let needs = closure(std::slice::from_ref(culprit), &candidates);
                let needs: Vec<String> = needs.into_iter().filter(|n| n != culprit).collect();
                if !needs.is_empty() && fails(&needs)? {
                    let deeper = bisect(&needs, &mut fails)?;
                    if let Finding::Culprits(found) = deeper.finding {
                        culprits = found;
                    }
                }
            }
            let total = count;
            if let Some(against) = &args.against {
                let change = |name: &String| {
                    let version = |lock: &LockFile| lock.get(name).map_or("none".to_string(), |l| l.version.clone());
                    format!("the update of {name} ({} -> {})", version(&against.previous), version(&against.current))
                };
                let changes: Vec<String> = culprits.iter().map(change).collect();
                println!("the failure comes with {} ({total} replays)", changes.join(" and "));
                return Ok(ExitCode::SUCCESS);
            }
            match culprits.as_slice() {
                [one] => println!("the failure comes with {one} ({total} replays)"),
                many => println!(
                    "the failure comes with {} together, and not with any of them alone ({total} replays)",
                    many.join(" and ")
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What failed in a replay: the first failure of a plugin played, or the first line holding `until`.
fn failure_in(said: &[String], failures: &[String], until: Option<&str>) -> Option<String> {
    match until {
        None => failures.first().cloned(),
        Some(text) => said.iter().chain(failures).find(|line| line.contains(text)).cloned(),
    }
}

/// The plugins a recording played: its experience's features (those that failed to load too), then any other
/// plugin it loaded (a console's `activate`), each found in `plugin_dirs`, and what they depend on.
fn candidates(
    recording: &Recording,
    plugin_dirs: &[PathBuf],
    tokio: &tokio::runtime::Runtime,
) -> Result<Vec<Candidate>> {
    let mut names: Vec<String> = Vec::new();
    let experience = Path::new(&recording.session.experience);
    if !recording.session.experience.is_empty() {
        let definition = tokio
            .block_on(ExperienceDefinition::load(experience))
            .with_context(|| format!("the recorded experience {}", experience.display()))?;
        names.extend(definition.all_features());
    }
    for record in recording.records() {
        if let Record::Component { plugin, .. } = record {
            if !names.contains(&plugin) {
                names.push(plugin);
            }
        }
    }
    if names.is_empty() {
        bail!("the recording loaded no plugin: nothing to bisect");
    }
    // Every plugin folder's manifest, read once.
    let installed: Vec<PluginManifest> = plugin_dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| PluginManifest::read(&entry.path()).ok())
        .collect();
    let mut found: Vec<Candidate> = Vec::with_capacity(names.len());
    let mut next = 0;
    while next < names.len() {
        let name = names[next].clone();
        next += 1;
        let manifest = installed.iter().find(|manifest| manifest.name == name);
        let Some(manifest) = manifest else {
            bail!(
                "the recording played plugin {name}, which is not in {} (name the folders that hold its plugins \
                 with --plugins)",
                crate::display_dirs(plugin_dirs)
            );
        };
        let needs: Vec<String> = manifest.dependencies.iter().map(|d| d.name.clone()).collect();
        let folder = manifest.dir.clone();
        for need in &needs {
            if !names.contains(need) {
                names.push(need.clone());
            }
        }
        found.push(Candidate { name, folder, needs });
    }
    Ok(found)
}

/// `kept` with every plugin they depend on, transitively.
fn closure(kept: &[String], candidates: &[Candidate]) -> Vec<String> {
    let mut all: Vec<String> = kept.to_vec();
    let mut next = 0;
    while next < all.len() {
        let needs = candidates.iter().find(|c| c.name == all[next]).map(|c| c.needs.clone()).unwrap_or_default();
        for need in needs {
            if !all.contains(&need) {
                all.push(need);
            }
        }
        next += 1;
    }
    all
}

/// A copy of the folder `from` at `to`, its files hard-linked where the file system allows (copied elsewhere).
fn link_folder(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            link_folder(&source, &target)?;
        } else if std::fs::hard_link(&source, &target).is_err() {
            std::fs::copy(&source, &target)
                .with_context(|| format!("cannot copy {} to {}", source.display(), target.display()))?;
        }
    }
    Ok(())
}
