//! How much disk the compile cache may take, and which entries go when it would take more.
//!
//! Every version of a plugin a modder builds leaves an entry behind, and a Python or JavaScript plugin's entry is
//! ~37 MB: a day of edits would fill gigabytes. So the cache keeps at most a budget of bytes ([`DEFAULT_BUDGET`],
//! `[cache] max-mib` in `gfhost.toml`); when writing an entry takes it over, the entries used least recently are
//! removed until it fits, never the one just written. An entry's last use is its MAC file's modification time,
//! moved forward by a load at most once per [`USE_GRANULARITY`] (the code file itself is never touched: its
//! identity vouches for its check, see `checked_files`).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The compile cache's default budget: the default experience's ten plugins nine times over, or ~27 versions
/// of a Python plugin.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// How stale an entry's last use may be before a load records a new one: a load costs no write in the common
/// case, and the order of eviction is right to within this.
pub const USE_GRANULARITY: Duration = Duration::from_secs(3600);

/// An entry of the compile cache as its budget sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedEntry {
    /// Its code file.
    pub code: PathBuf,
    /// The bytes it takes.
    pub bytes: u64,
    /// When it was last written or loaded (to within [`USE_GRANULARITY`]).
    pub last_used: SystemTime,
}

/// The entries to remove for the rest to fit in `budget` bytes: the least recently used first, never `keep` (the
/// entry just written, which may alone be over the budget).
pub fn beyond_budget(mut entries: Vec<CachedEntry>, budget: u64, keep: &std::path::Path) -> Vec<CachedEntry> {
    let mut total: u64 = entries.iter().map(|entry| entry.bytes).sum();
    if total <= budget {
        return Vec::new();
    }
    entries.sort_by_key(|entry| entry.last_used);
    let mut removed = Vec::new();
    for entry in entries {
        if total <= budget {
            break;
        }
        if entry.code != keep {
            total -= entry.bytes;
            removed.push(entry);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, bytes: u64, used_seconds_ago: u64) -> CachedEntry {
        let last_used = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - used_seconds_ago);
        CachedEntry { code: PathBuf::from(name), bytes, last_used }
    }

    fn names(entries: &[CachedEntry]) -> Vec<&str> {
        entries.iter().map(|entry| entry.code.to_str().unwrap()).collect()
    }

    #[test]
    fn the_least_recently_used_go_until_the_rest_fits_and_the_newest_entry_stays() {
        let entries =
            vec![entry("old", 40, 300), entry("recent", 40, 10), entry("older", 40, 500), entry("new", 40, 0)];
        assert!(beyond_budget(entries.clone(), 160, "new".as_ref()).is_empty(), "it fits");
        assert_eq!(names(&beyond_budget(entries.clone(), 120, "new".as_ref())), ["older"]);
        assert_eq!(names(&beyond_budget(entries.clone(), 79, "new".as_ref())), ["older", "old", "recent"]);
        // The entry just written stays even when it alone is over the budget, and even if its clock says old.
        assert_eq!(names(&beyond_budget(entries.clone(), 10, "older".as_ref())), ["old", "recent", "new"]);
        assert!(beyond_budget(Vec::new(), 0, "new".as_ref()).is_empty());
    }
}
