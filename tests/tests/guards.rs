//! Guards on what plugins share: each test is an attack a plugin written against 0.2.0 could make on shared
//! state, on the world's time or on an actor on its way out, and what the host does instead of letting it.

use gamefeature_host::feature::PluginState;
use gamefeature_host::timeline::LogLevel;
use gamefeature_tests::hostile::*;
use gamefeature_tests::*;

/// The hostile plugin's manifest, declaring `components` (TOML of its `[components]` tables).
fn hostile_declaring(plugins: &PluginDir, behaviour: &str, components: &str) {
    let manifest = format!("{}{components}", hostile_manifest("hostile"));
    let folder = plugins.add_custom("hostile", &manifest, Some(&HOSTILE));
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
}

#[tokio::test]
async fn a_creation_policy_for_a_class_the_plugin_does_not_declare_is_refused_by_its_manifest() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_declaring(&plugins, "none", "[components.creation]\nHeroComponent = \"never\"\n");
    let session = session(&plugins);
    let mut manager = play_beside_lyra(&session, "a policy for lyra's class").await;
    assert_eq!(manager.live_features(), ["lyra-character"]);
    assert!(!matches!(session.features().state("hostile"), Some(PluginState::Stable(_))));
    let refused = session.discovery().errors.iter().find(|f| f.contains("hostile")).expect("its manifest is refused");
    assert!(refused.contains("plugin.toml"), "{refused}");
    assert!(refused.contains("sets the policy of \"HeroComponent\", which the plugin does not declare"), "{refused}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_plugin_declaring_another_plugins_class_cannot_set_its_policy() {
    for policy in ["never", "lazy"] {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        let components = format!(
            "[components]\nclasses = [\"HeroComponent\"]\n[components.creation]\nHeroComponent = \"{policy}\"\n"
        );
        hostile_declaring(&plugins, "none", &components);
        let session = session(&plugins);
        // The hostile plugin activates first, so its policy applies until lyra-character declares the class too;
        // from then on neither sets it, and lyra's characters become ready.
        let mut manager = play_beside_lyra(&session, policy).await;
        assert_eq!(manager.live_features(), ["hostile", "lyra-character"], "{policy}");
        // Said on both plugins' tracks, naming the plugin whose policy no longer applies.
        for plugin in ["lyra-character", "hostile"] {
            let warnings = session.timeline().texts(
                &gamefeature_host::timeline::track::instance(plugin, "w"),
                gamefeature_host::timeline::EventKind::Log(LogLevel::Warn),
            );
            let said = "lyra-character declares component class HeroComponent too: the creation policy hostile set";
            assert!(warnings.iter().any(|w| w.contains(said)), "{policy}, {plugin}: {warnings:?}");
        }
        manager.end_play().await.unwrap();
    }
}

#[tokio::test]
async fn a_plugins_creation_policy_leaves_with_it() {
    let plugins = PluginDir::with(&[]);
    let components = "[components]\nclasses = [\"Shield\"]\n[components.creation]\nShield = \"never\"\n";
    hostile_declaring(&plugins, "none", components);
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    let policy = |m: &gamefeature_host::experience::ExperienceManager| {
        gamefeature_host::world::lock(m.world()).creation_policy("Shield")
    };
    assert_eq!(policy(&manager), gamefeature_host::world::CreationPolicy::Never);
    manager.end_play().await.unwrap();
    assert_eq!(policy(&manager), gamefeature_host::world::CreationPolicy::Always);
}

