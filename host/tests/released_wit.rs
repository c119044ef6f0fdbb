//! A released version of the `gamefeature:plugin` WIT package never changes: plugins built against it must keep
//! loading, and a host that implements it must keep meaning the same. `wit/released.b3` lists the BLAKE3 of every
//! file of every released version (in `b3sum`'s format, so `b3sum -c wit/released.b3` in `wit/` checks it too),
//! and this test fails when a released folder gains, loses or changes a file, or when a version other than the
//! newest is left unreleased (only the newest may still be a draft).
//!
//! Releasing a version: add its files' lines to `wit/released.b3` (the failure message of
//! `a_folder_older_than_the_newest_is_released` prints them for every folder).
//!
//! Run it alone: `cargo test -p gamefeature-host --test released_wit`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn wit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit")
}

/// The version folders under `wit/`, oldest first.
fn versions() -> Vec<String> {
    let mut versions: Vec<(Vec<u64>, String)> = std::fs::read_dir(wit_dir())
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .map(|name| (name.split('.').map(|part| part.parse().expect("a version folder's name")).collect(), name))
        .collect();
    versions.sort();
    versions.into_iter().map(|(_, name)| name).collect()
}

/// Each file of a version folder (`0.1.0/actors.wit`) and its BLAKE3, as `b3sum` prints it.
fn hashes_of(version: &str) -> BTreeMap<String, String> {
    std::fs::read_dir(wit_dir().join(version))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let name = format!("{version}/{}", path.file_name().unwrap().to_string_lossy());
            (name, blake3::hash(&std::fs::read(&path).unwrap()).to_hex().to_string())
        })
        .collect()
}

/// What `wit/released.b3` says: each released file and its BLAKE3.
fn released() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(wit_dir().join("released.b3")).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (hash, file) = line.split_once("  ").unwrap_or_else(|| panic!("not `HASH  FILE`: {line:?}"));
            (file.to_string(), hash.to_string())
        })
        .collect()
}

fn released_versions() -> Vec<String> {
    let mut found: Vec<String> = released().keys().map(|file| file.split('/').next().unwrap().to_string()).collect();
    found.dedup();
    found
}

fn lines(hashes: &BTreeMap<String, String>) -> String {
    hashes.iter().map(|(file, hash)| format!("{hash}  {file}\n")).collect()
}

#[test]
fn released_folders_are_exactly_as_they_were_released() {
    let released = released();
    assert!(!released.is_empty(), "wit/released.b3 lists no file");
    for version in released_versions() {
        let listed: BTreeMap<String, String> = released
            .iter()
            .filter(|(file, _)| file.starts_with(&format!("{version}/")))
            .map(|(f, h)| (f.clone(), h.clone()))
            .collect();
        let now = hashes_of(&version);
        assert_eq!(
            now, listed,
            "wit/{version}/ was released and must not change: put the change into a new version's folder"
        );
    }
}

#[test]
fn a_folder_older_than_the_newest_is_released() {
    let versions = versions();
    let released = released_versions();
    let drafts: Vec<&String> = versions.iter().filter(|version| !released.contains(version)).collect();
    let all: BTreeMap<String, String> = versions.iter().flat_map(|version| hashes_of(version)).collect();
    assert!(
        drafts.iter().all(|draft| Some(*draft) == versions.last()),
        "only the newest version may be a draft, but {drafts:?} of {versions:?} are not in wit/released.b3; \
         every folder's lines are:\n{}",
        lines(&all)
    );
    assert!(released.iter().all(|version| versions.contains(version)), "released {released:?}, folders {versions:?}");
}

#[test]
fn a_changed_file_is_seen() {
    let mut listed = hashes_of("0.1.0");
    let (file, hash) = listed.iter_mut().next().unwrap();
    assert_eq!(hash.len(), 64, "{file}");
    *hash = "0".repeat(64);
    assert_ne!(hashes_of("0.1.0"), listed);
}
