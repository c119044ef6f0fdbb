//! What the bridge costs a Bevy game per frame: 10,000 entities that are actors, each with a bridged component,
//! two features playing on them (damageable-props watching every prop's health, score-keeper), and the game moving
//! a hundred of them a frame. Three ways, in one run:
//! - `bevy_alone`: the Bevy app, its entities and its system, without the host;
//! - `host_alone`: the library's loop with the same world, the game's writes made through `with_world`;
//! - `bridged`: the Bevy app hosting the world through `bevy_gamefeature`.
//!
//! At the end it prints what the bridge adds over the other two together (the target: at most 30 %).
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p bevy_gamefeature --bench bridge
//! ```

use std::time::{Duration, Instant};

use bevy_app::{App, FixedUpdate, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_gamefeature::{Actor, BridgeSet, GameFeatureApp, GameFeaturePlugin, GameFeatures, HostSettings};
use bevy_reflect::Reflect;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{ActorId, NetMode, Value};
use gamefeature_host::{Session, SessionOptions};
use gamefeature_plugin_artifacts::{shared_cache, ExperienceDir, PluginDir, DAMAGEABLE_PROPS, SCORE_KEEPER};

const ENTITIES: usize = 10_000;
/// Entities the game moves each frame.
const MOVED: usize = 100;
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);
const EXPERIENCE: &str = "[experience]\nname = \"Bridge\"\nfeatures = [\"damageable-props\", \"score-keeper\"]\n\n\
    [classes]\nDamageableProp = \"Actor\"\n\n[bundles.Server]\nprops = \"props.txt\"\n";

/// Where a prop is: the game's component, bridged.
#[derive(Component, Reflect, Default, Debug, Clone, Copy)]
struct Spot {
    x: f32,
    y: f32,
}

/// The next prop the game moves.
#[derive(Resource, Default)]
struct Cursor(usize);

fn move_some(mut spots: Query<'_, '_, &mut Spot>, mut cursor: ResMut<'_, Cursor>) {
    let len = spots.iter().len();
    // A hundred entities a frame, going round all of them.
    for (at, mut spot) in spots.iter_mut().enumerate() {
        if (at + len - cursor.0) % len < MOVED {
            spot.x += 0.5;
        }
    }
    cursor.0 = (cursor.0 + MOVED) % len;
}

struct Files {
    plugins: PluginDir,
    experiences: ExperienceDir,
}

fn files() -> Files {
    let plugins = PluginDir::with(&[DAMAGEABLE_PROPS, SCORE_KEEPER]);
    let experiences = ExperienceDir::new();
    experiences.write("props.txt", "count = 0\ntimed-hits = true\n");
    experiences.write("bridge.toml", EXPERIENCE);
    Files { plugins, experiences }
}

fn bevy_app() -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .insert_resource(Time::<Fixed>::from_duration(FRAME))
        .init_resource::<Cursor>();
    app
}

fn bevy_alone() -> App {
    let mut app = bevy_app();
    app.add_systems(FixedUpdate, move_some);
    for n in 0..ENTITIES {
        app.world_mut().spawn((Actor::new("DamageableProp"), Spot { x: n as f32, y: 0.0 }));
    }
    app
}

fn bridged(files: &Files) -> App {
    let settings = HostSettings::new(files.plugins.path(), files.experiences.path().join("bridge.toml"))
        .cache_dir(shared_cache())
        .grants(gamefeature_host::feature::GrantPolicy::Declared);
    let mut app = bevy_app();
    app.insert_resource(GameFeatures::start(settings).expect("the experience loads"))
        .add_plugins(GameFeaturePlugin)
        .bridge_component::<Spot>("Spot")
        .add_systems(FixedUpdate, move_some.before(BridgeSet::ToWorld));
    for n in 0..ENTITIES {
        app.world_mut().spawn((Actor::new("DamageableProp"), Spot { x: n as f32, y: 0.0 }));
    }
    app
}

