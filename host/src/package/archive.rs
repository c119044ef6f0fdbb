//! A package as one file: an OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/…`) in a tar archive,
//! the `oci-archive` form skopeo and podman read and write. The index carries the publisher's signature as an
//! annotation of the manifest's entry, beside the manifest rather than in it.
//!
//! Reading trusts nothing in the file: entries other than those three kinds, links, duplicates and sizes past
//! the limits are refused before their bytes are kept, and the package is then checked as any other.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use oci_spec::image::{Descriptor, ImageIndex, MediaType};

use super::{canonical_json, sha256_digest, Package, PackageError, PackageLimits, Signature};

/// The annotation of the manifest's index entry holding the signature (JSON).
const SIGNATURE: &str = "dev.gamefeature.signature";
/// The annotation naming the manifest's entry, as the layout spec suggests (the version).
const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// The largest `index.json` or `oci-layout` accepted.
const MAX_METADATA_BYTES: u64 = 64 << 10;

/// The file extension `gfhost pack` gives packages.
pub const EXTENSION: &str = "gfpkg";

/// `package` (with `signature`, if signed) as the bytes of an archive. The same package and signature always
/// give the same bytes.
pub fn write(package: &Package, signature: Option<&Signature>) -> Vec<u8> {
    let mut manifest = Descriptor::new(
        MediaType::ImageManifest,
        package.manifest_bytes().len() as u64,
        oci_spec::image::Digest::try_from(package.digest()).expect("a package digest is a valid OCI digest"),
    );
    let mut annotations = HashMap::from([(REF_NAME.to_string(), package.version().to_string())]);
    if let Some(signature) = signature {
        let text = serde_json::to_string(signature).expect("a signature always serializes");
        annotations.insert(SIGNATURE.to_string(), text);
    }
    manifest.set_annotations(Some(annotations));
    let index = oci_spec::image::ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(vec![manifest])
        .build()
        .expect("an index with its required fields always builds");
    let mut entries: BTreeMap<String, &[u8]> = BTreeMap::new();
    let manifest_path = blob_path(package.digest());
    entries.insert(manifest_path, package.manifest_bytes());
    for (digest, bytes) in package.blobs() {
        entries.insert(blob_path(digest), bytes);
    }
    let index = canonical_json(&index);
    let layout = br#"{"imageLayoutVersion":"1.0.0"}"#;
    let mut archive = tar::Builder::new(Vec::new());
    for (path, bytes) in std::iter::once(("oci-layout", &layout[..]))
        .chain(std::iter::once(("index.json", index.as_slice())))
        .chain(entries.iter().map(|(path, bytes)| (path.as_str(), *bytes)))
    {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        archive.append_data(&mut header, path, bytes).expect("writing to memory cannot fail");
    }
    archive.into_inner().expect("writing to memory cannot fail")
}

/// Reads an archive: the package it holds and its signature (if signed), each blob checked against its digest.
pub fn read(reader: impl Read, limits: PackageLimits) -> Result<(Package, Option<Signature>), PackageError> {
    // Entry names are the sender's: every message quoting one is shown as data, not as terminal controls.
    let bad = |why: String| PackageError::Archive(crate::text::shown(&why, crate::text::MAX_CAUSE));
    let mut archive = tar::Archive::new(reader);
    let mut layout = None;
    let mut index = None;
    let mut blobs = BTreeMap::new();
    let mut total = 0u64;
    let budget = limits.max_bytes.saturating_add(2 * MAX_METADATA_BYTES);
    for entry in archive.entries().map_err(|e| bad(format!("not a tar archive: {e}")))? {
        let entry = entry.map_err(|e| bad(format!("truncated or not a tar archive: {e}")))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(bad("it holds something other than regular files (a link or a folder)".into()));
        }
        let path = entry.path().map_err(|_| bad("an entry's path is not text".into()))?;
        let path = path.to_str().ok_or_else(|| bad("an entry's path is not text".into()))?.to_string();
        let size = entry.size();
        total = total.saturating_add(size);
        if total > budget {
            return Err(PackageError::TooLarge { size: total, max: limits.max_bytes });
        }
        let read_all = |max: u64| -> Result<Vec<u8>, PackageError> {
            if size > max {
                return Err(PackageError::TooLarge { size, max });
            }
            // The header's size is the sender's word: reserved only up to a MiB, the rest as bytes arrive.
            let mut bytes = Vec::with_capacity(size.min(1 << 20) as usize);
            entry.take(max).read_to_end(&mut bytes).map_err(|e| bad(format!("{path} is truncated: {e}")))?;
            if bytes.len() as u64 != size {
                return Err(bad(format!("{path} is truncated")));
            }
            Ok(bytes)
        };
        let slot = match path.as_str() {
            "oci-layout" => &mut layout,
            "index.json" => &mut index,
            _ => {
                let digest = blob_digest(&path).ok_or_else(|| bad(format!("unexpected entry {path:?}")))?;
                if blobs.contains_key(&digest) {
                    return Err(bad(format!("{path} is in it twice")));
                }
                let bytes = read_all(limits.max_bytes)?;
                blobs.insert(digest, bytes);
                continue;
            }
        };
        if slot.is_some() {
            return Err(bad(format!("{path} is in it twice")));
        }
        *slot = Some(read_all(MAX_METADATA_BYTES)?);
    }
    let layout = layout.ok_or_else(|| bad("it has no oci-layout: not an OCI image layout".into()))?;
    let version: serde_json::Value =
        serde_json::from_slice(&layout).map_err(|_| bad("oci-layout is not JSON".into()))?;
    if version.get("imageLayoutVersion").and_then(|v| v.as_str()) != Some("1.0.0") {
        return Err(bad("oci-layout is not image layout version 1.0.0".into()));
    }
    let index = index.ok_or_else(|| bad("it has no index.json".into()))?;
    let index: ImageIndex = serde_json::from_slice(&index).map_err(|e| bad(format!("index.json is malformed: {e}")))?;
    let [manifest] = index.manifests().as_slice() else {
        return Err(bad(format!("index.json lists {} manifests; a package has one", index.manifests().len())));
    };
    let digest = manifest.digest().to_string();
    let manifest_bytes = blobs.remove(&digest).ok_or_else(|| PackageError::MissingBlob(digest.clone()))?;
    if sha256_digest(&manifest_bytes) != digest || manifest_bytes.len() as u64 != manifest.size() {
        return Err(PackageError::BadBlob { digest });
    }
    let signature = match manifest.annotations().as_ref().and_then(|a| a.get(SIGNATURE)) {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| bad(format!("its signature is malformed: {e}")))?),
        None => None,
    };
    let package = Package::from_parts(manifest_bytes, blobs, limits)?;
    Ok((package, signature))
}

/// Where a blob lives in an image layout.
fn blob_path(digest: &str) -> String {
    format!("blobs/{}", digest.replacen(':', "/", 1))
}

/// The digest of the blob at `path`, if it is a SHA-256 blob's path.
fn blob_digest(path: &str) -> Option<String> {
    let hex = path.strip_prefix("blobs/sha256/")?;
    let plain = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    plain.then(|| format!("sha256:{hex}"))
}
