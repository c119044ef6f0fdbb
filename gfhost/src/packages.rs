//! `gfhost keygen`, `pack`, `publish` and `install`: plugins as signed package files and in OCI registries
//! (see the library's `package`), with a lock file of what was installed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use gamefeature_host::package::{
    archive, install as installing, Package, PackageLimits, SecretKey, Signature, TrustPolicy, Verdict,
};

use crate::registry::Registry;

/// Writes a new publisher key to `out` (readable by its owner only) and prints its public key.
pub fn keygen(out: &Path) -> Result<ExitCode> {
    let key = SecretKey::generate();
    let mut file = secret_file(out).with_context(|| format!("cannot create {}", out.display()))?;
    file.write_all(key.to_pem().as_bytes()).with_context(|| format!("cannot write {}", out.display()))?;
    let public = key.public_key();
    println!("wrote the secret key to {} (keep it secret; sign with `gfhost pack --key`)", out.display());
    println!("public key: {public}");
    println!("hosts trust it with, in gfhost.toml:\n\n[publishers.{}]\nkey = \"{public}\"", publisher_of(out));
    Ok(ExitCode::SUCCESS)
}

#[cfg(unix)]
fn secret_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn secret_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).create_new(true).open(path)
}

/// The publisher name a key file stands for: its file name without the extension.
fn publisher_of(key_file: &Path) -> String {
    key_file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "publisher".into())
}

/// Packs the plugin in `folder` into `out/NAME-VERSION.gfpkg`, signed with `key` if given.
pub fn pack(folder: &Path, key: Option<&Path>, publisher: Option<&str>, out: &Path) -> Result<ExitCode> {
    let package = Package::from_folder(folder).with_context(|| format!("cannot pack {}", folder.display()))?;
    let signature = match key {
        Some(path) => {
            let text = gamefeature_host::files::read_text(path, 64 << 10)
                .with_context(|| format!("cannot read the key {}", path.display()))?;
            let secret = SecretKey::from_pem(&text).with_context(|| path.display().to_string())?;
            let publisher = publisher.map(str::to_string).unwrap_or_else(|| publisher_of(path));
            Some(secret.sign(&publisher, package.summary()))
        }
        None => None,
    };
    let bytes = archive::write(&package, signature.as_ref());
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let file = out.join(format!("{}-{}.{}", package.name(), package.version(), archive::EXTENSION));
    std::fs::write(&file, &bytes).with_context(|| format!("cannot write {}", file.display()))?;
    let signed = match &signature {
        Some(signature) => format!("signed by {} ({})", signature.publisher, signature.key),
        None => "unsigned: hosts install it only with [packages] allow-untrusted = true".to_string(),
    };
    println!(
        "{}: {} {} {} ({} bytes), {signed}",
        file.display(),
        package.name(),
        package.version(),
        package.digest(),
        bytes.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Reads the package file at `path`.
pub fn read_package(path: &Path) -> Result<(Package, Option<Signature>)> {
    let file = gamefeature_host::files::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    archive::read(std::io::BufReader::new(file), PackageLimits::default())
        .with_context(|| format!("{}: refused", path.display()))
}

/// Installs the package file at `path` into the plugin directory `into`, if `trust` accepts it.
pub fn install(path: &Path, into: &Path, trust: &TrustPolicy) -> Result<ExitCode> {
    let (package, signature) = read_package(path)?;
    let what = path.display().to_string();
    install_package(&package, signature.as_ref(), into, trust, &what)?;
    Ok(ExitCode::SUCCESS)
}

/// Installs `package` (from `what`) once `trust` accepts it; returns the publisher it was trusted as.
fn install_package(
    package: &Package,
    signature: Option<&Signature>,
    into: &Path,
    trust: &TrustPolicy,
    what: &str,
) -> Result<Option<String>> {
    let (folder, verdict) =
        installing::install(package, signature, into, trust).with_context(|| format!("{what}: refused"))?;
    let (from, publisher) = match verdict {
        Verdict::Trusted { publisher, .. } => (format!("published by {publisher}"), Some(publisher)),
        Verdict::AllowedUntrusted => {
            ("from a publisher not trusted (allowed by [packages] allow-untrusted)".to_string(), None)
        }
    };
    let (name, version, digest) = (package.name(), package.version(), package.digest());
    println!("installed {name} {version} ({digest}) into {}, {from}", folder.display());
    Ok(publisher)
}

/// Publishes the package file at `path` to `registry`.
pub fn publish(path: &Path, registry: &str) -> Result<ExitCode> {
    let (package, signature) = read_package(path)?;
    let registry = Registry::new(registry)?;
    let url = block_on(registry.publish(&package, signature.as_ref()))?;
    let signed = if signature.is_some() { "signed" } else { "unsigned" };
    println!("published {} {} ({}, {signed}) as {url}", package.name(), package.version(), package.digest());
    Ok(ExitCode::SUCCESS)
}

/// Runs a registry request to its end.
fn block_on<T>(future: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting tokio")?;
    runtime.block_on(future)
}

/// The folder of the plugin `name` in `plugin_dirs`.
pub fn plugin_folder(name: &str, plugin_dirs: &[PathBuf]) -> Result<PathBuf> {
    let found = gamefeature_host::feature::discover(plugin_dirs, &|_| Ok(()));
    match found.found.into_iter().find(|manifest| manifest.name == name) {
        Some(manifest) => Ok(manifest.dir),
        None => bail!("{}", crate::no_plugin_named(name, plugin_dirs)),
    }
}
