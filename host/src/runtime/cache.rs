//! The compiled-component cache: compiling a component is the slow part of loading a plugin (tens of
//! milliseconds for Rust, seconds for Python or JavaScript), so compiled code is kept on disk.
//!
//! The cache is part of the trusted computing base: wasmtime runs deserialized code as it finds it, so an entry
//! someone altered (its code overwritten) or swapped (another plugin's code under this one's key) would run
//! under the plugin's name. Every entry therefore has a MAC — keyed BLAKE3 under a key only this cache holds
//! (`.key`, created with owner-only permissions in a directory created the same way) — over the entry's key
//! (the BLAKE3 of the component and the engine's compatibility hash) and its code. An entry whose MAC does not
//! check out is not deserialized: the component is compiled again, with a warning, and the entry replaced. The
//! MAC means something only while nobody else can write in the folder (they could put a key of their own in
//! it): a cache whose folder others may change, or whose key others may read, or either of them a symbolic
//! link or another user's, is not used at all, with a warning saying why.
//!
//! An entry is two files: `<key>.cwasm`, the code exactly as wasmtime serialized it, which a load maps into
//! memory rather than copying (a Python component's code is 37 MB), and `<key>.mac`. BLAKE3 checks the code at
//! several GB/s, where SHA-256 and a copy made the Python plugin's cached load 67 ms. The MAC guards against
//! entries altered or planted while the host was not looking; a process running as the cache's owner could
//! change the file between the check and the mapping, but such a process can rewrite the key as well.
//!
//! An entry's MAC is checked in full once: while the code file keeps its identity (see
//! [`checked_files`](super::checked_files)), later loads of it, in the process and (through a record under the
//! cache's key in `checked/`) in later processes, only compare the MAC file.
//!
//! The cache keeps within a budget of bytes, removing the entries used least recently (see
//! [`cache_budget`](super::cache_budget)).
//!
//! Writes go to uniquely named temporary files renamed into place, so parallel writers never share a file and
//! a crash never leaves a truncated entry under a valid name (a MAC and code of different writes do not match).

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use wasmtime::component::Component;
use wasmtime::Engine;

use super::cache_budget::{beyond_budget, CachedEntry, DEFAULT_BUDGET, USE_GRANULARITY};
use super::checked_files::{CheckRecords, CheckedFiles, FileIdentity};

/// Bytes of an entry's MAC.
const MAC_BYTES: usize = 32;

/// The largest entry read back: compiled code is several times its component's size.
const MAX_ENTRY_BYTES: u64 = 4 * crate::files::MAX_COMPONENT_BYTES;

/// The BLAKE3 of a component's bytes and of an engine's compatibility hash: what an entry is for.
pub type EntryKey = [u8; 32];

/// A directory of compiled components for one engine configuration.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
    /// The MAC key once read or made: plugins compiled in parallel sign with one key.
    secret: Arc<Mutex<Option<[u8; 32]>>>,
    /// The most bytes its entries may take.
    budget: u64,
    /// Entries whose code it hashed in full to check their MAC (the rest were vouched for by an earlier check).
    checked_in_full: Arc<AtomicU64>,
}

/// Feeds `Hash` implementations into BLAKE3, so the engine's compatibility hash is stable on disk.
struct Blake3Hasher(blake3::Hasher);

impl Hasher for Blake3Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("only the BLAKE3 digest is used")
    }
}

/// What the cache found for a component.
// wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
// from it, for the project's own benches and fuzz targets.
#[doc(hidden)]
pub enum Lookup {
    /// The entry checked out: the component, its code read from the cache.
    Hit(Component),
    /// Nothing usable: no entry, or one that was refused (the reason is logged).
    Miss,
}

/// Files hashed on every core when they are larger than this (a Python component is 19 MB and its code 37 MB);
/// below it, sharing out the work costs more than it saves.
const PARALLEL_HASH_BYTES: u64 = 1 << 20;

/// The BLAKE3 of a component's bytes.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    match bytes.len() as u64 > PARALLEL_HASH_BYTES {
        true => hasher.update_rayon(bytes),
        false => hasher.update(bytes),
    };
    hasher.finalize().into()
}

