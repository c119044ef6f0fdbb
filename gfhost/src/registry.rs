//! Plugin packages in an OCI registry (oci-client): `gfhost publish` pushes a package as
//! `REGISTRY/NAMESPACE/NAME:VERSION`, byte for byte, so its digest is the same everywhere; `gfhost install
//! NAME@RANGE` picks the newest version tag in the range and pulls it, each blob checked against its digest.
//!
//! A signature travels as an artifact of its own tagged `sha256-<hex>.sig` beside the package (cosign's tag
//! convention, which registries without the OCI 1.1 referrers API, such as distribution 2.8, serve), with the
//! package's manifest as its `subject`.
//!
//! A yank travels the same way: an artifact tagged `VERSION.yanked` whose annotations say whether the version
//! is withdrawn and why. Undoing a yank re-points the tag at an artifact saying it is not, so no registry needs
//! to allow deletes. Requests carry the credentials [`crate::credentials`] finds for the registry.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::StreamExt;
use gamefeature_host::package::resolve::Candidate;
use gamefeature_host::package::{Package, PackageLimits, Signature, MANIFEST_MEDIA_TYPE, PLUGIN_MANIFEST_MEDIA_TYPE};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

/// The media type of a signature artifact and of its one layer.
const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.gamefeature.signature.v1+json";
/// The OCI empty config (`{}`), for artifacts with nothing to configure.
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The artifact type of a yank record.
const YANK_MEDIA_TYPE: &str = "application/vnd.gamefeature.yank.v1";
/// The annotation saying whether a yank record withdraws its version (`true`) or undoes that (`false`).
const YANKED_ANNOTATION: &str = "org.gamefeature.yanked";
/// The annotation giving the publisher's reason for a yank.
const REASON_ANNOTATION: &str = "org.gamefeature.yank-reason";
/// The suffix of the tag of a version's yank record.
const YANK_TAG_SUFFIX: &str = ".yanked";

/// A registry and namespace: `host[:port]/namespace`.
pub struct Registry {
    client: Client,
    registry: String,
    namespace: String,
    auth: RegistryAuth,
}

/// A version its publisher withdrew, and why.
pub struct Yank {
    pub version: semver::Version,
    pub reason: Option<String>,
}

impl Registry {
    /// The registry at `location` (`host[:port]/namespace`). Registries on this machine (`localhost`,
    /// `127.0.0.1`, `[::1]`) are spoken to over plain HTTP, every other over HTTPS.
    pub fn new(location: &str) -> Result<Registry> {
        let (registry, namespace) = location
            .split_once('/')
            .filter(|(registry, namespace)| !registry.is_empty() && !namespace.is_empty())
            .ok_or_else(|| {
                anyhow!("registry {location:?}: expected host[:port]/namespace, e.g. 127.0.0.1:5000/studio")
            })?;
        // reqwest is built without a TLS provider of its own: the one the host already uses serves it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let host = registry.rsplit_once(':').map_or(registry, |(host, _)| host);
        let local = ["localhost", "127.0.0.1", "[::1]"].contains(&host);
        let protocol = if local { ClientProtocol::Http } else { ClientProtocol::Https };
        let client = Client::new(ClientConfig { protocol, ..ClientConfig::default() });
        let auth = crate::credentials::for_registry(registry)?;
        Ok(Registry { client, registry: registry.to_string(), namespace: namespace.to_string(), auth })
    }

    /// `host[:port]/namespace`, as lock files record it.
    pub fn location(&self) -> String {
        format!("{}/{}", self.registry, self.namespace)
    }

    fn reference(&self, name: &str, tag: &str) -> Reference {
        Reference::with_tag(self.registry.clone(), format!("{}/{name}", self.namespace), tag.to_string())
    }

    fn by_digest(&self, name: &str, digest: &str) -> Reference {
        Reference::with_digest(self.registry.clone(), format!("{}/{name}", self.namespace), digest.to_string())
    }

    /// Pushes `package` (and its signature) under its version's tag.
    pub async fn publish(&self, package: &Package, signature: Option<&Signature>) -> Result<String> {
        let reference = self.reference(package.name(), package.version());
        self.log_in_to_push(&reference).await?;
        for (digest, bytes) in package.blobs() {
            self.client
                .push_blob(&reference, bytes.to_vec(), digest)
                .await
                .with_context(|| format!("pushing blob {digest} to {}", self.location()))?;
        }
        let content_type = MANIFEST_MEDIA_TYPE.parse().expect("a media type is a header value");
        let url = self
            .client
            .push_manifest_raw(&reference, package.manifest_bytes().to_vec(), content_type)
            .await
            .with_context(|| format!("pushing the manifest of {} {}", package.name(), package.version()))?;
        if let Some(signature) = signature {
            self.publish_signature(package, signature).await?;
        }
        Ok(url)
    }

