//! The files a user or a download hands the host: plugin manifests, experiences, `gfhost.toml`, packages.

use std::path::Path;

use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ExperienceDefinition;
use gamefeature_host::feature::PluginManifest;
use gamefeature_host::package::{archive, PackageLimits};

use crate::{with_file, TOKIO};

/// An error that must name the file it is about.
fn names(error: &impl std::fmt::Display, path: &Path) {
    let text = error.to_string();
    assert!(text.contains(&path.display().to_string()), "the error does not name {}: {text}", path.display());
}

/// A plugin's `plugin.toml`: parsed or refused naming the file; what parses keeps its paths inside the folder.
pub fn plugin_manifest(data: &[u8]) {
    with_file("plugin.toml", data, |dir, path| match PluginManifest::read(dir) {
        Ok(manifest) => {
            assert!(manifest.component_path.starts_with(dir), "{}", manifest.component_path.display());
            assert_eq!(manifest.dir, dir);
        }
        Err(error) => names(&error, path),
    })
}

/// An experience file (its action sets are files beside it, which the input cannot create: naming one is an
/// error naming a file too).
pub fn experience(data: &[u8]) {
    with_file("experience.toml", data, |dir, path| {
        match TOKIO.with(|tokio| tokio.block_on(ExperienceDefinition::load(path))) {
            Ok(definition) => {
                for file in definition.files() {
                    assert!(!file.starts_with('/') && !file.split('/').any(|step| step == ".."), "{file}");
                }
            }
            Err(error) => {
                assert!(error.path.starts_with(dir), "{}", error.path.display());
                names(&error, &error.path);
            }
        }
    })
}

/// A host configuration (`gfhost.toml`).
pub fn host_config(data: &[u8]) {
    with_file("gfhost.toml", data, |_, path| {
        if let Err(error) = HostConfig::from_file(path) {
            names(&error, path);
        }
    })
}

/// A package file, from anyone: refused or read; what is read packs again to the same bytes and digest.
pub fn package_archive(data: &[u8]) {
    let limits = PackageLimits { max_bytes: 1 << 20, max_files: 64 };
    if let Ok((package, signature)) = archive::read(data, limits) {
        let again = archive::write(&package, signature.as_ref());
        let (reread, resigned) = archive::read(again.as_slice(), limits).expect("a package written reads back");
        assert_eq!(reread.summary(), package.summary());
        assert_eq!(resigned, signature);
    }
}

/// A session recording, from a bug report: read from the file (with the recording's header put first when the
/// input starts with 0, so the records behind it are reached), it is refused naming the file, or read; what is
/// read writes out again to a recording that reads back the same.
pub fn recording(data: &[u8]) {
    use gamefeature_host::recording::{encode, header, Record, Recording};
    let bytes = match data.split_first() {
        Some((0, rest)) => [header().as_slice(), rest].concat(),
        _ => data.to_vec(),
    };
    with_file("session.gfrec", &bytes, |_, path| match Recording::read(path) {
        Ok(read) => {
            let mut again = header();
            again.extend(encode(&Record::Session(Box::new(read.session.clone()))));
            for record in read.records() {
                again.extend(encode(&record));
            }
            let reread = gamefeature_host::recording::parse(&again, "again").expect("a recording written reads");
            // Compared as shown: a NaN read (a chaos delay's) is the same NaN written, though NaN != NaN.
            let records = |r: &Recording| r.records().collect::<Vec<Record>>();
            assert_eq!(format!("{:?}", records(&reread)), format!("{:?}", records(&read)));
            assert_eq!(format!("{:?}", reread.session), format!("{:?}", read.session));
            assert_eq!(reread.truncated, None);
        }
        Err(error) => names(&error, path),
    })
}
