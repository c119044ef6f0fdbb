//! The experience lifecycle with real plugins: load states, bundles, callbacks, chaos delay, failures, teardown.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gamefeature_host::experience::{ChaosDelay, ExperienceLoadState::*, ManagerOptions, Priority};
use gamefeature_host::feature::{Destination, PluginState, Transition};
use gamefeature_host::timeline::{track, EventKind};
use gamefeature_host::world::{self, NetMode};
use gamefeature_tests::*;

#[tokio::test]
async fn load_states_follow_lyra_and_skip_what_does_not_apply() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    let with_features = experiences.write("with.toml", &experience_with_features(&["base-gameplay"]));
    let without_features = experiences.write("without.toml", "[experience]\nname = \"empty\"\n");

    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&with_features).await.unwrap();
    manager.end_play().await.unwrap();
    assert_eq!(
        manager.visited_states(),
        [Unloaded, Loading, LoadingGameFeatures, ExecutingActions, Loaded, Deactivating, Unloaded]
    );

    let mut manager = session.create_world("empty", NetMode::Standalone);
    manager.load(&without_features).await.unwrap();
    manager.end_play().await.unwrap();
    assert_eq!(manager.visited_states(), [Unloaded, Loading, ExecutingActions, Loaded, Deactivating, Unloaded]);

    let chaos = ManagerOptions { chaos: Some(ChaosDelay { min_secs: 0.0, random_secs: 0.01, seed: 3 }), ..trusted() };
    let session = session_with(&plugins, None, chaos);
    let mut manager = session.create_world("chaotic", NetMode::Standalone);
    manager.load(&with_features).await.unwrap();
    manager.end_play().await.unwrap();
    assert_eq!(
        manager.visited_states(),
        [
            Unloaded,
            Loading,
            LoadingGameFeatures,
            LoadingChaosTestingDelay,
            ExecutingActions,
            Loaded,
            Deactivating,
            Unloaded
        ]
    );
    // The timeline shows each state too, in the same order.
    let shown = session.timeline().texts(&track::experience("chaotic"), EventKind::State);
    let expected: Vec<String> = manager.visited_states().iter().map(|s| s.to_string()).collect();
    assert_eq!(shown, expected);
}

#[tokio::test]
async fn bundles_follow_the_net_mode_and_plugins_read_only_those() {
    let plugins = PluginDir::with(&[ASSET_PROBE]);
    let experiences = ExperienceDir::new();
    experiences.write("data/equipped.txt", "always");
    experiences.write("data/client.txt", "hud");
    experiences.write("data/server.txt", "spawns");
    let path = experiences.write(
        "probe.toml",
        &format!(
            "{}\n[bundles.Equipped]\nequipped = \"data/equipped.txt\"\n[bundles.Client]\nclient-only = \"data/client.txt\"\n[bundles.Server]\nserver-only = \"data/server.txt\"\n",
            experience_with_features(&["asset-probe"])
        ),
    );
    let session = session(&plugins);
    for (mode, client, server) in [
        (NetMode::Standalone, "yes", "yes"),
        (NetMode::ListenServer, "yes", "yes"),
        (NetMode::DedicatedServer, "no", "yes"),
        (NetMode::Client, "yes", "no"),
    ] {
        let name = mode.to_string();
        let mut manager = session.create_world(&name, mode);
        let report = manager.load(&path).await.unwrap().clone();
        let expected_bundles: Vec<_> = gamefeature_host::assets::BundleName::for_net_mode(mode);
        assert_eq!(report.bundles, expected_bundles);
        let logs = session
            .timeline()
            .texts(&track::instance("asset-probe", &name), EventKind::Log(gamefeature_host::timeline::LogLevel::Info));
        assert_eq!(
            logs,
            [
                "equipped: yes".to_string(),
                format!("client-only: {client}"),
                format!("server-only: {server}"),
                "own-data: yes".to_string(),
            ],
            "{mode}"
        );
        manager.end_play().await.unwrap();
    }
}

