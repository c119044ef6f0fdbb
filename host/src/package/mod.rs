//! Plugin packages: a plugin folder as one file that can travel — to a registry, to another server, to a
//! player joining a modded game — named by its content and signed by its publisher.
//!
//! A package is a Wasm component OCI artifact, as `wasm-pkg-tools` and OCI registries know them: an image
//! manifest (`application/vnd.oci.image.manifest.v1+json`) whose config is `application/vnd.wasm.config.v0+json`
//! and whose first layer is the component (`application/wasm`). A plugin is more than its component, so the
//! manifest (`plugin.toml`) and the bundle files it declares are further layers of their own media types, each
//! titled with its path in the folder (`org.opencontainers.image.title`). Only those files travel: a folder's
//! sources, build outputs and data do not.
//!
//! - **Identity**: the package's digest is the SHA-256 of its manifest, which names every layer by digest. The
//!   same folder always packs to the same bytes (JSON keys sorted, no timestamps), so a folder installed from
//!   a package can be checked against it later, and two machines agree on what "the same version" is.
//! - **Signatures** ([`signing`]): an ed25519 publisher key signs the name, version and digest. The signature
//!   travels beside the manifest (in an archive's index, as a registry tag of its own, in a join offer), not
//!   inside it, so signing does not change what is signed.
//! - **Trust** ([`trust`]): a host lists the publishers it trusts and, per publisher, the most its plugins may be
//!   granted. Packages that are unsigned or signed by anyone else are refused unless unsigned packages are
//!   explicitly allowed (for development).
//! - **Files** ([`archive`]): one package on disk is an OCI image layout in a tar archive (`oci-archive`, as
//!   skopeo and podman write them), so standard tools read it.
//! - **Admitting** ([`gate`]): the checks every plugin folder passes on its way into a process, at start and
//!   on every later path (a reload, `install DIR`, a fetched update), as the feature subsystem's gate.
//! - **Installing** ([`install`]): into a temporary folder beside the target, renamed into place, with a record
//!   of where it came from (`.gfpackage.json`) that loading checks again; a set of packages all or none.
//! - **Resolving** ([`resolve`], [`lock`], [`changes`]): plugins asked for with their dependencies, resolved
//!   into one set of versions, locked by digest, and what a new resolution changes.

pub mod archive;
pub mod changes;
mod contents;
pub mod gate;
pub mod install;
pub mod lock;
pub mod resolve;
pub mod signing;
pub mod trust;

#[cfg(test)]
mod tests;

pub use contents::{Package, PackageError, PackageLimits, PackageSummary};
pub use signing::{PublisherKey, SecretKey, Signature, SignatureError};
pub use trust::{FetchPolicy, TrustError, TrustPolicy, TrustedPublisher, Verdict};

/// The media type of a package's manifest (an OCI image manifest).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The media type of a Wasm component artifact's config.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The media type of the component layer.
pub const COMPONENT_MEDIA_TYPE: &str = "application/wasm";
/// The media type of the layer holding the plugin's manifest.
pub const PLUGIN_MANIFEST_MEDIA_TYPE: &str = "application/vnd.gamefeature.plugin.manifest.v1+toml";
/// The media type of the layers holding the bundle files the plugin's manifest declares.
pub const PLUGIN_FILE_MEDIA_TYPE: &str = "application/vnd.gamefeature.plugin.file.v1";

/// `"sha256:<hex>"`: how OCI names content.
pub fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// JSON with its object keys sorted, so the same value is always the same bytes (and the same digest).
fn canonical_json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let value = sorted(serde_json::to_value(value).expect("package metadata always serializes"));
    serde_json::to_vec(&value).expect("a JSON value always serializes")
}

/// `value` with every object's keys in order. (oci-spec keeps annotations in `HashMap`s, and serde_json keeps
/// insertion order wherever another crate turns on its `preserve_order` feature.)
fn sorted(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key, sorted(value))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
