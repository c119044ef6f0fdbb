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
//! The memory is per process and bounded ([`MAX_REMEMBERED`] files). What it does not cover is what the
//! checks themselves do not: a process of the same user changing a file between its check and its use.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How long before its check a file must have last changed to be remembered.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Files remembered at most; past it, the memory starts again empty.
pub const MAX_REMEMBERED: usize = 4096;

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
