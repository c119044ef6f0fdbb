//! The function cache: Cranelift's compiled functions kept across compiles, so that a component compiled again
//! after an edit compiles only the functions that changed.
//!
//! A Python or JavaScript plugin is a language runtime of tens of thousands of functions and a few of the
//! modder's; each edit makes a new component (and today's toolchains make different bytes from the same source),
//! so the compiled-component cache misses and wasmtime would compile the whole runtime again: seconds of the
//! edit-to-visible loop. wasmtime's incremental compilation hands each function's compiled form to a
//! [`CacheStore`] keyed by the hash of the function's Cranelift IR and the target's flags; this is that store.
//!
//! Like the compiled-component cache it is part of the trusted computing base — what it returns is machine
//! code — so every record carries a MAC under the compile cache's key, and the store is used only where that
//! cache is (a private folder whose key nobody else can read: [`ComponentCache::trusted_secret`]).
//!
//! The records are one append-only file, `functions-v1.log` in the cache's folder (the format's version in its
//! name), shared by every process:
//!
//! ```text
//! record := key length (u32 LE) | value length (u32 LE) | MAC (32 bytes) | key | value
//! ```
//!
//! A process indexes the file's records (offsets only: values are read when asked for, and checked then), appends
//! what it compiled when a compile ends ([`FunctionCache::flush`]) under an exclusive lock on the file, and drops
//! a torn tail (a writer killed mid-append: a record running past the end) before appending; a record whose
//! lengths no writer of this format makes stops the reading, and nothing is appended after it. When the file
//! outgrows its budget, the records the process used most recently, up to half the budget, are copied to a new
//! file that replaces it: functions no compile asked for in a while go. Another process still reading the old
//! file reads on from it (its records stay valid) and moves to the new file at its next append (the file is
//! checked to be the one at the path once locked).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::cache::ComponentCache;

/// The file of records, in the compile cache's folder.
const LOG_FILE: &str = "functions-v1.log";

/// How a compaction's new log is named until it replaces the old one: a leftover (its writer was killed) is
/// removed by the next compaction, which holds the lock any compaction needs.
const COMPACTING_PREFIX: &str = ".functions-compacting-";

/// Bytes of a record's header: its key's and value's lengths and its MAC.
const HEADER_BYTES: usize = 4 + 4 + 32;

/// The longest key kept (Cranelift's are 32-byte hashes).
const MAX_KEY_BYTES: u32 = 256;

/// The largest compiled function kept: a function bigger than this is compiled every time.
const MAX_VALUE_BYTES: u32 = 64 << 20;

/// Compiled functions held for the next append before they are written anyway, bounding the memory a long
/// compile holds.
const PENDING_BYTES: usize = 16 << 20;

/// The context the records' MAC key is derived under from the compile cache's key, so a MAC of another of the
/// cache's files never vouches for a record.
const MAC_CONTEXT: &str = "gamefeature 2026-11 function cache v1 record MAC";

/// Where a record's key and value are in the log.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// Offset of its key (its value follows).
    body: u64,
    key_len: u32,
    value_len: u32,
    mac: [u8; 32],
}

/// The open log and what this process knows of it.
#[derive(Debug, Default)]
struct Log {
    file: Option<File>,
    /// Records by key, as far as the log was read.
    index: HashMap<Box<[u8]>, Record>,
    /// The end of the last whole record read.
    indexed_to: u64,
    /// Compiled since the last append.
    pending: Vec<(Box<[u8]>, Vec<u8>)>,
    pending_bytes: usize,
    /// Keys this process asked for or compiled, each with when it last was (a count of uses): what a compaction
    /// keeps, the most recent first.
    used: HashMap<Box<[u8]>, u64>,
    uses: u64,
    /// Whether the log was looked for yet.
    opened: bool,
    /// The records' MAC key (derived from the compile cache's), once the cache was found trustworthy.
    mac_key: Option<[u8; 32]>,
    /// Whether the log holds a record no writer of this format makes: it is read up to it and not written.
    foreign: bool,
    /// Whether a record that does not match its MAC was reported (once is enough).
    warned: bool,
}

impl Log {
    fn use_key(&mut self, key: &[u8]) {
        self.uses += 1;
        self.used.insert(key.into(), self.uses);
    }
}

