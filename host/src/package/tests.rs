//! Packages from folders, archives and installs, with the bad input each must refuse. Plain files: the
//! component's bytes are never run here, so they need not be a component.

use std::collections::BTreeMap;
use std::path::Path;

use super::install::{install, install_set, provenance, verify_installed, InstallError};
use super::*;

const MANIFEST: &str = r#"
[plugin]
name = "hud"
version = "1.2.0"
api = "0.2.0"
component = "hud.wasm"

[bundles.Client]
layout = "data/layout.txt"
"#;

fn plugin_folder(root: &Path) -> std::path::PathBuf {
    let dir = root.join("source").join("hud");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("plugin.toml"), MANIFEST).unwrap();
    std::fs::write(dir.join("hud.wasm"), b"\0asm component bytes").unwrap();
    std::fs::write(dir.join("data/layout.txt"), b"top-left").unwrap();
    std::fs::write(dir.join("src/lib.rs"), b"// sources do not travel").unwrap();
    dir
}

fn trusting(key: &SecretKey) -> TrustPolicy {
    let publisher = TrustedPublisher { key: key.public_key(), permissions: None };
    TrustPolicy { publishers: BTreeMap::from([("hud-team".to_string(), publisher)]), allow_untrusted: false }
}

/// The manifest and blobs of `package`, for crafting bad ones.
fn parts(package: &Package) -> (serde_json::Value, BTreeMap<String, Vec<u8>>) {
    let manifest = serde_json::from_slice(package.manifest_bytes()).unwrap();
    let blobs = package.blobs().map(|(d, b)| (d.to_string(), b.to_vec())).collect();
    (manifest, blobs)
}

/// Sets layer `index`'s bytes (and its digest and size in the manifest).
fn replace_layer(manifest: &mut serde_json::Value, blobs: &mut BTreeMap<String, Vec<u8>>, index: usize, bytes: &[u8]) {
    let digest = sha256_digest(bytes);
    manifest["layers"][index]["digest"] = digest.clone().into();
    manifest["layers"][index]["size"] = bytes.len().into();
    blobs.insert(digest, bytes.to_vec());
}

fn repack(manifest: &serde_json::Value, blobs: BTreeMap<String, Vec<u8>>) -> Result<Package, PackageError> {
    Package::from_parts(serde_json::to_vec(manifest).unwrap(), blobs, PackageLimits::default())
}

#[test]
fn a_folder_packs_to_the_same_package_every_time_with_only_its_declared_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = plugin_folder(root.path());
    let package = Package::from_folder(&dir).unwrap();
    assert_eq!((package.name(), package.version()), ("hud", "1.2.0"));
    let files: Vec<&str> = package.files().map(|(path, _)| path).collect();
    assert_eq!(files, ["plugin.toml", "hud.wasm", "data/layout.txt"]);
    assert_eq!(Package::from_folder(&dir).unwrap().digest(), package.digest());
    let manifest: serde_json::Value = serde_json::from_slice(package.manifest_bytes()).unwrap();
    assert_eq!(manifest["config"]["mediaType"], CONFIG_MEDIA_TYPE);
    assert_eq!(manifest["layers"][1]["mediaType"], COMPONENT_MEDIA_TYPE);

    std::fs::write(dir.join("data/layout.txt"), b"bottom-right").unwrap();
    assert_ne!(Package::from_folder(&dir).unwrap().digest(), package.digest(), "content names the package");
}

#[test]
fn an_archive_round_trips_with_its_signature_and_tampering_or_truncation_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let package = Package::from_folder(&plugin_folder(root.path())).unwrap();
    let key = SecretKey::generate();
    let signature = key.sign("hud-team", package.summary());
    let bytes = archive::write(&package, Some(&signature));
    assert_eq!(archive::write(&package, Some(&signature)), bytes, "archives are reproducible");
    let (read, read_signature) = archive::read(bytes.as_slice(), PackageLimits::default()).unwrap();
    assert_eq!(read.summary(), package.summary());
    assert_eq!(read_signature.as_ref(), Some(&signature));
    assert!(trusting(&key).check(read.summary(), read_signature.as_ref()).is_ok());

    // A flipped byte in the component's blob.
    let component = bytes.windows(6).position(|w| w == b"\0asm c").unwrap();
    let mut tampered = bytes.clone();
    tampered[component + 7] ^= 1;
    let error = archive::read(tampered.as_slice(), PackageLimits::default()).unwrap_err();
    assert!(matches!(error, PackageError::BadBlob { .. }), "{error}");
    // Cut anywhere before the end-of-archive blocks (two of 512 zero bytes): refused, never a panic.
    for cut in (0..bytes.len() - 1024).step_by(97) {
        assert!(archive::read(&bytes[..cut], PackageLimits::default()).is_err(), "cut at {cut}");
    }
    let small = PackageLimits { max_bytes: 100, ..PackageLimits::default() };
    assert!(matches!(archive::read(bytes.as_slice(), small), Err(PackageError::TooLarge { .. })));
}

