//! The lock file (`gfhost.lock`): exactly which packages a host installed — name, version, digest, publisher
//! and where from — so that another machine (the servers of a fleet, a player's machine, CI) installs exactly
//! what was tested, and a registry serving other bytes under the same version is caught.
//!
//! It also records what was asked for (`[[request]]`: a plugin and its range, from where), which `gfhost update`
//! resolves again, and the lock before the last change is kept beside it (`gfhost.lock.previous`) for
//! `gfhost update --rollback`.
//!
//! ```toml
//! # gfhost.lock: written by `gfhost install`; `gfhost install` with no package installs exactly this.
//! [[request]]
//! name = "lyra-character"
//! version = "^0.1"
//! source = "registry.example.org/studio"
//!
//! [[package]]
//! name = "lyra-character"
//! version = "0.1.0"
//! digest = "sha256:1d81a1af…"
//! publisher = "studio"
//! source = "registry.example.org/studio"
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The lock file's usual name, beside `gfhost.toml`.
pub const LOCK_FILE: &str = "gfhost.lock";

/// What a lock file holds: one entry per package, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// What was asked for, in name order.
    #[serde(default, rename = "request", skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<Request>,
    /// The packages installed.
    #[serde(default, rename = "package")]
    pub packages: Vec<Locked>,
}

/// A plugin asked for by name (`gfhost install NAME@RANGE`), with the versions accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Request {
    /// The plugin's name.
    pub name: String,
    /// The versions accepted: a semver range.
    pub version: String,
    /// The registry and namespace it is resolved from.
    pub source: String,
}

/// One package, exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Locked {
    /// The plugin's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// `sha256:<hex>` of the package's manifest.
    pub digest: String,
    /// The trusted publisher that signed it, by the name the host knows it by (none if it was unsigned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// Where it came from: a registry and namespace (`host:port/namespace`), or a file.
    pub source: String,
}

impl LockFile {
    /// Reads the lock file at `path`; a file that does not exist is an empty lock.
    pub fn read(path: &Path) -> Result<LockFile, crate::Error> {
        if !path.exists() {
            return Ok(LockFile::default());
        }
        let bad = |message: String| crate::Error::bad_input(path, message);
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_FILE_BYTES)
            .map_err(|e| bad(format!("{}: cannot read it: {e}", path.display())))?;
        let lock: LockFile = toml::from_str(&text)
            .map_err(|e| bad(format!("{}: malformed: {}", path.display(), e.to_string().trim_end())))?;
        // Names and versions become file and folder names: a lock from elsewhere (a mirror) is checked first.
        let names = lock.packages.iter().map(|p| &p.name).chain(lock.requests.iter().map(|r| &r.name));
        if let Some(name) = names.into_iter().find(|name| !crate::feature::is_valid_plugin_name(name)) {
            return Err(bad(format!("{}: {:?} is not a plugin name", path.display(), crate::text::shown(name, 256))));
        }
        if let Some(p) = lock.packages.iter().find(|p| semver::Version::parse(&p.version).is_err()) {
            let version = crate::text::shown(&p.version, 256);
            return Err(bad(format!("{}: {}'s version {version:?} is not a version", path.display(), p.name)));
        }
        Ok(lock)
    }

    /// Where the lock before the last change of the lock at `path` is kept.
    pub fn previous_path(path: &Path) -> std::path::PathBuf {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".previous");
        path.with_file_name(name)
    }

    /// Writes the lock file to `path` as [`write`](Self::write) does, first keeping the lock it replaces at
    /// [`previous_path`](Self::previous_path) when it changes anything.
    pub fn write_keeping_previous(&self, path: &Path) -> Result<(), crate::Error> {
        let before = LockFile::read(path)?;
        if &before != self {
            before.write(&Self::previous_path(path))?;
        }
        self.write(path)
    }

    /// Writes the lock file to `path`, whole or not at all (a temporary file renamed into place).
    pub fn write(&self, path: &Path) -> Result<(), crate::Error> {
        let mut text = String::from("# Written by `gfhost install`: the packages this host installs, exactly.\n");
        text.push_str("# `gfhost install` with no package installs what it lists, refusing any other bytes.\n\n");
        text.push_str(&toml::to_string(self).expect("a lock file always serializes"));
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let failed = |e: std::io::Error| crate::Error::host(format!("{}: cannot write it: {e}", path.display()));
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(failed)?;
        file.persist(path).map_err(|e| failed(e.error))?;
        Ok(())
    }

    /// Records `entry`, replacing the entry of the same name.
    pub fn record(&mut self, entry: Locked) {
        self.packages.retain(|p| p.name != entry.name);
        self.packages.push(entry);
        self.packages.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The entry of the package `name`.
    pub fn get(&self, name: &str) -> Option<&Locked> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// Records the request `request`, replacing the request of the same name.
    pub fn request(&mut self, request: Request) {
        self.requests.retain(|r| r.name != request.name);
        self.requests.push(request);
        self.requests.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// The same lock without the packages `names`: what a resolution may move.
    pub fn without(&self, names: &[&str]) -> LockFile {
        let packages = self.packages.iter().filter(|p| !names.contains(&p.name.as_str())).cloned().collect();
        LockFile { requests: self.requests.clone(), packages }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kept_one_per_name_in_order_and_survive_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        assert_eq!(LockFile::read(&path).unwrap(), LockFile::default());
        let entry = |name: &str, version: &str| Locked {
            name: name.into(),
            version: version.into(),
            digest: format!("sha256:{version}"),
            publisher: Some("studio".into()),
            source: "127.0.0.1:5000/studio".into(),
        };
        let mut lock = LockFile::default();
        lock.record(entry("zeta", "1.0.0"));
        lock.record(entry("alpha", "1.0.0"));
        lock.record(entry("zeta", "1.1.0"));
        lock.write(&path).unwrap();
        let read = LockFile::read(&path).unwrap();
        assert_eq!(read, lock);
        assert_eq!(read.packages.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["alpha", "zeta"]);
        assert_eq!(read.get("zeta").unwrap().version, "1.1.0");
        lock.request(Request { name: "zeta".into(), version: "^1".into(), source: "127.0.0.1:5000/studio".into() });
        lock.write_keeping_previous(&path).unwrap();
        assert_eq!(LockFile::read(&path).unwrap(), lock, "requests survive the file");
        assert_eq!(LockFile::read(&LockFile::previous_path(&path)).unwrap(), read, "the lock before is kept");
        assert_eq!(lock.without(&["zeta"]).packages.len(), 1);
        std::fs::write(&path, "[[package]]\nname = \"../x\"\nversion = \"1.0.0\"\ndigest = \"d\"\nsource = \"s\"\n")
            .unwrap();
        assert!(LockFile::read(&path).unwrap_err().to_string().contains("\"../x\" is not a plugin name"));
        std::fs::write(&path, "[[package]]\nname = \"x\"\nversion = \"../1\"\ndigest = \"d\"\nsource = \"s\"\n")
            .unwrap();
        assert!(LockFile::read(&path).unwrap_err().to_string().contains("is not a version"));
        std::fs::write(&path, "[[package]]\nname = 3\n").unwrap();
        assert!(LockFile::read(&path).unwrap_err().to_string().contains("gfhost.lock: malformed"));
    }
}
