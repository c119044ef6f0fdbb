//! Times each phase of 10,000 pawns going through Lyra's init chain, for finding where the time goes.
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example init_phases [pawns] [bare] [unpooled]
//! [rounds=N]`
//!
//! Per phase it prints the batch entries per pawn by export and the time per entry inside those calls
//! (lowering, the plugin's code and its host calls): the rest of a phase is the world's and the host's own
//! bookkeeping. `bare` loads no feature: what the world's own spawning and possessing cost, without any plugin.
//! `unpooled` runs without the pooling allocator, for tools that cannot reserve its address space (valgrind's
//! callgrind counts the instructions of each change exactly, where times on this machine vary). With
//! `GFHOST_CACHE_DIR` set, compiled plugins are cached there, as `gfhost` does: a profiler then sees no
//! compiling from the second run on. `rounds=N` plays it N times, each in a new world of the same session, as
//! the criterion bench does: from the second round on, the process reuses the memory the last round freed.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gamefeature_host::game;
use gamefeature_host::timeline::{EventKind, TimelineEvent};
use gamefeature_host::world::{NetMode, World};
use gamefeature_tests::*;

type Phase = fn(&mut World, &game::Player);

fn main() {
    let pawns: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let bare = std::env::args().skip(1).any(|a| a == "bare");
    let pooling = !std::env::args().skip(1).any(|a| a == "unpooled");
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(if bare { &[] } else { &["lyra-character"] }));
    let cache = std::env::var_os("GFHOST_CACHE_DIR").map(std::path::PathBuf::from);
    let runtime = gamefeature_host::runtime::RuntimeConfig { pooling, ..runtime_config(cache.as_deref()) };
    let session = session_with_runtime(&plugins, runtime, trusted());
    let rounds: usize =
        std::env::args().skip(1).find_map(|a| a.strip_prefix("rounds=").and_then(|n| n.parse().ok())).unwrap_or(1);
    for round in 1..=rounds {
        if rounds > 1 {
            println!("round {round}:");
        }
        play(&tokio, &session, &path, pawns);
    }
}

/// Spawns, possesses and replicates `pawns` players in a new world, printing each phase's time and calls.
fn play(tokio: &tokio::runtime::Runtime, session: &gamefeature_host::Session, path: &std::path::Path, pawns: usize) {
    let mut manager = session.create_world("bench", NetMode::Standalone);
    tokio.block_on(manager.load(path)).unwrap();
    manager.with_world(|w| w.set_recording(false));
    let host_calls_before = manager.with_world(|w| w.plugin_calls());

    let mut recorded = session.timeline().events().len();
    let started = Instant::now();
    let players: Vec<game::Player> =
        manager.with_world(|w| (0..pawns).map(|_| game::spawn_player(w, "Character").unwrap()).collect());
    let mut phases = vec![("spawn", started.elapsed(), calls_since(session, &mut recorded))];
    let rest: [(&str, Phase); 2] = [
        ("possess", |w, p| game::possess(w, p).unwrap()),
        ("player state", |w, p| game::replicate_player_state(w, p).unwrap()),
    ];
    for (name, phase) in rest {
        let began = Instant::now();
        manager.with_world(|w| players.iter().for_each(|p| phase(w, p)));
        phases.push((name, began.elapsed(), calls_since(session, &mut recorded)));
    }
    let total = started.elapsed();

    let shown: Vec<String> = phases.iter().map(|(name, took, _)| format!("{name} {took:?}")).collect();
    println!("{pawns} pawns: {}; total {total:?}", shown.join(", "));
    let host_calls = manager.with_world(|w| w.plugin_calls()) - host_calls_before;
    let calls: usize = phases.iter().map(|(_, _, calls)| calls.len()).sum();
    println!("batched calls: {calls}; host calls per pawn: {:.2}", host_calls as f64 / pawns as f64);
    let mut all = Vec::new();
    for (name, took, calls) in &phases {
        println!("{name}: {}", by_export(calls, *took, pawns));
        all.extend(calls.iter().cloned());
    }
    println!("all: {}", by_export(&all, total, pawns));
    let events = session.timeline().events();
    let failures: Vec<&str> = events.iter().filter(|e| e.kind == EventKind::Failure).map(|e| e.text.as_str()).collect();
    let logs = events.iter().filter(|e| matches!(e.kind, EventKind::Log(_))).count();
    println!("live features: {:?}; failures: {failures:?}; plugin log lines: {logs}", manager.live_features());
    tokio.block_on(manager.end_play()).unwrap();
}

/// The calls into plugins the timeline recorded since `recorded` events, which moves past them. Counting by
/// position holds while the timeline keeps every event (below its cap: 10,000 pawns record ~1,700 calls).
fn calls_since(session: &gamefeature_host::Session, recorded: &mut usize) -> Vec<TimelineEvent> {
    let events = session.timeline().events();
    let since = events.get(*recorded..).unwrap_or_default();
    let calls = since.iter().filter(|e| e.kind == EventKind::Call).cloned().collect();
    *recorded = events.len();
    calls
}

/// Entries per pawn by export, each with its time per entry inside the calls, and the share of `took` spent
/// in calls at all.
fn by_export(calls: &[TimelineEvent], took: Duration, pawns: usize) -> String {
    let mut exports: BTreeMap<&str, (usize, Duration)> = BTreeMap::new();
    for call in calls {
        if let Some((export, count)) = call.text.rsplit_once(" (") {
            let entry = exports.entry(export).or_default();
            entry.0 += count.trim_end_matches(')').parse::<usize>().unwrap_or(0);
            entry.1 += call.took.unwrap_or_default();
        }
    }
    let in_calls: Duration = exports.values().map(|(_, took)| *took).sum();
    let shown: Vec<String> = exports
        .iter()
        .map(|(export, (n, took))| {
            let per_entry = took.as_nanos() as f64 / (*n).max(1) as f64;
            format!("{export} {:.1} x {per_entry:.0} ns", *n as f64 / pawns as f64)
        })
        .collect();
    format!("in calls {in_calls:?} of {took:?}; entries per pawn: {}", shown.join(", "))
}
