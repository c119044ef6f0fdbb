//! What a package holds, and the checks that make bytes from anywhere a package: every blob matches its
//! digest and size, every path stays inside the plugin's folder, and the manifest agrees with the files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path};

use oci_spec::image::{Descriptor, ImageManifest, MediaType};

use super::{
    canonical_json, sha256_digest, COMPONENT_MEDIA_TYPE, CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE,
    PLUGIN_FILE_MEDIA_TYPE, PLUGIN_MANIFEST_MEDIA_TYPE,
};
use crate::feature::{PluginManifest, MANIFEST_FILE};

/// The annotation naming a layer's path in the plugin folder (and a manifest's package name).
const TITLE: &str = "org.opencontainers.image.title";
/// The annotation giving a manifest's package version.
const VERSION: &str = "org.opencontainers.image.version";
/// The annotation giving a manifest's description.
const DESCRIPTION: &str = "org.opencontainers.image.description";

/// The largest package manifest accepted: it lists the files, nothing more.
const MAX_MANIFEST_BYTES: usize = 256 << 10;
/// The longest path of one file in a package.
const MAX_PATH: usize = 255;

/// How large a package may be: refused past these, before its bytes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackageLimits {
    /// All of its blobs together.
    pub max_bytes: u64,
    /// Files (layers) in it.
    pub max_files: usize,
}

impl Default for PackageLimits {
    /// A Python component is about 20 MB; bundles add their assets.
    fn default() -> Self {
        PackageLimits { max_bytes: crate::files::MAX_COMPONENT_BYTES, max_files: 4096 }
    }
}

/// Why bytes are not a package, or a folder cannot be packed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields: each variant's message says what they are
pub enum PackageError {
    /// The plugin folder could not be packed (its manifest, or a file it names).
    #[error("{0}")]
    Folder(String),
    /// The file is not an OCI image layout archive, or holds something else too.
    #[error("it is not a package archive: {0}")]
    Archive(String),
    /// The package manifest is not an OCI image manifest of SHA-256 digests.
    #[error("its manifest is malformed: {0}")]
    Manifest(String),
    /// Its blobs together are over [`PackageLimits::max_bytes`].
    #[error("it is {size} bytes, over the limit of {max}")]
    TooLarge { size: u64, max: u64 },
    /// It has more layers than [`PackageLimits::max_files`].
    #[error("it has {count} files, over the limit of {max}")]
    TooManyFiles { count: usize, max: usize },
    /// The manifest names a blob that is not there.
    #[error("blob {0} is missing")]
    MissingBlob(String),
    /// A blob's bytes are not those its digest and size name.
    #[error("blob {digest} does not match its digest or size (tampered with or truncated)")]
    BadBlob { digest: String },
    /// A file's path would leave the plugin folder, or is not plain text.
    #[error("file path {0:?} is not a plain relative path inside the plugin folder")]
    BadPath(String),
    /// Two layers are the same file.
    #[error("file {0:?} is in it twice")]
    DuplicateFile(String),
    /// A layer is neither the component, the plugin manifest nor a plugin file.
    #[error("layer of media type {0:?} is not part of a plugin package")]
    UnknownLayer(String),
    /// The plugin manifest in it is not valid.
    #[error("its plugin.toml {0}")]
    PluginManifest(String),
    /// The package manifest's name or version is not the plugin manifest's.
    #[error("its manifest names it {annotated:?} but its plugin.toml says {declared:?}")]
    Disagrees { annotated: String, declared: String },
    /// A file the plugin manifest does not declare.
    #[error("file {0:?} is not declared by its plugin.toml")]
    Undeclared(String),
    /// A file the plugin manifest declares is not in it.
    #[error("file {0:?}, which its plugin.toml declares, is missing")]
    Undelivered(String),
}

/// One file of a package: its path in the plugin folder and the digest of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PackageFile {
    path: String,
    digest: String,
}

/// A verified plugin package: its manifest, and every blob it names, each checked against its digest.
#[derive(Debug, Clone)]
pub struct Package {
    summary: PackageSummary,
    manifest: Vec<u8>,
    blobs: BTreeMap<String, Vec<u8>>,
    files: Vec<PackageFile>,
}

