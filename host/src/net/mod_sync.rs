//! Mod sync on join: a client plays the server's experience without having installed it.
//!
//! The server tells each client what its experience is made of ([`ExperienceContent`]): the experience's
//! files, and a package of every plugin it plays (name, version, digest, signature, size). A client uses its
//! own copy of a plugin where it packs to the same digest, a copy it fetched before (cached by digest) where it
//! has one, and fetches the rest over the game connection — on the bulk channel, a chunk at a time with a few
//! chunks in flight, so the server holds at most [`WINDOW`] chunks per client and gameplay traffic goes first.
//!
//! The client decides what it runs ([`ModSync`]): it fetches only what its policy allows (publishers it trusts,
//! anyone, or nothing), checks each package's signature before asking for a byte, and each archive against the
//! offered digest when it arrives; fetched plugins get at most the permissions it chooses (nothing beyond the
//! sandbox by default). What it refuses is named in its error, and in the reason its connection closes with.
//!
//! Before a byte is fetched the client also refuses a plugin it could not run (built for a plugin API or host
//! versions it does not implement) or one that needs a plugin the server does not offer, and asks its
//! [`ConsentHook`] (see [`super::consent`]) with the list of what it is about to run.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::consent::{ConsentHook, ListedPlugin, ModList, Occasion};
use super::protocol::{ClientMessage, ExperienceContent, OfferedPlugin, PackageOffer, ServerMessage};
use crate::experience::ExperienceManager;
use crate::feature::{api_compatible, host_compatible, Admitted, Gate, Permissions, PluginManifest, HOST_VERSION};
use crate::package::install::{install, provenance, verify_installed};
pub use crate::package::FetchPolicy;
use crate::package::{archive, sha256_digest, Package, PackageLimits, PackageSummary, TrustPolicy};

/// The bytes of package archive one chunk carries (a frame is at most 1 MiB).
pub const CHUNK: u64 = 256 << 10;

/// Chunks a client keeps asked for and not yet received.
pub const WINDOW: u64 = 16;

/// The most an experience's own files (not its plugins) may hold to travel with it.
pub const MAX_EXPERIENCE_BYTES: usize = 512 << 10;

/// What a server offers: the experience's content, and the archive of each package by digest.
#[derive(Debug, Default)]
pub struct Offers {
    archives: BTreeMap<String, Arc<Vec<u8>>>,
}

impl Offers {
    /// Packs what `manager`'s loaded experience is made of. A plugin folder installed from a package keeps
    /// that package's signature; one built here (a modder's) travels unsigned.
    pub fn of(manager: &ExperienceManager) -> Result<(ExperienceContent, Offers), crate::Error> {
        let definition = manager.current().ok_or_else(|| crate::Error::refused("no experience is loaded"))?;
        let dir = definition.dir();
        let mut files = Vec::new();
        let mut total = 0;
        for relative in definition.files() {
            let bytes = crate::assets::read_within(dir, &relative, MAX_EXPERIENCE_BYTES as u64).map_err(|e| {
                crate::Error::bad_input(dir.join(&relative), format!("{}: {e}", dir.join(&relative).display()))
            })?;
            total += bytes.len();
            if total > MAX_EXPERIENCE_BYTES {
                let message = format!("its files hold more than the {MAX_EXPERIENCE_BYTES} bytes that travel");
                return Err(crate::Error::bad_input(&definition.path, message));
            }
            files.push((relative, bytes));
        }
        let mut offers = Offers::default();
        let mut packages = Vec::new();
        for name in manager.played_plugins() {
            packages.push(offers.pack(manager, &name)?);
        }
        Ok((ExperienceContent { files, packages }, offers))
    }