    async fn publish_signature(&self, package: &Package, signature: &Signature) -> Result<()> {
        let tag = signature_tag(package.digest());
        let reference = self.reference(package.name(), &tag);
        let layer = serde_json::to_vec(signature).expect("a signature always serializes");
        let layer_digest = gamefeature_host::package::sha256_digest(&layer);
        let empty = b"{}".to_vec();
        let empty_digest = gamefeature_host::package::sha256_digest(&empty);
        for (bytes, digest) in [(layer.clone(), &layer_digest), (empty, &empty_digest)] {
            self.client.push_blob(&reference, bytes, digest).await.context("pushing the signature")?;
        }
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": SIGNATURE_MEDIA_TYPE,
            "config": { "mediaType": EMPTY_MEDIA_TYPE, "digest": empty_digest, "size": 2 },
            "layers": [{ "mediaType": SIGNATURE_MEDIA_TYPE, "digest": layer_digest, "size": layer.len() }],
            "subject": {
                "mediaType": MANIFEST_MEDIA_TYPE,
                "digest": package.digest(),
                "size": package.manifest_bytes().len(),
            },
        });
        let content_type = MANIFEST_MEDIA_TYPE.parse().expect("a media type is a header value");
        self.client
            .push_manifest_raw(&reference, serde_json::to_vec(&manifest)?, content_type)
            .await
            .context("pushing the signature's manifest")?;
        Ok(())
    }

    /// Logs in (with the credentials found for the registry) for pushes to `reference`'s repository.
    async fn log_in_to_push(&self, reference: &Reference) -> Result<()> {
        self.client
            .auth(reference, &self.auth, RegistryOperation::Push)
            .await
            .with_context(|| format!("logging in to {} to push", self.registry))?;
        Ok(())
    }

    /// Withdraws `name` at `version` from resolution (or, with `undo`, puts it back), with a reason.
    pub async fn yank(&self, name: &str, version: &str, reason: Option<&str>, undo: bool) -> Result<()> {
        let package = self.reference(name, version);
        let (manifest, _) = self
            .client
            .pull_manifest_raw(&package, &self.auth, &[MANIFEST_MEDIA_TYPE])
            .await
            .with_context(|| format!("{name} {version} is not in {}", self.location()))?;
        let reference = self.reference(name, &format!("{version}{YANK_TAG_SUFFIX}"));
        self.log_in_to_push(&reference).await?;
        let empty = b"{}".to_vec();
        let empty_digest = gamefeature_host::package::sha256_digest(&empty);
        self.client.push_blob(&reference, empty, &empty_digest).await.context("pushing the yank record")?;
        let empty_descriptor = serde_json::json!({ "mediaType": EMPTY_MEDIA_TYPE, "digest": empty_digest, "size": 2 });
        let record = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": YANK_MEDIA_TYPE,
            "config": empty_descriptor,
            "layers": [empty_descriptor],
            "subject": {
                "mediaType": MANIFEST_MEDIA_TYPE,
                "digest": gamefeature_host::package::sha256_digest(&manifest),
                "size": manifest.len(),
            },
            "annotations": {
                YANKED_ANNOTATION: (!undo).to_string(),
                REASON_ANNOTATION: reason.unwrap_or(""),
            },
        });
        let content_type = MANIFEST_MEDIA_TYPE.parse().expect("a media type is a header value");
        self.client
            .push_manifest_raw(&reference, serde_json::to_vec(&record)?, content_type)
            .await
            .context("pushing the yank record")?;
        Ok(())
    }

    /// The versions of `name` its publisher yanked, with their reasons.
    pub async fn yanked(&self, name: &str) -> Result<Vec<Yank>> {
        let mut yanked = Vec::new();
        for tag in self.tags(name).await? {
            let Some(version) = tag.strip_suffix(YANK_TAG_SUFFIX).and_then(|v| v.parse().ok()) else { continue };
            let reference = self.reference(name, &tag);
            let (manifest, _) = self
                .client
                .pull_manifest_raw(&reference, &self.auth, &[MANIFEST_MEDIA_TYPE])
                .await
                .with_context(|| format!("reading whether {name} {version} is yanked"))?;
            let record: serde_json::Value = serde_json::from_slice(&manifest).context("a malformed yank record")?;
            let annotations = &record["annotations"];
            if annotations[YANKED_ANNOTATION].as_str() == Some("true") {
                let reason = annotations[REASON_ANNOTATION].as_str().filter(|r| !r.is_empty()).map(str::to_string);
                yanked.push(Yank { version, reason });
            }
        }
        Ok(yanked)
    }

    /// The plugins of this namespace the registry holds, by name.
    pub async fn plugins(&self) -> Result<Vec<String>> {
        let reference = self.reference("catalog", "latest");
        let prefix = format!("{}/", self.namespace);
        let mut names = Vec::new();
        let mut last: Option<String> = None;
        // Pages of a thousand, as registries serve them; bounded, so that a registry paging forever ends.
        for _ in 0..1000 {
            let page = self
                .client
                .catalog(&reference, &self.auth, Some(1000), last.as_deref())
                .await
                .with_context(|| format!("listing the plugins of {}", self.location()))?;
            let count = page.repositories.len();
            last = page.repositories.last().cloned();
            names.extend(page.repositories.into_iter().filter_map(|r| r.strip_prefix(&prefix).map(str::to_string)));
            if count < 1000 {
                break;
            }
        }
        names.retain(|name| !name.contains('/'));
        Ok(names)
    }

    /// Every tag of `name`.
    async fn tags(&self, name: &str) -> Result<Vec<String>> {
        let reference = self.reference(name, "latest");
        let tags = self
            .client
            .list_tags(&reference, &self.auth, None, None)
            .await
            .with_context(|| format!("{name} is not in {}", self.location()))?;
        Ok(tags.tags)
    }

    /// The versions of `name` the registry holds, oldest first.
    pub async fn versions(&self, name: &str) -> Result<Vec<semver::Version>> {
        let mut versions: Vec<semver::Version> = self.tags(name).await?.iter().filter_map(|t| t.parse().ok()).collect();
        versions.sort();
        Ok(versions)
    }

    /// What resolution needs of `name` at `version`: its package's digest, its API and its dependencies, read
    /// from its image manifest and its `plugin.toml` alone (checked against their digests), not its component.
    /// A tag that holds another plugin or another version than its own is refused, as [`pull`](Self::pull)
    /// refuses it.
    pub async fn candidate(&self, name: &str, version: &str) -> Result<Candidate> {
        let (digest, facts) = self.published(name, version).await?;
        let mut dependencies = Vec::with_capacity(facts.dependencies.len());
        for dependency in facts.dependencies {
            dependencies.push((dependency.name, dependency.version.unwrap_or(semver::VersionReq::STAR)));
        }
        Ok(Candidate { digest, api: facts.plugin.api, host: facts.plugin.host, dependencies })
    }

    /// What `name` at `version` says it does (`plugin.description`), for listings.
    pub async fn description(&self, name: &str, version: &str) -> Result<String> {
        Ok(self.published(name, version).await?.1.plugin.description)
    }

    /// The digest of `name` at `version` and its `plugin.toml`'s facts.
    async fn published(&self, name: &str, version: &str) -> Result<(String, PublishedFacts)> {
        let reference = self.reference(name, version);
        let (manifest, _) = self
            .client
            .pull_manifest_raw(&reference, &self.auth, &[MANIFEST_MEDIA_TYPE])
            .await
            .with_context(|| format!("{name} {version} is not in {}", self.location()))?;
        let digest = gamefeature_host::package::sha256_digest(&manifest);
        let parsed: serde_json::Value = serde_json::from_slice(&manifest).context("its manifest is not JSON")?;
        let layers = parsed["layers"].as_array().into_iter().flatten();
        let Some(layer) = layers.into_iter().find(|l| l["mediaType"].as_str() == Some(PLUGIN_MANIFEST_MEDIA_TYPE))
        else {
            bail!("{name} {version} in {} has no plugin.toml", self.location());
        };
        let (Some(layer_digest), Some(size)) = (layer["digest"].as_str(), layer["size"].as_u64()) else {
            bail!("{name} {version}: its manifest names a blob without a digest or size");
        };
        if size > 256 << 10 {
            bail!("{name} {version}: a plugin.toml of {size} bytes");
        }
        let bytes = self.pull_blob(&reference, layer_digest, size).await?;
        if gamefeature_host::package::sha256_digest(&bytes) != layer_digest {
            bail!("{name} {version}: its plugin.toml does not match its digest");
        }
        let text =
            String::from_utf8(bytes).with_context(|| format!("{name} {version}: its plugin.toml is not UTF-8"))?;
        let facts = PublishedFacts::read(&text).with_context(|| format!("{name} {version}: its plugin.toml"))?;
        if facts.plugin.name != name || facts.plugin.version != version {
            bail!(
                "{} refused: the tag {name}:{version} holds {} {}, not version {version}",
                self.location(),
                facts.plugin.name,
                facts.plugin.version
            );
        }
        Ok((digest, facts))
    }

    /// Pulls `name` at `version` (or, with `digest`, exactly that package), each blob checked against its
    /// digest, with its signature if it has one.
    pub async fn pull(&self, name: &str, version: &str, digest: Option<&str>) -> Result<(Package, Option<Signature>)> {
        let reference = match digest {
            Some(digest) => self.by_digest(name, digest),
            None => self.reference(name, version),
        };
        let (manifest, _) = self
            .client
            .pull_manifest_raw(&reference, &self.auth, &[MANIFEST_MEDIA_TYPE])
            .await
            .with_context(|| format!("{name} {version} is not in {}", self.location()))?;
        let limits = PackageLimits::default();
        let parsed: serde_json::Value = serde_json::from_slice(&manifest).context("its manifest is not JSON")?;
        let descriptors = std::iter::once(&parsed["config"]).chain(parsed["layers"].as_array().into_iter().flatten());
        let mut blobs = BTreeMap::new();
        let mut total = 0u64;
        for descriptor in descriptors {
            let (Some(digest), Some(size)) = (descriptor["digest"].as_str(), descriptor["size"].as_u64()) else {
                bail!("{name} {version}: its manifest names a blob without a digest or size");
            };
            total = total.saturating_add(size);
            if total > limits.max_bytes {
                bail!("{name} {version} is over {} bytes", limits.max_bytes);
            }
            let bytes = self.pull_blob(&reference, digest, size).await?;
            blobs.insert(digest.to_string(), bytes);
        }
        let package = Package::from_parts(manifest.to_vec(), blobs, limits)
            .with_context(|| format!("{name} {version} from {} refused", self.location()))?;
        if package.name() != name {
            bail!("{} refused: {name} {version} holds plugin {:?}", self.location(), package.name());
        }
        // A tag is the registry's word, the package's own version is its publisher's (and signed): a tag
        // re-pointed at another version (an older one, to downgrade its users) is refused.
        if package.version() != version {
            bail!(
                "{} refused: the tag {name}:{version} holds {name} {} ({}), not version {version}",
                self.location(),
                package.version(),
                package.digest()
            );
        }
        let signature = self.pull_signature(&package).await?;
        Ok((package, signature))
    }

    /// A blob, read up to its declared size (more is refused rather than read).
    async fn pull_blob(&self, reference: &Reference, digest: &str, size: u64) -> Result<Vec<u8>> {
        let refused = || format!("blob {digest} from {} refused", self.location());
        let mut stream = self.client.pull_blob_stream(reference, digest).await.with_context(refused)?;
        let mut bytes = Vec::with_capacity(size.min(1 << 24) as usize);
        while let Some(chunk) = stream.stream.next().await {
            let chunk = chunk.with_context(refused)?;
            if bytes.len() as u64 + chunk.len() as u64 > size {
                bail!("{}: it is larger than its manifest says ({size} bytes)", refused());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// The signature published beside `package`, if there is one.
    async fn pull_signature(&self, package: &Package) -> Result<Option<Signature>> {
        let reference = self.reference(package.name(), &signature_tag(package.digest()));
        let Ok((manifest, _)) = self.client.pull_manifest_raw(&reference, &self.auth, &[MANIFEST_MEDIA_TYPE]).await
        else {
            return Ok(None);
        };
        let manifest: serde_json::Value = serde_json::from_slice(&manifest).context("a malformed signature")?;
        let layer = &manifest["layers"][0];
        let (Some(digest), Some(size)) = (layer["digest"].as_str(), layer["size"].as_u64()) else {
            bail!("{} {}: a malformed signature artifact", package.name(), package.version());
        };
        if size > 64 << 10 {
            bail!("{} {}: a signature of {size} bytes", package.name(), package.version());
        }
        let bytes = self.pull_blob(&reference, digest, size).await?;
        if gamefeature_host::package::sha256_digest(&bytes) != digest {
            bail!("{} {}: its signature blob does not match its digest", package.name(), package.version());
        }
        Ok(Some(serde_json::from_slice(&bytes).context("a malformed signature")?))
    }
}

/// What resolution reads of a published `plugin.toml`: its name, version and API, and its dependencies with
/// their ranges — leniently, so that a manifest of a newer format (or for another API) is still described and
/// passed over, rather than failing the resolution. The whole manifest is checked when the package is pulled.
#[derive(serde::Deserialize)]
struct PublishedFacts {
    plugin: PublishedPlugin,
    #[serde(default)]
    dependencies: Vec<PublishedDependency>,
}

#[derive(serde::Deserialize)]
struct PublishedPlugin {
    name: String,
    version: String,
    api: String,
    #[serde(default)]
    host: Option<semver::VersionReq>,
    #[serde(default)]
    description: String,
}

#[derive(serde::Deserialize)]
struct PublishedDependency {
    name: String,
    #[serde(default)]
    version: Option<semver::VersionReq>,
}

impl PublishedFacts {
    fn read(text: &str) -> Result<PublishedFacts> {
        Ok(toml::from_str(text)?)
    }
}

/// The tag a package's signature is published under (cosign's convention).
fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}
