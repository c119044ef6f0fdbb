//! The compile cache's entries, which anyone with access to the cache folder may have written.

use std::cell::RefCell;
use std::path::PathBuf;

use gamefeature_host::runtime::{entry_key, ComponentCache, EntryKey, Lookup};

/// The smallest component: the header of an empty one.
const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

/// A compile cache holding one entry, written by the cache itself, and that entry's bytes.
struct CacheUnderTest {
    engine: wasmtime::Engine,
    cache: ComponentCache,
    key: EntryKey,
    entry: PathBuf,
    written: Vec<u8>,
    _dir: tempfile::TempDir,
}

thread_local! {
    static CACHE: RefCell<Option<CacheUnderTest>> = const { RefCell::new(None) };
}

fn cache_under_test() -> CacheUnderTest {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let engine = wasmtime::Engine::default();
    let cache = ComponentCache::new(dir.path().join("cache"));
    let component = wasmtime::component::Component::new(&engine, EMPTY_COMPONENT).expect("the empty component");
    let key = entry_key(&engine, EMPTY_COMPONENT);
    cache.store(&key, &component);
    let entry = cache.entry_path(&engine, EMPTY_COMPONENT);
    let written = std::fs::read(&entry).expect("the cache wrote its entry");
    CacheUnderTest { engine, cache, key, entry, written, _dir: dir }
}

/// A compile-cache entry someone else wrote. The first byte picks how the input becomes the entry: bytes of
/// its own; the cache's own entry cut short; or that entry with bytes changed. Only the cache's own bytes are
/// ever deserialized — everything else is a miss.
pub fn cache_entry(data: &[u8]) {
    CACHE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let under_test = cell.get_or_insert_with(cache_under_test);
        let entry = match data.split_first() {
            Some((0, rest)) => {
                let cut = rest.first().map_or(0, |b| usize::from(*b) * under_test.written.len() / 256);
                under_test.written[..cut].to_vec()
            }
            Some((1, rest)) => {
                let mut entry = under_test.written.clone();
                for pair in rest.chunks(3) {
                    if let [high, low, value] = pair {
                        let at = usize::from(u16::from_be_bytes([*high, *low])) % entry.len();
                        entry[at] ^= value | 1;
                    }
                }
                entry
            }
            _ => data.to_vec(),
        };
        std::fs::write(&under_test.entry, &entry).expect("writing the entry");
        let found = under_test.cache.fetch(&under_test.engine, &under_test.key);
        let is_hit = matches!(found, Lookup::Hit(_));
        assert_eq!(is_hit, entry == under_test.written, "only the entry the cache wrote is used");
    })
}