#[tokio::test]
async fn loaded_callbacks_fire_by_priority_and_late_ones_at_once() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["base-gameplay"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    let calls = Arc::new(Mutex::new(Vec::new()));
    for (priority, label) in [
        (Priority::Low, "low 1"),
        (Priority::Normal, "normal 1"),
        (Priority::High, "high 1"),
        (Priority::Low, "low 2"),
        (Priority::High, "high 2"),
    ] {
        let calls = calls.clone();
        manager.call_or_register_on_loaded(priority, Box::new(move |_| calls.lock().unwrap().push(label)));
    }
    assert!(calls.lock().unwrap().is_empty(), "nothing fires before the load");
    manager.load(&path).await.unwrap();
    assert_eq!(*calls.lock().unwrap(), ["high 1", "high 2", "normal 1", "low 1", "low 2"]);

    let late = calls.clone();
    manager.call_or_register_on_loaded(
        Priority::Low,
        Box::new(move |loaded| {
            assert_eq!(loaded.definition.name, "test");
            late.lock().unwrap().push("late")
        }),
    );
    assert_eq!(calls.lock().unwrap().last(), Some(&"late"), "registered after load, it fires at once");
    manager.end_play().await.unwrap();
    assert_eq!(calls.lock().unwrap().len(), 6, "callbacks fire once");
}

