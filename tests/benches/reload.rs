//! Hot reload: the frame hitch a reload causes in a world of 1,000 characters (its second half, applied
//! between frames: the old instance out, the new one in and applied to every actor), the whole reload from a
//! changed file to the new version active with its component in the compile cache, and the compile a cold
//! reload adds off the frame thread.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench reload
//! ```

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::experience::NewVersion;
use gamefeature_host::runtime::{Runtime, RuntimeConfig};
use gamefeature_tests::*;

const ACTORS: usize = 1000;

fn reload(c: &mut Criterion) {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    session.timeline().set_retention(Some(10_000));
    let (mut manager, _experiences) = tokio.block_on(world_of_characters(&session, "lyra-character", ACTORS));
    let mut group = c.benchmark_group("reload");
    group.sample_size(20).measurement_time(Duration::from_secs(10));

    group.bench_function("frame hitch: apply a new version, 1000 characters", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let new = tokio.block_on(NewVersion::prepare(session.features(), "lyra-character")).unwrap();
                let started = Instant::now();
                tokio.block_on(manager.apply_new_version(new)).unwrap();
                total += started.elapsed();
            }
            total
        })
    });
    group.bench_function("changed file to new version active, compile cached, 1000 characters", |b| {
        b.iter(|| tokio.block_on(manager.reload_feature("lyra-character")).unwrap())
    });
    group.bench_function("cold compile of the new version (off the frame thread)", |b| {
        let manifest = session.features().manifest("lyra-character").unwrap();
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let runtime = Runtime::new(RuntimeConfig { max_instances: 4, ..RuntimeConfig::default() }).unwrap();
                let started = Instant::now();
                runtime.load_plugin(&manifest).unwrap();
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
    tokio.block_on(manager.end_play()).unwrap();
}

criterion_group!(benches, reload);
criterion_main!(benches);