    /// Packs the plugin `name` as it is now (after a reload, its new version) and offers it.
    pub fn pack(&mut self, manager: &ExperienceManager, name: &str) -> Result<PackageOffer, crate::Error> {
        let manifest = manager.features().manifest(name).ok_or_else(|| crate::Error::NotFound {
            name: name.to_string(),
            message: format!("plugin {name:?} is gone"),
        })?;
        let bad = |message: String| crate::Error::bad_input(&manifest.dir, message);
        let package = Package::from_folder(&manifest.dir).map_err(|e| bad(format!("plugin {name:?}: {e}")))?;
        // A folder installed from a package travels as that package, with its signature, or not at all: one
        // changed since it was installed is not passed on unsigned.
        let record = provenance(&manifest.dir).map_err(|e| bad(format!("plugin {name:?}: {e}")))?;
        let signature = match record {
            Some(record) if &record.package == package.summary() => record.signature,
            Some(record) => {
                return Err(bad(format!(
                    "plugin {name:?}: {} changed since package {} {} was installed; it is not offered",
                    manifest.dir.display(),
                    record.package.name,
                    record.package.version
                )))
            }
            None => None,
        };
        // What the package's own manifest says (not what this server's ceilings left of its permissions).
        let declared = PluginManifest::read(&manifest.dir).map_err(|e| bad(format!("plugin {name:?}: {e}")))?;
        let bytes = archive::write(&package, signature.as_ref());
        let offer = PackageOffer {
            package: package.summary().clone(),
            signature,
            archive_size: bytes.len() as u64,
            plugin: Box::new(offered_plugin(&declared)),
        };
        self.archives.insert(package.digest().to_string(), Arc::new(bytes));
        Ok(offer)
    }

    /// The bytes of every archive offered.
    pub fn total_bytes(&self) -> u64 {
        self.archives.values().map(|a| a.len() as u64).sum()
    }

    /// The chunk of the package `digest` from `offset`, if it is offered and `offset` is inside it.
    pub fn chunk(&self, digest: &str, offset: u64) -> Option<ServerMessage> {
        let archive = self.archives.get(digest)?;
        let total = archive.len() as u64;
        if offset >= total {
            return None;
        }
        let end = total.min(offset + CHUNK);
        let bytes = archive[offset as usize..end as usize].to_vec();
        Some(ServerMessage::Chunk { digest: digest.to_string(), offset, total, bytes })
    }
}

/// What an offer says of the plugin whose manifest is `manifest`.
fn offered_plugin(manifest: &PluginManifest) -> OfferedPlugin {
    OfferedPlugin {
        api: manifest.api.clone(),
        host: manifest.host.as_ref().map(ToString::to_string),
        permissions: manifest.permissions.clone(),
        dependencies: manifest.dependencies.iter().map(|d| d.name.clone()).collect(),
    }
}

/// How a client syncs the plugins of the servers it joins.
#[derive(Clone)]
pub struct ModSync {
    /// Which packages the client fetches: none, those of publishers it trusts, or any.
    pub policy: FetchPolicy,
    /// The publishers the client trusts.
    pub trust: TrustPolicy,
    /// The most a fetched plugin may be granted: nothing beyond the sandbox by default.
    pub permissions: Permissions,
    /// Where fetched packages and experiences are kept, by digest.
    pub cache_dir: PathBuf,
    /// The largest package archive fetched.
    pub max_package_bytes: u64,
    /// Asked before the client fetches plugins, or runs ones fetched from another server; `None`: go on, as the
    /// policy allows, without asking.
    pub consent: Option<ConsentHook>,
}

impl std::fmt::Debug for ModSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModSync")
            .field("policy", &self.policy)
            .field("trust", &self.trust)
            .field("permissions", &self.permissions)
            .field("cache_dir", &self.cache_dir)
            .field("max_package_bytes", &self.max_package_bytes)
            .field("consent", &self.consent.as_ref().map(|_| "asked"))
            .finish()
    }
}

impl ModSync {
    /// Fetches from trusted publishers into `cache_dir`; fetched plugins get nothing beyond the sandbox.
    pub fn new(cache_dir: PathBuf, trust: TrustPolicy) -> ModSync {
        ModSync {
            policy: FetchPolicy::Trusted,
            trust,
            permissions: Permissions::default(),
            cache_dir,
            max_package_bytes: PackageLimits::default().max_bytes,
            consent: None,
        }
    }

    /// What this client would grant a fetched plugin that asks for `asks` from `publisher`: within its
    /// `[mod-sync] permissions`, and the publisher's ceiling when it has one.
    fn would_grant(&self, asks: &Permissions, publisher: Option<&str>) -> Permissions {
        let granted = asks.intersect(&self.permissions);
        let ceiling = publisher.and_then(|p| self.trust.publishers.get(p)).and_then(|p| p.permissions.as_ref());
        match ceiling {
            Some(ceiling) => granted.intersect(ceiling),
            None => granted,
        }
    }

