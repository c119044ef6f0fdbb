//! Loading benchmarks: experience load with and without the compile cache, and plugin instantiation with and
//! without the pooling allocator.
//!
//! Run with `RUST_BACKTRACE` unset (these machines set it, and every error would capture a backtrace):
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench loading
//! ```

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::feature::LoadedPlugin;
use gamefeature_host::runtime::{Runtime, RuntimeConfig};
use gamefeature_host::world::NetMode;
use gamefeature_host::Session;
use gamefeature_tests::baseline::{mark_start, print_ratios, RawComponent};
use gamefeature_tests::*;

/// Times `load` alone; end of play runs between samples, untimed, so every sample loads from scratch.
fn time_loads(
    session: &Session,
    experience: &std::path::Path,
    iterations: u64,
    tokio: &tokio::runtime::Runtime,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        let mut manager = session.create_world("bench", NetMode::Standalone);
        let started = Instant::now();
        let report = tokio.block_on(manager.load(experience)).expect("the experience loads");
        total += started.elapsed();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        tokio.block_on(manager.end_play()).unwrap();
    }
    total
}

fn experience_load(c: &mut Criterion) {
    mark_start();
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE, PROGRESS_SAVE]);
    // Ten more plugins sharing one component, for the "warm load with 10 plugins" target.
    let mut ten = Vec::new();
    for i in 0..10 {
        let name = format!("feature-{i}");
        let manifest = format!(
            "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"base_gameplay.wasm\"\n"
        );
        plugins.add_custom(&name, &manifest, Some(&BASE_GAMEPLAY));
        ten.push(format!("{name:?}"));
    }
    let experiences = ExperienceDir::new();
    experiences.write("tuning.toml", "starting-health = 100\n");
    let examples = experiences.write(
        "examples.toml",
        "[experience]\nname = \"examples\"\nfeatures = [\"shooter-core\", \"progress-save\"]\n\
         [bundles.Equipped]\ntuning = \"tuning.toml\"\n",
    );
    let ten_features =
        experiences.write("ten.toml", &format!("[experience]\nname = \"ten\"\nfeatures = [{}]\n", ten.join(", ")));
    let cache = tempfile::TempDir::new().unwrap();
    let fast_teardown = ManagerOptions { deactivation_poll: Duration::from_micros(50), ..trusted() };
    let session = |cache_dir: Option<&std::path::Path>| session_with(&plugins, cache_dir, fast_teardown.clone());

    let mut group = c.benchmark_group("experience_load");
    group.sample_size(10);
    let cold = session(None);
    group.bench_function("examples_cold_compile", |b| {
        b.iter_custom(|iterations| time_loads(&cold, &examples, iterations, &tokio))
    });
    let warm = session(Some(cache.path()));
    time_loads(&warm, &examples, 1, &tokio);
    time_loads(&warm, &ten_features, 1, &tokio);
    group.bench_function("examples_from_cache", |b| {
        b.iter_custom(|iterations| time_loads(&warm, &examples, iterations, &tokio))
    });
    group.bench_function("ten_plugins_from_cache", |b| {
        b.iter_custom(|iterations| time_loads(&warm, &ten_features, iterations, &tokio))
    });
    group.finish();
}

fn instantiate(c: &mut Criterion) {
    let plugins = PluginDir::with(&[SHOOTER_CORE]);
    let manifest = gamefeature_host::feature::PluginManifest::read(&plugins.folder(&SHOOTER_CORE)).unwrap();
    let mut group = c.benchmark_group("instantiate");
    for (label, pooling) in [("pooling", true), ("on_demand", false)] {
        let runtime = Runtime::new(RuntimeConfig { pooling, max_instances: 100, ..RuntimeConfig::default() }).unwrap();
        let code = runtime.load_plugin(&manifest).unwrap();
        let env = standalone_env("shooter-core");
        group.bench_function(label, |b| b.iter(|| code.instantiate(env.clone()).expect("instantiates")));
    }
    // The baseline: the same component by raw wasmtime (a store and `InstancePre::instantiate`, then the drop).
    let raw = RawComponent::load(std::path::Path::new(SHOOTER_CORE.component), false, |_| Ok(()));
    group.bench_function("raw_wasmtime_pooling", |b| b.iter(|| raw.instantiate()));
    group.finish();
}

/// The ratio to the baseline, from what criterion measured above.
fn ratios(_: &mut Criterion) {
    print_ratios(&[("instantiate", "pooling", "raw_wasmtime_pooling", 1.1)]);
}

criterion_group!(benches, experience_load, instantiate, ratios);
criterion_main!(benches);