/// The key of the entry for `wasm` compiled by `engine`.
// wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
// from it, for the project's own benches and fuzz targets.
#[doc(hidden)]
pub fn entry_key(engine: &Engine, wasm: &[u8]) -> EntryKey {
    key_of(engine, &digest(wasm))
}

/// The key of the entry for the component whose BLAKE3 is `digest`, compiled by `engine`.
pub fn key_of(engine: &Engine, digest: &[u8; 32]) -> EntryKey {
    let mut hasher = Blake3Hasher(blake3::Hasher::new());
    hasher.write(digest);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

/// Entries whose MAC this process checked: the entry's key, its MAC and the cache key it was checked with. An
/// entry whose code file has not changed since, with the same MAC, is not hashed again (see
/// [`checked_files`](super::checked_files)); the key is part of it, so that an entry's code linked under another
/// key is checked again (and refused).
static CHECKED_ENTRIES: CheckedFiles<(EntryKey, [u8; MAC_BYTES], [u8; 32])> = CheckedFiles::new();

/// Forgets which cache entries this process checked: each is checked in full at its next load.
pub fn forget_checked_entries() {
    CHECKED_ENTRIES.forget_all();
}

impl ComponentCache {
    /// A cache of compiled components in `dir` (created when first written), within the default budget.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ComponentCache {
            dir: dir.into(),
            secret: Arc::default(),
            budget: DEFAULT_BUDGET,
            checked_in_full: Arc::default(),
        }
    }

    /// The same cache, keeping its entries within `bytes` (the entry written last stays, whatever its size).
    pub fn with_budget(self, bytes: u64) -> Self {
        ComponentCache { budget: bytes, ..self }
    }

    /// How many entries' code this cache hashed in full to check their MAC.
    pub fn entries_checked_in_full(&self) -> u64 {
        self.checked_in_full.load(Ordering::Relaxed)
    }

    /// The folder the entries are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the compiled form of `wasm` for `engine` lives.
    // wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
    // from it, for the project's own benches and fuzz targets.
    #[doc(hidden)]
    pub fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        self.path_of(&entry_key(engine, wasm))
    }

    fn path_of(&self, key: &EntryKey) -> PathBuf {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.cwasm"))
    }

    /// Where the MAC of the entry at `code` lives.
    fn mac_path(code: &Path) -> PathBuf {
        code.with_extension("mac")
    }

    /// The cached component for `key`, if its entry is one this cache wrote for exactly that key. An entry
    /// that is not (altered, swapped, truncated, or written by an incompatible build) is a miss, and is
    /// replaced by the next [`store`](Self::store).
    // wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
    // from it, for the project's own benches and fuzz targets.
    #[doc(hidden)]
    pub fn fetch(&self, engine: &Engine, key: &EntryKey) -> Lookup {
        let path = self.path_of(key);
        let mac = match crate::files::read(&Self::mac_path(&path), MAC_BYTES as u64) {
            Ok(mac) => mac,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return self.refuse(&path, &format!("cannot read its MAC: {e}")),
        };
        if let Some(why) = self.exposure() {
            return self.refuse(&path, &why);
        }
        let Some(secret) = self.secret(false) else {
            return self.refuse(&path, "the cache has no key to check it with");
        };
        let metadata = match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.is_file() && metadata.len() <= MAX_ENTRY_BYTES => metadata,
            Ok(_) => return self.refuse(&path, "it is not a regular file of a compiled component's size"),
            // Removed since its MAC was read (another process keeping the cache within its budget).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return self.refuse(&path, &format!("cannot read it: {e}")),
        };
        let Ok(mac) = <[u8; MAC_BYTES]>::try_from(mac.as_slice()) else {
            return self.refuse(&path, "its MAC is not a MAC");
        };
        let identity = FileIdentity::settled(&metadata, std::time::SystemTime::now());
        let checked = (*key, mac, secret);
        let records = self.records_under(&secret);
        let subject = entry_subject(key);
        let recorded = |identity| match records.recall::<[u8; MAC_BYTES]>(&subject, &identity) {
            // A record another process made, of this very MAC.
            Some(recorded) if blake3::Hash::from_bytes(recorded) == blake3::Hash::from_bytes(mac) => {
                CHECKED_ENTRIES.remember(identity, checked);
                true
            }
            _ => false,
        };
        let known =
            identity.is_some_and(|identity| CHECKED_ENTRIES.get(&identity) == Some(checked) || recorded(identity));
        if !known {
            self.checked_in_full.fetch_add(1, Ordering::Relaxed);
            let mut hasher = entry_mac(&secret, key);
            let hashed = match metadata.len() > PARALLEL_HASH_BYTES {
                true => hasher.update_mmap_rayon(&path),
                false => hasher.update_mmap(&path),
            };
            match hashed {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
                Err(e) => return self.refuse(&path, &format!("cannot read it: {e}")),
                Ok(_) => {}
            }
            // `blake3::Hash` compares in constant time.
            if hasher.finalize() != mac {
                return self.refuse(&path, "its MAC does not match: it was altered, or written for other code");
            }
            // The hashing opened the file again: its identity is remembered only if the file it read is still the
            // one whose identity was taken (not another put in its place meanwhile).
            let unchanged = std::fs::symlink_metadata(&path)
                .ok()
                .and_then(|metadata| FileIdentity::settled(&metadata, std::time::SystemTime::now()));
            if let Some(identity) = identity.filter(|identity| unchanged == Some(*identity)) {
                CHECKED_ENTRIES.remember(identity, checked);
                records.record(&subject, identity, &mac);
            }
        }
        // SAFETY: the MAC proves this cache wrote these bytes, from `Component::serialize` of an engine with this
        // compatibility hash, for exactly this component (see the module's doc for what it does not prove);
        // wasmtime also checks the header's version and configuration before using the code.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => {
                mark_used(&Self::mac_path(&path));
                Lookup::Hit(component)
            }
            Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound) => {
                Lookup::Miss
            }
            Err(e) => self.refuse(&path, &format!("{e:#}")),
        }
    }

    /// The cache's MAC key, if the cache can be trusted (see `exposure`): what the function cache beside it signs
    /// its records with. With `create`, the key (and the folder) are made if there are none.
    pub(super) fn trusted_secret(&self, create: bool) -> Option<[u8; 32]> {
        if self.exposure().is_some() {
            return None;
        }
        let secret = self.secret(create)?;
        // Made just now: the folder and key it made are checked as one found would be.
        self.exposure().is_none().then_some(secret)
    }

    /// Where the checks of files this cache's entries depend on are recorded for later processes, if the cache
    /// can be trusted and has a key (see [`CheckRecords`]).
    pub fn records(&self) -> Option<CheckRecords> {
        if self.exposure().is_some() {
            return None;
        }
        Some(self.records_under(&self.secret(false)?))
    }

    fn records_under(&self, secret: &[u8; 32]) -> CheckRecords {
        CheckRecords::new(self.dir.join("checked"), secret)
    }

    fn refuse(&self, path: &Path, why: &str) -> Lookup {
        tracing::warn!(path = %path.display(), "compiling again instead of using a cache entry: {why}");
        Lookup::Miss
    }

    /// Writes the compiled form of the component with `key`. Failing to write only costs the next start a
    /// compile.
    // wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
    // from it, for the project's own benches and fuzz targets.
    #[doc(hidden)]
    pub fn store(&self, key: &EntryKey, component: &Component) {
        let result = (|| -> Result<(), String> {
            let code = component.serialize().map_err(|e| format!("{e:#}"))?;
            let secret = self.secret(true).ok_or("the cache key can be neither read nor made")?;
            if let Some(why) = self.exposure() {
                return Err(why);
            }
            let mut mac = entry_mac(&secret, key);
            mac.update(&code);
            let path = self.path_of(key);
            // The MAC first: a reader between the two renames finds a MAC that does not match the old code
            // (compiling again), never new code under an old MAC.
            for (bytes, destination) in
                [(mac.finalize().as_bytes().as_slice(), Self::mac_path(&path)), (&code, path.clone())]
            {
                let mut temporary = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| e.to_string())?;
                temporary.write_all(bytes).map_err(|e| e.to_string())?;
                temporary.persist(destination).map_err(|e| e.error.to_string())?;
            }
            self.keep_within_budget(&path, &secret);
            self.records_under(&secret).forget_older_than(RECORD_LIFETIME);
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!(dir = %self.dir.display(), "cannot write to the component cache: {e}");
        }
    }

    /// Removes the entries used least recently until the cache fits its budget, never `written`.
    fn keep_within_budget(&self, written: &Path, secret: &[u8; 32]) {
        let removed = beyond_budget(self.entries(), self.budget, written);
        if removed.is_empty() {
            return;
        }
        let records = self.records_under(secret);
        let freed: u64 = removed.iter().map(|entry| entry.bytes).sum();
        for entry in &removed {
            // The MAC first: a load between the two finds no entry, rather than code it cannot check.
            let _ = std::fs::remove_file(Self::mac_path(&entry.code));
            let _ = std::fs::remove_file(&entry.code);
            if let Some(key) = key_of_entry(&entry.code) {
                records.forget(&entry_subject(&key));
            }
        }
        tracing::info!(
            dir = %self.dir.display(),
            "the compile cache removed {} entries used least recently ({} MiB) to stay within {} MiB",
            removed.len(),
            freed >> 20,
            self.budget >> 20
        );
    }

    /// The entries in the cache's folder, with their sizes and last uses.
    fn entries(&self) -> Vec<CachedEntry> {
        let Ok(listing) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        listing
            .filter_map(|item| {
                let code = item.ok()?.path();
                key_of_entry(&code)?;
                let bytes = std::fs::symlink_metadata(&code).ok()?.len();
                let last_used = std::fs::metadata(Self::mac_path(&code))
                    .or_else(|_| std::fs::metadata(&code))
                    .and_then(|metadata| metadata.modified())
                    .ok()?;
                Some(CachedEntry { code, bytes, last_used })
            })
            .collect()
    }

    fn key_path(&self) -> PathBuf {
        self.dir.join(".key")
    }

    /// Why the cache cannot be trusted, if it cannot: its folder or key is a symbolic link, belongs to another
    /// user, or others may change it (or, for the key, read it). Whoever can write in the folder can put a key
    /// of their own in place and sign entries with it, so the MAC means something only in a private folder;
    /// such a cache is neither read nor written. A folder or key not made yet says nothing.
    fn exposure(&self) -> Option<String> {
        exposed(&self.dir, 0o022, "changed").or_else(|| exposed(&self.key_path(), 0o077, "read or changed"))
    }

    /// The cache's MAC key: read once, and with `create`, made if there is none (see `make_secret`).
    fn secret(&self, create: bool) -> Option<[u8; 32]> {
        let mut known = self.secret.lock().unwrap_or_else(|e| e.into_inner());
        if known.is_none() {
            *known = self.read_secret();
        }
        if known.is_none() && create {
            match self.make_secret() {
                Ok(secret) => *known = Some(secret),
                Err(e) => tracing::warn!(dir = %self.dir.display(), "cannot make the cache's key: {e}"),
            }
        }
        *known
    }

    fn read_secret(&self) -> Option<[u8; 32]> {
        crate::files::read(&self.key_path(), 64).ok()?.try_into().ok()
    }

    /// Makes the cache's MAC key (with its directory, both readable by the owner only). A key that cannot be
    /// read is replaced: every entry it signed is then compiled again.
    fn make_secret(&self) -> Result<[u8; 32], String> {
        crate::files::create_private_dir(&self.dir).map_err(|e| format!("creating {}: {e}", self.dir.display()))?;
        let secret: [u8; 32] = rand::random();
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| e.to_string())?;
        file.write_all(&secret).map_err(|e| e.to_string())?;
        if self.key_path().exists() {
            // A key that cannot be used is replaced; the entries it signed are compiled again.
            file.persist(self.key_path()).map_err(|e| e.error.to_string())?;
            return Ok(secret);
        }
        // Two processes creating a key at once: the first to land wins, and the other's entries are refused
        // and compiled again.
        match file.persist_noclobber(self.key_path()) {
            Ok(_) => Ok(secret),
            Err(_) => self.read_secret().ok_or_else(|| "the cache key cannot be read".to_string()),
        }
    }
}

