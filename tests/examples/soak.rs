//! Activates and deactivates a plugin that adds components and handlers, many times, in one world full of
//! actors; reports resident memory before and after and everything left behind (which must be nothing).
//!
//! `env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example soak [CYCLES]`

use gamefeature_host::world::{self, NetMode};
use gamefeature_tests::*;

fn main() {
    let cycles: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&[SHOOTER_CORE, BASE_GAMEPLAY, LYRA_CHARACTER]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["base-gameplay"]));
    let session = session(&plugins);
    // A server running for days keeps a bounded timeline.
    session.timeline().set_retention(Some(10_000));
    let mut manager = session.create_world("soak", NetMode::Standalone);
    tokio.block_on(manager.load(&path)).unwrap();
    manager.with_world(|w| {
        w.set_recording(false);
        for _ in 0..100 {
            w.spawn("Character").unwrap();
        }
    });
    let cycle = |manager: &mut gamefeature_host::ExperienceManager| {
        tokio.block_on(manager.activate_feature("lyra-character")).unwrap();
        assert!(tokio.block_on(manager.deactivate_feature("lyra-character")));
    };
    // Warm up allocator pools and the compiled code before measuring.
    for _ in 0..100 {
        cycle(&mut manager);
    }
    let before = resident_kib();
    for _ in 0..cycles {
        cycle(&mut manager);
    }
    let after = resident_kib();
    let w = world::lock(manager.world());
    println!(
        "{cycles} activate/deactivate cycles of lyra-character over 100 characters: resident {before} KiB -> {after} KiB; \
         left behind: {} components, {} handlers, {} subscriptions, {} init-state features, {} queued items, {} requests",
        w.requested_component_count(),
        w.live_handlers(),
        w.live_subscriptions(),
        w.live_features(),
        w.queued_work(),
        w.live_request_handles(),
    );
}