#[tokio::test]
async fn a_failing_activation_is_reported_while_the_experience_loads() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, FAILING_ACTIVATION]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["failing-activation", "base-gameplay"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.unwrap().clone();
    assert_eq!(manager.state(), Loaded);
    assert_eq!(report.active, ["base-gameplay"]);
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(report.failures[0].source, "failing-activation");
    assert!(report.failures[0].cause.contains("required map data is missing"), "{}", report.failures[0]);
    match session.features().state("failing-activation") {
        Some(PluginState::Error(error)) => {
            assert_eq!(error.during, Transition::Activating);
            assert!(error.cause.contains("required map data is missing"));
        }
        other => panic!("expected an error state, got {other:?}"),
    }
    let failures = session.timeline().texts(&track::experience("w"), EventKind::Failure);
    assert!(failures.iter().any(|f| f.contains("failing-activation")), "the timeline shows it: {failures:?}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn end_of_play_leaves_nothing_and_every_plugin_down() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE, PROGRESS_SAVE]);
    let experiences = ExperienceDir::new();
    experiences.write("sets/persist.toml", "[action-set]\nname = \"p\"\nfeatures = [\"progress-save\"]\n");
    let path = experiences.write(
        "e.toml",
        "[experience]\nname = \"e\"\nfeatures = [\"shooter-core\"]\naction-sets = [\"sets/persist.toml\"]\n\
         [[actions]]\nkind = \"add-components\"\nactor-class = \"PlayerState\"\ncomponent-class = \"Score\"\n",
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    {
        let mut w = world::lock(manager.world());
        w.spawn("Character").unwrap();
        w.spawn("PlayerState").unwrap();
    }
    manager.load(&path).await.unwrap();
    {
        let mut w = world::lock(manager.world());
        w.spawn("Character").unwrap();
        // Two characters with health and nameplate, one player state with a score.
        assert_eq!(w.requested_component_count(), 5);
    }
    for plugin in ["base-gameplay", "shooter-core", "progress-save"] {
        assert_eq!(session.features().state(plugin), Some(PluginState::Stable(Destination::Active)), "{plugin}");
    }
    manager.end_play().await.unwrap();

    let w = world::lock(manager.world());
    assert_eq!(w.requested_component_count(), 0, "no feature component is left");
    assert_eq!(w.live_request_handles(), 0, "no request is left");
    assert_eq!(w.actors().count(), 3, "the game's own actors stay");
    for plugin in ["base-gameplay", "shooter-core", "progress-save"] {
        assert_eq!(session.features().state(plugin), Some(PluginState::Stable(Destination::Installed)), "{plugin}");
        assert_eq!(session.features().activations(plugin), 0);
    }
    // The held deactivation was waited for: polled until done, before unloading.
    let calls = session.timeline().texts(&track::instance("progress-save", "w"), EventKind::Call);
    let tail: Vec<&str> = calls.iter().map(String::as_str).skip_while(|c| !c.starts_with("on-deactivating")).collect();
    assert_eq!(
        tail,
        [
            "on-deactivating -> Pending",
            "poll-deactivation -> Pending",
            "poll-deactivation -> Pending",
            "poll-deactivation -> Done",
            "on-unloading ok",
            "on-unregistering ok",
        ]
    );
}

#[tokio::test]
async fn a_held_deactivation_past_its_deadline_is_reported_and_play_still_ends() {
    let plugins = PluginDir::with(&[PROGRESS_SAVE]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["progress-save"]));
    let options = ManagerOptions { deactivation_deadline: Duration::ZERO, ..trusted() };
    let session = session_with(&plugins, None, options);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    manager.end_play().await.unwrap();
    assert_eq!(manager.state(), Unloaded);
    let failures = session.timeline().texts(&track::experience("w"), EventKind::Failure);
    assert!(failures.iter().any(|f| f.contains("progress-save") && f.contains("still deactivating")), "{failures:?}");
}

#[tokio::test]
async fn a_fixed_chaos_seed_gives_the_same_timeline() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["shooter-core"]));
    let run = |seed: u64| {
        let plugins = &plugins;
        let path = path.clone();
        async move {
            let chaos = ChaosDelay { min_secs: 0.001, random_secs: 0.05, seed };
            let session = session_with(plugins, None, ManagerOptions { chaos: Some(chaos), ..trusted() });
            let mut manager = session.create_world("w", NetMode::Standalone);
            let delay = manager.load(&path).await.unwrap().chaos_delay;
            manager.end_play().await.unwrap();
            // Times differ run to run; the events on each track, in order, must not.
            let mut tracks: Vec<(String, Vec<String>)> = Vec::new();
            for event in session.timeline().events() {
                if matches!(event.kind, EventKind::Load) {
                    continue;
                }
                match tracks.iter_mut().find(|(t, _)| *t == event.track) {
                    Some((_, texts)) => texts.push(event.text),
                    None => tracks.push((event.track, vec![event.text])),
                }
            }
            tracks.sort();
            (delay, tracks)
        }
    };
    let (first_delay, first) = run(11).await;
    let (second_delay, second) = run(11).await;
    let (other_delay, _) = run(12).await;
    assert!(first_delay.is_some());
    assert_eq!(first_delay, second_delay);
    assert_eq!(first, second);
    assert_ne!(first_delay, other_delay, "another seed, another delay");
}

#[tokio::test]
async fn two_worlds_hold_two_activations_and_two_instances() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["base-gameplay"]));
    let session = session(&plugins);
    let mut server = session.create_world("server", NetMode::DedicatedServer);
    let mut client = session.create_world("client", NetMode::Client);
    server.load(&path).await.unwrap();
    client.load(&path).await.unwrap();
    assert_eq!(session.features().activations("base-gameplay"), 2);
    for world in ["server", "client"] {
        let calls = session.timeline().texts(&track::instance("base-gameplay", world), EventKind::Call);
        assert_eq!(calls, ["on-registering ok", "on-loading ok", "on-activating ok", "on-activated ok"], "{world}");
    }
    server.end_play().await.unwrap();
    assert_eq!(
        session.features().state("base-gameplay"),
        Some(PluginState::Stable(Destination::Active)),
        "the client still holds it"
    );
    client.end_play().await.unwrap();
    assert_eq!(session.features().state("base-gameplay"), Some(PluginState::Stable(Destination::Installed)));
}
