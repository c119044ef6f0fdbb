//! Taking a plugin out of its world: the time to remove 100,000 of each kind of thing a plugin can own —
//! property watches (all on one actor, the case that was quadratic), timers, extension handlers, component
//! requests, subscriptions, init-state features, properties it wrote and names it introduced — each kind
//! alone, so a kind whose removal is not linear stands out.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench teardown
//! ```

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{ActorId, NetMode, Value, World};

const EACH: usize = 100_000;

/// A world with a few pawns and the plugin `owner` registered.
fn world() -> (World, OwnerId, Vec<ActorId>) {
    let mut world = World::new("teardown", NetMode::Standalone);
    world.set_recording(false);
    let owner = world.register_owner("plugin");
    let pawns = (0..100).map(|_| world.spawn("Pawn").unwrap()).collect();
    let _ = world.take_work();
    (world, owner, pawns)
}

/// A world where the plugin holds [`EACH`] things of one kind, made by `hold`.
type Setup = fn(&mut World, OwnerId, &[ActorId]);

fn kinds() -> Vec<(&'static str, Setup)> {
    vec![
        ("property_watches_on_one_actor", |w, owner, pawns| {
            for i in 0..EACH as u32 {
                w.watch_property(owner, pawns[0], "Health", "hp", i).unwrap();
            }
        }),
        ("timers", |w, owner, _| {
            for i in 0..EACH as u32 {
                w.start_timer(owner, 0, true, i);
            }
        }),
        ("extension_handlers", |w, owner, _| {
            for i in 0..EACH as u32 {
                w.add_extension_handler(owner, "Pawn", i).unwrap();
            }
        }),
        ("component_requests", |w, owner, _| {
            for i in 0..EACH {
                let class = format!("Part{}", i % 1000);
                // Held by the plugin: its teardown releases it.
                let _ = w.add_component_request(owner, "Pawn", &class, RequestFlags::default()).unwrap();
            }
        }),
        ("subscriptions", |w, owner, pawns| {
            for i in 0..EACH as u32 {
                w.subscribe_actor(owner, pawns[i as usize % pawns.len()], None, None, false, i).unwrap();
            }
        }),
        ("init_state_features", |w, owner, pawns| {
            let _ = w.add_component_request(owner, "Pawn", "Pawn", RequestFlags::default()).unwrap();
            for i in 0..EACH {
                w.register_feature(owner, pawns[i % pawns.len()], &format!("F{}", i / pawns.len()), "Pawn").unwrap();
            }
        }),
        ("properties_written", |w, owner, pawns| {
            let _ = w.add_component_request(owner, "Pawn", "Stats", RequestFlags::default()).unwrap();
            for i in 0..EACH {
                let pawn = pawns[i % pawns.len()];
                let name = format!("p{}", i / pawns.len());
                w.set_property_by(owner, usize::MAX, pawn, "Stats", &name, Value::Integer(1)).unwrap();
            }
        }),
        ("names_introduced", |w, owner, _| {
            w.acting_as(owner, |w| {
                for i in 0..EACH {
                    w.intern(&format!("name-{i}"));
                }
            });
        }),
    ]
}

fn teardown(c: &mut Criterion) {
    let mut group = c.benchmark_group("teardown");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EACH as u64));
    for (kind, hold) in kinds() {
        group.bench_function(kind, |b| {
            b.iter_batched(
                || {
                    let (mut w, owner, pawns) = world();
                    hold(&mut w, owner, &pawns);
                    let _ = w.take_work();
                    (w, owner)
                },
                |(mut w, owner)| {
                    w.remove_owner(owner);
                    w
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, teardown);
criterion_main!(benches);