/// A [`CacheStore`](wasmtime::CacheStore) of compiled functions on disk, beside (and trusted as) a
/// [`ComponentCache`].
#[derive(Debug)]
pub struct FunctionCache {
    components: ComponentCache,
    path: PathBuf,
    /// The most bytes the log may take before a compaction.
    budget: u64,
    log: Mutex<Log>,
    /// Functions found here, and functions compiled and added, since the start.
    reused: AtomicU64,
    added: AtomicU64,
}

impl FunctionCache {
    /// The function cache beside `components`, its log kept within `budget` bytes.
    pub fn new(components: ComponentCache, budget: u64) -> Self {
        let path = components.dir().join(LOG_FILE);
        FunctionCache {
            components,
            path,
            budget,
            log: Mutex::default(),
            reused: AtomicU64::new(0),
            added: AtomicU64::new(0),
        }
    }

    /// Functions found here since the start: compiled once, by this process or another.
    pub fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    /// Functions compiled and added since the start.
    pub fn added(&self) -> u64 {
        self.added.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends what was compiled since the last append. Called when a compile ends; failing only costs a later
    /// compile those functions again.
    pub fn flush(&self) {
        let mut log = self.lock();
        if log.pending.is_empty() {
            return;
        }
        if let Err(e) = self.append(&mut log) {
            tracing::warn!(path = %self.path.display(), "cannot write to the function cache: {e}");
        }
        log.pending.clear();
        log.pending_bytes = 0;
    }

    /// Opens the log (if there is one) and indexes its records, once.
    fn open_for_reading(&self, log: &mut Log) {
        if log.opened {
            return;
        }
        log.opened = true;
        log.mac_key = self.components.trusted_secret(false).map(|secret| mac_key(&secret));
        if log.mac_key.is_none() {
            return;
        }
        match open_log(&self.path, false) {
            Ok(file) => {
                log.file = Some(file);
                if let Err(e) = self.index(log) {
                    tracing::warn!(path = %self.path.display(), "cannot read the function cache: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(path = %self.path.display(), "cannot open the function cache: {e}"),
        }
    }

    /// Indexes the records from `indexed_to` to the last whole one. A record running past the end is one being
    /// written (or torn): it is left for later.
    fn index(&self, log: &mut Log) -> std::io::Result<()> {
        let Some(file) = log.file.as_ref() else { return Ok(()) };
        let end = file.metadata()?.len();
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(log.indexed_to))?;
        let mut at = log.indexed_to;
        let mut found = Vec::new();
        let mut foreign = false;
        while at + HEADER_BYTES as u64 <= end {
            let mut header = [0; HEADER_BYTES];
            reader.read_exact(&mut header)?;
            let key_len = u32::from_le_bytes(header[0..4].try_into().unwrap_or_default());
            let value_len = u32::from_le_bytes(header[4..8].try_into().unwrap_or_default());
            let body = at + HEADER_BYTES as u64;
            let next = body + u64::from(key_len) + u64::from(value_len);
            if key_len > MAX_KEY_BYTES || value_len > MAX_VALUE_BYTES {
                foreign = true;
                break;
            }
            if next > end {
                break;
            }
            let mut key = vec![0; key_len as usize];
            reader.read_exact(&mut key)?;
            reader.seek_relative(i64::from(value_len))?;
            let mac = header[8..].try_into().unwrap_or_default();
            found.push((key.into_boxed_slice(), Record { body, key_len, value_len, mac }));
            at = next;
        }
        log.index.extend(found);
        log.indexed_to = at;
        log.foreign |= foreign;
        Ok(())
    }

    /// The value of `record`, if its MAC says this cache wrote it for `key`.
    fn read(&self, file: &File, key: &[u8], record: &Record, mac_key: &[u8; 32], warned: &mut bool) -> Option<Vec<u8>> {
        let mut body = vec![0; record.key_len as usize + record.value_len as usize];
        file.read_exact_at(&mut body, record.body).ok()?;
        let (stored_key, value) = body.split_at(record.key_len as usize);
        // `blake3::Hash` compares in constant time.
        if stored_key != key || record_mac(mac_key, stored_key, value) != blake3::Hash::from_bytes(record.mac) {
            if !std::mem::replace(warned, true) {
                tracing::warn!(path = %self.path.display(), "records of the function cache do not match their MAC \
                               (altered, or signed under another key): compiling their functions again");
            }
            return None;
        }
        body.drain(..record.key_len as usize);
        Some(body)
    }

    /// Writes the pending records at the end of the log, under an exclusive lock on it.
    fn append(&self, log: &mut Log) -> Result<(), String> {
        let secret = self.components.trusted_secret(true).ok_or("the compile cache cannot be trusted")?;
        let key = mac_key(&secret);
        log.mac_key = Some(key);
        let file = self.locked_file(log)?;
        let key_for_macs = key;
        let appended = (|| -> Result<(), String> {
            // Whatever others appended meanwhile is indexed first; a torn tail after it is cut off.
            self.index(log).map_err(|e| format!("reading it: {e}"))?;
            if log.foreign {
                return Err("it holds records this host does not write (another format): left as it is".into());
            }
            file.set_len(log.indexed_to).map_err(|e| format!("cutting a torn record: {e}"))?;
            let mut bytes = Vec::with_capacity(log.pending_bytes + log.pending.len() * HEADER_BYTES);
            let mut records = Vec::with_capacity(log.pending.len());
            for (key, value) in &log.pending {
                let body = log.indexed_to + (bytes.len() + HEADER_BYTES) as u64;
                let mac = record_mac(&key_for_macs, key, value);
                let record =
                    Record { body, key_len: key.len() as u32, value_len: value.len() as u32, mac: *mac.as_bytes() };
                bytes.extend_from_slice(&record.key_len.to_le_bytes());
                bytes.extend_from_slice(&record.value_len.to_le_bytes());
                bytes.extend_from_slice(mac.as_bytes());
                bytes.extend_from_slice(key);
                bytes.extend_from_slice(value);
                records.push((key.clone(), record));
            }
            file.write_all_at(&bytes, log.indexed_to).map_err(|e| format!("appending: {e}"))?;
            log.indexed_to += bytes.len() as u64;
            log.index.extend(records);
            if log.indexed_to > self.budget {
                self.compact(log, &file, &key_for_macs)?;
            }
            Ok(())
        })();
        let _ = file.unlock();
        appended
    }

    /// The log at its path, locked: another process may have replaced it (a compaction) between its opening and
    /// the lock, so it is checked to be the one at the path once locked, and opened again if not.
    fn locked_file(&self, log: &mut Log) -> Result<File, String> {
        for _ in 0..8 {
            let file = self.current_file(log)?;
            file.lock().map_err(|e| format!("locking it: {e}"))?;
            let at_path = std::fs::symlink_metadata(&self.path).ok();
            let locked = file.metadata().ok();
            if matches!((&at_path, &locked), (Some(p), Some(l)) if (p.dev(), p.ino()) == (l.dev(), l.ino())) {
                return Ok(file);
            }
            let _ = file.unlock();
        }
        Err("it keeps being replaced by other processes".into())
    }

    /// The log as it is at its path now (created, private to its owner, if there is none): the one this process
    /// indexed unless another process replaced it since (a compaction), in which case the new one is indexed
    /// from its start.
    fn current_file(&self, log: &mut Log) -> Result<File, String> {
        let identity = |m: &std::fs::Metadata| (m.dev(), m.ino());
        let at_path = std::fs::symlink_metadata(&self.path).ok();
        let indexed = log.file.as_ref().and_then(|f| f.metadata().ok());
        if !matches!((&at_path, &indexed), (Some(p), Some(i)) if identity(p) == identity(i)) {
            let file = open_log(&self.path, true).map_err(|e| format!("opening it: {e}"))?;
            log.file = Some(file);
            log.index.clear();
            log.indexed_to = 0;
        }
        log.file.as_ref().ok_or_else(|| "it is not open".to_string())?.try_clone().map_err(|e| e.to_string())
    }

    /// Replaces the log with one of the records this process used most recently, up to half the budget, under
    /// the lock held on `file`.
    fn compact(&self, log: &mut Log, file: &File, mac_key: &[u8; 32]) -> Result<(), String> {
        let dir = self.components.dir();
        // A leftover of a compaction whose process was killed (only compactions, under this lock, write these).
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(COMPACTING_PREFIX) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let mut recent: Vec<(&Box<[u8]>, u64)> = log.used.iter().map(|(key, used)| (key, *used)).collect();
        recent.sort_unstable_by_key(|(_, used)| std::cmp::Reverse(*used));
        let mut kept =
            tempfile::Builder::new().prefix(COMPACTING_PREFIX).tempfile_in(dir).map_err(|e| e.to_string())?;
        let mut index = HashMap::new();
        let mut at = 0u64;
        {
            let mut writer = std::io::BufWriter::new(kept.as_file_mut());
            for (key, _) in recent {
                let Some(record) = log.index.get(key) else { continue };
                let size = (HEADER_BYTES + key.len()) as u64 + u64::from(record.value_len);
                if at + size > self.budget / 2 {
                    break;
                }
                let Some(value) = self.read(file, key, record, mac_key, &mut log.warned) else { continue };
                writer.write_all(&record.key_len.to_le_bytes()).map_err(|e| e.to_string())?;
                writer.write_all(&record.value_len.to_le_bytes()).map_err(|e| e.to_string())?;
                writer.write_all(&record.mac).map_err(|e| e.to_string())?;
                writer.write_all(key).map_err(|e| e.to_string())?;
                writer.write_all(&value).map_err(|e| e.to_string())?;
                index.insert(key.clone(), Record { body: at + HEADER_BYTES as u64, ..*record });
                at += size;
            }
            writer.flush().map_err(|e| e.to_string())?;
        }
        let replacement = kept.persist(&self.path).map_err(|e| e.error.to_string())?;
        log.file = Some(replacement);
        log.index = index;
        log.indexed_to = at;
        Ok(())
    }
}

/// Opens the log for reading and appending, never through a symbolic link; with `create`, made (private to its
/// owner) if there is none.
fn open_log(path: &Path, create: bool) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// The records' MAC key, derived from the compile cache's key.
fn mac_key(secret: &[u8; 32]) -> [u8; 32] {
    blake3::derive_key(MAC_CONTEXT, secret)
}

/// A record's MAC: keyed BLAKE3 over the lengths, the key and the value.
fn record_mac(mac_key: &[u8; 32], key: &[u8], value: &[u8]) -> blake3::Hash {
    let mut mac = blake3::Hasher::new_keyed(mac_key);
    mac.update(&(key.len() as u32).to_le_bytes());
    mac.update(&(value.len() as u32).to_le_bytes());
    mac.update(key);
    mac.update(value);
    mac.finalize()
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let mut log = self.lock();
        self.open_for_reading(&mut log);
        let record = *log.index.get(key)?;
        let mac_key = log.mac_key?;
        let mut warned = log.warned;
        let value = self.read(log.file.as_ref()?, key, &record, &mac_key, &mut warned);
        log.warned = warned;
        match value {
            Some(_) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                log.use_key(key);
            }
            None => {
                log.index.remove(key);
            }
        }
        value.map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        if key.len() > MAX_KEY_BYTES as usize || value.len() > MAX_VALUE_BYTES as usize {
            return false;
        }
        self.added.fetch_add(1, Ordering::Relaxed);
        let mut log = self.lock();
        log.use_key(key);
        log.pending_bytes += key.len() + value.len();
        log.pending.push((key.into(), value));
        if log.pending_bytes > PENDING_BYTES {
            drop(log);
            self.flush();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    fn cache_in(dir: &Path, budget: u64) -> FunctionCache {
        FunctionCache::new(ComponentCache::new(dir.join("cache")), budget)
    }

    fn value(seed: u8, len: usize) -> Vec<u8> {
        (0..len).map(|i| seed.wrapping_add(i as u8)).collect()
    }

    /// What one process compiled, another finds; and a record altered on disk is refused (compiled again), the
    /// others still found.
    #[test]
    fn functions_compiled_by_one_process_are_found_by_the_next_and_altered_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let first = cache_in(dir.path(), 1 << 30);
        assert!(first.get(b"a").is_none(), "an empty cache");
        assert!(first.insert(b"a", value(1, 100)));
        assert!(first.insert(b"b", value(2, 5000)));
        first.flush();
        assert_eq!(first.get(b"a").as_deref(), Some(value(1, 100).as_slice()), "found by the process that wrote it");

        let second = cache_in(dir.path(), 1 << 30);
        assert_eq!(second.get(b"b").as_deref(), Some(value(2, 5000).as_slice()));
        assert_eq!(second.get(b"a").as_deref(), Some(value(1, 100).as_slice()));
        assert!(second.get(b"c").is_none());
        assert_eq!((second.reused(), second.added()), (2, 0));

        // The last byte of `b`'s value flipped.
        let log = dir.path().join("cache").join(LOG_FILE);
        let mut bytes = std::fs::read(&log).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&log, bytes).unwrap();
        let third = cache_in(dir.path(), 1 << 30);
        assert!(third.get(b"b").is_none(), "an altered record is not machine code to run");
        assert!(third.get(b"a").is_some());
    }

    /// A writer killed mid-append leaves a torn record: readers stop before it, and the next append cuts it off,
    /// so what is appended after it is found.
    #[test]
    fn a_torn_record_is_cut_off_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let writer = cache_in(dir.path(), 1 << 30);
        writer.insert(b"whole", value(3, 64));
        writer.flush();
        let log = dir.path().join("cache").join(LOG_FILE);
        let whole = std::fs::metadata(&log).unwrap().len();
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(&[9, 0, 0, 0, 200, 0, 0, 0, 1, 2, 3]).unwrap();

        let next = cache_in(dir.path(), 1 << 30);
        assert!(next.get(b"whole").is_some(), "the records before a torn one are read");
        next.insert(b"after", value(4, 64));
        next.flush();
        assert_eq!(
            std::fs::metadata(&log).unwrap().len(),
            whole + (HEADER_BYTES + 5 + 64) as u64,
            "cut, then appended"
        );
        let reader = cache_in(dir.path(), 1 << 30);
        assert_eq!(reader.get(b"after").as_deref(), Some(value(4, 64).as_slice()));
        assert!(reader.get(b"whole").is_some());
    }

