//! Times each phase of 10,000 pawns going through Lyra's init chain, for finding where the time goes.
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example init_phases [pawns] [bare]`
//!
//! `bare` loads no feature: what the world's own spawning and possessing cost, without any plugin.

use std::time::Instant;

use gamefeature_host::game;
use gamefeature_host::timeline::EventKind;
use gamefeature_host::world::NetMode;
use gamefeature_tests::*;

fn main() {
    let pawns: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let bare = std::env::args().skip(1).any(|a| a == "bare");
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(if bare { &[] } else { &["lyra-character"] }));
    let session = session_with(&plugins, None, trusted());
    let mut manager = session.create_world("bench", NetMode::Standalone);
    tokio.block_on(manager.load(&path)).unwrap();
    manager.with_world(|w| w.set_recording(false));
    let calls_before = session.timeline().events().iter().filter(|e| e.kind == EventKind::Call).count();
    let host_calls_before = manager.with_world(|w| w.plugin_calls());
    let started = Instant::now();
    let players: Vec<game::Player> =
        manager.with_world(|w| (0..pawns).map(|_| game::spawn_player(w, "Character").unwrap()).collect());
    let spawned = started.elapsed();
    manager.with_world(|w| players.iter().for_each(|p| game::possess(w, p).unwrap()));
    let possessed = started.elapsed();
    manager.with_world(|w| players.iter().for_each(|p| game::replicate_player_state(w, p).unwrap()));
    let ready = started.elapsed();
    let events = session.timeline().events();
    let calls = events.iter().filter(|e| e.kind == EventKind::Call).count() - calls_before;
    let logs = events.iter().filter(|e| matches!(e.kind, EventKind::Log(_))).count();
    println!(
        "{pawns} pawns: spawn {spawned:?}, possess {:?}, player state {:?}; total {ready:?}",
        possessed - spawned,
        ready - possessed
    );
    let host_calls = manager.with_world(|w| w.plugin_calls()) - host_calls_before;
    println!(
        "batched calls recorded: {calls}; host calls per pawn: {:.1}; plugin log lines: {logs}",
        host_calls as f64 / pawns as f64
    );
    // Entries delivered per pawn, by export: what the host's bookkeeping and the plugin's work scale with.
    let mut entries: std::collections::BTreeMap<String, usize> = Default::default();
    for event in events.iter().filter(|e| e.kind == EventKind::Call).skip(calls_before) {
        if let Some((call, count)) = event.text.rsplit_once(" (") {
            *entries.entry(call.to_string()).or_default() += count.trim_end_matches(')').parse::<usize>().unwrap_or(0);
        }
    }
    let per_pawn: Vec<String> =
        entries.iter().map(|(call, n)| format!("{call} {:.1}", *n as f64 / pawns as f64)).collect();
    println!("entries per pawn: {}", per_pawn.join(", "));
    let failures: Vec<String> =
        events.iter().filter(|e| e.kind == EventKind::Failure).map(|e| e.text.clone()).collect();
    println!("live features: {:?}; failures: {failures:?}", manager.live_features());
}
