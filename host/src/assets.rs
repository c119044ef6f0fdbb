//! Asset bundles: named data files an experience or plugin ships, loaded by net mode, read-only to plugins.
//!
//! As in Lyra, `Equipped` always loads, `Client` unless the world is a dedicated server, and `Server` unless the
//! world is a client. A bundle maps asset names (what plugins ask for) to files relative to the declaring file.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::text::{shown, MAX_CAUSE, MAX_NAME};
use crate::world::NetMode;

/// One of Lyra's three bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub enum BundleName {
    /// Loaded in every net mode.
    Equipped,
    /// Loaded where there is a local player: not on a dedicated server.
    Client,
    /// Loaded where the game is served: not on a client.
    Server,
}

impl BundleName {
    /// The bundles a world in `net_mode` loads, in load order.
    pub fn for_net_mode(net_mode: NetMode) -> Vec<BundleName> {
        let mut bundles = vec![BundleName::Equipped];
        if net_mode.is_client() {
            bundles.push(BundleName::Client);
        }
        if net_mode.is_server() {
            bundles.push(BundleName::Server);
        }
        bundles
    }
}

impl fmt::Display for BundleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Bundles as declared in a data file: bundle -> asset name -> path relative to that file's directory.
pub type BundleDeclarations = BTreeMap<BundleName, BTreeMap<String, String>>;

/// A declared path that leaves the directory of the file declaring it. The path is a plugin's or an
/// experience's: the message quotes it cut and escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "path {:?} must be relative and stay inside its directory (no '..', no absolute paths)",
    shown(.0, MAX_CAUSE)
)]
pub struct PathEscapes(pub String);

/// Joins `relative` onto `base`, refusing absolute paths and `..`: data files name only what sits beside or
/// below them, so moving a plugin or experience folder never changes what it reads.
pub fn resolve_within(base: &Path, relative: &str) -> Result<PathBuf, PathEscapes> {
    let path = Path::new(relative);
    let plain =
        !relative.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err(PathEscapes(relative.to_string()));
    }
    Ok(base.join(path))
}

/// Reads the file at `relative` beneath `base`. Besides [`resolve_within`]'s check of the path's text, the
/// file is opened through cap-std beneath `base`, so a symlink (at any step) leading out of `base` is refused
/// too: a plugin or experience folder can only ever read what is inside it.
pub fn read_within(base: &Path, relative: &str, max: u64) -> Result<Vec<u8>, ReadWithinError> {
    crate::files::read_regular(open_within(base, relative)?, max).map_err(ReadWithinError::Io)
}

/// Opens the file at `relative` beneath `base` for reading, as [`read_within`] does, without reading it.
pub fn open_within(base: &Path, relative: &str) -> Result<std::fs::File, ReadWithinError> {
    resolve_within(base, relative).map_err(ReadWithinError::Escapes)?;
    let dir = cap_std::fs::Dir::open_ambient_dir(base, cap_std::ambient_authority()).map_err(ReadWithinError::Io)?;
    let file = dir.open_with(relative, &crate::files::open_options()).map_err(ReadWithinError::Io)?;
    Ok(file.into_std())
}

/// Why [`read_within`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadWithinError {
    #[error(transparent)]
    /// The path leads out of its folder.
    Escapes(PathEscapes),
    #[error(transparent)]
    /// The file could not be read.
    Io(std::io::Error),
}

/// An asset file that could not be read. Its message says why, so it has no separate `source()`: printed as a
/// chain (`{:#}` with anyhow) the cause would appear twice. The name and path come from a plugin's or an
/// experience's bundles: the message quotes them cut and escaped.
#[derive(Debug, thiserror::Error)]
#[error(
    "asset {:?} of bundle {bundle} ({}): {cause}",
    shown(name, MAX_NAME),
    shown(&path.display().to_string(), MAX_CAUSE)
)]
pub struct AssetReadError {
    /// The asset's name in its bundle.
    pub name: String,
    /// The bundle that declares it.
    pub bundle: BundleName,
    /// The file it names.
    pub path: PathBuf,
    /// Why reading it failed.
    pub cause: std::io::Error,
}

