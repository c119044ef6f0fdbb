//! A world that advances in frames: plugins' timers fire in game time, batched per plugin per frame; dropping
//! a timer or deactivating its plugin stops it; a plugin of API 0.1.0 (which has no timers) plays on unchanged
//! in a ticking world.

use std::time::Duration;

use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world;
use gamefeature_tests::*;

const FRAME: Duration = Duration::from_millis(50);

fn probe_lines(session: &gamefeature_host::Session) -> Vec<String> {
    session.timeline().texts(&track::instance("manager-probe", "w"), EventKind::Log(LogLevel::Info))
}

fn timer_lines(session: &gamefeature_host::Session) -> Vec<String> {
    probe_lines(session).into_iter().filter(|l| l.starts_with("timer ")).collect()
}

#[tokio::test]
async fn timers_fire_in_game_time_and_stop_with_their_handle_or_their_plugin() {
    let plugins = PluginDir::with(&[MANAGER_PROBE, LEGACY_PAWN_COUNTER]);
    let experiences = ExperienceDir::new();
    // Every 100 ms, and every frame.
    experiences.write("script.txt", "handler 3 Pawn\ntimer 1 100\ntimer 2 0\nhandles\n");
    let path = experiences.write(
        "e.toml",
        &format!(
            "{}[bundles.Equipped]\nscript = \"script.txt\"\n",
            experience_with_features(&["manager-probe", "legacy-pawn-counter"])
        ),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", world::NetMode::Standalone);
    let report = manager.load(&path).await.unwrap();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert!(probe_lines(&session).contains(&"handle: timer 2".to_string()));
    assert_eq!(world::lock(manager.world()).live_timers(), 2);

    for _ in 0..4 {
        manager.tick(FRAME);
    }
    assert_eq!(
        timer_lines(&session),
        [
            "timer 2 x1 frame 1",
            "timer 1 x1 frame 2",
            "timer 2 x1 frame 2",
            "timer 2 x1 frame 3",
            "timer 1 x1 frame 4",
            "timer 2 x1 frame 4"
        ]
    );
    // A frame longer than the period: the timer fires once, counting the periods that passed.
    manager.tick(Duration::from_millis(350));
    assert_eq!(timer_lines(&session)[6..], ["timer 1 x3 frame 5", "timer 2 x1 frame 5"]);
    assert_eq!(manager.with_world(|w| w.now()).time_us, 550_000);

    // Dropping a timer's handle stops it.
    manager.with_world(|w| {
        let pawn = w.spawn("Pawn").unwrap();
        w.send_extension_event(pawn, "do:drop-timer 2").unwrap();
    });
    manager.tick(FRAME);
    assert_eq!(timer_lines(&session)[8..], ["timer 1 x1 frame 6"]);
    assert_eq!(manager.live_features(), ["manager-probe", "legacy-pawn-counter"], "0.1.0 plays on in a ticking world");
    manager.end_play().await.unwrap();
    assert_eq!(world::lock(manager.world()).live_timers(), 0, "deactivation stopped its timers");
    let ticks_before = timer_lines(&session).len();
    manager.tick(FRAME);
    assert_eq!(timer_lines(&session).len(), ticks_before);
}