    /// The gate fetched plugins come in through: packages checked against this policy's trust, each plugin
    /// asking for no more than [`permissions`](Self::permissions).
    pub fn gate(&self) -> Gate {
        let set_by = "this client's [mod-sync] permissions";
        crate::package::gate::capped_gate(self.effective_trust(), self.permissions.clone(), set_by)
    }

    /// The trust packages are checked against under this policy.
    fn effective_trust(&self) -> TrustPolicy {
        TrustPolicy {
            allow_untrusted: self.policy == FetchPolicy::Any || self.trust.allow_untrusted,
            ..self.trust.clone()
        }
    }

    /// Where the package of `digest` is unpacked.
    fn package_dir(&self, digest: &str) -> PathBuf {
        self.cache_dir.join("plugins").join(digest.replace(':', "-"))
    }
}

/// A client's fetch of what an experience is made of, from the offer to every plugin ready to install.
#[derive(Debug)]
pub struct Fetch {
    sync: ModSync,
    waiting: VecDeque<PackageOffer>,
    current: Option<Download>,
    /// Plugin folders fetched or found in the cache, to install in place of any local copy.
    ready: Vec<PluginManifest>,
    /// The packages fetched (rather than found in the cache).
    downloaded: Vec<PackageSummary>,
    /// What the player is asked about: every plugin fetched or taken from the cache.
    list: Vec<ListedPlugin>,
}

#[derive(Debug)]
struct Download {
    offer: PackageOffer,
    bytes: Vec<u8>,
    /// The next offset to ask for.
    asked: u64,
}

impl Fetch {
    /// Plans the fetch of what `content` offers: `local_digest` gives the digest of this client's own copy of a
    /// plugin (if any). Refused — before a byte is fetched — if a package the client lacks is one its policy
    /// does not fetch.
    pub fn plan(
        content: &ExperienceContent,
        local_digest: impl Fn(&str) -> Option<String>,
        sync: &ModSync,
    ) -> Result<Fetch, String> {
        let mut fetch = Fetch {
            sync: sync.clone(),
            waiting: VecDeque::new(),
            current: None,
            ready: Vec::new(),
            downloaded: Vec::new(),
            list: Vec::new(),
        };
        let trust = sync.effective_trust();
        for offer in &content.packages {
            runnable_here(offer)?;
            needs_met(offer, content, &local_digest)?;
        }
        for offer in &content.packages {
            let package = &offer.package;
            if local_digest(&package.name).as_deref() == Some(package.digest.as_str()) {
                continue;
            }
            let listed = |fetch_bytes: u64| {
                let publisher = offer.signature.as_ref().map(|s| s.publisher.clone());
                let trusted = matches!(
                    sync.trust.check(package, offer.signature.as_ref()),
                    Ok(crate::package::Verdict::Trusted { .. })
                );
                let asks = offer.plugin.permissions.clone();
                let granted = sync.would_grant(&asks, publisher.as_deref().filter(|_| trusted));
                ListedPlugin {
                    name: package.name.clone(),
                    version: package.version.clone(),
                    publisher,
                    trusted,
                    fetch_bytes,
                    asks,
                    granted,
                }
            };
            let cached = sync.package_dir(&package.digest).join(&package.name);
            if let Ok(Some(_)) = verify_installed(&cached, &trust) {
                let manifest = PluginManifest::read(&cached).map_err(|e| e.to_string())?;
                says_what_was_offered(&manifest, offer)?;
                fetch.ready.push(manifest);
                fetch.list.push(listed(0));
                continue;
            }
            let lacks = format!("plugin {} {} ({})", package.name, package.version, package.digest);
            if sync.policy == FetchPolicy::Never {
                return Err(format!("{lacks} is not installed here, and this client fetches no plugins"));
            }
            if offer.archive_size > sync.max_package_bytes {
                let max = sync.max_package_bytes;
                return Err(format!("{lacks} is {} bytes, over this client's limit of {max}", offer.archive_size));
            }
            trust.check(package, offer.signature.as_ref()).map_err(|e| format!("refused {lacks}: {e}"))?;
            fetch.list.push(listed(offer.archive_size));
            fetch.waiting.push_back(offer.clone());
        }
        Ok(fetch)
    }

    /// What the player is to be asked about (`occasion`): the plugins this fetch fetches or takes from the
    /// mods folder. `None` when there are none (every plugin is the client's own).
    pub fn consent_list(&self, occasion: Occasion) -> Option<ModList> {
        (!self.list.is_empty()).then(|| ModList { occasion, plugins: self.list.clone() })
    }

