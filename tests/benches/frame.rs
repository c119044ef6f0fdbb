//! What a frame costs the host: 100 plugin instances hearing about 1,000 actors, as a share of a 30 Hz frame
//! (33.3 ms). Each frame the game sends every actor one extension event (a per-actor update, say) and every
//! instance handles all of them — 100,000 deliveries, one batched call per instance — then the world ticks.
//! The plugin does the least work a handler can (the `event-sink`), so the time is the host's: queueing,
//! grouping, batching, the calls and their bookkeeping.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench frame
//! ```
//!
//! Then the same world's frames with nothing to deliver and no timer due: what idle plugins cost.
//!
//! Times on a shared machine vary by 10 % from run to run; the `busy_frames` example counts a frame's
//! instructions under callgrind, which do not.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gamefeature_tests::busy_world::{BusyWorld, FRAME};

const INSTANCES: usize = 100;
const ACTORS: usize = 1_000;

fn frame_cost(c: &mut Criterion) {
    let mut world = BusyWorld::new(INSTANCES, ACTORS, true);

    let mut group = c.benchmark_group("frame");
    group.throughput(Throughput::Elements((INSTANCES * ACTORS) as u64));
    let mut measured = Duration::ZERO;
    let mut frames = 0u32;
    group.bench_function("100_instances_1000_actors", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                world.busy_frame();
            }
            let took = started.elapsed();
            (measured, frames) = (measured + took, frames + iterations as u32);
            took
        })
    });
    // The same world on frames where nothing happens: no event, no timer due. What the host spends on 100
    // instances with nothing to do (the issue's target: nothing).
    let mut idle_spent = Duration::ZERO;
    let mut idle_frames = 0u32;
    group.throughput(Throughput::Elements(INSTANCES as u64));
    group.bench_function("100_instances_idle", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                world.idle_frame();
            }
            let took = started.elapsed();
            (idle_spent, idle_frames) = (idle_spent + took, idle_frames + iterations as u32);
            took
        })
    });
    group.finish();
    if idle_frames > 0 {
        let per_frame = idle_spent / idle_frames;
        println!(
            "frame: {per_frame:?} per idle frame of {INSTANCES} instances ({:?} per instance) = {:.4} % of a 30 Hz frame",
            per_frame / INSTANCES as u32,
            per_frame.as_secs_f64() / FRAME.as_secs_f64() * 100.0
        );
    }
    assert_eq!(world.live_instances(), INSTANCES, "every instance survived");
    if frames > 0 {
        let per_frame = measured / frames;
        let share = per_frame.as_secs_f64() / FRAME.as_secs_f64() * 100.0;
        println!("frame: {per_frame:?} per frame (mean of every frame run) = {share:.1} % of a 30 Hz frame");
    }
    world.end();
}

criterion_group!(benches, frame_cost);
criterion_main!(benches);