#[tokio::test]
async fn timers_reach_a_plugin_at_most_256_per_call_each_call_in_the_timeline() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "timer-flood");
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    for _ in 0..2 {
        manager.tick(std::time::Duration::from_millis(33));
    }
    let calls = session.timeline().texts(
        &gamefeature_host::timeline::track::instance("hostile", "w"),
        gamefeature_host::timeline::EventKind::Call,
    );
    let timer_calls: Vec<&String> = calls.iter().filter(|c| c.starts_with("on-timers")).collect();
    let frame = ["on-timers (256)", "on-timers (256)", "on-timers (256)", "on-timers (232)"];
    assert_eq!(timer_calls, frame.iter().chain(&frame).collect::<Vec<_>>());
    assert_eq!(manager.live_features(), ["hostile"]);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_plugin_over_its_frame_budget_frame_after_frame_is_quarantined_and_the_others_play_on() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "busy-timers");
    let mut runtime = runtime_config(None);
    runtime.plugin_limits.insert(
        "hostile".into(),
        gamefeature_host::config::LimitOverrides { frame_budget_ms: Some(1), ..Default::default() },
    );
    let session = session_with_runtime(&plugins, runtime, trusted());
    let mut manager = play_beside_lyra(&session, "busy-timers").await;
    let frame = std::time::Duration::from_millis(33);
    for _ in 1..gamefeature_host::delivery::FRAMES_OVER_BUDGET {
        manager.tick(frame);
        assert_eq!(manager.live_features(), ["hostile", "lyra-character"], "one frame over budget is tolerated");
    }
    manager.tick(frame);
    assert_eq!(manager.live_features(), ["lyra-character"]);
    let failures = session.timeline().texts(
        &gamefeature_host::timeline::track::instance("hostile", "w"),
        gamefeature_host::timeline::EventKind::Failure,
    );
    assert!(
        failures.iter().any(|f| f.contains("frame budget") && f.contains("over its frame budget of 1.0 ms")),
        "{failures:?}"
    );
    play_one_player(&mut manager, "after the quarantine");
    manager.end_play().await.unwrap();
}

/// A session whose hostile plugin has a frame budget of `budget_ms` and a call deadline raised to 5 s.
fn with_raised_limits(plugins: &PluginDir, budget_ms: u64) -> gamefeature_host::Session {
    let mut runtime = runtime_config(None);
    let raised = gamefeature_host::config::LimitOverrides {
        frame_budget_ms: Some(budget_ms),
        call_deadline_ms: Some(5000),
        ..Default::default()
    };
    runtime.plugin_limits.insert("hostile".into(), raised);
    session_with_runtime(plugins, runtime, trusted())
}

/// The frame budget holds inside the frame: a plugin with a thousand timers due every frame, each a little
/// work, and a call deadline raised to 5 s, gets one call of 256 timers a frame once that call put it over its
/// budget (it got four a frame, every one within its deadline); the rest wait, each timer once, and it is
/// quarantined after three frames over budget as before.
#[tokio::test]
async fn a_plugin_over_its_frame_budget_gets_no_more_timer_calls_in_that_frame() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "heavy-timer-flood");
    let session = with_raised_limits(&plugins, 1);
    let mut manager = hostile_alone(&session).await;
    let timer_calls = || {
        let calls = session.timeline().texts(
            &gamefeature_host::timeline::track::instance("hostile", "w"),
            gamefeature_host::timeline::EventKind::Call,
        );
        calls.into_iter().filter(|c| c.starts_with("on-timers")).collect::<Vec<_>>()
    };
    for _ in 1..gamefeature_host::delivery::FRAMES_OVER_BUDGET {
        manager.tick(std::time::Duration::from_millis(33));
    }
    // Its activation is charged to the first frame but does not hold its deliveries back: one call a frame.
    let calls = timer_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls.iter().all(|c| c.starts_with("on-timers (256)")), "{calls:?}");
    assert_eq!(manager.live_features(), ["hostile"]);
    manager.tick(std::time::Duration::from_millis(33));
    assert!(manager.live_features().is_empty(), "quarantined after three frames over budget");
    manager.end_play().await.unwrap();
}

