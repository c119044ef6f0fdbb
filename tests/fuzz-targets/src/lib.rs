//! What each fuzz target checks, as a function of its input: the host never panics on it, and what it accepts
//! behaves (messages round-trip, packages re-pack to the same digest, errors name the file, the compile cache
//! never hands out code it did not write, a server fed hostile frames keeps serving its honest client).
//!
//! The functions run two ways. `./dev fuzz TARGET SECONDS` runs one under libFuzzer (cargo-fuzz, `fuzz/`),
//! with sanitizers and coverage guidance, growing `fuzz/corpus/TARGET`. `./dev test` runs every one over its
//! checked-in corpus, its regressions (`fuzz/regressions/TARGET`, every crash ever found) and a bounded number
//! of seeded mutations of them (`tests/corpus.rs`), so each boundary stays fuzzed by CI without a sanitizer
//! build.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ExperienceDefinition;
use gamefeature_host::feature::PluginManifest;
use gamefeature_host::net::protocol::{decode, encode, ClientMessage, ServerMessage};
use gamefeature_host::package::{archive, PackageLimits};
use gamefeature_host::runtime::{entry_key, ComponentCache, EntryKey, Lookup};

/// A fuzz target: its name (the folder of its corpus, the name of its cargo-fuzz binary) and its check.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target { name: "client_message", run: client_message },
    Target { name: "server_message", run: server_message },
    Target { name: "plugin_manifest", run: plugin_manifest },
    Target { name: "experience", run: experience },
    Target { name: "host_config", run: host_config },
    Target { name: "package_archive", run: package_archive },
    Target { name: "cache_entry", run: cache_entry },
    Target { name: "server_frames", run: server_frames },
];

/// A message a client sent (anyone on the network): decoded or refused, never a panic; what decodes
/// round-trips.
pub fn client_message(data: &[u8]) {
    round_trips::<ClientMessage>(data);
}

/// A message a server sent (a client trusts its server less than its own code).
pub fn server_message(data: &[u8]) {
    round_trips::<ServerMessage>(data);
}

/// A message that decodes encodes again to bytes that decode to the same encoding. Compared as bytes, not
/// with `==`: a replicated float may be NaN, which equals nothing, itself included, yet travels bit for bit.
fn round_trips<M: serde::Serialize + for<'de> serde::Deserialize<'de>>(data: &[u8]) {
    if let Ok(message) = decode::<M>(data) {
        let bytes = encode(&message);
        let again = decode::<M>(&bytes).expect("an encoded message decodes");
        assert_eq!(encode(&again), bytes, "a message round-trips");
    }
}

thread_local! {
    /// A folder of this thread's own for the files targets write, made once.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("a temporary folder");
    static TOKIO: tokio::runtime::Runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
}

/// Writes `data` as `name` in the scratch folder (emptied of what earlier inputs wrote) and hands over the
/// folder and the file's path.
fn with_file<R>(name: &str, data: &[u8], f: impl FnOnce(&Path, &Path) -> R) -> R {
    SCRATCH.with(|scratch| {
        let dir = scratch.path().join("input");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the scratch folder");
        let path = dir.join(name);
        std::fs::write(&path, data).expect("writing the input");
        f(&dir, &path)
    })
}

/// An error that must name the file it is about.
fn names(error: &impl std::fmt::Display, path: &Path) {
    let text = error.to_string();
    assert!(text.contains(&path.display().to_string()), "the error does not name {}: {text}", path.display());
}

/// A plugin's `plugin.toml`: parsed or refused naming the file; what parses keeps its paths inside the folder.
pub fn plugin_manifest(data: &[u8]) {
    with_file("plugin.toml", data, |dir, path| match PluginManifest::read(dir) {
        Ok(manifest) => {
            assert!(manifest.component_path.starts_with(dir), "{}", manifest.component_path.display());
            assert_eq!(manifest.dir, dir);
        }
        Err(error) => names(&error, path),
    })
}

/// An experience file (its action sets are files beside it, which the input cannot create: naming one is an
/// error naming a file too).
pub fn experience(data: &[u8]) {
    with_file("experience.toml", data, |dir, path| {
        match TOKIO.with(|tokio| tokio.block_on(ExperienceDefinition::load(path))) {
            Ok(definition) => {
                for file in definition.files() {
                    assert!(!file.starts_with('/') && !file.split('/').any(|step| step == ".."), "{file}");
                }
            }
            Err(error) => {
                assert!(error.path.starts_with(dir), "{}", error.path.display());
                names(&error, &error.path);
            }
        }
    })
}