/// What identifies a package: the plugin's name and version, and the digest of the package's manifest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct PackageSummary {
    /// The plugin's name.
    pub name: String,
    /// The plugin's version.
    pub version: String,
    /// `sha256:<hex>` of the package's manifest.
    pub digest: String,
    /// The bytes of every blob and the manifest together.
    pub size: u64,
}

impl Package {
    /// Packs the plugin in `dir`: its `plugin.toml`, its component and the bundle files it declares.
    pub fn from_folder(dir: &Path) -> Result<Package, PackageError> {
        let plugin = PluginManifest::read(dir).map_err(|e| PackageError::Folder(e.to_string()))?;
        let mut files = vec![(MANIFEST_FILE.to_string(), PLUGIN_MANIFEST_MEDIA_TYPE)];
        let component = relative_to(dir, &plugin.component_path)?;
        files.push((component, COMPONENT_MEDIA_TYPE));
        for relative in plugin.bundles.values().flat_map(|bundle| bundle.values()) {
            let path = plain_path(relative).ok_or_else(|| PackageError::BadPath(relative.clone()))?;
            if !files.iter().any(|(known, _)| *known == path) {
                files.push((path, PLUGIN_FILE_MEDIA_TYPE));
            }
        }
        let mut blobs = BTreeMap::new();
        let mut layers = Vec::new();
        for (path, media_type) in &files {
            let max = crate::files::MAX_COMPONENT_BYTES;
            let bytes = crate::assets::read_within(dir, path, max)
                .map_err(|e| PackageError::Folder(format!("{}: {e}", dir.join(path).display())))?;
            let mut layer = descriptor(media_type, &bytes);
            layer.set_annotations(Some(HashMap::from([(TITLE.to_string(), path.clone())])));
            layers.push(layer);
            blobs.insert(sha256_digest(&bytes), bytes);
        }
        // The config the Wasm OCI artifact convention asks for: what the component targets, and its layers.
        let config = canonical_json(&serde_json::json!({
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": layers.iter().map(|l| l.digest().to_string()).collect::<Vec<_>>(),
            "component": { "target": format!("gamefeature:plugin/game-feature@{}", plugin.api) },
        }));
        let config_descriptor = descriptor(CONFIG_MEDIA_TYPE, &config);
        blobs.insert(sha256_digest(&config), config);
        let mut annotations =
            HashMap::from([(TITLE.to_string(), plugin.name.clone()), (VERSION.to_string(), plugin.version.clone())]);
        if !plugin.description.is_empty() {
            annotations.insert(DESCRIPTION.to_string(), plugin.description.clone());
        }
        let manifest = oci_spec::image::ImageManifestBuilder::default()
            .schema_version(2u32)
            .media_type(MediaType::ImageManifest)
            .config(config_descriptor)
            .layers(layers)
            .annotations(annotations)
            .build()
            .map_err(|e| PackageError::Manifest(e.to_string()))?;
        Package::from_parts(canonical_json(&manifest), blobs, PackageLimits::default())
    }