    /// Whether every plugin is ready.
    pub fn is_done(&self) -> bool {
        self.current.is_none() && self.waiting.is_empty()
    }

    /// What to ask the server for now: the next chunks of the package being fetched, keeping [`WINDOW`] asked.
    pub fn requests(&mut self) -> Vec<ClientMessage> {
        if self.current.is_none() {
            if let Some(offer) = self.waiting.pop_front() {
                self.current = Some(Download { offer, bytes: Vec::new(), asked: 0 });
            }
        }
        let Some(download) = &mut self.current else { return Vec::new() };
        let mut requests = Vec::new();
        let total = download.offer.archive_size;
        let received = download.bytes.len() as u64;
        while download.asked < total && download.asked < received + WINDOW * CHUNK {
            requests
                .push(ClientMessage::Fetch { digest: download.offer.package.digest.clone(), offset: download.asked });
            download.asked += CHUNK;
        }
        requests
    }

    /// A chunk arrived. Chunks come in the order asked; one that does not fit, or an archive that is not the
    /// package offered, ends the fetch.
    pub fn received(&mut self, digest: &str, offset: u64, total: u64, bytes: Vec<u8>) -> Result<(), String> {
        let Some(download) = &mut self.current else {
            return Err("a package chunk nobody asked for".into());
        };
        let expected = download.bytes.len() as u64;
        let offer = &download.offer;
        if digest != offer.package.digest || offset != expected || total != offer.archive_size {
            return Err(format!("a chunk of {digest} at {offset} of {total}, not the one asked for"));
        }
        if bytes.is_empty() || expected + bytes.len() as u64 > total {
            return Err(format!("a chunk of {digest} runs past its end"));
        }
        download.bytes.extend_from_slice(&bytes);
        if (download.bytes.len() as u64) < total {
            return Ok(());
        }
        let download = self.current.take().expect("a download is in progress");
        let summary = download.offer.package.clone();
        let manifest = self.unpack(download)?;
        self.ready.push(manifest);
        self.downloaded.push(summary);
        Ok(())
    }

    /// The packages fetched so far (rather than found in the cache).
    pub fn downloaded(&self) -> &[PackageSummary] {
        &self.downloaded
    }

    /// Checks a complete archive against its offer and installs it into the cache.
    fn unpack(&self, download: Download) -> Result<PluginManifest, String> {
        let offer = download.offer;
        let named = format!("package {} {}", offer.package.name, offer.package.version);
        let limits = PackageLimits { max_bytes: self.sync.max_package_bytes, ..PackageLimits::default() };
        let (package, signature) =
            archive::read(download.bytes.as_slice(), limits).map_err(|e| format!("{named} refused: {e}"))?;
        if package.summary() != &offer.package || signature != offer.signature {
            return Err(format!("{named} refused: it is not the package offered ({})", package.digest()));
        }
        let into = self.sync.package_dir(package.digest());
        let (folder, _) = install(&package, signature.as_ref(), &into, &self.sync.effective_trust())
            .map_err(|e| format!("{named} refused: {e}"))?;
        let manifest = PluginManifest::read(&folder).map_err(|e| e.to_string());
        match manifest.and_then(|manifest| says_what_was_offered(&manifest, &offer).map(|()| manifest)) {
            Ok(manifest) => Ok(manifest),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&into);
                Err(e)
            }
        }
    }

    /// The plugins to install, through the client's gate for fetched plugins ([`ModSync::gate`]): each asks
    /// for no more than the client gives fetched plugins.
    pub fn into_ready(self) -> Result<Vec<Admitted>, String> {
        let gate = Arc::new(self.sync.gate());
        self.ready.into_iter().map(|manifest| gate.admit(manifest).map_err(|e| e.to_string())).collect()
    }
}

