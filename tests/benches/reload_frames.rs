//! Does reloading a plugin make a frame late? A world playing at 30 Hz reloads the same plugin — `event-sink`,
//! written in Rust, Python, JavaScript and C — 100 times, as a modder's edit loop or a live update does, and
//! every frame's time is kept: the p99 of all frames, and of the frames a new version was applied in.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench reload_frames
//! ```
//!
//! The world is a library-owned loop ([`GameLoop`]) with 1,000 characters, stepped at 30 Hz in real time; each
//! reload is asked for with [`GameLoop::reload`] (the new version compiles, from the compile cache here, off the
//! frame) and applied by a later step between frames. A frame's time is the whole step, the applied reload
//! included: what a game stepping the loop sees. Then each language's reload from command to active
//! ([`GameLoop::reload_now`], the frame not waited for), as a ratio to Rust's.
//!
//! Frames are paced, so the figures are times a player would see; a frame that the machine's other work
//! delays is counted too (the p99 of the frames with no reload says how much of that there is).

use std::time::{Duration, Instant};

use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_tests::*;

const RELOADS: usize = 100;
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);
const CHARACTERS: usize = 1000;
/// Reloads from command to active timed for each language, one after another.
const RELOADS_NOW: usize = 20;

const LANGUAGES: [(&str, TestPlugin, &str); 4] = [
    ("rust", EVENT_SINK, "event-sink"),
    ("python", EVENT_SINK_PY, "event-sink-py"),
    ("javascript", EVENT_SINK_JS, "event-sink-js"),
    ("c", EVENT_SINK_C, "event-sink-c"),
];

fn main() {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let mut lines = Vec::new();
    let mut now_medians = Vec::new();
    for (language, plugin, name) in LANGUAGES {
        let plugins = PluginDir::with(&[plugin]);
        let runtime = RuntimeConfig { cache_dir: Some(shared_cache()), ..RuntimeConfig::default() };
        let session = session_with_runtime(&plugins, runtime, trusted());
        let (manager, _experiences) = tokio.block_on(world_of_characters(&session, name, CHARACTERS));
        let mut game = GameLoop::new(Played::Standalone(Box::new(manager)), tokio.handle().clone());
        // Once, so every reload after finds the component compiled.
        game.reload_now(name).outcome.unwrap();

        let (mut quiet, mut reloading) = (Vec::new(), Vec::new());
        for _ in 0..RELOADS {
            game.reload(name);
            loop {
                let started = Instant::now();
                let step = game.step(FRAME);
                let took = started.elapsed();
                std::thread::sleep(FRAME.saturating_sub(took));
                if step.reloads.is_empty() {
                    quiet.push(took);
                    continue;
                }
                for reload in &step.reloads {
                    reload.outcome.as_ref().unwrap();
                }
                reloading.push(took);
                break;
            }
        }
        let mut now = Vec::new();
        for _ in 0..RELOADS_NOW {
            let started = Instant::now();
            game.reload_now(name).outcome.unwrap();
            now.push(started.elapsed());
        }
        now.sort_unstable();
        let now_median = now[now.len() / 2];
        now_medians.push((language, now_median));
        let mut all: Vec<Duration> = quiet.iter().chain(&reloading).copied().collect();
        all.sort_unstable();
        quiet.sort_unstable();
        reloading.sort_unstable();
        lines.push(format!(
            "{language:<10}  {:>6}  {:>9.2?}  {:>9.2?}  {:>9.2?}  {:>9.2?}  {:>9.2?}  {:>9.2?}  {:>9.2?}",
            all.len(),
            percentile(&all, 0.99),
            percentile(&quiet, 0.99),
            percentile(&reloading, 0.5),
            percentile(&reloading, 0.99),
            reloading.last().copied().unwrap_or_default(),
            all.iter().filter(|t| **t > FRAME).count(),
            now_median,
        ));
        if let Err(e) = game.end("the bench is over", FRAME, &mut ()) {
            panic!("play ended with an error: {e}");
        }
    }
    println!(
        "\nreload_frames: {RELOADS} reloads of each language's plugin in a world of {CHARACTERS} characters at 30 Hz"
    );
    println!(
        "language    frames  p99 (all)  p99 quiet  p50 apply  p99 apply  max apply  late (>33 ms)  command to active (median)"
    );
    for line in lines {
        println!("{line}");
    }
    let rust = now_medians[0].1.as_secs_f64();
    for (language, median) in &now_medians[1..] {
        println!(
            "reload_frames: {language}'s reload from command to active is {:.1}x Rust's (target for Python: <= 10x)",
            median.as_secs_f64() / rust
        );
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    match sorted.len() {
        0 => Duration::ZERO,
        n => sorted[(((n - 1) as f64) * fraction).round() as usize],
    }
}