    /// A package from its manifest and the blobs it names (more blobs than it names are ignored), refused
    /// unless every check passes.
    pub fn from_parts(
        manifest_bytes: Vec<u8>,
        mut blobs: BTreeMap<String, Vec<u8>>,
        limits: PackageLimits,
    ) -> Result<Package, PackageError> {
        let manifest = parse_manifest(&manifest_bytes)?;
        let layers = manifest.layers();
        if layers.len() > limits.max_files {
            return Err(PackageError::TooManyFiles { count: layers.len(), max: limits.max_files });
        }
        // Sizes are the sender's word: summed without overflow (a layer of 2^64-1 bytes is only too large).
        let size = std::iter::once(manifest.config())
            .chain(layers)
            .fold(manifest_bytes.len() as u64, |total, descriptor| total.saturating_add(descriptor.size()));
        if size > limits.max_bytes {
            return Err(PackageError::TooLarge { size, max: limits.max_bytes });
        }
        let mut kept: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for descriptor in std::iter::once(manifest.config()).chain(layers) {
            let digest = descriptor.digest().to_string();
            if let Some(bytes) = kept.get(&digest) {
                // The same blob named twice must be named with its size both times: a size is counted in the
                // package's, and is not the sender's to make up.
                if bytes.len() as u64 != descriptor.size() {
                    return Err(PackageError::BadBlob { digest });
                }
                continue;
            }
            let bytes = blobs.remove(&digest).ok_or_else(|| PackageError::MissingBlob(digest.clone()))?;
            if bytes.len() as u64 != descriptor.size() || sha256_digest(&bytes) != digest {
                return Err(PackageError::BadBlob { digest });
            }
            kept.insert(digest, bytes);
        }
        if manifest.config().media_type().as_ref() != CONFIG_MEDIA_TYPE {
            return Err(PackageError::Manifest(format!("its config is not {CONFIG_MEDIA_TYPE}")));
        }
        let files = check_files(layers)?;
        let plugin_toml = (files.iter().find(|f| f.path == MANIFEST_FILE))
            .ok_or_else(|| PackageError::Undelivered(MANIFEST_FILE.to_string()))?;
        let text = std::str::from_utf8(&kept[&plugin_toml.digest])
            .map_err(|_| PackageError::PluginManifest("is not UTF-8 text".into()))?;
        // Parsed as if unpacked under a folder of its own: only relative paths matter here.
        let plugin =
            PluginManifest::parse(Path::new(""), text).map_err(|e| PackageError::PluginManifest(e.to_string()))?;
        let annotation = |key: &str| manifest.annotations().as_ref().and_then(|a| a.get(key)).cloned();
        for (annotated, declared) in [(annotation(TITLE), &plugin.name), (annotation(VERSION), &plugin.version)] {
            if annotated.as_ref() != Some(declared) {
                return Err(PackageError::Disagrees {
                    annotated: annotated.unwrap_or_default(),
                    declared: declared.clone(),
                });
            }
        }
        check_declared(&files, layers, &plugin)?;
        let summary =
            PackageSummary { name: plugin.name, version: plugin.version, digest: sha256_digest(&manifest_bytes), size };
        Ok(Package { summary, manifest: manifest_bytes, blobs: kept, files })
    }

    /// Name, version, digest and size.
    pub fn summary(&self) -> &PackageSummary {
        &self.summary
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.summary.name
    }

    /// The plugin's version.
    pub fn version(&self) -> &str {
        &self.summary.version
    }

    /// `sha256:<hex>` of the manifest: the package's identity.
    pub fn digest(&self) -> &str {
        &self.summary.digest
    }

    /// The manifest's bytes, exactly as digested.
    pub fn manifest_bytes(&self) -> &[u8] {
        &self.manifest
    }

    /// Every blob (the config and each file), by digest.
    pub fn blobs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.blobs.iter().map(|(digest, bytes)| (digest.as_str(), bytes.as_slice()))
    }

    /// Every file, by its path in the plugin folder.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|file| (file.path.as_str(), self.blobs[&file.digest].as_slice()))
    }
}

fn descriptor(media_type: &str, bytes: &[u8]) -> Descriptor {
    let digest =
        oci_spec::image::Digest::try_from(sha256_digest(bytes)).expect("a SHA-256 digest is a valid OCI digest");
    Descriptor::new(MediaType::from(media_type), bytes.len() as u64, digest)
}

/// Reads a package manifest: an OCI image manifest, schema 2, every digest SHA-256.
fn parse_manifest(bytes: &[u8]) -> Result<ImageManifest, PackageError> {
    if bytes.len() > MAX_MANIFEST_BYTES {
        return Err(PackageError::Manifest(format!("it is over {MAX_MANIFEST_BYTES} bytes")));
    }
    let manifest: ImageManifest = serde_json::from_slice(bytes).map_err(|e| PackageError::Manifest(e.to_string()))?;
    if manifest.schema_version() != 2 {
        return Err(PackageError::Manifest(format!("schema version {} is not 2", manifest.schema_version())));
    }
    if manifest.media_type().as_ref().is_some_and(|m| m.as_ref() != MANIFEST_MEDIA_TYPE) {
        return Err(PackageError::Manifest(format!("it is not an OCI image manifest ({MANIFEST_MEDIA_TYPE})")));
    }
    let all = std::iter::once(manifest.config()).chain(manifest.layers());
    if let Some(other) = all.clone().find(|d| d.as_digest_sha256().is_none()) {
        return Err(PackageError::Manifest(format!("digest {} is not SHA-256", other.digest())));
    }
    Ok(manifest)
}

