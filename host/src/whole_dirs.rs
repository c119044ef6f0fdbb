//! Folders that several processes share (installed plugins, the mods cache's packages and experiences) are put
//! in place whole: written into a hidden temporary folder beside their place, then renamed into it in one step.
//! A reader sees the old folder or the new one, never a mix, and a writer killed at any point leaves one of them
//! (and, at worst, a hidden temporary folder nobody reads).

use std::path::Path;

/// Puts the folder `new` in place of `target` in one step, whatever was there; the old folder, if any, ends up
/// at `new` (to delete). Where the file system cannot exchange two names (`EINVAL` from some network and FUSE
/// file systems), the old folder is moved aside first and put back if the new one cannot take its place.
pub fn replace(new: &Path, target: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        for _ in 0..3 {
            match renameat_with(CWD, new, CWD, target, RenameFlags::EXCHANGE) {
                Ok(()) => return Ok(()),
                // Nothing to exchange with: renamed into place, unless another process got there first (then
                // exchange with what it put there).
                Err(Errno::NOENT) => match renameat_with(CWD, new, CWD, target, RenameFlags::NOREPLACE) {
                    Ok(()) => return Ok(()),
                    Err(Errno::EXIST) => continue,
                    Err(Errno::INVAL | Errno::NOSYS) => break,
                    Err(e) => return Err(e.into()),
                },
                Err(Errno::INVAL | Errno::NOSYS) => break,
                Err(e) => return Err(e.into()),
            }
        }
    }
    replace_by_moving_aside(new, target)
}

/// [`replace`] where two names cannot be exchanged in one step.
fn replace_by_moving_aside(new: &Path, target: &Path) -> std::io::Result<()> {
    if !target.exists() {
        return std::fs::rename(new, target);
    }
    let aside = new.with_extension("replaced");
    std::fs::rename(target, &aside)?;
    if let Err(e) = std::fs::rename(new, target) {
        let _ = std::fs::rename(&aside, target);
        return Err(e);
    }
    std::fs::rename(&aside, new)
}

/// Puts the folder `new` at `target` unless a folder is there already (another process put the same content
/// there first): whether `new` was put there.
pub fn place_once(new: &Path, target: &Path) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        match renameat_with(CWD, new, CWD, target, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(true),
            Err(Errno::EXIST) if target.is_dir() => return Ok(false),
            Err(Errno::INVAL | Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if target.is_dir() {
        return Ok(false);
    }
    std::fs::rename(new, target).map(|()| true)
}

/// How long a staging folder may sit untouched before it counts as left by a writer that was killed.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// A hidden temporary folder in `dir`, named with `prefix`, for a folder to be put in place whole: deleted
/// when dropped, unless it was renamed away. Staging folders of the same prefix untouched for [`STALE_AFTER`]
/// (a writer killed midway left them; none writes for an hour) are removed first.
pub fn staging(dir: &Path, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(dir)?;
    remove_stale(dir, prefix, STALE_AFTER);
    tempfile::Builder::new().prefix(prefix).tempdir_in(dir)
}

/// Removes the folders in `dir` named with `prefix` untouched for `older_than`; what cannot be removed stays
/// (hidden, never read).
fn remove_stale(dir: &Path, prefix: &str, older_than: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let named = entry.file_name().to_str().is_some_and(|name| name.starts_with(prefix));
        let Ok(metadata) = entry.metadata() else { continue };
        let idle = metadata.modified().ok().and_then(|at| at.elapsed().ok());
        if named && metadata.is_dir() && idle.is_some_and(|idle| idle > older_than) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_replaces_another_whole_and_is_placed_only_once() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("plugin");
        let first = staging(root.path(), ".new-").unwrap();
        std::fs::write(first.path().join("a"), b"one").unwrap();
        assert!(place_once(first.path(), &target).unwrap());
        let second = staging(root.path(), ".new-").unwrap();
        std::fs::write(second.path().join("a"), b"two").unwrap();
        assert!(!place_once(second.path(), &target).unwrap(), "a folder is there already");
        assert_eq!(std::fs::read(target.join("a")).unwrap(), b"one");
        replace(second.path(), &target).unwrap();
        assert_eq!(std::fs::read(target.join("a")).unwrap(), b"two");
        assert_eq!(std::fs::read(second.path().join("a")).unwrap(), b"one", "the old folder, to delete");
    }

    /// A staging folder a killed writer left is removed by the next writer once it is stale; a recent one (a
    /// writer at work) is left alone.
    #[test]
    fn stale_staging_folders_are_removed_and_recent_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let (stale, recent) = (root.path().join(".installing-old"), root.path().join(".installing-new"));
        for folder in [&stale, &recent] {
            std::fs::create_dir(folder).unwrap();
            std::fs::write(folder.join("component.wasm"), b"half").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - STALE_AFTER * 2;
        std::fs::File::open(&stale).unwrap().set_modified(long_ago).unwrap();
        let _staging = staging(root.path(), ".installing-").unwrap();
        assert!(!stale.exists(), "left by a killed writer: removed");
        assert!(recent.exists(), "a writer at work: kept");
    }
}
