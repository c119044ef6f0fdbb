//! Hostile plugins: each is stopped with a precise cause and quarantined (error state, nothing of it left in
//! the world), while a well-behaved plugin beside it completes Lyra's character flow.

use gamefeature_host::feature::PluginState;
use gamefeature_host::game;
use gamefeature_host::timeline::{track, EventKind};
use gamefeature_host::world::{self, NetMode};
use gamefeature_tests::*;

/// Adds a copy of the hostile plugin that behaves as `behaviour` says.
fn hostile(plugins: &PluginDir, behaviour: &str) {
    let manifest = "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\napi = \"0.1.0\"\ncomponent = \"hostile.wasm\"\n\
                    [bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n";
    let folder = plugins.add_custom("hostile", manifest, Some(&HOSTILE));
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
}

/// Loads `hostile` (behaving as told) beside `lyra-character`, plays one player through the character flow, and
/// returns the hostile plugin's failure cause.
async fn quarantine(behaviour: &str) -> String {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, behaviour);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "lyra-character"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();

    // The neighbour finished its flow.
    {
        let w = world::lock(manager.world());
        for feature in ["PawnExtension", "Hero"] {
            let state = w.feature_state(player.pawn, feature).unwrap();
            assert_eq!(w.state_text(state), Some("InitState.GameplayReady"), "{behaviour}: {feature}");
        }
    }
    assert_eq!(manager.live_features(), ["lyra-character"], "{behaviour}: only the hostile plugin is gone");
    let cause = match session.features().state("hostile") {
        Some(PluginState::Error(error)) => error.cause,
        other => panic!("{behaviour}: expected an error state, got {other:?}"),
    };
    let failures = session.timeline().texts(&track::experience("w"), EventKind::Failure);
    assert!(
        failures.iter().any(|f| f.starts_with("hostile failed")),
        "{behaviour}: shown in the timeline: {failures:?}"
    );
    manager.end_play().await.unwrap();
    let w = world::lock(manager.world());
    assert_eq!(
        (w.live_handlers(), w.live_subscriptions(), w.live_features(), w.requested_component_count()),
        (0, 0, 0, 0)
    );
    cause
}

#[tokio::test]
async fn an_endless_loop_in_a_lifecycle_call_hits_the_deadline() {
    let cause = quarantine("loop-activating").await;
    assert!(cause.contains("on-activating") && cause.contains("exceeded its call deadline"), "{cause}");
}

#[tokio::test]
async fn an_endless_loop_in_an_event_handler_hits_the_deadline() {
    let cause = quarantine("loop-event").await;
    assert!(cause.contains("handle-extension-events") && cause.contains("exceeded its call deadline"), "{cause}");
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let cause = quarantine("memory-activating").await;
    assert!(cause.contains("on-activating") && cause.contains("exceeded its memory limit"), "{cause}");
}

#[tokio::test]
async fn a_panic_in_an_event_handler_is_a_trap() {
    let cause = quarantine("panic-event").await;
    assert!(cause.contains("handle-extension-events") && cause.contains("panic"), "{cause}");
}

#[tokio::test]
async fn a_stack_overflow_is_a_trap() {
    let cause = quarantine("stack-overflow-activating").await;
    assert!(cause.contains("on-activating") && cause.contains("stack overflow"), "{cause}");
}

#[tokio::test]
async fn refused_calls_past_the_budget_quarantine() {
    let cause = quarantine("refusals-activating").await;
    assert!(cause.contains("on-activating") && cause.contains("made 5000 refused host calls in one call"), "{cause}");
}

#[tokio::test]
async fn oversized_names_are_refused_as_recoverable_errors() {
    let plugins = PluginDir::with(&[MANAGER_PROBE]);
    let long = "x".repeat(300);
    let experiences = ExperienceDir::new();
    experiences.write("script.txt", &format!("handler 1 Pawn\nsend Pawn {long}\nsend Pawn Fine\n"));
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\nscript = \"script.txt\"\n", experience_with_features(&["manager-probe"])),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.load(&path).await.unwrap();
    let warnings = session
        .timeline()
        .texts(&track::instance("manager-probe", "w"), EventKind::Log(gamefeature_host::timeline::LogLevel::Warn));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("event name is 300 bytes, longer than 256"), "{warnings:?}");
    // The refusal is recoverable: the plugin carries on and its next event goes out.
    let infos = session
        .timeline()
        .texts(&track::instance("manager-probe", "w"), EventKind::Log(gamefeature_host::timeline::LogLevel::Info));
    assert!(infos.iter().any(|l| l.ends_with(" Fine")), "{infos:?}");
    assert_eq!(manager.live_features(), ["manager-probe"]);
    manager.end_play().await.unwrap();
}

