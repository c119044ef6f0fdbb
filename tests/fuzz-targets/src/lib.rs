//! What each fuzz target checks, as a function of its input: the host never panics on it, and what it accepts
//! behaves (messages round-trip, packages re-pack to the same digest, errors name the file, the compile cache
//! never hands out code it did not write, a server fed hostile frames keeps serving its honest client).
//!
//! The functions run two ways. `./dev fuzz TARGET SECONDS` runs one under libFuzzer (cargo-fuzz, `fuzz/`),
//! with sanitizers and coverage guidance, growing `fuzz/corpus/TARGET`. `./dev test` runs every one over its
//! checked-in corpus, its regressions (`fuzz/regressions/TARGET`, every crash ever found) and a bounded number
//! of seeded mutations of them (`tests/corpus.rs`), so each boundary stays fuzzed by CI without a sanitizer
//! build.

use std::path::Path;

mod cache;
mod client;
mod components;
mod files;
mod host_calls;
mod live_world;
mod protocol;
mod replication;
mod server;

pub use cache::cache_entry;
pub use client::client_frames;
pub use components::components;
pub use files::{experience, host_config, package_archive, plugin_manifest, recording};
pub use host_calls::host_calls;
pub use live_world::live_world;
pub use protocol::{client_message, server_message};
pub use replication::replication;
pub use server::server_frames;

/// A fuzz target: its name (the folder of its corpus, the name of its cargo-fuzz binary), its check, and how
/// many seeded mutations of its corpus `./dev test` runs (fewer for targets that play a whole world per input).
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    pub mutations: usize,
}

/// Mutations per target in `./dev test`, for targets whose inputs take microseconds to milliseconds.
const MUTATIONS: usize = 2_000;

/// Every target.
pub const TARGETS: &[Target] = &[
    Target { name: "client_message", run: client_message, mutations: MUTATIONS },
    Target { name: "server_message", run: server_message, mutations: MUTATIONS },
    Target { name: "plugin_manifest", run: plugin_manifest, mutations: MUTATIONS },
    Target { name: "experience", run: experience, mutations: MUTATIONS },
    Target { name: "host_config", run: host_config, mutations: MUTATIONS },
    Target { name: "package_archive", run: package_archive, mutations: MUTATIONS },
    Target { name: "cache_entry", run: cache_entry, mutations: MUTATIONS },
    Target { name: "recording", run: recording, mutations: MUTATIONS },
    Target { name: "server_frames", run: server_frames, mutations: MUTATIONS },
    Target { name: "client_frames", run: client_frames, mutations: MUTATIONS },
    Target { name: "replication", run: replication, mutations: MUTATIONS },
    Target { name: "host_calls", run: host_calls, mutations: 100 },
    Target { name: "live_world", run: live_world, mutations: 50 },
    Target { name: "components", run: components, mutations: 200 },
];

thread_local! {
    /// A folder of this thread's own for the files targets write, made once.
    pub(crate) static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("a temporary folder");
    pub(crate) static TOKIO: tokio::runtime::Runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
}

/// Writes `data` as `name` in the scratch folder (emptied of what earlier inputs wrote) and hands over the
/// folder and the file's path.
pub(crate) fn with_file<R>(name: &str, data: &[u8], f: impl FnOnce(&Path, &Path) -> R) -> R {
    SCRATCH.with(|scratch| {
        let dir = scratch.path().join("input");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the scratch folder");
        let path = dir.join(name);
        std::fs::write(&path, data).expect("writing the input");
        f(&dir, &path)
    })
}

/// Checks that a world whose play ended holds nothing of any plugin: no handlers, subscriptions, init-state
/// features, requested components, timers or property watches; and that its component model holds.
pub(crate) fn nothing_left(w: &gamefeature_host::World) {
    let left = (w.live_handlers(), w.live_subscriptions(), w.live_features(), w.requested_component_count());
    assert_eq!(left, (0, 0, 0, 0), "handlers, subscriptions, init-state features, requested components left");
    assert_eq!((w.live_timers(), w.live_watches()), (0, 0), "timers and property watches left");
    if let Err(broken) = w.check_invariants() {
        panic!("after end of play: {broken}");
    }
}
