//! Advisory locks across processes, for files and folders two processes on one machine can both write: the lock
//! file a `gfhost install` reads, changes and writes again, a plugin's data folder, a recording being written,
//! a plugin being built.
//!
//! Files are still written whole (a temporary file renamed into place, folders placed whole, see `whole_dirs`),
//! so a reader never sees a partial file whatever happens; a lock orders the writers whose work is more than one
//! write — two installs recording their package in one lock file would otherwise each keep only their own. The
//! locks are the operating system's (`flock` on Unix, `LockFileEx` on Windows, through `std::fs::File::lock`):
//! they go with the process that held them, so a writer killed mid-work never leaves one behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// An exclusive lock on a file, held until dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    path: PathBuf,
}

/// A lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("{}: in use by another process", path.display())]
    Held {
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("{}: cannot lock it: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl FileLock {
    /// Takes the lock at `path` (created if needed), waiting while another process holds it; `waiting` is
    /// called once first if it must wait, to say so.
    pub fn exclusive(path: &Path, waiting: impl FnOnce()) -> Result<FileLock, LockError> {
        let file = open(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                waiting();
                file.lock().map_err(|source| LockError::Io { path: path.to_path_buf(), source })?;
            }
            Err(TryLockError::Error(source)) => return Err(LockError::Io { path: path.to_path_buf(), source }),
        }
        Ok(FileLock { _file: file, path: path.to_path_buf() })
    }

    /// Takes the lock at `path` (created if needed) if no other process holds it.
    pub fn try_exclusive(path: &Path) -> Result<FileLock, LockError> {
        let file = open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(FileLock { _file: file, path: path.to_path_buf() }),
            Err(TryLockError::WouldBlock) => Err(LockError::Held { path: path.to_path_buf() }),
            Err(TryLockError::Error(source)) => Err(LockError::Io { path: path.to_path_buf(), source }),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn open(path: &Path) -> Result<File, LockError> {
    let io = |source| LockError::Io { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)
}

/// The lock file guarding `file` (whose writers replace it whole, so it cannot be its own lock: a lock on the
/// replaced file would guard nothing): a hidden file beside it, `.<name>.guard`.
pub fn guard_of(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    file.with_file_name(format!(".{name}.guard"))
}

/// A folder this process uses alone among processes: every holder in this process shares one lock (two worlds
/// of one process may both run a plugin with its data folder), and another process cannot take it until the
/// last holder here lets go.
#[derive(Debug)]
pub struct FolderLease {
    _lock: FileLock,
    folder: PathBuf,
}

impl FolderLease {
    /// A lease on `folder`, shared with this process's other holders of it; refused while another process
    /// holds it. Its lock file is beside it, `.<name>.lock` (so what is in the folder is the folder's own).
    pub fn take(folder: &Path) -> Result<Arc<FolderLease>, LockError> {
        static LEASES: OnceLock<Mutex<Vec<Weak<FolderLease>>>> = OnceLock::new();
        let mut leases = LEASES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        leases.retain(|lease| lease.strong_count() > 0);
        if let Some(held) = leases.iter().filter_map(Weak::upgrade).find(|lease| lease.folder == folder) {
            return Ok(held);
        }
        let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let lock = FileLock::try_exclusive(&folder.with_file_name(format!(".{name}.lock")))?;
        let lease = Arc::new(FolderLease { _lock: lock, folder: folder.to_path_buf() });
        leases.push(Arc::downgrade(&lease));
        Ok(lease)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_refused_to_another_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/x.lock");
        let held = FileLock::try_exclusive(&path).unwrap();
        // Another open file description stands for another process: flock locks belong to it, not the process.
        assert!(matches!(FileLock::try_exclusive(&path), Err(LockError::Held { .. })));
        drop(held);
        let mut waited = false;
        FileLock::exclusive(&path, || waited = true).unwrap();
        assert!(!waited);
    }

    #[test]
    fn a_waiting_lock_is_taken_once_its_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = FileLock::try_exclusive(&path).unwrap();
        let (said, waiting) = std::sync::mpsc::channel();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || FileLock::exclusive(&path, || said.send(()).unwrap()).map(|_| ()))
        };
        waiting.recv().unwrap();
        drop(held);
        waiter.join().unwrap().unwrap();
    }

    #[test]
    fn a_folder_lease_is_shared_in_a_process_and_goes_with_its_last_holder() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("score-keeper");
        let first = FolderLease::take(&folder).unwrap();
        let second = FolderLease::take(&folder).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        let lock_file = dir.path().join(".score-keeper.lock");
        assert!(matches!(FileLock::try_exclusive(&lock_file), Err(LockError::Held { .. })), "another process");
        drop((first, second));
        FileLock::try_exclusive(&lock_file).unwrap();
    }

    #[test]
    fn a_guard_is_a_hidden_file_beside_what_it_guards() {
        assert_eq!(guard_of(Path::new("/srv/game/gfhost.lock")), Path::new("/srv/game/.gfhost.lock.guard"));
        assert_eq!(guard_of(Path::new("gfhost.lock")), Path::new(".gfhost.lock.guard"));
    }
}