/// Loads the probe plugin with `script` under `grants`, beside one existing pawn; returns its warnings.
async fn probe_under(
    grants: gamefeature_host::feature::GrantPolicy,
    script: &str,
) -> (Vec<String>, Vec<String>, usize) {
    let plugins = PluginDir::with(&[MANAGER_PROBE]);
    let experiences = ExperienceDir::new();
    experiences.write("script.txt", script);
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\nscript = \"script.txt\"\n", experience_with_features(&["manager-probe"])),
    );
    let options = gamefeature_host::experience::ManagerOptions { grants, ..Default::default() };
    let session = session_with(&plugins, None, options);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.load(&path).await.unwrap();
    let instance = track::instance("manager-probe", "w");
    let warnings = session.timeline().texts(&instance, EventKind::Log(gamefeature_host::timeline::LogLevel::Warn));
    let infos = session.timeline().texts(&instance, EventKind::Log(gamefeature_host::timeline::LogLevel::Info));
    let (pawns, shields) = {
        let w = world::lock(manager.world());
        let pawns = w.actors_of_class("Pawn").unwrap();
        let shields = pawns.iter().filter(|p| w.actor(**p).unwrap().component("Shield").is_some()).count();
        (pawns.len(), shields)
    };
    assert_eq!(manager.live_features(), ["manager-probe"], "a refused call is recoverable");
    manager.end_play().await.unwrap();
    (warnings, infos, pawns * 10 + shields)
}

#[tokio::test]
async fn ungranted_calls_are_denied_logged_and_without_effect() {
    let script = "handler 1 Pawn\nspawn Pawn\nsend Pawn Hello\nrequest Pawn Shield\n";
    let (warnings, infos, pawns_and_shields) =
        probe_under(gamefeature_host::feature::GrantPolicy::default(), script).await;
    for permission in ["spawn-actors", "send-events", "component-requests on Pawn"] {
        let host_line = format!("denied: plugin \"manager-probe\" lacks the {permission} permission");
        assert!(warnings.iter().any(|w| w.starts_with(&host_line)), "{permission}: {warnings:#?}");
    }
    // The plugin saw each refusal as a `denied` error (it logs the errors it gets).
    assert_eq!(warnings.iter().filter(|w| w.contains("Denied(")).count(), 3, "{warnings:#?}");
    assert_eq!(pawns_and_shields, 10, "one pawn (the game's), no shield");
    assert!(!infos.iter().any(|l| l.ends_with("Hello")), "no event was sent: {infos:?}");
}

#[tokio::test]
async fn a_plugin_gets_only_what_it_declared_and_was_granted() {
    use gamefeature_host::feature::{GrantPolicy, Permissions};
    // Granted more than it declares (manager-probe declares requests on "*"): requests only on Pawn.
    let grants = GrantPolicy::Explicit(
        [(
            "manager-probe".to_string(),
            Permissions { send_events: true, component_requests: vec!["Pawn".into()], ..Permissions::default() },
        )]
        .into(),
    );
    let script = "handler 1 Pawn\nsend Pawn Hello\nrequest Pawn Shield\nrequest Character Armor\nspawn Pawn\n";
    let (warnings, infos, pawns_and_shields) = probe_under(grants, script).await;
    assert!(infos.iter().any(|l| l.ends_with("Hello")), "granted: {infos:?}");
    assert_eq!(pawns_and_shields, 11, "the requested shield, and no spawned pawn");
    let denied: Vec<&String> = warnings.iter().filter(|w| w.starts_with("denied:")).collect();
    assert_eq!(denied.len(), 2, "{denied:#?}");
    assert!(denied[0].contains("component-requests on Character") && denied[1].contains("spawn-actors"), "{denied:#?}");
}