#[test]
fn a_package_whose_files_leave_the_folder_or_disagree_with_its_manifest_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let package = Package::from_folder(&plugin_folder(root.path())).unwrap();
    let title = "org.opencontainers.image.title";

    for (path, expected) in [
        ("../escape.txt", "not a plain relative path"),
        ("/etc/passwd", "not a plain"),
        (".gfpackage.json", "not a plain"),
        ("plugin.toml", "twice"),
    ] {
        let (mut manifest, blobs) = parts(&package);
        manifest["layers"][2]["annotations"][title] = path.into();
        let error = repack(&manifest, blobs).unwrap_err().to_string();
        assert!(error.contains(expected), "{path}: {error}");
    }

    let (mut manifest, mut blobs) = parts(&package);
    replace_layer(&mut manifest, &mut blobs, 0, MANIFEST.replace("1.2.0", "9.9.9").as_bytes());
    let error = repack(&manifest, blobs).unwrap_err();
    assert!(matches!(error, PackageError::Disagrees { .. }), "{error}");

    let (mut manifest, mut blobs) = parts(&package);
    replace_layer(&mut manifest, &mut blobs, 0, MANIFEST.replace("hud.wasm", "other.wasm").as_bytes());
    assert_eq!(repack(&manifest, blobs).unwrap_err(), PackageError::Undeclared("hud.wasm".into()));

    let (mut manifest, blobs) = parts(&package);
    manifest["layers"].as_array_mut().unwrap().pop();
    assert_eq!(repack(&manifest, blobs).unwrap_err(), PackageError::Undelivered("data/layout.txt".into()));

    let (mut manifest, blobs) = parts(&package);
    manifest["layers"][2]["mediaType"] = "application/x-sh".into();
    assert!(matches!(repack(&manifest, blobs).unwrap_err(), PackageError::UnknownLayer(_)));
}

#[test]
fn installing_puts_the_package_in_place_and_loading_checks_it_again() {
    let root = tempfile::tempdir().unwrap();
    let package = Package::from_folder(&plugin_folder(root.path())).unwrap();
    let key = SecretKey::generate();
    let signature = key.sign("hud-team", package.summary());
    let plugins = root.path().join("plugins");

    let refused = install(&package, None, &plugins, &trusting(&key)).unwrap_err();
    assert!(matches!(refused, InstallError::Trust(TrustError::Unsigned { .. })), "{refused}");
    assert!(!plugins.join("hud").exists(), "nothing half installed");

    let (folder, verdict) = install(&package, Some(&signature), &plugins, &trusting(&key)).unwrap();
    assert_eq!(folder, plugins.join("hud"));
    assert!(matches!(verdict, Verdict::Trusted { ref publisher, .. } if publisher == "hud-team"));
    assert!(!folder.join("src").exists(), "sources do not travel");
    assert_eq!(std::fs::read(folder.join("data/layout.txt")).unwrap(), b"top-left");
    assert!(matches!(verify_installed(&folder, &trusting(&key)), Ok(Some(Verdict::Trusted { .. }))));
    let stranger = SecretKey::generate();
    assert!(matches!(verify_installed(&folder, &trusting(&stranger)), Err(InstallError::Trust(_))));

    std::fs::write(folder.join("hud.wasm"), b"\0asm patched").unwrap();
    let error = verify_installed(&folder, &trusting(&key)).unwrap_err().to_string();
    assert!(error.contains("changed since package hud 1.2.0 was installed"), "{error}");

    // Reinstalling replaces the modified folder; nothing is left beside it.
    install(&package, Some(&signature), &plugins, &trusting(&key)).unwrap();
    assert!(matches!(verify_installed(&folder, &trusting(&key)), Ok(Some(_))));
    let left: Vec<_> = std::fs::read_dir(&plugins).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["hud"]);
}

