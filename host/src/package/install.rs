//! Installing a package into a plugin directory, and checking an installed one again when it is loaded.
//!
//! A package is unpacked into a temporary (hidden, so never discovered) folder beside its destination and
//! exchanged with what was there in one rename, so a plugin directory never holds half a package: a failure,
//! or a process killed at any point, leaves what was there before. The folder keeps a record of
//! the package it came from (`.gfpackage.json`: name, version, digest, signature); loading packs the folder
//! again and refuses it if the digest changed since, or if the signature is no longer trusted. Folders without
//! the record are the operator's own (a modder's plugins built from source), as before packages existed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Package, PackageError, PackageSummary, Signature, TrustError, TrustPolicy, Verdict};

/// The record of the package a plugin folder was installed from.
pub const PROVENANCE_FILE: &str = ".gfpackage.json";

/// Where an installed plugin folder came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The package installed.
    pub package: PackageSummary,
    /// Its publisher's signature, if it was signed.
    pub signature: Option<Signature>,
}

/// Why a package could not be installed, or an installed one may not be loaded.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields: each variant's message says what they are
pub enum InstallError {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The host does not accept the package.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// The installed folder no longer packs.
    #[error("{}: {problem}", folder.display())]
    Package { problem: PackageError, folder: PathBuf },
    /// The installed folder is not the package it was installed from.
    #[error("{}: changed since package {name} {version} was installed ({digest}); reinstall it", folder.display())]
    Modified { folder: PathBuf, name: String, version: String, digest: String },
    /// The record of where the folder came from cannot be read.
    #[error("{}: {PROVENANCE_FILE} is malformed: {cause}", folder.display())]
    BadRecord { folder: PathBuf, cause: String },
}

/// Installs `package` as `plugins_dir/<name>/`, replacing what was there, once `policy` accepts it.
pub fn install(
    package: &Package,
    signature: Option<&Signature>,
    plugins_dir: &Path,
    policy: &TrustPolicy,
) -> Result<(PathBuf, Verdict), InstallError> {
    let mut installed = install_set(&[(package, signature)], plugins_dir, policy)?;
    Ok(installed.remove(0))
}

/// Installs every package of `set` (each as `plugins_dir/<name>/`) or none: each is checked against `policy` and
/// unpacked beside its place before any is put in place, and a package that cannot take its place puts back
/// those already placed. Each folder is replaced whole (see [`crate::whole_dirs`]); a process killed between
/// two replacements leaves some of the set new and the rest as it was, which the lock file (written after)
/// does not yet say, so installing from the lock again completes it.
pub fn install_set(
    set: &[(&Package, Option<&Signature>)],
    plugins_dir: &Path,
    policy: &TrustPolicy,
) -> Result<Vec<(PathBuf, Verdict)>, InstallError> {
    let mut verdicts = Vec::with_capacity(set.len());
    for (package, signature) in set {
        verdicts.push(policy.check(package.summary(), *signature)?);
    }
    let mut staged = Vec::with_capacity(set.len());
    for (package, signature) in set {
        staged.push((stage(package, *signature, plugins_dir)?, plugins_dir.join(package.name())));
    }
    // Each placed folder with whether there was one before it (which its staging folder now holds).
    let mut placed: Vec<(tempfile::TempDir, PathBuf, bool)> = Vec::with_capacity(staged.len());
    for (staging, target) in staged {
        let existed = target.exists();
        if let Err(source) = crate::whole_dirs::replace(staging.path(), &target) {
            for (staging, target, existed) in placed.into_iter().rev() {
                let _ = match existed {
                    true => crate::whole_dirs::replace(staging.path(), &target),
                    false => std::fs::remove_dir_all(&target),
                };
            }
            return Err(InstallError::Io { path: target, source });
        }
        placed.push((staging, target, existed));
    }
    // The staging folders now hold the old plugins, if there were: they go as `placed` is dropped.
    Ok(placed.into_iter().map(|(_, target, _)| target).zip(verdicts).collect())
}

/// `package` unpacked, with the record of where it came from, into a hidden folder in `plugins_dir`.
fn stage(
    package: &Package,
    signature: Option<&Signature>,
    plugins_dir: &Path,
) -> Result<tempfile::TempDir, InstallError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InstallError::Io { path, source }
    };
    let staging = crate::whole_dirs::staging(plugins_dir, ".installing-").map_err(io(plugins_dir))?;
    for (relative, bytes) in package.files() {
        let path = staging.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }
    let record = Provenance { package: package.summary().clone(), signature: signature.cloned() };
    let record_path = staging.path().join(PROVENANCE_FILE);
    let text = serde_json::to_vec_pretty(&record).expect("a provenance record always serializes");
    std::fs::write(&record_path, text).map_err(io(&record_path))?;
    Ok(staging)
}

/// The record of the package `folder` was installed from, if it was installed from one.
pub fn provenance(folder: &Path) -> Result<Option<Provenance>, InstallError> {
    let path = folder.join(PROVENANCE_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let text = crate::files::read_text(&path, crate::files::MAX_TEXT_FILE_BYTES)
        .map_err(|source| InstallError::Io { path: path.clone(), source })?;
    let record = serde_json::from_str(&text)
        .map_err(|e| InstallError::BadRecord { folder: folder.to_path_buf(), cause: e.to_string() })?;
    Ok(Some(record))
}

/// Checks an installed plugin folder before it is loaded: `None` for a folder not installed from a package;
/// otherwise the folder still packs to the package it was installed from, and `policy` accepts that package.
pub fn verify_installed(folder: &Path, policy: &TrustPolicy) -> Result<Option<Verdict>, InstallError> {
    let Some(record) = provenance(folder)? else {
        return Ok(None);
    };
    let package = Package::from_folder(folder)
        .map_err(|problem| InstallError::Package { problem, folder: folder.to_path_buf() })?;
    if package.summary() != &record.package {
        return Err(InstallError::Modified {
            folder: folder.to_path_buf(),
            name: record.package.name,
            version: record.package.version,
            digest: record.package.digest,
        });
    }
    Ok(Some(policy.check(&record.package, record.signature.as_ref())?))
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<InstallError> for crate::error::Error {
    fn from(error: InstallError) -> crate::error::Error {
        let message = error.to_string();
        match error {
            InstallError::Io { .. } => crate::error::Error::Host(message),
            InstallError::Trust(_) => crate::error::Error::refused(message),
            InstallError::Package { folder, .. }
            | InstallError::Modified { folder, .. }
            | InstallError::BadRecord { folder, .. } => crate::error::Error::BadInput { file: folder, message },
        }
    }
}