/// How long a check record is kept after it was written: records of component paths no longer loaded go, and
/// a file loaded all that while unchanged is hashed once more.
const RECORD_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The key of the entry whose code file is `code`, if it is named as the cache names one
/// (`<64 lowercase hex digits>.cwasm`).
fn key_of_entry(code: &Path) -> Option<EntryKey> {
    if code.extension()? != "cwasm" {
        return None;
    }
    let hex = code.file_stem()?.to_str()?;
    let mut key = [0u8; 32];
    if hex.len() != 2 * key.len() || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    for (byte, pair) in key.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(key)
}

/// Records a load of the entry whose MAC file is `mac` as its last use, unless one was recorded within
/// [`USE_GRANULARITY`]. Failing costs only the order of eviction.
fn mark_used(mac: &Path) {
    let now = std::time::SystemTime::now();
    // A time in the future (a clock set back) is not recent: it is set to now.
    let recent = std::fs::metadata(mac)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|used| now.duration_since(used).is_ok_and(|age| age < USE_GRANULARITY));
    if !recent {
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(mac) {
            let _ = file.set_modified(now);
        }
    }
}

/// What an entry's check is recorded under.
fn entry_subject(key: &EntryKey) -> Vec<u8> {
    [b"entry ".as_slice(), key].concat()
}