/// A set is installed whole or not at all: one package its publisher is not trusted for leaves every folder of
/// the set as it was, the one installed before included.
#[test]
fn a_set_with_one_refused_package_installs_none_of_it() {
    let root = tempfile::tempdir().unwrap();
    let hud_folder = plugin_folder(root.path());
    let hud = Package::from_folder(&hud_folder).unwrap();
    let ammo_folder = root.path().join("source").join("ammo");
    std::fs::create_dir_all(&ammo_folder).unwrap();
    std::fs::write(
        ammo_folder.join("plugin.toml"),
        MANIFEST.replace("\"hud\"", "\"ammo\"").replace("[bundles.Client]\nlayout = \"data/layout.txt\"\n", ""),
    )
    .unwrap();
    std::fs::write(ammo_folder.join("hud.wasm"), b"\0asm ammo").unwrap();
    let ammo = Package::from_folder(&ammo_folder).unwrap();
    let key = SecretKey::generate();
    let plugins = root.path().join("plugins");
    let old_hud = hud_folder.join("data/layout.txt");
    std::fs::write(&old_hud, b"bottom-right").unwrap();
    let before = Package::from_folder(&hud_folder).unwrap();
    install(&before, Some(&key.sign("hud-team", before.summary())), &plugins, &trusting(&key)).unwrap();

    let stranger = SecretKey::generate();
    let set =
        [(&hud, Some(key.sign("hud-team", hud.summary()))), (&ammo, Some(stranger.sign("hud-team", ammo.summary())))];
    let borrowed: Vec<(&Package, Option<&Signature>)> = set.iter().map(|(p, s)| (*p, s.as_ref())).collect();
    let refused = install_set(&borrowed, &plugins, &trusting(&key)).unwrap_err();
    assert!(matches!(refused, InstallError::Trust(_)), "{refused}");
    assert_eq!(provenance(&plugins.join("hud")).unwrap().unwrap().package, *before.summary(), "the old hud stays");
    let left: Vec<_> = std::fs::read_dir(&plugins).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["hud"], "no ammo, nothing staged left behind");

    let set = [(&hud, Some(key.sign("hud-team", hud.summary()))), (&ammo, Some(key.sign("hud-team", ammo.summary())))];
    let borrowed: Vec<(&Package, Option<&Signature>)> = set.iter().map(|(p, s)| (*p, s.as_ref())).collect();
    let installed = install_set(&borrowed, &plugins, &trusting(&key)).unwrap();
    assert_eq!(
        installed.iter().map(|(folder, _)| folder.clone()).collect::<Vec<_>>(),
        [plugins.join("hud"), plugins.join("ammo")]
    );
    assert_eq!(provenance(&plugins.join("hud")).unwrap().unwrap().package, *hud.summary());
}

/// Sizes are the sender's word: two layers declaring 2^64-1 bytes each are refused as too large (a sum that
/// overflowed panicked the host, in `gfhost install` and in a client's fetch alike).
#[test]
fn declared_sizes_that_overflow_are_refused_as_too_large() {
    let root = tempfile::tempdir().unwrap();
    let package = Package::from_folder(&plugin_folder(root.path())).unwrap();
    let (mut manifest, blobs) = parts(&package);
    manifest["layers"][0]["size"] = u64::MAX.into();
    manifest["layers"][1]["size"] = u64::MAX.into();
    assert!(matches!(repack(&manifest, blobs), Err(PackageError::TooLarge { size: u64::MAX, .. })));
    let crafted = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/package_archive/declared-sizes-overflow"),
    )
    .unwrap();
    let refused = archive::read(crafted.as_slice(), PackageLimits::default()).unwrap_err();
    assert!(matches!(refused, PackageError::TooLarge { .. }), "{refused}");
}

/// A blob named twice is checked against its size both times: the package's size is what it holds.
#[test]
fn a_blob_named_twice_with_another_size_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let package = Package::from_folder(&plugin_folder(root.path())).unwrap();
    let (mut manifest, blobs) = parts(&package);
    let mut second = manifest["layers"][1].clone();
    second["annotations"]["org.opencontainers.image.title"] = "data/copy.txt".into();
    second["size"] = 1_000_000.into();
    manifest["layers"].as_array_mut().unwrap().push(second);
    assert!(matches!(repack(&manifest, blobs), Err(PackageError::BadBlob { .. })));
}