/// The files the layers hold: each layer a known media type with a plain, unique path.
fn check_files(layers: &[Descriptor]) -> Result<Vec<PackageFile>, PackageError> {
    let mut seen = BTreeSet::new();
    let mut files = Vec::with_capacity(layers.len());
    for layer in layers {
        let media_type = layer.media_type().as_ref();
        if ![COMPONENT_MEDIA_TYPE, PLUGIN_MANIFEST_MEDIA_TYPE, PLUGIN_FILE_MEDIA_TYPE].contains(&media_type) {
            return Err(PackageError::UnknownLayer(media_type.to_string()));
        }
        let title = layer.annotations().as_ref().and_then(|a| a.get(TITLE)).cloned().unwrap_or_default();
        let path = plain_path(&title).ok_or_else(|| PackageError::BadPath(title.clone()))?;
        if path != title || path == super::install::PROVENANCE_FILE {
            return Err(PackageError::BadPath(title));
        }
        if !seen.insert(path.clone()) {
            return Err(PackageError::DuplicateFile(path));
        }
        let is_manifest = path == MANIFEST_FILE;
        if is_manifest != (media_type == PLUGIN_MANIFEST_MEDIA_TYPE) {
            return Err(PackageError::BadPath(path));
        }
        files.push(PackageFile { path, digest: layer.digest().to_string() });
    }
    Ok(files)
}

/// Every file is one the plugin's manifest declares, and every file it declares is there: exactly one
/// component layer, at the path the manifest names.
fn check_declared(files: &[PackageFile], layers: &[Descriptor], plugin: &PluginManifest) -> Result<(), PackageError> {
    let component = relative_to(Path::new(""), &plugin.component_path)?;
    let mut declared: BTreeSet<String> = BTreeSet::from([MANIFEST_FILE.to_string(), component.clone()]);
    for relative in plugin.bundles.values().flat_map(|bundle| bundle.values()) {
        declared.insert(plain_path(relative).ok_or_else(|| PackageError::BadPath(relative.clone()))?);
    }
    for (file, layer) in files.iter().zip(layers) {
        if !declared.contains(&file.path) {
            return Err(PackageError::Undeclared(file.path.clone()));
        }
        let is_component = layer.media_type().as_ref() == COMPONENT_MEDIA_TYPE;
        if is_component != (file.path == component) {
            let what = if is_component {
                "is a component but not the one plugin.toml names"
            } else {
                "is not the component layer"
            };
            return Err(PackageError::PluginManifest(format!(
                "names component {component:?}, but {:?} {what}",
                file.path
            )));
        }
    }
    if let Some(missing) = declared.iter().find(|path| !files.iter().any(|f| &f.path == *path)) {
        return Err(PackageError::Undelivered(missing.clone()));
    }
    Ok(())
}

/// `relative` as a package path (`a/b.txt`, no `.` or `..` steps, no empty steps), or `None` if it is not a
/// plain relative path of printable text.
fn plain_path(relative: &str) -> Option<String> {
    if relative.is_empty()
        || relative.len() > MAX_PATH
        || !crate::text::is_printable(relative)
        || relative.contains('\\')
    {
        return None;
    }
    let mut steps = Vec::new();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(step) => steps.push(step.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!steps.is_empty()).then(|| steps.join("/"))
}

/// `path` (a file of a plugin folder `dir`) as a package path.
fn relative_to(dir: &Path, path: &Path) -> Result<String, PackageError> {
    let shown = || PackageError::BadPath(path.display().to_string());
    let relative = path.strip_prefix(dir).map_err(|_| shown())?;
    plain_path(relative.to_str().ok_or_else(shown)?).ok_or_else(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_plain_relative_steps() {
        assert_eq!(plain_path("./a//b.txt").as_deref(), Some("a/b.txt"));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a\\..\\x", "a\nb", "."] {
            assert_eq!(plain_path(bad), None, "{bad:?}");
        }
    }
}