/// The same world and plugins, stepped by the library's loop; the game's writes through `with_world`.
struct HostAlone {
    game: GameLoop,
    props: Vec<ActorId>,
    cursor: usize,
    _session: Session,
    _tokio: tokio::runtime::Runtime,
}

impl HostAlone {
    fn new(files: &Files) -> HostAlone {
        let mut options = SessionOptions {
            plugin_dirs: vec![files.plugins.path().to_path_buf()],
            runtime: RuntimeConfig { cache_dir: Some(shared_cache()), ..RuntimeConfig::default() },
            manager: ManagerOptions::default(),
            ..SessionOptions::default()
        };
        options.manager.grants = gamefeature_host::feature::GrantPolicy::Declared;
        let session = Session::new(options).expect("the runtime starts");
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let mut manager = session.create_world("bench", NetMode::Standalone);
        tokio.block_on(manager.load(&files.experiences.path().join("bridge.toml"))).expect("the experience loads");
        let props = manager.with_world(|w| {
            (0..ENTITIES)
                .map(|n| {
                    let prop = w.spawn("DamageableProp").unwrap();
                    w.attach_native_component(prop, "Spot").unwrap();
                    w.set_property(prop, "Spot", "x", Value::Float(n as f64)).unwrap();
                    w.set_property(prop, "Spot", "y", Value::Float(0.0)).unwrap();
                    prop
                })
                .collect()
        });
        let game = GameLoop::new(Played::Standalone(Box::new(manager)), tokio.handle().clone());
        HostAlone { game, props, cursor: 0, _session: session, _tokio: tokio }
    }

    fn frame(&mut self) {
        let (props, cursor) = (&self.props, self.cursor);
        self.game
            .with_world(|w| {
                for prop in props.iter().cycle().skip(cursor).take(MOVED) {
                    let x = match w.property(*prop, "Spot", "x") {
                        Ok(Some(Value::Float(x))) => *x,
                        _ => 0.0,
                    };
                    w.set_property(*prop, "Spot", "x", Value::Float(x + 0.5)).unwrap();
                }
            })
            .unwrap();
        self.cursor = (self.cursor + MOVED) % self.props.len();
        self.game.step(FRAME);
    }
}

/// Runs `frame` for criterion, adding up its time for the summary.
fn timed<'a>(spent: &'a mut (Duration, u64), mut frame: impl FnMut() + 'a) -> impl FnMut(u64) -> Duration + 'a {
    move |iterations| {
        let started = Instant::now();
        for _ in 0..iterations {
            frame();
        }
        let took = started.elapsed();
        spent.0 += took;
        spent.1 += iterations;
        took
    }
}

fn bridge_cost(c: &mut Criterion) {
    let files = files();
    let mut group = c.benchmark_group("bevy_bridge_10000_entities");
    group.sample_size(30);
    let mut bevy = (Duration::ZERO, 0);
    let mut host = (Duration::ZERO, 0);
    let mut both = (Duration::ZERO, 0);
    {
        let mut app = bevy_alone();
        app.update();
        group.bench_function("bevy_alone", |b| b.iter_custom(timed(&mut bevy, || app.update())));
    }
    {
        let mut world = HostAlone::new(&files);
        world.frame();
        group.bench_function("host_alone", |b| b.iter_custom(timed(&mut host, || world.frame())));
    }
    {
        let mut app = bridged(&files);
        app.update();
        group.bench_function("bridged", |b| b.iter_custom(timed(&mut both, || app.update())));
    }
    group.finish();
    let mean = |(spent, frames): (Duration, u64)| spent.as_secs_f64() / frames.max(1) as f64;
    let (bevy, host, both) = (mean(bevy), mean(host), mean(both));
    let apart = bevy + host;
    println!(
        "per frame: Bevy alone {:.1} us, host alone {:.1} us, bridged {:.1} us: the bridge adds {:+.1} % over the two apart",
        bevy * 1e6,
        host * 1e6,
        both * 1e6,
        (both - apart) / apart * 100.0
    );
}

criterion_group!(benches, bridge_cost);
criterion_main!(benches);
