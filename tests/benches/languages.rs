//! The same plugin — `event-sink`, which counts extension events and sums their actor ids — written in Rust,
//! Python, JavaScript and C, measured side by side: component size (printed), cold compile, load from the
//! compile cache (a process's first, and later ones; the ratios to Rust printed beside the target),
//! instantiation, and the cost of an extension event delivered in a batch of 4,096 and one per
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
use gamefeature_tests::*;

const EVENTS: usize = 4096;

const SINKS: [(&str, TestPlugin); 4] =
    [("rust", EVENT_SINK), ("python", EVENT_SINK_PY), ("javascript", EVENT_SINK_JS), ("c", EVENT_SINK_C)];

fn runtime(cache: Option<&std::path::Path>) -> std::sync::Arc<Runtime> {
    Runtime::new(RuntimeConfig { max_instances: 8, cache_dir: cache.map(Into::into), ..RuntimeConfig::default() })
        .unwrap()
}

/// One load of a plugin from the compile cache by a fresh runtime, timed; `first_in_process` makes the process
/// forget what it checked before, so the component is hashed and its entry's MAC checked again.
fn load_from_cache(manifest: &PluginManifest, cache: &std::path::Path, first_in_process: bool) -> Duration {
    let fresh = runtime(Some(cache));
    if first_in_process {
        gamefeature_host::runtime::forget_checked_files();
    }
    let started = Instant::now();
    black_box(fresh.load_plugin(manifest).unwrap());
    started.elapsed()
}

fn languages(c: &mut Criterion) {
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
    // Files changed less than this long ago are checked in full at every load (see `checked_files`).
    std::thread::sleep(gamefeature_host::runtime::checked_files::SETTLE);
    // A process's first load of each (its component hashed, its entry's MAC checked), then loads after it.
    for (name, first_in_process) in [("load_from_cache_first", true), ("load_from_cache", false)] {
        let mut group = c.benchmark_group(name);
        for (language, manifest) in &manifests {
            group.bench_function(BenchmarkId::from_parameter(language), |b| {
                b.iter_custom(|iterations| {
                    (0..iterations).map(|_| load_from_cache(manifest, cache.path(), first_in_process)).sum()
                })
            });
        }
        group.finish();
    }
    for first_in_process in [true, false] {
        let medians: Vec<(&str, Duration)> = manifests
            .iter()
            .map(|(language, manifest)| {
                let mut times: Vec<Duration> =
                    (0..21).map(|_| load_from_cache(manifest, cache.path(), first_in_process)).collect();
                times.sort();
                (*language, times[times.len() / 2])
            })
            .collect();
        let rust = medians[0].1;
        let which = if first_in_process { "first in a process" } else { "again" };
        for (language, median) in &medians[1..] {
            let ratio = median.as_secs_f64() / rust.as_secs_f64();
            println!(
                "load from cache, {which}/{language}: {median:.2?} against Rust's {rust:.2?}: {ratio:.1}x (target <= 5x)"
            );
        }
    }

    let warm = runtime(Some(cache.path()));
    let loaded: Vec<(&str, std::sync::Arc<WasmPlugin>, &PluginManifest)> =
        manifests.iter().map(|(language, m)| (*language, warm.load_plugin(m).unwrap(), m)).collect();
    let mut group = c.benchmark_group("instantiate");
    for (language, code, manifest) in &loaded {
        let env = standalone_env(&manifest.name);
        group.bench_function(BenchmarkId::from_parameter(language), |b| {
            b.iter(|| code.instantiate(env.clone()).expect("instantiates"))
        });
    }
    group.finish();

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