/// The frame budget holds inside the frame for every kind of work delivered, not only timers: a plugin whose
/// calls of one kind nap 25 ms each (within a call deadline raised to 5 s) gets at most one of them in a frame,
/// as one puts it over its 20 ms budget; the rest waits for its next frame; it is quarantined after three frames
/// over budget. The game spawns enough pawns for several batches of each kind in one frame.
#[tokio::test]
async fn a_plugin_over_its_frame_budget_gets_no_more_work_of_any_kind_in_that_frame() {
    let kinds = [
        ("nap-event", "handle-extension-events"),
        ("nap-state-changed", "on-init-states-changed"),
        ("nap-can-change", "try-change-init-states"),
        ("nap-property-changed", "on-properties-changed"),
    ];
    for (behaviour, call) in kinds {
        let plugins = PluginDir::with(&[]);
        hostile(&plugins, behaviour);
        let session = with_raised_limits(&plugins, 20);
        let mut manager = hostile_alone(&session).await;
        let calls = || {
            let calls = session.timeline().texts(
                &gamefeature_host::timeline::track::instance("hostile", "w"),
                gamefeature_host::timeline::EventKind::Call,
            );
            calls.into_iter().filter(|c| c.starts_with(call)).count()
        };
        // The frame of its activation ends; the next one starts within budget.
        manager.tick(std::time::Duration::from_millis(33));
        let before = calls();
        manager.with_world(|w| (0..=2 * gamefeature_host::delivery::MAX_BATCH).for_each(|_| drop(w.spawn("Pawn"))));
        let mut per_frame = vec![calls() - before];
        for _ in 0..gamefeature_host::delivery::FRAMES_OVER_BUDGET {
            let before = calls();
            manager.tick(std::time::Duration::from_millis(33));
            per_frame.push(calls() - before);
        }
        assert!(per_frame.iter().all(|n| *n <= 1), "{behaviour}: {call} calls per frame {per_frame:?}");
        assert!(per_frame.iter().sum::<usize>() >= 2, "{behaviour}: its work waited, not lost: {per_frame:?}");
        assert!(manager.live_features().is_empty(), "{behaviour}: quarantined after three frames over budget");
        manager.end_play().await.unwrap();
    }
}

/// The failures listed in a world's report, as shown.
fn failures(manager: &gamefeature_host::experience::ExperienceManager) -> Vec<String> {
    manager.report().failures.iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn a_reload_whose_old_version_fails_too_says_the_plugin_is_out() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "refuse-restore");
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    let error = manager.reload_feature("hostile").await.unwrap_err();
    assert!(matches!(error, gamefeature_host::experience::ReloadError::Lost { .. }), "{error}");
    assert!(error.to_string().contains("the old version brought back failed too"), "{error}");
    assert!(!error.to_string().contains("runs again"), "{error}");
    assert_eq!(manager.live_features(), Vec::<String>::new());
    let listed = failures(&manager);
    assert_eq!(listed.len(), 2, "the new version's failure, then the old one's: {listed:?}");
    assert!(
        !listed[0].contains("brought back") && listed[1].contains("the old version 0.1.0 brought back"),
        "{listed:?}"
    );
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn an_old_version_brought_back_reads_its_own_bundles_not_the_new_versions() {
    let plugins = PluginDir::with(&[]);
    let folder = hostile_named(&plugins, "hostile", "none");
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    // The new version's files replace the old one's on disk: its behaviour is to panic as it activates.
    std::fs::write(folder.join("behaviour.txt"), "panic-activating").unwrap();
    let error = manager.reload_feature("hostile").await.unwrap_err();
    assert!(matches!(error, gamefeature_host::experience::ReloadError::Failed { .. }), "{error}");
    assert_eq!(manager.live_features(), ["hostile"], "the old version runs again, with its own behaviour");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_snapshot_that_traps_is_listed_and_its_successor_starts_fresh() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "panic-snapshot");
    let session = session(&plugins);
    let mut manager = hostile_alone(&session).await;
    manager.reload_feature("hostile").await.unwrap();
    assert_eq!(manager.live_features(), ["hostile"]);
    let listed = failures(&manager);
    assert!(listed.iter().any(|f| f.contains("snapshot: trapped") && f.contains("panicked")), "{listed:?}");
    manager.end_play().await.unwrap();
}

