//! The same plugin — `event-sink`, which counts extension events and sums their actor ids — written in Rust,
//! Python, JavaScript and C, measured side by side: component size (printed), cold compile, load from the
//! compile cache (never checked, a process's first, and later ones; the ratios to Rust printed beside the target,
//! and beside wasmtime's own deserialization of the same code), instantiation (beside raw wasmtime's), and the cost of an extension event delivered in a batch of 4,096 and one per
//! call.
//!
//! Run with `RUST_BACKTRACE` unset (these machines set it, and every error would capture a backtrace):
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench languages
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use gamefeature_host::feature::{LoadedPlugin, PluginManifest};
use gamefeature_host::runtime::{Runtime, RuntimeConfig, WasmPlugin};
use gamefeature_tests::baseline::{mark_start, print_ratios, RawComponent};
use gamefeature_tests::*;

const EVENTS: usize = 4096;

const SINKS: [(&str, TestPlugin); 4] =
    [("rust", EVENT_SINK), ("python", EVENT_SINK_PY), ("javascript", EVENT_SINK_JS), ("c", EVENT_SINK_C)];

fn runtime(cache: Option<&std::path::Path>) -> std::sync::Arc<Runtime> {
    Runtime::new(RuntimeConfig { max_instances: 8, cache_dir: cache.map(Into::into), ..RuntimeConfig::default() })
        .unwrap()
}

/// Which checks of a plugin's files a load finds already made.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Checked {
    /// None: the component is hashed and its entry's MAC checked in full (the first load after either changed).
    Never,
    /// By an earlier process, as the cache's records say: a process's first load of an unchanged plugin.
    InAnotherProcess,
    /// By this process: a later load in it (another world, a reload).
    InThisProcess,
}

impl Checked {
    const ALL: [Checked; 3] = [Checked::Never, Checked::InAnotherProcess, Checked::InThisProcess];

    fn group(self) -> &'static str {
        match self {
            Checked::Never => "load_from_cache_unchecked",
            Checked::InAnotherProcess => "load_from_cache_first",
            Checked::InThisProcess => "load_from_cache",
        }
    }

    fn shown(self) -> &'static str {
        match self {
            Checked::Never => "never checked",
            Checked::InAnotherProcess => "first in a process",
            Checked::InThisProcess => "again in a process",
        }
    }
}

/// One load of a plugin from the compile cache by a fresh runtime, timed, with what was `checked` before it.
fn load_from_cache(manifest: &PluginManifest, cache: &std::path::Path, checked: Checked) -> Duration {
    let fresh = runtime(Some(cache));
    if checked != Checked::InThisProcess {
        gamefeature_host::runtime::forget_checked_files();
    }
    if checked == Checked::Never {
        fresh.cache().and_then(|cache| cache.records()).expect("a cache with records").forget_all().unwrap();
    }
    let started = Instant::now();
    black_box(fresh.load_plugin(manifest).unwrap());
    started.elapsed()
}

/// The floor of a load from the cache: wasmtime mapping and reading the entry's code, and nothing of the host's
/// (no hashing, no MAC, no file checks, no linking), timed.
fn raw_deserialize(manifest: &PluginManifest) -> Duration {
    let fresh = runtime(None);
    let entry = cached_entry(&fresh, manifest);
    let started = Instant::now();
    // SAFETY: the file is the cache's entry for this component and engine configuration, just written by the
    // host (the bench's own temporary cache).
    let component = black_box(unsafe { wasmtime::component::Component::deserialize_file(fresh.engine(), &entry) });
    let took = started.elapsed();
    // Dropped untimed, as a host's load keeps its component (unmapping 37 MB of code is not part of a load).
    drop(component.unwrap());
    took
}

/// The bench's cache entry of a plugin's component.
fn cached_entry(runtime: &Runtime, manifest: &PluginManifest) -> std::path::PathBuf {
    let wasm = std::fs::read(&manifest.component_path).unwrap();
    CACHE.get().unwrap().entry_path(runtime.engine(), &wasm)
}

static CACHE: std::sync::OnceLock<gamefeature_host::runtime::ComponentCache> = std::sync::OnceLock::new();

/// The median of 21 runs of `time`.
fn median(mut time: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..21).map(|_| time()).collect();
    times.sort();
    times[times.len() / 2]
}