/// Refuses, before anything is fetched, a plugin this client could not run: built against a plugin API it does
/// not implement, or for other host versions.
fn runnable_here(offer: &PackageOffer) -> Result<(), String> {
    let package = &offer.package;
    if !crate::feature::is_valid_plugin_name(&package.name) || semver::Version::parse(&package.version).is_err() {
        return Err(format!(
            "the server offers a plugin named {:?} at version {:?}, which no manifest may say",
            crate::text::shown(&package.name, crate::text::MAX_NAME),
            crate::text::shown(&package.version, crate::text::MAX_NAME)
        ));
    }
    let named = format!("plugin {} {}", package.name, package.version);
    if !api_compatible(&offer.plugin.api) {
        return Err(format!(
            "{named} is built against gamefeature:plugin@{}; this client implements {}",
            offer.plugin.api,
            crate::feature::API_VERSIONS.join(", ")
        ));
    }
    if let Some(host) = &offer.plugin.host {
        let wanted: semver::VersionReq = host.parse().map_err(|e| format!("{named}: its host range {host:?}: {e}"))?;
        if !host_compatible(&wanted) {
            return Err(format!("{named} runs on gamefeature hosts {wanted}, and this client is {HOST_VERSION}"));
        }
    }
    Ok(())
}

/// Refuses a plugin that needs one neither offered nor this client's own: the offer is the closure of what the
/// server plays, or the client could not load it.
fn needs_met(
    offer: &PackageOffer,
    content: &ExperienceContent,
    local_digest: &impl Fn(&str) -> Option<String>,
) -> Result<(), String> {
    for dependency in &offer.plugin.dependencies {
        let offered = content.packages.iter().any(|o| &o.package.name == dependency);
        if !offered && local_digest(dependency).is_none() {
            let package = &offer.package;
            return Err(format!(
                "plugin {} {} needs plugin {dependency}, which the server does not offer and this client does not have",
                package.name, package.version
            ));
        }
    }
    Ok(())
}

/// Refuses a package whose manifest says other than its offer did (what the player was shown).
fn says_what_was_offered(manifest: &PluginManifest, offer: &PackageOffer) -> Result<(), String> {
    let says = offered_plugin(manifest);
    if says != *offer.plugin {
        let package = &offer.package;
        return Err(format!(
            "package {} {} refused: its plugin.toml says other than the server's offer (it asks for {}, the offer said {})",
            package.name, package.version, says.permissions, offer.plugin.permissions
        ));
    }
    Ok(())
}