/// Assets loaded into memory for one world, shared read-only by every plugin instance in it.
#[derive(Debug, Default, Clone)]
pub struct Assets {
    files: HashMap<String, Arc<[u8]>>,
    loaded_bundles: Vec<BundleName>,
}

impl Assets {
    /// Reads the files of the bundles `net_mode` loads. Paths are resolved against `base`.
    pub async fn load(base: &Path, declared: &BundleDeclarations, net_mode: NetMode) -> Result<Self, AssetLoadError> {
        let mut assets = Assets::default();
        assets.add(base, declared, net_mode).await?;
        Ok(assets)
    }

    /// Adds the files of another declaration (an action set, a plugin's own bundles). A later declaration of
    /// the same asset name replaces the earlier one.
    pub async fn add(
        &mut self,
        base: &Path,
        declared: &BundleDeclarations,
        net_mode: NetMode,
    ) -> Result<(), AssetLoadError> {
        for bundle in BundleName::for_net_mode(net_mode) {
            if !self.loaded_bundles.contains(&bundle) {
                self.loaded_bundles.push(bundle);
            }
            for (name, relative) in declared.get(&bundle).into_iter().flatten() {
                let path = base.join(relative);
                let bytes = match read_within(base, relative, crate::files::MAX_ASSET_BYTES) {
                    Ok(bytes) => bytes,
                    Err(ReadWithinError::Escapes(escapes)) => return Err(AssetLoadError::Escapes(escapes)),
                    Err(ReadWithinError::Io(cause)) => {
                        return Err(AssetLoadError::Read(AssetReadError { name: name.clone(), bundle, path, cause }))
                    }
                };
                self.files.insert(name.clone(), bytes.into());
            }
        }
        Ok(())
    }

    /// An asset's bytes.
    pub fn get(&self, name: &str) -> Option<&Arc<[u8]>> {
        self.files.get(name)
    }

    /// An asset's bytes, for a plugin asking by name (`read-asset`): a name no loaded bundle declares is an
    /// [`UnknownAsset`] quoting it cut and escaped.
    pub fn read(&self, name: &str) -> Result<&Arc<[u8]>, UnknownAsset> {
        self.files.get(name).ok_or_else(|| UnknownAsset::new(name))
    }

    /// Names of every loaded asset, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.files.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Bundles loaded, in load order.
    pub fn bundles(&self) -> &[BundleName] {
        &self.loaded_bundles
    }
}

/// A name no loaded bundle declares an asset by. The name is whatever the plugin asked for (a megabyte of it,
/// or terminal escapes), and the error goes back to the plugin, which often reports or logs it: it holds the
/// name as [`shown`] quotes it, at most [`MAX_NAME`] bytes of it with every control character escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no loaded bundle declares an asset named {0:?}")]
pub struct UnknownAsset(String);

impl UnknownAsset {
    /// The error for the asset `name`, quoted cut and escaped.
    pub fn new(name: &str) -> Self {
        UnknownAsset(shown(name, MAX_NAME))
    }

    /// The name as quoted: cut and escaped.
    pub fn name(&self) -> &str {
        &self.0
    }

    /// The name as quoted, taken out of the error.
    pub fn into_name(self) -> String {
        self.0
    }
}

