//! Which versions of which plugins to install: a plugin's dependencies (`[[dependencies]]` with a `version`
//! range in its `plugin.toml`) resolved into one set where every requirement holds, from what an [`Index`] (a
//! registry) publishes — the PubGrub algorithm (the `pubgrub` crate), as Cargo, uv and Dart's pub resolve.
//!
//! - A plugin the lock file holds stays at its locked version while the ranges allow it: a resolution moves
//!   only as far as it must. What is not locked (the caller leaves out of the lock what is to move: what was
//!   asked for, what is updated) is taken at the newest version the ranges allow.
//! - A version its publisher yanked is never chosen, unless the lock holds exactly that version: an install
//!   from the lock stays reproducible, and a new resolution moves off it.
//! - A version built against a plugin API this host does not implement is never chosen: it is as if it were
//!   not published, so an older compatible one is taken when there is one, and the explanation names it.
//! - When no set works, the error says why in the modder's words, from the facts PubGrub found contradicting
//!   each other: "shooter-core 0.2.0 needs base-gameplay ^2, but hud 1.0.0 needs base-gameplay ^1".
//!
//! Plain Rust over a trait: the registry (network, signatures) is the caller's, and tests give a table.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use pubgrub::{Dependencies, DependencyProvider, DerivationTree, External, PackageResolutionStatistics, Ranges};
use semver::{Version, VersionReq};

use super::lock::LockFile;
use crate::feature::{api_compatible, host_compatible, API_VERSIONS, HOST_VERSION};

/// What resolution reads of one published version of a plugin: its manifest's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// `sha256:<hex>` of its package.
    pub digest: String,
    /// The plugin API it is built against (`plugin.api`).
    pub api: String,
    /// The host versions it runs on (`plugin.host`), when it says.
    pub host: Option<VersionReq>,
    /// The plugins it needs, each with the versions it accepts.
    pub dependencies: Vec<(String, VersionReq)>,
}

/// Where published plugins are found (a registry): their versions, and each version's [`Candidate`].
pub trait Index {
    /// The versions of `name` there are, in any order; none when there is no such plugin.
    fn versions(&self, name: &str) -> Result<Vec<Version>, String>;
    /// What `name` at `version` is.
    fn candidate(&self, name: &str, version: &Version) -> Result<Candidate, String>;
    /// The versions of `name` its publisher yanked (withdrawn from resolution); none by default.
    fn yanked(&self, name: &str) -> Result<Vec<Version>, String> {
        let _ = name;
        Ok(Vec::new())
    }
}

/// A plugin version a resolution chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The plugin.
    pub name: String,
    /// The version chosen.
    pub version: Version,
    /// `sha256:<hex>` of its package: what to install, and lock.
    pub digest: String,
    /// The plugins it depends on, by name.
    pub dependencies: Vec<String>,
}

/// Why there is no set of versions to install.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The requirements contradict each other (or ask for what is not there): why, in words.
    #[error("no set of plugin versions satisfies every requirement: {0}")]
    Conflict(String),
    /// The index could not be read.
    #[error("{0}")]
    Index(String),
}

/// Resolves `requests` (plugins and the versions wanted of each) into the set to install, dependencies and
/// theirs included, each once, sorted by name.
pub fn resolve(
    index: &dyn Index,
    requests: &[(String, VersionReq)],
    locked: &LockFile,
) -> Result<Vec<Resolved>, ResolveError> {
    let provider = Provider {
        index,
        requests,
        locked,
        versions: RefCell::default(),
        yanked: RefCell::default(),
        candidates: RefCell::default(),
    };
    match pubgrub::resolve(&provider, Node::Request, Version::new(0, 0, 0)) {
        Ok(chosen) => {
            let mut resolved: Vec<Resolved> = chosen
                .into_iter()
                .filter_map(|(node, version)| match node {
                    Node::Request => None,
                    Node::Plugin(name) => {
                        let candidate = provider.candidate(&name, &version).ok()?;
                        let dependencies = candidate.dependencies.into_iter().map(|(name, _)| name).collect();
                        Some(Resolved { name, version, digest: candidate.digest, dependencies })
                    }
                })
                .collect();
            resolved.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(resolved)
        }
        Err(pubgrub::PubGrubError::NoSolution(tree)) => Err(ResolveError::Conflict(provider.explain(&tree))),
        Err(pubgrub::PubGrubError::ErrorRetrievingDependencies { source, .. })
        | Err(pubgrub::PubGrubError::ErrorChoosingVersion { source, .. }) => Err(ResolveError::Index(source.0)),
        Err(pubgrub::PubGrubError::ErrorInShouldCancel(e)) => Err(ResolveError::Index(e.0)),
    }
}