/// Supervised restarts (`[restarts] policy = "on-failure"`): a plugin that traps while it plays is started
/// again after its backoff, from the last state kept of it, its component back on the pawns and its handler
/// hearing them; after the restarts its window allows, one more fault keeps it out, and it says so.
#[tokio::test]
async fn a_plugin_that_faults_comes_back_from_its_last_state_and_stays_out_past_its_restarts() {
    let plugins = PluginDir::with(&[]);
    hostile(&plugins, "restartable");
    let mut manager_options = trusted();
    let restarts = gamefeature_host::supervision::RestartOverrides {
        policy: Some(gamefeature_host::supervision::PolicyKind::OnFailure),
        max_restarts: Some(2),
        backoff_ms: Some(100),
        snapshot_every_s: Some(1),
        ..Default::default()
    };
    manager_options.restarts.default = restarts.apply_to(Default::default()).unwrap();
    let session = session_with(&plugins, None, manager_options);
    let mut manager = hostile_alone(&session).await;
    let pawn = manager.with_world(|w| w.spawn("Pawn").unwrap());
    let frame = std::time::Duration::from_millis(33);
    let infos = || {
        session.timeline().texts(
            &gamefeature_host::timeline::track::instance("hostile", "w"),
            gamefeature_host::timeline::EventKind::Log(LogLevel::Info),
        )
    };
    let notes = || {
        session.timeline().texts(
            &gamefeature_host::timeline::track::instance("hostile", "w"),
            gamefeature_host::timeline::EventKind::Restart,
        )
    };
    let has_stats = |manager: &mut gamefeature_host::experience::ExperienceManager| {
        manager.with_world(|w| w.actor(pawn).unwrap().component("HostileStats").is_some())
    };
    for _ in 0..40 {
        manager.tick(frame);
    }
    let kept = infos().iter().rev().find(|l| l.starts_with("kept count ")).cloned().expect("its state was kept");
    let kept_count = kept.trim_start_matches("kept count ").to_string();
    assert!(kept_count.parse::<u64>().unwrap() >= 30, "kept after a second of game time: {kept}");

    manager.with_world(|w| w.send_extension_event(pawn, "Crash").unwrap());
    assert!(manager.live_features().is_empty(), "quarantined at once");
    assert!(!has_stats(&mut manager), "what it added left with it");
    manager.tick(frame);
    assert_eq!(notes().last().map(String::as_str), Some("restart 1 of 2 in 100 ms of game time"));
    for _ in 0..3 {
        manager.tick(frame);
    }
    assert_eq!(manager.live_features(), [] as [&str; 0], "not before 100 ms of game time");
    manager.tick(frame);
    assert_eq!(manager.live_features(), ["hostile"], "back after 100 ms of game time");
    assert_eq!(manager.restart_count(), 1);
    assert!(notes().last().unwrap().starts_with("restarted from its state kept at frame "), "{:?}", notes());
    assert!(infos().contains(&format!("restored count {kept_count}")), "{:?}", infos());
    assert!(has_stats(&mut manager), "its component is back on the pawn");
    manager.with_world(|w| w.send_extension_event(pawn, "Hello").unwrap());
    assert!(infos().iter().any(|l| l.starts_with("heard Hello with count ")), "its handler hears the pawn again");

    // Two more faults: the second restart waits twice as long; after it, the next fault keeps it out.
    manager.with_world(|w| w.send_extension_event(pawn, "Crash").unwrap());
    manager.tick(frame);
    assert_eq!(notes().last().map(String::as_str), Some("restart 2 of 2 in 200 ms of game time"));
    for _ in 0..7 {
        manager.tick(frame);
    }
    assert_eq!(manager.live_features(), ["hostile"]);
    manager.with_world(|w| w.send_extension_event(pawn, "Crash").unwrap());
    for _ in 0..20 {
        manager.tick(frame);
    }
    assert!(manager.live_features().is_empty(), "out for good");
    assert_eq!(manager.restart_count(), 2);
    assert!(notes().last().unwrap().starts_with("stays out: it faulted again after 2 restart(s)"), "{:?}", notes());
    manager.end_play().await.unwrap();
}