/// A host configuration (`gfhost.toml`).
pub fn host_config(data: &[u8]) {
    with_file("gfhost.toml", data, |_, path| {
        if let Err(error) = HostConfig::from_file(path) {
            names(&error, path);
        }
    })
}

/// A package file, from anyone: refused or read; what is read packs again to the same bytes and digest.
pub fn package_archive(data: &[u8]) {
    let limits = PackageLimits { max_bytes: 1 << 20, max_files: 64 };
    if let Ok((package, signature)) = archive::read(data, limits) {
        let again = archive::write(&package, signature.as_ref());
        let (reread, resigned) = archive::read(again.as_slice(), limits).expect("a package written reads back");
        assert_eq!(reread.summary(), package.summary());
        assert_eq!(resigned, signature);
    }
}

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

thread_local! {
    /// One session (engine and plugin subsystem, no plugins) for every server this thread fuzzes: a world costs
    /// little, an engine does not.
    static SESSION: gamefeature_host::Session = {
        let empty = SCRATCH.with(|s| s.path().join("no-plugins"));
        std::fs::create_dir_all(&empty).expect("the scratch folder");
        let options = gamefeature_host::SessionOptions { plugin_dirs: vec![empty], ..Default::default() };
        gamefeature_host::Session::new(options).expect("the runtime starts")
    };
}

/// Actors the fuzzed server holds from the start, besides the players it spawns.
const SERVER_ACTORS: usize = 3;

/// A server fed frames from three hostile clients — raw bytes, or hellos, acknowledgements and fetches with
/// arbitrary fields — over an in-memory network, beside one honest client. The server never panics, drops
/// only the clients that broke the protocol, and the honest client ends with the server's actors.
pub fn server_frames(data: &[u8]) {
    use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
    use gamefeature_host::net::transport::{Channel, ClientTransport};
    use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
    use gamefeature_host::world::NetMode;

    const FRAME: std::time::Duration = std::time::Duration::from_millis(33);
    SESSION.with(|session| {
        let network = MemoryNetwork::new(1, Conditions::PERFECT);
        let manager = session.create_world("server", NetMode::DedicatedServer);
        let options = ServerOptions { tick_rate: 30, token: Some("sesame".into()), ..Default::default() };
        let mut server = GameServer::new(manager, Box::new(network.server()), options);
        let spawned: Vec<_> = (0..SERVER_ACTORS)
            .map(|_| server.manager_mut().with_world(|w| w.spawn("Actor")).expect("the server spawns"))
            .collect();
        let mut hostile: Vec<_> = (0..3).map(|_| network.connect()).collect();
        let honest_world = session.create_world("honest", NetMode::Client);
        let mut honest =
            GameClient::connect(honest_world, Box::new(network.connect()), Some("sesame".into()), Path::new("."));
        let mut frames = data.split(|b| *b == 0xfe).take(64);
        TOKIO.with(|tokio| {
            for round in 0..96 {
                if let Some(frame) = frames.next() {
                    let (who, rest) = frame.split_first().unwrap_or((&0u8, &[][..]));
                    let client = &mut hostile[usize::from(*who) % 3];
                    client.send(Channel::Reliable, hostile_frame(*who, rest));
                } else if round > 64 {
                    break;
                }
                let _ = server.frame(FRAME);
                network.advance(FRAME);
                for client in &mut hostile {
                    let _ = client.poll();
                }
                tokio.block_on(honest.frame(FRAME)).expect("the honest client keeps playing");
            }
        });
        let w = gamefeature_host::world::lock(honest.manager().world());
        for actor in spawned {
            assert!(w.actor(actor).is_ok(), "the honest client has the server's actor {actor:?}");
        }
    })
}

/// What a hostile client sends: raw bytes, or (by the first byte) a well-formed message with arbitrary fields.
fn hostile_frame(kind: u8, rest: &[u8]) -> Vec<u8> {
    let number = |at: usize| rest.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let text = String::from_utf8_lossy(rest).into_owned();
    match kind % 8 {
        0 => encode(&ClientMessage::Hello { protocol: (number(0) % 4) as u32, token: Some(text) }),
        1 => encode(&ClientMessage::Hello { protocol: 2, token: Some("sesame".into()) }),
        2 => encode(&ClientMessage::Ack {
            packets: rest.chunks(8).map(|c| c.iter().map(|b| u64::from(*b)).sum()).collect(),
        }),
        3 => encode(&ClientMessage::Fetch { digest: text, offset: number(0) }),
        _ => rest.to_vec(),
    }
}
