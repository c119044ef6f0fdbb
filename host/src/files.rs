//! Reading the files the host is given — components, manifests, experiences, assets, its configuration: only
//! regular files, and only up to a size stated before a byte is read.
//!
//! A FIFO named as a component would block a read for ever, and a 3 GB sparse file would be read whole before
//! being refused. Files are opened non-blocking (so opening a FIFO returns at once), checked to be regular
//! files, and their size is checked against the limit before reading; reading stops at the limit in case the
//! file grows meanwhile.

use std::io::Read;
use std::path::Path;

/// The largest component accepted: a Python component is about 18 MB, a JavaScript one less.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// The largest asset file accepted.
pub const MAX_ASSET_BYTES: u64 = 64 << 20;

/// The largest manifest, experience, action set or configuration file accepted.
pub const MAX_TEXT_FILE_BYTES: u64 = 1 << 20;

/// Opens `path` for reading without blocking on special files.
pub fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// The options cap-std opens files with beneath a directory: read-only, without blocking on special files.
pub fn open_options() -> cap_std::fs::OpenOptions {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options
}

/// Creates `dir` (and its parents) readable by its owner only.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Reads an opened file whole, if it is a regular file of at most `max` bytes.
pub fn read_regular(file: std::fs::File, max: u64) -> std::io::Result<Vec<u8>> {
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    if metadata.len() > max {
        return Err(too_large(metadata.len(), max));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64, max));
    }
    Ok(bytes)
}

/// Reads the regular file at `path`, of at most `max` bytes.
pub fn read(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    read_regular(open(path)?, max)
}

/// Reads the regular file at `path`, of at most `max` bytes, as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read(path, max)?).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

fn too_large(size: u64, max: u64) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("it is {size} bytes, more than the {max} allowed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_its_limit_is_read() {
        let dir = tempfile::TempDir::new().unwrap();
        std::fs::write(dir.path().join("a"), b"hello").unwrap();
        assert_eq!(read(&dir.path().join("a"), 5).unwrap(), b"hello");
        let error = read(&dir.path().join("a"), 4).unwrap_err();
        assert!(error.to_string().contains("5 bytes, more than the 4 allowed"), "{error}");
    }

    #[test]
    fn a_sparse_giant_is_refused_before_it_is_read() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = std::fs::File::create(dir.path().join("big")).unwrap();
        file.set_len(3 << 30).unwrap();
        let error = read(&dir.path().join("big"), MAX_COMPONENT_BYTES).unwrap_err();
        assert!(error.to_string().contains("more than the"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_directory_is_refused_without_blocking() {
        let dir = tempfile::TempDir::new().unwrap();
        let fifo = dir.path().join("fifo");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `mkfifo` reads a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo, 10).unwrap_err().to_string().contains("not a regular file"));
        assert!(read(dir.path(), 10).is_err());
    }
}

/// What a directory holds: bytes of its files and entries (files, directories, links), counted without
/// following links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of the files.
    pub bytes: u64,
    /// Files, directories and links.
    pub entries: u64,
}

/// What `dir` holds, walked iteratively (no recursion however deep it goes); stops counting once it has seen
/// more than `max_entries` entries, so a directory of a million files costs no more than the limit.
pub fn usage(dir: &Path, max_entries: u64) -> std::io::Result<Usage> {
    let mut usage = Usage::default();
    let mut pending = vec![dir.to_path_buf()];
    // What goes while it is walked (a file removed meanwhile) no longer counts.
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    while let Some(next) = pending.pop() {
        let entries = match std::fs::read_dir(&next) {
            Err(e) if gone(&e) && next != dir => continue,
            entries => entries?,
        };
        for entry in entries {
            let entry = entry?;
            usage.entries += 1;
            if usage.entries > max_entries {
                return Ok(usage);
            }
            let metadata = match entry.metadata() {
                Err(e) if gone(&e) => continue,
                metadata => metadata?,
            };
            if metadata.is_dir() {
                pending.push(entry.path());
            } else {
                usage.bytes = usage.bytes.saturating_add(metadata.len());
            }
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn counts_files_in_nested_folders_and_stops_at_the_entry_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/x"), vec![0u8; 1000]).unwrap();
        std::fs::write(dir.path().join("y"), vec![0u8; 24]).unwrap();
        assert_eq!(usage(dir.path(), 100).unwrap(), Usage { bytes: 1024, entries: 4 });
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("f{i}")), b"").unwrap();
        }
        assert_eq!(usage(dir.path(), 10).unwrap().entries, 11);
    }
}
