//! The host's gate ([`crate::feature::Gate`]) for plugin folders: the package checks every path into a
//! process passes.
//!
//! - A folder installed from a package (`.gfpackage.json`) must hold a record that reads, naming this plugin
//!   and version, signed by a publisher the [`TrustPolicy`] accepts; its bytes are packed again and compared
//!   with the record right before its code is compiled.
//! - The plugin then asks for no more than its publisher's ceiling, and no more than the gate's own ceiling (a
//!   client's `[mod-sync] permissions` for the plugins it fetched); its denials name the limit.
//! - A folder without the record is the operator's own (built from source) and passes as it is.

use std::sync::Arc;

use super::install::{provenance, InstallError, Provenance, PROVENANCE_FILE};
use super::{Package, TrustPolicy, Verdict};
use crate::feature::{Checks, Gate, Permissions, PluginManifest, Recheck};

/// The package checks: a trust policy, and a ceiling for every plugin through the gate if it has one.
#[derive(Debug, Clone, Default)]
pub struct PackageChecks {
    trust: TrustPolicy,
    ceiling: Option<(Permissions, String)>,
}

/// The gate a host's own plugin folders pass: packages `trust` accepts, each capped at its publisher's
/// ceiling; folders of the operator's own as they are.
pub fn gate(trust: TrustPolicy) -> Gate {
    Gate::new(PackageChecks { trust, ceiling: None })
}

/// The gate of plugins no one may grant more than `ceiling`, which `set_by` names for their denials (a
/// client's fetched plugins: `"this client's [mod-sync] permissions"`).
pub fn capped_gate(trust: TrustPolicy, ceiling: Permissions, set_by: impl Into<String>) -> Gate {
    Gate::new(PackageChecks { trust, ceiling: Some((ceiling, set_by.into())) })
}

impl Checks for PackageChecks {
    fn admit(&self, manifest: &mut PluginManifest) -> Result<Option<Recheck>, String> {
        let record = provenance(&manifest.dir).map_err(|e| e.to_string())?;
        let recheck = match record {
            Some(record) => {
                let recorded = &record.package;
                if recorded.name != manifest.name || recorded.version != manifest.version {
                    return Err(format!(
                        "{} says {} {}, but {} was installed from package {} {} ({}); reinstall it",
                        manifest.manifest_path.display(),
                        manifest.name,
                        manifest.version,
                        manifest.dir.join(PROVENANCE_FILE).display(),
                        recorded.name,
                        recorded.version,
                        recorded.digest
                    ));
                }
                let verdict = self.trust.check(recorded, record.signature.as_ref()).map_err(|e| e.to_string())?;
                if let (Some(ceiling), Verdict::Trusted { publisher, .. }) = (verdict.ceiling(), &verdict) {
                    let set_by = format!("the ceiling of publisher {publisher} ([publishers.{publisher}] permissions)");
                    manifest.limit_permissions(ceiling, set_by);
                }
                let recheck: Recheck = Arc::new(move |manifest: &PluginManifest| still_the_package(manifest, &record));
                Some(recheck)
            }
            None => None,
        };
        if let Some((ceiling, set_by)) = &self.ceiling {
            manifest.limit_permissions(ceiling, set_by.clone());
        }
        Ok(recheck)
    }
}

/// Whether the folder of `manifest` still packs to the package `record` says it was installed from.
fn still_the_package(manifest: &PluginManifest, record: &Provenance) -> Result<(), String> {
    let folder = manifest.dir.clone();
    let package = Package::from_folder(&folder)
        .map_err(|problem| InstallError::Package { problem, folder: folder.clone() }.to_string())?;
    if package.summary() != &record.package {
        return Err(InstallError::Modified {
            folder,
            name: record.package.name.clone(),
            version: record.package.version.clone(),
            digest: record.package.digest.clone(),
        }
        .to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::package::install::install;
    use crate::package::{SecretKey, TrustedPublisher};

    const HUD: &str = "[plugin]\nname = \"hud\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"hud.wasm\"\n\
                       [permissions]\nspawn-actors = true\nsend-events = true\n";

    fn source(root: &Path) -> PathBuf {
        let source = root.join("source/hud");
        std::fs::create_dir_all(&source).unwrap();
        std::fs::write(source.join("plugin.toml"), HUD).unwrap();
        std::fs::write(source.join("hud.wasm"), b"\0asm").unwrap();
        source
    }

    fn studio(key: &SecretKey, ceiling: Option<Permissions>) -> TrustPolicy {
        let publisher = TrustedPublisher { key: key.public_key(), permissions: ceiling };
        TrustPolicy { publishers: BTreeMap::from([("studio".into(), publisher)]), allow_untrusted: false }
    }

    #[test]
    fn a_package_is_capped_by_its_publisher_and_the_gate_and_a_changed_folder_fails_its_contents_check() {
        let root = tempfile::tempdir().unwrap();
        let key = SecretKey::generate();
        let package = Package::from_folder(&source(root.path())).unwrap();
        let signature = key.sign("studio", package.summary());
        let ceiling = Permissions { send_events: true, ..Permissions::default() };
        let trust = studio(&key, Some(ceiling.clone()));
        let (folder, _) = install(&package, Some(&signature), &root.path().join("plugins"), &trust).unwrap();

        let host = Arc::new(gate(trust.clone()));
        let admitted = host.admit(PluginManifest::read(&folder).unwrap()).unwrap();
        assert_eq!(admitted.manifest().permissions, ceiling, "spawn-actors is beyond the studio's ceiling");
        assert!(admitted.manifest().permissions_limited_by().unwrap().contains("publisher studio"));
        admitted.verify_contents().unwrap();

        let client = Arc::new(capped_gate(trust, Permissions::default(), "this client's [mod-sync] permissions"));
        let fetched = client.admit(PluginManifest::read(&folder).unwrap()).unwrap();
        assert_eq!(fetched.manifest().permissions, Permissions::default());
        assert!(fetched.manifest().permissions_limited_by().unwrap().contains("[mod-sync]"));

        std::fs::write(folder.join("hud.wasm"), b"\0asm, edited").unwrap();
        let refused = admitted.verify_contents().unwrap_err().to_string();
        assert!(refused.contains("changed since package hud 1.0.0 was installed"), "{refused}");
        // A record of another version than the manifest says is refused at the gate.
        std::fs::write(folder.join("plugin.toml"), HUD.replace("1.0.0", "1.0.1")).unwrap();
        let refused = host.admit(PluginManifest::read(&folder).unwrap()).unwrap_err().to_string();
        assert!(refused.contains("was installed from package hud 1.0.0"), "{refused}");
    }

    #[test]
    fn an_operators_own_folder_passes_as_it_is_and_an_untrusted_package_does_not() {
        let root = tempfile::tempdir().unwrap();
        let source = source(root.path());
        let key = SecretKey::generate();
        let host = Arc::new(gate(studio(&key, None)));
        let own = host.admit(PluginManifest::read(&source).unwrap()).unwrap();
        assert!(own.manifest().permissions.spawn_actors);
        assert_eq!(own.manifest().permissions_limited_by(), None);

        let package = Package::from_folder(&source).unwrap();
        let development = TrustPolicy { allow_untrusted: true, ..TrustPolicy::default() };
        let (folder, _) = install(&package, None, &root.path().join("plugins"), &development).unwrap();
        let refused = host.admit(PluginManifest::read(&folder).unwrap()).unwrap_err().to_string();
        assert!(refused.contains("plugin \"hud\" refused") && refused.contains("unsigned"), "{refused}");
    }
}