/// Why bundles could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum AssetLoadError {
    #[error(transparent)]
    /// A bundle's path leads out of its folder.
    Escapes(PathEscapes),
    #[error(transparent)]
    /// A bundle's file could not be read.
    Read(AssetReadError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_follow_net_mode() {
        use BundleName::*;
        assert_eq!(BundleName::for_net_mode(NetMode::Standalone), [Equipped, Client, Server]);
        assert_eq!(BundleName::for_net_mode(NetMode::ListenServer), [Equipped, Client, Server]);
        assert_eq!(BundleName::for_net_mode(NetMode::DedicatedServer), [Equipped, Server]);
        assert_eq!(BundleName::for_net_mode(NetMode::Client), [Equipped, Client]);
    }

    #[test]
    fn paths_stay_inside() {
        let base = Path::new("/x/plugin");
        assert_eq!(resolve_within(base, "data/a.txt").unwrap(), Path::new("/x/plugin/data/a.txt"));
        assert!(resolve_within(base, "../secret").is_err());
        assert!(resolve_within(base, "data/../../secret").is_err());
        assert!(resolve_within(base, "/etc/passwd").is_err());
        assert!(resolve_within(base, "").is_err());
    }

    /// An error printed with its chain (as anyhow's `{:#}` and `gfhost` do) names its cause once.
    #[tokio::test]
    async fn a_missing_asset_names_its_cause_once() {
        let dir = tempfile::TempDir::new().unwrap();
        let declared: BundleDeclarations = toml::from_str("[Equipped]\ntuning = \"data/tuning.toml\"\n").unwrap();
        let cause = Assets::load(dir.path(), &declared, NetMode::Standalone).await.unwrap_err();
        let AssetLoadError::Read(read) = &cause else { panic!("{cause}") };
        let io = read.cause.to_string();
        let error = crate::experience::ExperienceError::Assets { experience: "e.toml".into(), cause };
        let printed = format!("{:#}", anyhow::Error::new(error));
        assert!(printed.contains("\"tuning\""), "{printed}");
        assert_eq!(printed.matches(&io).count(), 1, "{printed}");
    }

    /// `read-asset` answers a name it does not know with the name: a plugin asking for a megabyte-long one, or
    /// one with newlines and terminal controls, gets back (and may log) a short, escaped quote of it.
    #[test]
    fn an_unknown_asset_quotes_its_name_cut_and_escaped() {
        let assets = Assets::default();
        let huge = "a".repeat(1 << 20);
        let error = assets.read(&huge).unwrap_err();
        assert_eq!(error.name(), format!("{} [cut]", "a".repeat(MAX_NAME)));
        assert!(error.to_string().len() < MAX_NAME + 100, "{error}");
        let error = assets.read("tuning\n\u{1b}[2J\u{202e}lmth.exe").unwrap_err();
        assert_eq!(error.into_name(), "tuning\\n\\u{1b}[2J\\u{202e}lmth.exe");
        assert_eq!(assets.read("nope").unwrap_err().name(), "nope");
    }

    /// A bundle's asset names and paths come from a plugin's or an experience's files: errors quoting them cut
    /// and escape them too (and quote the escaped text as `{:?}` does, its backslashes doubled).
    #[tokio::test]
    async fn bundle_errors_quote_names_and_paths_cut_and_escaped() {
        let escapes = PathEscapes(format!("../{}\u{202e}", "x".repeat(1 << 20))).to_string();
        assert!(escapes.len() < MAX_CAUSE + 200, "{} bytes", escapes.len());
        assert!(escapes.starts_with("path \"../xxx") && escapes.contains("[cut]"), "{}", &escapes[..200]);
        let escapes = PathEscapes("/etc/\u{202e}dwssap".into()).to_string();
        assert!(escapes.contains("/etc/\\\\u{202e}dwssap"), "{escapes}");

        let dir = tempfile::TempDir::new().unwrap();
        let name = format!("tuning\u{2066}{}", "n".repeat(100_000));
        let mut declared = BundleDeclarations::new();
        declared.entry(BundleName::Equipped).or_default().insert(name, format!("data/\u{202e}{}", "p".repeat(5000)));
        let error = Assets::load(dir.path(), &declared, NetMode::Standalone).await.unwrap_err().to_string();
        assert!(error.len() < MAX_NAME + MAX_CAUSE + 300, "{} bytes", error.len());
        assert!(error.starts_with("asset \"tuning\\\\u{2066}nnn"), "{}", &error[..100]);
        assert!(error.contains("/data/\\u{202e}ppp"), "{error}");
        assert!(!error.contains('\u{202e}') && !error.contains('\u{2066}'), "{error}");
    }
}