    /// Past its budget the log keeps only the functions the process used; another process that indexed the old
    /// log appends to the new one.
    #[test]
    fn past_its_budget_the_log_keeps_what_was_used() {
        let dir = tempfile::tempdir().unwrap();
        let old = cache_in(dir.path(), 1 << 30);
        old.insert(b"old", value(5, 5000));
        old.flush();
        let other = cache_in(dir.path(), 1 << 30);
        assert!(other.get(b"old").is_some(), "indexed before the compaction");

        let compacting = cache_in(dir.path(), 6000);
        compacting.insert(b"new", value(6, 2000));
        compacting.flush();
        let log = dir.path().join("cache").join(LOG_FILE);
        assert_eq!(std::fs::metadata(&log).unwrap().len(), (HEADER_BYTES + 3 + 2000) as u64, "only `new` kept");
        let fresh = cache_in(dir.path(), 1 << 30);
        assert!(fresh.get(b"old").is_none() && fresh.get(b"new").is_some());

        other.insert(b"late", value(7, 10));
        other.flush();
        let fresh = cache_in(dir.path(), 1 << 30);
        assert!(fresh.get(b"late").is_some(), "appended to the log at the path, not the one it replaced");
        assert!(fresh.get(b"new").is_some());
    }

    /// A record no writer of this format makes (lengths past its limits) is no torn tail: the records after it
    /// stay, and nothing is appended after it.
    #[test]
    fn a_log_of_another_format_is_read_up_to_its_first_foreign_record_and_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let writer = cache_in(dir.path(), 1 << 30);
        writer.insert(b"first", value(1, 10));
        writer.flush();
        let log = dir.path().join("cache").join(LOG_FILE);
        let mut bytes = std::fs::read(&log).unwrap();
        let foreign_at = bytes.len();
        bytes.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0; 32 + 64]);
        std::fs::write(&log, &bytes).unwrap();
        let next = cache_in(dir.path(), 1 << 30);
        assert!(next.get(b"first").is_some());
        next.insert(b"second", value(2, 10));
        next.flush();
        assert_eq!(std::fs::read(&log).unwrap(), bytes, "left as it is, past byte {foreign_at}");
    }

    /// A function cache beside a compile cache that others can change is not used: its records are code.
    #[test]
    fn a_cache_folder_others_can_change_is_neither_read_nor_written() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let cache = cache_in(dir.path(), 1 << 30);
        cache.insert(b"a", value(1, 10));
        cache.flush();
        let folder = dir.path().join("cache");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        let exposed = cache_in(dir.path(), 1 << 30);
        assert!(exposed.get(b"a").is_none());
        let before = std::fs::metadata(folder.join(LOG_FILE)).unwrap().len();
        exposed.insert(b"b", value(2, 10));
        exposed.flush();
        assert_eq!(std::fs::metadata(folder.join(LOG_FILE)).unwrap().len(), before, "nothing written");
    }
}