fn languages(c: &mut Criterion) {
    mark_start();
    let plugins = PluginDir::with(&SINKS.map(|(_, plugin)| plugin));
    let cache = tempfile::TempDir::new().unwrap();
    let manifests: Vec<(&str, PluginManifest)> = SINKS
        .iter()
        .map(|(language, plugin)| (*language, PluginManifest::read(&plugins.folder(plugin)).unwrap()))
        .collect();
    for (language, manifest) in &manifests {
        let bytes = std::fs::metadata(&manifest.component_path).unwrap().len();
        println!("component size/{language}: {bytes} bytes ({:.2} MiB)", bytes as f64 / (1 << 20) as f64);
    }

    let mut group = c.benchmark_group("compile_cold");
    group.sample_size(10);
    for (language, manifest) in &manifests {
        group.bench_function(BenchmarkId::from_parameter(language), |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let fresh = runtime(None);
                    let started = Instant::now();
                    black_box(fresh.load_plugin(manifest).unwrap());
                    total += started.elapsed();
                }
                total
            })
        });
    }
    group.finish();

    for (_, manifest) in &manifests {
        runtime(Some(cache.path())).load_plugin(manifest).unwrap();
    }
    CACHE.get_or_init(|| gamefeature_host::runtime::ComponentCache::new(cache.path()));
    // Files changed less than this long ago are checked in full at every load (see `checked_files`).
    std::thread::sleep(gamefeature_host::runtime::checked_files::SETTLE);
    for checked in Checked::ALL {
        let mut group = c.benchmark_group(checked.group());
        for (language, manifest) in &manifests {
            group.bench_function(BenchmarkId::from_parameter(language), |b| {
                b.iter_custom(|iterations| {
                    (0..iterations).map(|_| load_from_cache(manifest, cache.path(), checked)).sum()
                })
            });
        }
        group.finish();
    }
    let mut group = c.benchmark_group("raw_deserialize");
    for (language, manifest) in &manifests {
        group.bench_function(BenchmarkId::from_parameter(language), |b| {
            b.iter_custom(|iterations| (0..iterations).map(|_| raw_deserialize(manifest)).sum())
        });
    }
    group.finish();

    // The target is a ratio to Rust's load; wasmtime's own deserialization of the same code, beside each, is
    // what the host cannot go below.
    let raw: Vec<Duration> = manifests.iter().map(|(_, manifest)| median(|| raw_deserialize(manifest))).collect();
    for checked in Checked::ALL {
        let loads: Vec<Duration> =
            manifests.iter().map(|(_, manifest)| median(|| load_from_cache(manifest, cache.path(), checked))).collect();
        let rust = loads[0];
        for (i, (language, _)) in manifests.iter().enumerate().skip(1) {
            let (load, raw) = (loads[i], raw[i]);
            println!(
                "load from cache, {}/{language}: {load:.2?} = {:.1}x Rust's {rust:.2?} (target <= 5x); wasmtime's \
                 deserialization alone {raw:.2?} = {:.1}x Rust's load, the host's load {:.2}x it",
                checked.shown(),
                load.as_secs_f64() / rust.as_secs_f64(),
                raw.as_secs_f64() / rust.as_secs_f64(),
                load.as_secs_f64() / raw.as_secs_f64(),
            );
        }
    }

    let warm = runtime(Some(cache.path()));
    let loaded: Vec<(&str, std::sync::Arc<WasmPlugin>, &PluginManifest)> =
        manifests.iter().map(|(language, m)| (*language, warm.load_plugin(m).unwrap(), m)).collect();
    // Beside each, raw wasmtime instantiating the same component (a store, `InstancePre::instantiate`, the drop).
    let raws: Vec<RawComponent> =
        manifests.iter().map(|(_, manifest)| RawComponent::load(&manifest.component_path, true, |_| Ok(()))).collect();
    let mut group = c.benchmark_group("instantiate");
    for ((language, code, manifest), raw) in loaded.iter().zip(&raws) {
        let env = standalone_env(&manifest.name);
        group.bench_function(BenchmarkId::from_parameter(language), |b| {
            b.iter(|| code.instantiate(env.clone()).expect("instantiates"))
        });
        group.bench_function(BenchmarkId::new("raw_wasmtime", language), |b| b.iter(|| raw.instantiate()));
    }
    group.finish();
    // JavaScript and C plugins import WASI's blocking functions, so they are instantiated (and called) on a fiber,
    // which raw wasmtime's synchronous instantiation does not pay for: their ratios to it are not the target's.
    print_ratios(&[
        ("instantiate", "rust", "raw_wasmtime/rust", 1.1),
        ("instantiate", "python", "raw_wasmtime/python", 1.1),
        ("instantiate", "python", "rust", 10.0),
        ("instantiate", "raw_wasmtime/python", "raw_wasmtime/rust", 10.0),
    ]);

    let batch = tick_batch(EVENTS);
    // A fresh world numbers its names alike, so the name's number holds for every fresh instance.
    let tick = gamefeature_host::world::lock(&standalone_env("any").world).intern("Tick").number();
    // A fresh instance per iteration, made and dropped outside the timing: componentize-js's bindings never free
    // an export's arguments, so one JavaScript instance runs out of memory after ~900 batches (see the
    // `language_memory` example).
    let mut group = c.benchmark_group("extension_event");
    group.throughput(Throughput::Elements(EVENTS as u64));
    for (language, code, manifest) in &loaded {
        let fresh = || code.instantiate(standalone_env(&manifest.name)).unwrap();
        group.bench_function(BenchmarkId::new("batched_4096", language), |b| {
            b.iter_batched(
                fresh,
                |mut instance| {
                    instance.handle_extension_events(black_box(&batch)).unwrap();
                    instance
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(BenchmarkId::new("one_call_per_event", language), |b| {
            b.iter_batched(
                fresh,
                |mut instance| {
                    for actor in 0..EVENTS as u64 {
                        instance.handle_extension_event(1, black_box(actor), tick, "Tick").unwrap();
                    }
                    instance
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, languages);
criterion_main!(benches);