/// Writes an experience's files under the cache (by their digest) and returns the experience file's path. The
/// cache is shared by every client process on a machine: the folder is written aside and put in place whole
/// (see [`crate::whole_dirs`]), so no process reads another's half-written files; one already there is used
/// when it holds exactly these files, and replaced whole when it does not (a cache written by an older host).
pub fn store_experience(cache_dir: &Path, content: &ExperienceContent) -> Result<PathBuf, String> {
    let (first, _) = content.files.first().ok_or("the experience has no files")?;
    let digest = sha256_digest(&crate::net::protocol::encode(&content.files));
    let experiences = cache_dir.join("experiences");
    let dir = experiences.join(digest.replace(':', "-"));
    let holds = |dir: &Path| {
        content.files.iter().all(|(relative, bytes)| {
            crate::assets::resolve_within(dir, relative)
                .ok()
                .and_then(|path| crate::files::read(&path, MAX_EXPERIENCE_BYTES as u64).ok())
                .is_some_and(|found| found == *bytes)
        })
    };
    if !holds(&dir) {
        let failed = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
        let staging = crate::whole_dirs::staging(&experiences, ".storing-").map_err(|e| failed(&experiences, e))?;
        for (relative, bytes) in &content.files {
            let path = crate::assets::resolve_within(staging.path(), relative).map_err(|e| e.to_string())?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
            }
            std::fs::write(&path, bytes).map_err(|e| failed(&path, e))?;
        }
        let placed = crate::whole_dirs::place_once(staging.path(), &dir).map_err(|e| failed(&dir, e))?;
        if !placed && !holds(&dir) {
            crate::whole_dirs::replace(staging.path(), &dir).map_err(|e| failed(&dir, e))?;
        }
    }
    crate::assets::resolve_within(&dir, first).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::SecretKey;

    /// A signed package of a small plugin, offered as a server offers it.
    fn offered(key: &SecretKey) -> (PackageOffer, Vec<u8>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("hud");
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = "[plugin]\nname = \"hud\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"hud.wasm\"\n";
        std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
        // Large enough to take several chunks.
        std::fs::write(folder.join("hud.wasm"), vec![7u8; (CHUNK * 3) as usize]).unwrap();
        let package = Package::from_folder(&folder).unwrap();
        let signature = key.sign("studio", package.summary());
        let archive = archive::write(&package, Some(&signature));
        let offer = PackageOffer {
            package: package.summary().clone(),
            signature: Some(signature),
            archive_size: archive.len() as u64,
            plugin: Box::new(OfferedPlugin { api: "0.2.0".into(), ..OfferedPlugin::default() }),
        };
        (offer, archive, dir)
    }

    fn sync(key: &SecretKey, cache: &Path) -> ModSync {
        let publisher = crate::package::TrustedPublisher { key: key.public_key(), permissions: None };
        let trust = TrustPolicy { publishers: BTreeMap::from([("studio".into(), publisher)]), allow_untrusted: false };
        ModSync::new(cache.to_path_buf(), trust)
    }

    fn content(offer: &PackageOffer) -> ExperienceContent {
        ExperienceContent { files: vec![("x.toml".into(), Vec::new())], packages: vec![offer.clone()] }
    }

    /// Answers every request from `archive`, letting `tamper` change each chunk first.
    fn serve(fetch: &mut Fetch, archive: &[u8], tamper: impl Fn(u64, &mut Vec<u8>)) -> Result<(), String> {
        for _ in 0..1000 {
            let requests = fetch.requests();
            if requests.is_empty() {
                return Ok(());
            }
            for request in requests {
                let ClientMessage::Fetch { digest, offset } = request else { unreachable!() };
                let end = (offset + CHUNK).min(archive.len() as u64);
                let mut bytes = archive[offset as usize..end as usize].to_vec();
                tamper(offset, &mut bytes);
                fetch.received(&digest, offset, archive.len() as u64, bytes)?;
            }
        }
        panic!("the fetch never ended")
    }

    #[test]
    fn a_package_arrives_in_windows_of_chunks_and_is_cached_by_digest() {
        let key = SecretKey::generate();
        let (offer, archive, _dir) = offered(&key);
        let cache = tempfile::tempdir().unwrap();
        let mut fetch = Fetch::plan(&content(&offer), |_| None, &sync(&key, cache.path())).unwrap();
        let first = fetch.requests();
        assert_eq!(first.len() as u64, WINDOW.min(offer.archive_size.div_ceil(CHUNK)));
        assert!(fetch.requests().is_empty(), "no more than the window is asked for");
        // Answer the first window, then the rest.
        for request in first {
            let ClientMessage::Fetch { digest, offset } = request else { unreachable!() };
            let end = (offset + CHUNK).min(archive.len() as u64);
            fetch
                .received(&digest, offset, archive.len() as u64, archive[offset as usize..end as usize].to_vec())
                .unwrap();
        }
        serve(&mut fetch, &archive, |_, _| {}).unwrap();
        assert!(fetch.is_done());
        assert_eq!(fetch.downloaded(), std::slice::from_ref(&offer.package));
        let ready = fetch.into_ready().unwrap();
        assert_eq!(ready[0].name(), "hud");
        assert!(ready[0].manifest().dir.starts_with(cache.path()));
        // Found again in the cache, and not fetched; nor when this client has the same plugin itself.
        let again = Fetch::plan(&content(&offer), |_| None, &sync(&key, cache.path())).unwrap();
        assert!(again.is_done() && again.downloaded().is_empty());
        let digest = offer.package.digest.clone();
        let local =
            Fetch::plan(&content(&offer), |_| Some(digest.clone()), &sync(&key, tempfile::tempdir().unwrap().path()));
        assert!(local.unwrap().into_ready().unwrap().is_empty(), "its own copy is used");
    }

    #[test]
    fn tampered_misplaced_and_oversized_packages_are_refused_and_nothing_is_cached() {
        let key = SecretKey::generate();
        let (offer, archive, _dir) = offered(&key);
        let cache = tempfile::tempdir().unwrap();
        let plan = || Fetch::plan(&content(&offer), |_| None, &sync(&key, cache.path())).unwrap();

        let mut fetch = plan();
        let error = serve(&mut fetch, &archive, |offset, bytes| {
            if offset == CHUNK {
                bytes[100] ^= 1;
            }
        })
        .unwrap_err();
        assert!(error.contains("refused") && error.contains("tampered"), "{error}");
        assert!(!cache.path().join("plugins").exists(), "nothing half installed");

        let mut fetch = plan();
        let requests = fetch.requests();
        let ClientMessage::Fetch { digest, .. } = &requests[0] else { unreachable!() };
        let error = fetch.received(digest, CHUNK, archive.len() as u64, vec![0; 10]).unwrap_err();
        assert!(error.contains("not the one asked for"), "{error}");

        let small = ModSync { max_package_bytes: 1000, ..sync(&key, cache.path()) };
        let error = Fetch::plan(&content(&offer), |_| None, &small).unwrap_err();
        assert!(error.contains("over this client's limit of 1000"), "{error}");
        let unsigned = PackageOffer { signature: None, ..offer.clone() };
        let error = Fetch::plan(&content(&unsigned), |_| None, &sync(&key, cache.path())).unwrap_err();
        assert!(error.contains("refused plugin hud 1.0.0") && error.contains("unsigned"), "{error}");
        let any = ModSync { policy: FetchPolicy::Any, ..sync(&key, cache.path()) };
        assert!(Fetch::plan(&content(&unsigned), |_| None, &any).is_ok(), "anyone's, when the client says so");
    }

    /// A plugin this client could not run, or whose dependency nobody provides, is refused before a byte is
    /// fetched; a package whose manifest says other than its offer (what the player was shown) is refused when it
    /// arrives, and not kept.
    #[test]
    fn what_cannot_run_here_is_refused_before_fetching_and_offers_must_tell_the_truth() {
        let key = SecretKey::generate();
        let (offer, archive, _dir) = offered(&key);
        let cache = tempfile::tempdir().unwrap();
        let plan = |offer: &PackageOffer| Fetch::plan(&content(offer), |_| None, &sync(&key, cache.path()));
        let mut forged = offer.clone();
        forged.package.name = "hud\n  shooter-core 0.1.0".into();
        assert!(plan(&forged).unwrap_err().contains("which no manifest may say"));
        let mut future = offer.clone();
        future.plugin.api = "0.9.0".into();
        let error = plan(&future).unwrap_err();
        assert!(error.contains("plugin hud 1.0.0 is built against gamefeature:plugin@0.9.0; this client implements"));
        let mut other_host = offer.clone();
        other_host.plugin.host = Some(">=99".into());
        assert!(plan(&other_host).unwrap_err().contains("runs on gamefeature hosts >=99, and this client is"));
        let mut needy = offer.clone();
        needy.plugin.dependencies = vec!["base-gameplay".into()];
        let error = plan(&needy).unwrap_err();
        assert!(error.contains("needs plugin base-gameplay, which the server does not offer"), "{error}");
        let have_it = Fetch::plan(
            &content(&needy),
            |name| (name == "base-gameplay").then(String::new),
            &sync(&key, cache.path()),
        );
        assert!(have_it.is_ok(), "a dependency this client has is enough");

        let plan = plan(&offer).unwrap();
        let list = plan.consent_list(Occasion::Join).unwrap();
        assert_eq!(list.plugins.len(), 1);
        let listed = &list.plugins[0];
        assert_eq!(
            (listed.publisher.as_deref(), listed.trusted, listed.fetch_bytes),
            (Some("studio"), true, offer.archive_size)
        );

        let mut lying = offer.clone();
        lying.plugin.permissions.send_events = true;
        let mut fetch = Fetch::plan(&content(&lying), |_| None, &sync(&key, cache.path())).unwrap();
        let error = serve(&mut fetch, &archive, |_, _| {}).unwrap_err();
        assert!(error.contains("its plugin.toml says other than the server's offer"), "{error}");
        assert!(!sync(&key, cache.path()).package_dir(&offer.package.digest).exists(), "not kept");
    }

    /// Client processes on one machine share the mods folder: writers storing one experience at once never
    /// show a reader a file half written (each reads back exactly what was sent).
    #[test]
    fn experiences_stored_at_once_by_many_are_read_whole() {
        let big = "# filler\n".repeat(40_000);
        let content = ExperienceContent {
            files: vec![("e.toml".into(), format!("[experience]\nname = \"e\"\n{big}").into_bytes())],
            packages: Vec::new(),
        };
        for _ in 0..10 {
            let cache = tempfile::tempdir().unwrap();
            std::thread::scope(|scope| {
                for _ in 0..8 {
                    scope.spawn(|| {
                        let path = store_experience(cache.path(), &content).unwrap();
                        assert_eq!(std::fs::read(&path).unwrap(), content.files[0].1, "a whole file");
                    });
                }
            });
        }
    }
}