/// The MAC of an entry, over its key and (fed next) its code.
fn entry_mac(secret: &[u8; 32], key: &EntryKey) -> blake3::Hasher {
    let mut mac = blake3::Hasher::new_keyed(secret);
    mac.update(key);
    mac
}

/// Why `path` cannot be trusted, if it exists and cannot: it is a symbolic link, another user's, or has a mode
/// bit of `forbidden` set (what others may not do with it: `what`).
#[cfg(unix)]
fn exposed(path: &Path, forbidden: u32, what: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::symlink_metadata(path).ok()?;
    let shown = path.display();
    if metadata.file_type().is_symlink() {
        return Some(format!("the compile cache's {shown} is a symbolic link: the cache is not used"));
    }
    // SAFETY: `geteuid` takes nothing and always succeeds.
    let user = unsafe { libc::geteuid() };
    if metadata.uid() != user {
        return Some(format!("the compile cache's {shown} belongs to another user: the cache is not used"));
    }
    let mode = metadata.mode() & 0o777;
    if mode & forbidden != 0 {
        return Some(format!(
            "the compile cache's {shown} can be {what} by other users (mode {mode:o}): the cache is not used; make \
             it private to this user"
        ));
    }
    None
}

#[cfg(not(unix))]
fn exposed(_path: &Path, _forbidden: u32, _what: &str) -> Option<String> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Whoever can write in the cache's folder can put their own key in it and sign entries with it: such a
    /// cache, or one whose key others can read, is not used.
    #[test]
    fn a_cache_others_can_change_or_read_the_key_of_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::new(dir.path().join("cache"));
        assert_eq!(cache.exposure(), None, "nothing made yet");
        assert!(cache.secret(true).is_some());
        assert_eq!(cache.exposure(), None, "made private");
        chmod(cache.dir(), 0o777);
        let why = cache.exposure().expect("a folder others may write to");
        assert!(why.contains("can be changed by other users (mode 777)"), "{why}");
        assert!(cache.records().is_none(), "nor are its check records");
        chmod(cache.dir(), 0o700);
        chmod(&cache.key_path(), 0o644);
        assert!(cache.exposure().expect("a key others may read").contains("read or changed"));
        chmod(&cache.key_path(), 0o600);
        std::fs::rename(cache.key_path(), dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), cache.key_path()).unwrap();
        assert!(cache.exposure().expect("a key that is a link").contains("symbolic link"));
    }
}
