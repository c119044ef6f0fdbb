//! The first use of a lazily created component (seed 002): on a server world of props whose `PropHealth` is
//! `lazy`, the cost of creating one prop's component by asking for it (`ensure-component`) and by writing its
//! first property — the network excluded.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench lazy_components
//! ```

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{ActorId, CreationPolicy, NetMode, Value, World};

const PROPS: usize = 10_000;

/// A server world of props whose health is lazy and not yet created.
fn props() -> (World, Vec<ActorId>) {
    let mut world = World::new("server", NetMode::DedicatedServer);
    world.set_recording(false);
    world.declare_class("DamageableProp", "Actor").unwrap();
    world.declare_creation("PropHealth", CreationPolicy::Lazy);
    world.declare_replicated("PropHealth", ["health"]);
    world.start_journal();
    let request = world.add_component_request(OwnerId::HOST, "DamageableProp", "PropHealth", RequestFlags::default());
    std::mem::forget(request);
    let props = (0..PROPS).map(|_| world.spawn("DamageableProp").unwrap()).collect();
    let _ = world.take_work();
    let _ = world.take_journal();
    (world, props)
}

/// Times `first_use` on fresh props, `iterations` of them, in worlds of [`PROPS`] built outside the timing.
fn time_first_uses(iterations: u64, first_use: impl Fn(&mut World, ActorId)) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iterations as usize;
    while left > 0 {
        let (mut world, props) = props();
        let batch = left.min(PROPS);
        let started = Instant::now();
        for prop in &props[..batch] {
            first_use(&mut world, *prop);
        }
        total += started.elapsed();
        left -= batch;
    }
    total
}

fn first_use(c: &mut Criterion) {
    let mut group = c.benchmark_group("lazy component");
    group.bench_function("first use: ensure-component creates it (server)", |b| {
        b.iter_custom(|iterations| {
            time_first_uses(iterations, |world, prop| {
                assert!(world.ensure_component(prop, "PropHealth").unwrap());
            })
        })
    });
    group.bench_function("first use: a write creates it (server)", |b| {
        b.iter_custom(|iterations| {
            time_first_uses(iterations, |world, prop| {
                world.set_property(prop, "PropHealth", "health", Value::Integer(90)).unwrap();
            })
        })
    });
    group.finish();
}

criterion_group!(benches, first_use);
criterion_main!(benches);