/// A node of the dependency graph: what was asked for (the root), or a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Node {
    Request,
    Plugin(String),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Request => write!(f, "the request"),
            Node::Plugin(name) => write!(f, "{name}"),
        }
    }
}

/// An index that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct IndexError(String);

/// PubGrub's view of an [`Index`], remembering what it read (each version list and candidate once).
struct Provider<'a> {
    index: &'a dyn Index,
    requests: &'a [(String, VersionReq)],
    locked: &'a LockFile,
    /// Each plugin's versions that may be chosen, newest first.
    versions: RefCell<HashMap<String, Vec<Version>>>,
    /// Each plugin's yanked versions passed over, newest first (for explanations).
    yanked: RefCell<HashMap<String, Vec<Version>>>,
    candidates: RefCell<HashMap<(String, Version), Result<Candidate, String>>>,
}

impl Provider<'_> {
    fn versions(&self, name: &str) -> Result<Vec<Version>, IndexError> {
        if let Some(known) = self.versions.borrow().get(name) {
            return Ok(known.clone());
        }
        let mut versions = self.index.versions(name).map_err(IndexError)?;
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        let yanked = if versions.is_empty() { Vec::new() } else { self.index.yanked(name).map_err(IndexError)? };
        let locked = self.locked.get(name).and_then(|l| Version::parse(&l.version).ok());
        let (passed_over, versions): (Vec<Version>, Vec<Version>) =
            versions.into_iter().partition(|v| yanked.contains(v) && locked.as_ref() != Some(v));
        self.versions.borrow_mut().insert(name.to_string(), versions.clone());
        self.yanked.borrow_mut().insert(name.to_string(), passed_over);
        Ok(versions)
    }

    fn candidate(&self, name: &str, version: &Version) -> Result<Candidate, String> {
        let key = (name.to_string(), version.clone());
        if let Some(known) = self.candidates.borrow().get(&key) {
            return known.clone();
        }
        let candidate = self.index.candidate(name, version);
        self.candidates.borrow_mut().insert(key, candidate.clone());
        candidate
    }

    /// The versions of `name` a requirement allows, as PubGrub's set of versions: exactly the published ones
    /// `req` matches (semver's own rules, pre-releases included), so what is not published is never chosen.
    fn allowed(&self, name: &str, req: &VersionReq) -> Result<Ranges<Version>, IndexError> {
        let matching = self.versions(name)?.into_iter().filter(|v| req.matches(v));
        Ok(matching.fold(Ranges::empty(), |set, v| set.union(&Ranges::singleton(v))))
    }

    /// What `dependent` (at its versions in `versions`) asked of `dependency`, as written.
    fn requirement(&self, dependent: &Node, versions: &Ranges<Version>, dependency: &str) -> Option<VersionReq> {
        let asked = |wanted: &[(String, VersionReq)]| {
            wanted.iter().find(|(name, _)| name == dependency).map(|(_, req)| req.clone())
        };
        match dependent {
            Node::Request => asked(self.requests),
            Node::Plugin(name) => {
                let known = self.versions.borrow().get(name).cloned().unwrap_or_default();
                known
                    .iter()
                    .filter(|v| versions.contains(v))
                    .find_map(|v| self.candidate(name, v).ok().and_then(|c| asked(&c.dependencies)))
            }
        }
    }

    /// `node` at the versions of `set` it has, in words: "hud 1.0.0", "hud 1.0.0 or 1.1.0".
    fn versions_of(&self, node: &Node, set: &Ranges<Version>) -> String {
        let Node::Plugin(name) = node else { return "you".to_string() };
        let known = self.versions.borrow().get(name).cloned().unwrap_or_default();
        let mut listed: Vec<String> = known.iter().rev().filter(|v| set.contains(v)).map(Version::to_string).collect();
        if listed.len() > 4 {
            let last = listed.pop().unwrap_or_default();
            listed.truncate(2);
            listed.push(format!("... {last}"));
        }
        match listed.is_empty() {
            true => name.clone(),
            false => format!("{name} {}", listed.join(" or ")),
        }
    }

    /// That `name` has none of the versions asked for, and which it has.
    fn no_such_version(&self, name: &str) -> String {
        let published = self.versions.borrow().get(name).cloned().unwrap_or_default();
        let yanked = self.yanked.borrow().get(name).cloned().unwrap_or_default();
        let listed =
            |versions: &[Version]| versions.iter().rev().map(Version::to_string).collect::<Vec<_>>().join(", ");
        match (published.is_empty(), yanked.is_empty()) {
            (true, true) => format!("there is no plugin {name}"),
            (false, true) => format!("{name} has no such version (published: {})", listed(&published)),
            (true, false) => format!("{name} has no such version (yanked: {})", listed(&yanked)),
            (false, false) => {
                format!("{name} has no such version (published: {}; yanked: {})", listed(&published), listed(&yanked))
            }
        }
    }

    /// Why no set works, in words: the facts PubGrub found contradicting each other, a requirement of one
    /// plugin beside the others' requirements of the same plugin.
    fn explain(&self, tree: &DerivationTree<Node, Ranges<Version>, String>) -> String {
        let mut needs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut others: BTreeSet<String> = BTreeSet::new();
        let mut asked: Vec<String> = Vec::new();
        let mut facts = Vec::new();
        collect_facts(tree, &mut facts);
        for fact in facts {
            match fact {
                External::FromDependencyOf(dependent, versions, Node::Plugin(dependency), allowed) => {
                    // A requirement no published version meets: say what there is.
                    if allowed.is_empty() {
                        others.insert(self.no_such_version(&dependency));
                    }
                    let req = self.requirement(&dependent, &versions, &dependency);
                    let req = req.map_or_else(String::new, |r| format!(" {r}"));
                    if dependent == Node::Request {
                        asked.push(format!("{dependency}{req}"));
                        continue;
                    }
                    let who = self.versions_of(&dependent, &versions);
                    needs.entry(dependency.clone()).or_default().push(format!("{who} needs {dependency}{req}"));
                }
                External::NoVersions(Node::Plugin(name), _) => {
                    others.insert(self.no_such_version(&name));
                }
                External::Custom(node, versions, why) => {
                    others.insert(format!("{} {why}", self.versions_of(&node, &versions)));
                }
                _ => {}
            }
        }
        asked.sort();
        asked.dedup();
        let mut said: Vec<String> = Vec::new();
        if !asked.is_empty() {
            said.push(format!("you asked for {}", asked.join(" and ")));
        }
        said.extend(needs.into_values().map(|mut wants| {
            wants.dedup();
            wants.join(", but ")
        }));
        said.extend(others);
        match said.is_empty() {
            true => "the requirements contradict each other".to_string(),
            false => said.join("; "),
        }
    }
}

