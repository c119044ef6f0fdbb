//! What this process has already checked of files that have not changed since: a plugin component's digest, a
//! cache entry's MAC. Hashing is most of a cached load of a big component (a Python plugin is 19 MB, its
//! compiled code 37 MB), and a world loads the same plugins again and again (each world of a server, each
//! reload of an experience). A file whose identity — device, inode, size, modification and change times — is
//! the one it had when it was checked holds the bytes that were checked, so it is not hashed again.
//!
//! Why the identity is enough: every write to a file moves its change time (ctime), which no process can set
//! (only the system clock moves it), and a file renamed or linked in its place has another inode. The times are
//! coarse, though (a kernel tick): a file written again within the tick it was checked in could keep all of
//! them. So, as git's index does with "racily clean" entries, a file changed less than [`SETTLE`] before its
//! check is not remembered; it is checked in full each time until it has settled.
//!
//! The memory is per process and bounded ([`MAX_REMEMBERED`] files). With a compile cache, what a check found is
//! also kept on disk for the next process ([`CheckRecords`]): a server's or a `gfhost run`'s first load of a
//! big plugin then costs what a later load in the same process costs. A record is trusted only under the
//! cache's key, so it is exactly as strong as the cache's MACs: what can forge a record can forge an entry.
//! What neither covers is what the checks themselves do not: a process of the same user changing a file
//! between its check and its use. And both rest on the change time being one: on file systems whose ctime is
//! not a real change time (FAT and exFAT after a remount, some FUSE and network file systems), a file rewritten
//! to the same size and modification time looks unchanged. Records last longer than a process's memory (up to
//! a month), so on such a file system, keep the cache on a local POSIX one.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// How long before its check a file must have last changed to be remembered.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Files remembered at most; past it, the memory starts again empty.
pub const MAX_REMEMBERED: usize = 4096;

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    /// Modification and change times, as seconds and nanoseconds.
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileIdentity {
    /// The identity of the file `metadata` describes, if the platform gives one (Unix) and the file last changed
    /// at least [`SETTLE`] before `now`.
    pub fn settled(metadata: &std::fs::Metadata, now: SystemTime) -> Option<Self> {
        let identity = Self::of(metadata)?;
        let changed = SystemTime::UNIX_EPOCH.checked_add(Duration::new(
            u64::try_from(identity.changed.0).ok()?,
            u32::try_from(identity.changed.1).ok()?,
        ))?;
        // A change time in the future (a clock set back) is not settled either.
        let age = now.duration_since(changed).ok()?;
        (age >= SETTLE).then_some(identity)
    }

    #[cfg(unix)]
    fn of(metadata: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        Some(FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_metadata: &std::fs::Metadata) -> Option<Self> {
        None
    }
}

/// What was found checking files, by their identity.
#[derive(Debug)]
pub struct CheckedFiles<T> {
    entries: Mutex<Option<HashMap<FileIdentity, T>>>,
}

impl<T: Clone> CheckedFiles<T> {
    /// Nothing checked yet.
    pub const fn new() -> Self {
        CheckedFiles { entries: Mutex::new(None) }
    }

    /// What was found checking the file, if it has not changed since.
    pub fn get(&self, identity: &FileIdentity) -> Option<T> {
        self.lock().as_ref()?.get(identity).cloned()
    }

    /// Remembers what checking the file found.
    pub fn remember(&self, identity: FileIdentity, found: T) {
        let mut entries = self.lock();
        let entries = entries.get_or_insert_with(HashMap::new);
        if entries.len() >= MAX_REMEMBERED {
            entries.clear();
        }
        entries.insert(identity, found);
    }

    /// Forgets every file: each is checked in full once more.
    pub fn forget_all(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<HashMap<FileIdentity, T>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone> Default for CheckedFiles<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The largest record read back.
const MAX_RECORD_BYTES: u64 = 4096;

/// What a BLAKE3 key for records is derived from, with the cache's key: a record's MAC is never an entry's. It
/// names the records' layout and meaning: a host that stores anything else in a record, or computes what it
/// stores differently (postcard is not self-describing), changes it, so that no host reads a record of another
/// layout or meaning as its own.
const RECORD_KEY_CONTEXT: &str = "gamefeature compile cache 2026-11 check record MAC, layout 1";

/// Checks kept on disk, one small file per subject (a component's path, a cache entry's key): what checking a
/// file found, the identity the file had then, and a MAC over both and the subject under a key derived from the
/// compile cache's. A record is used only when its MAC holds and the file still has that identity; anything
/// else (missing, altered, of a file changed since) is no record, and the file is checked in full again.
#[derive(Debug, Clone)]
pub struct CheckRecords {
    dir: PathBuf,
    key: [u8; 32],
}

/// A record as stored, before its MAC.
#[derive(Serialize, Deserialize)]
struct Record<T> {
    identity: FileIdentity,
    found: T,
}

impl CheckRecords {
    /// Records in `dir` (made, readable by its owner only, when first written), under a key derived from
    /// `cache_key`.
    pub fn new(dir: PathBuf, cache_key: &[u8; 32]) -> Self {
        CheckRecords { dir, key: blake3::derive_key(RECORD_KEY_CONTEXT, cache_key) }
    }

    /// What checking the file `subject` names found, if that was recorded while the file had `identity`.
    pub(crate) fn recall<T: DeserializeOwned>(&self, subject: &[u8], identity: &FileIdentity) -> Option<T> {
        let stored = crate::files::read(&self.path_of(subject), MAX_RECORD_BYTES).ok()?;
        let (record, mac) = stored.split_last_chunk::<32>()?;
        // `blake3::Hash` compares in constant time.
        if self.mac(subject, record) != blake3::Hash::from_bytes(*mac) {
            return None;
        }
        let record: Record<T> = postcard::from_bytes(record).ok()?;
        (record.identity == *identity).then_some(record.found)
    }

    /// Records what checking the file `subject` names found while it had `identity` (a settled one). Failing
    /// to write costs only the next process a full check.
    pub(crate) fn record<T: Serialize>(&self, subject: &[u8], identity: FileIdentity, found: &T) {
        let written = (|| -> std::io::Result<()> {
            let mut bytes = postcard::to_stdvec(&Record { identity, found }).map_err(std::io::Error::other)?;
            let mac = self.mac(subject, &bytes);
            bytes.extend_from_slice(mac.as_bytes());
            crate::files::create_private_dir(&self.dir)?;
            let mut temporary = tempfile::NamedTempFile::new_in(&self.dir)?;
            temporary.write_all(&bytes)?;
            temporary.persist(self.path_of(subject)).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(e) = written {
            tracing::debug!(dir = %self.dir.display(), "cannot record a file's check: {e}");
        }
    }

    /// Removes the record of `subject`, if there is one.
    pub fn forget(&self, subject: &[u8]) {
        let _ = std::fs::remove_file(self.path_of(subject));
    }

    /// Removes the records written more than `lifetime` ago (and temporary files a crash left behind), so that
    /// records of files no longer loaded do not pile up.
    pub fn forget_older_than(&self, lifetime: Duration) {
        let Ok(listing) = std::fs::read_dir(&self.dir) else { return };
        let now = SystemTime::now();
        for item in listing.flatten() {
            let written = item.metadata().and_then(|metadata| metadata.modified());
            if written.is_ok_and(|written| now.duration_since(written).is_ok_and(|age| age > lifetime)) {
                let _ = std::fs::remove_file(item.path());
            }
        }
    }

    /// Removes every record: each file is checked in full once more, by every process.
    pub fn forget_all(&self) -> std::io::Result<()> {
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn mac(&self, subject: &[u8], record: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&self.key);
        mac.update(&(subject.len() as u64).to_le_bytes()).update(subject).update(record);
        mac.finalize()
    }

    fn path_of(&self, subject: &[u8]) -> PathBuf {
        self.dir.join(format!("{}.check", blake3::hash(subject).to_hex()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn identity_now(path: &std::path::Path, later: Duration) -> Option<FileIdentity> {
        FileIdentity::settled(&std::fs::metadata(path).unwrap(), SystemTime::now() + later)
    }

    #[test]
    fn a_file_is_remembered_once_settled_and_forgotten_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one").unwrap();
        assert_eq!(identity_now(&path, Duration::ZERO), None, "just written: not settled");
        let settled = identity_now(&path, SETTLE).expect("settled");
        let checked = CheckedFiles::new();
        checked.remember(settled, "digest of one");
        assert_eq!(checked.get(&identity_now(&path, SETTLE).unwrap()), Some("digest of one"));

        // Written in place with bytes of the same length: its change time moves (or, within one tick, it is
        // not settled yet when looked at right away).
        std::thread::sleep(Duration::from_millis(20));
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(b"two").unwrap();
        let rewritten = identity_now(&path, SETTLE).unwrap();
        assert_ne!(rewritten, settled);
        assert_eq!(checked.get(&rewritten), None);

        // Another file renamed in its place has another inode.
        let other = dir.path().join("g");
        std::fs::write(&other, b"two").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(checked.get(&identity_now(&path, SETTLE).unwrap()), None);

        checked.forget_all();
        assert_eq!(checked.get(&settled), None);
    }

    #[test]
    fn a_record_is_recalled_only_for_its_subject_its_files_identity_and_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("component.wasm");
        std::fs::write(&path, b"component").unwrap();
        let identity = identity_now(&path, SETTLE).unwrap();
        let records = CheckRecords::new(dir.path().join("checked"), &[7; 32]);
        assert_eq!(records.recall::<[u8; 32]>(b"component", &identity), None, "nothing recorded yet");
        records.record(b"component", identity, &[1u8; 32]);
        assert_eq!(records.recall(b"component", &identity), Some([1u8; 32]), "recalled by the next process");
        assert_eq!(records.recall::<[u8; 32]>(b"other", &identity), None, "another subject");

        // The file changed since: its record is not its contents' any more.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, b"component, changed").unwrap();
        let changed = identity_now(&path, SETTLE).unwrap();
        assert_eq!(records.recall::<[u8; 32]>(b"component", &changed), None);

        // Under another cache key (a cache whose key was replaced), or altered by a byte, a record is no record.
        let rekeyed = CheckRecords::new(dir.path().join("checked"), &[8; 32]);
        assert_eq!(rekeyed.recall::<[u8; 32]>(b"component", &identity), None);
        let file = records.path_of(b"component");
        let mut stored = std::fs::read(&file).unwrap();
        stored[0] ^= 1;
        std::fs::write(&file, &stored).unwrap();
        assert_eq!(records.recall::<[u8; 32]>(b"component", &identity), None);
        // Another subject's record copied into this one's place is refused too (the subject is under the MAC).
        records.record(b"other", identity, &[2u8; 32]);
        std::fs::copy(records.path_of(b"other"), &file).unwrap();
        assert_eq!(records.recall::<[u8; 32]>(b"component", &identity), None);

        records.forget_all().unwrap();
        assert_eq!(records.recall::<[u8; 32]>(b"other", &identity), None);
        records.forget_all().expect("forgetting nothing is not an error");
    }

    #[test]
    fn the_memory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let base = identity_now(&path, SETTLE).unwrap();
        let checked = CheckedFiles::new();
        for inode in 0..(MAX_REMEMBERED as u64 + 10) {
            checked.remember(FileIdentity { inode, ..base }, inode);
        }
        let kept = checked.lock().as_ref().unwrap().len();
        assert!(kept <= MAX_REMEMBERED, "{kept}");
    }
}
