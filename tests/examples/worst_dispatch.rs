//! The worst a plugin within its limits can do to the world it plays in: each attack of the hostile plugin
//! that floods or loops is played beside `lyra-character` under the default limits, and the example reports
//! how long the world's slowest dispatch took, how much work it delivered, who was quarantined, and whether
//! the neighbour still brought its pawn to `GameplayReady`. Components come from a warm compile cache, so
//! the load column is the activation's dispatches (where `spawn-storm` and the floods strike) and the play
//! column the game's (where `ping-self` strikes).
//!
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example worst_dispatch`
//!
//! Times are wall-clock on whatever machine runs it; they show the order of magnitude a plugin can impose.

use std::time::{Duration, Instant};

use gamefeature_host::game;
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::timeline::{track, EventKind};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{Session, SessionOptions};
use gamefeature_tests::*;

const ATTACKS: [(&str, &str); 5] = [
    ("spawn-storm", "spawns receivers 300 per call, up to 30,000"),
    ("ping-self", "answers its own events for ever"),
    ("flood-events", "sends a million events in one call"),
    ("flood-spawns", "spawns a million actors in one call"),
    ("hoard-properties", "writes 64 KiB properties until refused"),
];

fn main() {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    println!("attack              load   slowest play step   calls  quarantined  neighbour");
    let cache = tempfile::TempDir::new().unwrap();
    for (behaviour, what) in ATTACKS {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        let folder = plugins.add_custom(
            "hostile",
            "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
             [permissions]\nspawn-actors = true\nsend-events = true\ncomponent-requests = [\"*\"]\n\
             [bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n",
            Some(&HOSTILE),
        );
        std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
        let new_session = || {
            Session::new(SessionOptions {
                plugin_dirs: vec![plugins.path().to_path_buf()],
                runtime: RuntimeConfig {
                    max_instances: 32,
                    cache_dir: Some(cache.path().to_path_buf()),
                    ..RuntimeConfig::default()
                },
                manager: trusted(),
                ..SessionOptions::default()
            })
            .unwrap()
        };
        // Compile once beforehand, so that loading measures the dispatches, not the compiler.
        let _ = new_session().runtime().load_plugin(&new_session().features().manifest("hostile").unwrap());
        let _ = new_session().runtime().load_plugin(&new_session().features().manifest("lyra-character").unwrap());
        let session = new_session();
        let experiences = ExperienceDir::new();
        let path = experiences.write("e.toml", &experience_with_features(&["lyra-character", "hostile"]));
        let mut manager = session.create_world("w", NetMode::Standalone);
        let started = Instant::now();
        tokio.block_on(manager.load(&path)).unwrap();
        let load = started.elapsed();
        let mut slowest = Duration::ZERO;
        let mut step = |f: &mut dyn FnMut()| {
            let started = Instant::now();
            f();
            slowest = slowest.max(started.elapsed());
        };
        let mut player = None;
        step(&mut || player = manager.with_world(|w| game::spawn_player(w, "Character")).ok());
        let player = player.expect("a player spawns");
        step(&mut || manager.with_world(|w| game::possess(w, &player)).unwrap());
        step(&mut || manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap());
        let ready = {
            let w = world::lock(manager.world());
            let state = w.feature_state(player.pawn, "Hero").unwrap_or(0);
            w.state_text(state) == Some("InitState.GameplayReady")
        };
        let calls = session.timeline().texts(&track::instance("lyra-character", "w"), EventKind::Call).len()
            + session.timeline().texts(&track::instance("hostile", "w"), EventKind::Call).len();
        let quarantined = !manager.live_features().contains(&"hostile".to_string());
        tokio.block_on(manager.end_play()).unwrap();
        println!(
            "{behaviour:<17} {:>7.1} ms  {:>14.1} ms  {calls:>6}  {:<11}  {}   ({what})",
            load.as_secs_f64() * 1e3,
            slowest.as_secs_f64() * 1e3,
            if quarantined { "hostile" } else { "nobody" },
            if ready { "GameplayReady" } else { "STALLED" },
        );
    }
}