/// The external facts at the leaves of a derivation tree, each once, in the tree's order.
fn collect_facts(
    tree: &DerivationTree<Node, Ranges<Version>, String>,
    facts: &mut Vec<External<Node, Ranges<Version>, String>>,
) {
    match tree {
        DerivationTree::External(fact) => {
            let seen = facts.iter().any(|known| format!("{known:?}") == format!("{fact:?}"));
            if !seen {
                facts.push(fact.clone());
            }
        }
        DerivationTree::Derived(derived) => {
            collect_facts(&derived.cause1, facts);
            collect_facts(&derived.cause2, facts);
        }
    }
}

impl DependencyProvider for Provider<'_> {
    type P = Node;
    type V = Version;
    type VS = Ranges<Version>;
    type M = String;
    type Err = IndexError;
    /// Plugins with the fewest allowed versions first, as pub does: a conflict shows sooner.
    type Priority = std::cmp::Reverse<usize>;

    fn prioritize(&self, node: &Node, range: &Ranges<Version>, _: &PackageResolutionStatistics) -> Self::Priority {
        let allowed = match node {
            Node::Request => 0,
            Node::Plugin(name) => self.versions(name).map_or(0, |vs| vs.iter().filter(|v| range.contains(v)).count()),
        };
        std::cmp::Reverse(allowed)
    }

    fn choose_version(&self, node: &Node, range: &Ranges<Version>) -> Result<Option<Version>, IndexError> {
        let Node::Plugin(name) = node else { return Ok(Some(Version::new(0, 0, 0))) };
        let versions = self.versions(name)?;
        // What the lock holds stays where it is, if it may; the rest is taken at its newest.
        let locked = self.locked.get(name).and_then(|l| Version::parse(&l.version).ok());
        if let Some(locked) = locked.filter(|v| range.contains(v) && versions.contains(v)) {
            return Ok(Some(locked));
        }
        Ok(versions.into_iter().find(|v| range.contains(v)))
    }

    fn get_dependencies(
        &self,
        node: &Node,
        version: &Version,
    ) -> Result<Dependencies<Node, Ranges<Version>, String>, IndexError> {
        let wanted: Vec<(String, VersionReq)> = match node {
            Node::Request => self.requests.to_vec(),
            Node::Plugin(name) => match self.candidate(name, version) {
                Err(why) => return Ok(Dependencies::Unavailable(format!("cannot be read: {why}"))),
                Ok(candidate) if !api_compatible(&candidate.api) => {
                    let implemented = API_VERSIONS.join(", ");
                    return Ok(Dependencies::Unavailable(format!(
                        "is built against gamefeature:plugin@{}; this host implements {implemented}",
                        candidate.api
                    )));
                }
                Ok(Candidate { host: Some(wanted), .. }) if !host_compatible(&wanted) => {
                    return Ok(Dependencies::Unavailable(format!(
                        "runs on gamefeature hosts {wanted}, and this one is {HOST_VERSION}"
                    )));
                }
                Ok(candidate) => candidate.dependencies,
            },
        };
        let mut constraints = Vec::with_capacity(wanted.len());
        for (name, req) in wanted {
            let allowed = self.allowed(&name, &req)?;
            constraints.push((Node::Plugin(name), allowed));
        }
        Ok(Dependencies::Available(constraints.into_iter().collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::lock::Locked;

    /// One published version: `(name, version, api, [(dependency, range)])`.
    type Row = (&'static str, &'static str, &'static str, Vec<(&'static str, &'static str)>);

    /// A registry as a table.
    struct Table(Vec<Row>);

    impl Index for Table {
        fn versions(&self, name: &str) -> Result<Vec<Version>, String> {
            Ok(self.0.iter().filter(|row| row.0 == name).map(|row| Version::parse(row.1).unwrap()).collect())
        }

        fn candidate(&self, name: &str, version: &Version) -> Result<Candidate, String> {
            let row = self.0.iter().find(|row| row.0 == name && Version::parse(row.1).unwrap() == *version);
            let row = row.ok_or_else(|| format!("{name} {version} is not published"))?;
            Ok(Candidate {
                digest: format!("sha256:{}-{}", row.0, row.1),
                api: row.2.to_string(),
                host: None,
                dependencies: row.3.iter().map(|(n, r)| (n.to_string(), VersionReq::parse(r).unwrap())).collect(),
            })
        }
    }

    fn asked(requests: &[(&str, &str)]) -> Vec<(String, VersionReq)> {
        requests.iter().map(|(n, r)| (n.to_string(), VersionReq::parse(r).unwrap())).collect()
    }

    fn chosen(resolved: &[Resolved]) -> Vec<String> {
        resolved.iter().map(|r| format!("{} {}", r.name, r.version)).collect()
    }

    fn registry() -> Table {
        Table(vec![
            ("base-gameplay", "1.0.0", "0.2.0", vec![]),
            ("base-gameplay", "1.2.0", "0.2.0", vec![]),
            ("base-gameplay", "2.0.0", "0.2.0", vec![]),
            ("shooter-core", "0.1.0", "0.2.0", vec![("base-gameplay", "^1")]),
            ("shooter-core", "0.2.0", "0.2.0", vec![("base-gameplay", "^2")]),
            ("hud", "1.0.0", "0.2.0", vec![("base-gameplay", "^1")]),
        ])
    }

    /// The closure of what was asked for, each at the newest version every requirement allows.
    #[test]
    fn the_closure_is_resolved_at_the_newest_versions_that_fit_together() {
        let resolved = resolve(&registry(), &asked(&[("shooter-core", "^0.1")]), &LockFile::default()).unwrap();
        assert_eq!(chosen(&resolved), ["base-gameplay 1.2.0", "shooter-core 0.1.0"]);
        assert_eq!(resolved[1].digest, "sha256:shooter-core-0.1.0");
        // hud keeps base-gameplay at ^1, so shooter-core steps back to the version that accepts it.
        let both = resolve(&registry(), &asked(&[("shooter-core", "*"), ("hud", "^1")]), &LockFile::default());
        assert_eq!(chosen(&both.unwrap()), ["base-gameplay 1.2.0", "hud 1.0.0", "shooter-core 0.1.0"]);
    }

    /// A version in the lock file that the ranges allow is kept: a resolution moves only what it must. What is
    /// left out of the lock is taken at its newest.
    #[test]
    fn a_locked_version_the_ranges_allow_is_kept() {
        let mut lock = LockFile::default();
        lock.record(Locked {
            name: "base-gameplay".into(),
            version: "1.0.0".into(),
            digest: "sha256:base-gameplay-1.0.0".into(),
            publisher: None,
            source: "registry".into(),
        });
        let resolved = resolve(&registry(), &asked(&[("shooter-core", "^0.1")]), &lock).unwrap();
        assert_eq!(chosen(&resolved), ["base-gameplay 1.0.0", "shooter-core 0.1.0"]);
        let kept = resolve(&registry(), &asked(&[("base-gameplay", "^1")]), &lock).unwrap();
        assert_eq!(chosen(&kept), ["base-gameplay 1.0.0"], "locked, and within the range");
        let moved = resolve(&registry(), &asked(&[("base-gameplay", "^1")]), &LockFile::default()).unwrap();
        assert_eq!(chosen(&moved), ["base-gameplay 1.2.0"], "left out of the lock: the newest");
        let outside = resolve(&registry(), &asked(&[("base-gameplay", "^2")]), &lock).unwrap();
        assert_eq!(chosen(&outside), ["base-gameplay 2.0.0"], "the lock is outside the range");
    }

    /// A yanked version is passed over by a resolution, but the lock that holds it exactly still resolves to
    /// it; when only yanked versions fit, the explanation says they were yanked.
    #[test]
    fn a_yanked_version_is_passed_over_unless_locked_exactly() {
        struct Yanking(Table);
        impl Index for Yanking {
            fn versions(&self, name: &str) -> Result<Vec<Version>, String> {
                self.0.versions(name)
            }
            fn candidate(&self, name: &str, version: &Version) -> Result<Candidate, String> {
                self.0.candidate(name, version)
            }
            fn yanked(&self, name: &str) -> Result<Vec<Version>, String> {
                Ok(if name == "base-gameplay" { vec![Version::new(1, 2, 0)] } else { vec![] })
            }
        }
        let index = Yanking(registry());
        let fresh = resolve(&index, &asked(&[("shooter-core", "^0.1")]), &LockFile::default()).unwrap();
        assert_eq!(chosen(&fresh), ["base-gameplay 1.0.0", "shooter-core 0.1.0"], "1.2.0 is yanked");
        let mut lock = LockFile::default();
        lock.record(Locked {
            name: "base-gameplay".into(),
            version: "1.2.0".into(),
            digest: "sha256:base-gameplay-1.2.0".into(),
            publisher: None,
            source: "registry".into(),
        });
        let locked = resolve(&index, &asked(&[("shooter-core", "^0.1")]), &lock).unwrap();
        assert_eq!(chosen(&locked), ["base-gameplay 1.2.0", "shooter-core 0.1.0"], "locked exactly");
        let error = resolve(&index, &asked(&[("base-gameplay", "=1.2.0")]), &LockFile::default()).unwrap_err();
        assert!(
            error.to_string().contains("base-gameplay has no such version (published: 1.0.0, 2.0.0; yanked: 1.2.0)"),
            "{error}"
        );
        assert_eq!(locked[1].dependencies, ["base-gameplay"]);
    }

    /// Requirements that contradict each other are explained in the modder's words.
    #[test]
    fn a_conflict_says_who_needs_what() {
        let error = resolve(&registry(), &asked(&[("shooter-core", "^0.2"), ("hud", "^1")]), &LockFile::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "no set of plugin versions satisfies every requirement: you asked for hud ^1 and shooter-core ^0.2; \
             hud 1.0.0 needs base-gameplay ^1, but shooter-core 0.2.0 needs base-gameplay ^2"
        );
        let missing = resolve(&registry(), &asked(&[("shooter-core", "^0.3")]), &LockFile::default()).unwrap_err();
        assert!(
            missing.to_string().contains("shooter-core has no such version (published: 0.1.0, 0.2.0)"),
            "{missing}"
        );
        let unknown = resolve(&registry(), &asked(&[("no-such", "*")]), &LockFile::default()).unwrap_err();
        assert!(unknown.to_string().contains("there is no plugin no-such"), "{unknown}");
    }

    /// A version built against an API this host does not implement is passed over for an older one that fits,
    /// and named when nothing else does.
    #[test]
    fn a_version_for_another_plugin_api_is_never_chosen() {
        let mut table = registry();
        table.0.push(("base-gameplay", "1.5.0", "0.9.0", vec![]));
        let resolved = resolve(&table, &asked(&[("base-gameplay", "^1")]), &LockFile::default()).unwrap();
        assert_eq!(chosen(&resolved), ["base-gameplay 1.2.0"], "1.5.0 is for another API");
        let error = resolve(&table, &asked(&[("base-gameplay", "=1.5.0")]), &LockFile::default()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("base-gameplay 1.5.0 is built against gamefeature:plugin@0.9.0; this host implements"),
            "{error}"
        );
    }
}
