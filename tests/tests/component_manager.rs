//! The component manager through real plugins: event order, subclass matching, shared requests, handle drops,
//! stateless events, and deactivation in the middle of Lyra's character flow.

use gamefeature_host::game;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, ActorId, NetMode, World};
use gamefeature_host::{ExperienceManager, Session};
use gamefeature_tests::*;

/// Adds a copy of the probe plugin named `name`, running `script` at activation.
fn probe(plugins: &PluginDir, name: &str, script: &str) {
    let manifest = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"manager_probe.wasm\"\n\
         [bundles.Equipped]\nscript = \"script.txt\"\n\
         [permissions]\nspawn-actors = true\nsend-events = true\ncomponent-requests = [\"*\"]\n"
    );
    let folder = plugins.add_custom(name, &manifest, Some(&MANAGER_PROBE));
    std::fs::write(folder.join("script.txt"), script).unwrap();
}

/// A loaded world with `features`, after `before` ran on the empty world.
async fn world_with(
    plugins: &PluginDir,
    features: &[&str],
    before: impl FnOnce(&mut World),
) -> (Session, ExperienceManager, ExperienceDir) {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(features));
    let session = session(plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.with_world(before);
    let report = manager.load(&path).await.unwrap().clone();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    (session, manager, experiences)
}

fn logs(session: &Session, plugin: &str) -> Vec<String> {
    session.timeline().texts(&track::instance(plugin, "w"), EventKind::Log(LogLevel::Info))
}

fn raw(actor: ActorId) -> u64 {
    actor.to_raw()
}

#[tokio::test]
async fn receiver_events_follow_unreal_order() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", "handler 1 Pawn\nhandler 2 Character\nrequest Pawn Shield\n");
    let mut existing = None;
    let (session, mut manager, _e) =
        world_with(&plugins, &["probe"], |w| existing = Some(w.spawn("Character").unwrap())).await;
    let a = raw(existing.unwrap());
    assert_eq!(logs(&session, "probe"), [format!("event 1 {a} ExtensionAdded"), format!("event 2 {a} ExtensionAdded")]);

    let b = manager.with_world(|w| w.spawn("Character").unwrap());
    manager.with_world(|w| w.destroy(b).unwrap());
    let b = raw(b);
    assert_eq!(
        logs(&session, "probe")[2..],
        [
            // Most derived class first: the Character handler, then the Pawn handler.
            format!("event 2 {b} ReceiverAdded"),
            format!("event 1 {b} ReceiverAdded"),
            format!("event 2 {b} GameActorReady"),
            format!("event 1 {b} GameActorReady"),
            format!("event 2 {b} ReceiverRemoved"),
            format!("event 1 {b} ReceiverRemoved"),
        ]
    );
    // Components are added before handlers hear of the receiver, and removed before they hear it went.
    let world_events = session.timeline().texts(&track::world("w"), EventKind::World);
    let actor = ActorId::from_raw(b);
    let added = world_events.iter().position(|e| *e == format!("added Shield to {actor}")).unwrap();
    let removed = world_events.iter().position(|e| *e == format!("removed Shield from {actor}")).unwrap();
    let destroyed = world_events.iter().position(|e| *e == format!("destroyed {actor}")).unwrap();
    assert!(added < removed && removed < destroyed);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn handlers_and_requests_match_subclasses_only() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", "handler 1 Pawn\nrequest Pawn Shield\n");
    let (session, mut manager, _e) = world_with(&plugins, &["probe"], |_| {}).await;
    let (character, pawn, state) = manager
        .with_world(|w| (w.spawn("Character").unwrap(), w.spawn("Pawn").unwrap(), w.spawn("PlayerState").unwrap()));
    let heard: Vec<String> = logs(&session, "probe").into_iter().filter(|l| l.ends_with("ReceiverAdded")).collect();
    assert_eq!(
        heard,
        [format!("event 1 {} ReceiverAdded", raw(character)), format!("event 1 {} ReceiverAdded", raw(pawn))]
    );
    {
        let w = world::lock(manager.world());
        assert!(w.actor(character).unwrap().component("Shield").is_some());
        assert!(w.actor(pawn).unwrap().component("Shield").is_some());
        assert!(w.actor(state).unwrap().component("Shield").is_none());
    }
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn two_plugins_share_a_component_request() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe-a", "request Pawn Shield\n");
    probe(&plugins, "probe-b", "request Pawn Shield\n");
    let mut pawn = None;
    let (_session, mut manager, _e) =
        world_with(&plugins, &["probe-a", "probe-b"], |w| pawn = Some(w.spawn("Pawn").unwrap())).await;
    let pawn = pawn.unwrap();
    let shields = |manager: &ExperienceManager| {
        world::lock(manager.world()).actor(pawn).unwrap().components.iter().filter(|c| &*c.class == "Shield").count()
    };
    assert_eq!(shields(&manager), 1, "one request pair, one component");
    assert!(manager.deactivate_feature("probe-a").await);
    assert_eq!(shields(&manager), 1, "probe-b still holds the request");
    assert!(manager.deactivate_feature("probe-b").await);
    assert_eq!(shields(&manager), 0, "the last handle took it away");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn dropping_handles_undoes_them_even_mid_dispatch() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", "handler 1 Pawn\nrequest Pawn Shield\n");
    let mut pawns = Vec::new();
    let (session, mut manager, _e) =
        world_with(&plugins, &["probe"], |w| pawns = vec![w.spawn("Pawn").unwrap(), w.spawn("Pawn").unwrap()]).await;
    let (first, second) = (pawns[0], pawns[1]);

    manager.with_world(|w| w.send_extension_event(first, "do:drop-request Pawn Shield").unwrap());
    assert_eq!(
        world::lock(manager.world()).requested_component_count(),
        0,
        "dropping the request removed its components"
    );

    // The handler drops itself while a batch is being delivered; the queue keeps going safely.
    manager.with_world(|w| {
        w.send_extension_event(first, "do:drop-handler 1").unwrap();
        w.send_extension_event(second, "Queued").unwrap();
    });
    manager.with_world(|w| w.send_extension_event(second, "After").unwrap());
    let tail: Vec<String> = logs(&session, "probe").into_iter().skip(3).collect();
    assert_eq!(
        tail,
        [
            format!("event 1 {} do:drop-handler 1", raw(first)),
            format!("event 1 {} Queued", raw(second)),
            format!("event 1 {} ExtensionRemoved", raw(first)),
            format!("event 1 {} ExtensionRemoved", raw(second)),
        ],
        "ExtensionRemoved for every receiver; nothing after the handler is gone"
    );
    assert_eq!(world::lock(manager.world()).live_handlers(), 0);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn custom_events_are_stateless() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", "handler 1 Pawn\n");
    let mut pawn = None;
    let (session, mut manager, _e) = world_with(&plugins, &["probe"], |w| {
        let p = w.spawn("Pawn").unwrap();
        w.send_extension_event(p, "Early").unwrap();
        pawn = Some(p);
    })
    .await;
    let pawn = raw(pawn.unwrap());
    manager.with_world(|w| w.send_extension_event(ActorId::from_raw(pawn), "Late").unwrap());
    assert_eq!(logs(&session, "probe"), [format!("event 1 {pawn} ExtensionAdded"), format!("event 1 {pawn} Late")]);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn class_subscriptions_call_if_reached_and_then_on_change() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    probe(&plugins, "probe", "subscribe-class 7 Character Hero\n");
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    manager.activate_feature("probe").await.unwrap();
    let pawn = raw(player.pawn);
    assert_eq!(
        logs(&session, "probe"),
        [format!("init 7 {pawn} Hero InitState.Spawned")],
        "already reached: called at once"
    );
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    assert_eq!(
        logs(&session, "probe")[1..],
        [
            format!("init 7 {pawn} Hero InitState.DataAvailable"),
            format!("init 7 {pawn} Hero InitState.DataInitialized"),
            format!("init 7 {pawn} Hero InitState.GameplayReady"),
        ]
    );
    manager.end_play().await.unwrap();
}

/// Chain walks a callback defers go out in one host call when it returns; a refused one is logged and queues
/// nothing, and the others still walk.
#[tokio::test]
async fn deferred_chain_walks_go_in_one_call_and_a_refused_one_spares_the_others() {
    let plugins = PluginDir::with(&[]);
    let script = "handler 1 Pawn\nrequest Pawn Gear\nsubscribe-class 2 Pawn Gear\n";
    probe(&plugins, "probe", script);
    let mut pawns = Vec::new();
    let (session, mut manager, _e) =
        world_with(&plugins, &["probe"], |w| pawns = (0..2).map(|_| w.spawn("Pawn").unwrap()).collect()).await;
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:feature Pawn Gear Gear").unwrap());
    let mut host_calls = |event: &str| {
        let before = manager.with_world(|w| w.plugin_calls());
        manager.with_world(|w| w.send_extension_event(pawns[0], event).unwrap());
        manager.with_world(|w| w.plugin_calls()) - before
    };
    // Walks the Gear chains (to GameplayReady: the probe allows every step), past a refused walk of each pawn.
    host_calls("do:defer-chains Pawn Missing Gear");
    let few = host_calls("do:defer-chains Pawn Gear");
    let many = host_calls("do:defer-chains Pawn Gear Gear Gear Gear");
    assert_eq!(few, many, "the deferred walks go in one host call however many there are");
    // One line for the call's refusals (each line is a host call): the first, and how many more.
    let warnings = session.timeline().texts(&track::instance("probe", "w"), EventKind::Log(LogLevel::Warn));
    let refused = format!("could not continue the chain of Missing on actor {}: ", raw(pawns[0]));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with(&refused), "{warnings:?}");
    assert!(warnings[0].contains("has no feature") && warnings[0].ends_with("(and 1 more deferred walks refused)"));
    for pawn in &pawns {
        assert!(
            logs(&session, "probe").contains(&format!("init 2 {} Gear InitState.GameplayReady", raw(*pawn))),
            "{:?}",
            logs(&session, "probe")
        );
        assert_eq!(manager.with_world(|w| w.feature_state(*pawn, "Gear")), Ok(4));
    }
    // A refused check of the others queues nothing: Gear is not asked to move for a feature that is not there.
    let checks = |session: &Session| {
        let calls = session.timeline().texts(&track::instance("probe", "w"), EventKind::Call);
        calls.iter().filter(|c| c.starts_with("check-default-initializations")).count()
    };
    let before = checks(&session);
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:defer-checks Pawn Missing").unwrap());
    assert_eq!(checks(&session), before, "refused: nothing queued");
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:feature Pawn Trim Gear").unwrap());
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:defer-checks Pawn Trim").unwrap());
    assert!(checks(&session) > before, "accepted: the other features (Gear) are asked to move");
    manager.end_play().await.unwrap();
}

/// The probe of `script` in a world of one pawn, its Gear feature registered (on its Gear component).
async fn one_pawn_with_gear(script: &str) -> (Session, ExperienceManager, ActorId, PluginDir, ExperienceDir) {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", &format!("handler 1 Pawn\nrequest Pawn Gear\n{script}"));
    let mut pawn = None;
    let (session, mut manager, experiences) =
        world_with(&plugins, &["probe"], |w| pawn = Some(w.spawn("Pawn").unwrap())).await;
    let pawn = pawn.unwrap();
    manager.with_world(|w| w.send_extension_event(pawn, "do:feature Pawn Gear Gear").unwrap());
    (session, manager, pawn, plugins, experiences)
}

/// The chain-walk questions the probe was asked so far, as the timeline names the calls.
fn walk_questions(session: &Session) -> Vec<String> {
    let calls = session.timeline().texts(&track::instance("probe", "w"), EventKind::Call);
    calls.into_iter().filter(|c| c.starts_with("try-change-init-states")).collect()
}

/// A Rust plugin walks a chain as far as it goes in one call, as Unreal's `ContinueInitStateChain` does: the host
/// applies each step in order, notifying each.
#[tokio::test]
async fn a_chain_walk_takes_every_step_it_can_in_one_call() {
    let (session, mut manager, pawn, _p, _e) = one_pawn_with_gear("subscribe-class 2 Pawn Gear\n").await;
    let before = walk_questions(&session).len();
    // The probe allows every step: the walk goes from no state to the last in one question of one entry.
    manager.with_world(|w| w.send_extension_event(pawn, "do:defer-chains Pawn Gear").unwrap());
    assert_eq!(walk_questions(&session)[before..], ["try-change-init-states (1)"]);
    assert_eq!(manager.with_world(|w| w.feature_state(pawn, "Gear")), Ok(4));
    let states = ["Spawned", "DataAvailable", "DataInitialized", "GameplayReady"];
    let heard: Vec<String> = states.iter().map(|s| format!("init 2 {} Gear InitState.{s}", raw(pawn))).collect();
    let notified: Vec<String> = logs(&session, "probe").into_iter().filter(|l| l.starts_with("init 2 ")).collect();
    assert_eq!(notified, heard, "each step notified, in order");
    manager.end_play().await.unwrap();
}

/// A transition whose work adds a component ends the walk there: the next step is decided on the world as it is
/// then (the component there), not on the facts the question brought (no component).
#[tokio::test]
async fn a_walk_decides_after_a_transition_that_adds_a_component_on_the_world_as_it_is() {
    let (session, mut manager, pawn, _p, _e) = one_pawn_with_gear("needs Gear Late x\n").await;
    let before = walk_questions(&session).len();
    manager.with_world(|w| w.send_extension_event(pawn, "do:defer-chains Pawn Gear").unwrap());
    assert_eq!(manager.with_world(|w| w.feature_state(pawn, "Gear")), Ok(4), "the walk reached the end");
    assert!(manager.with_world(|w| w.actor(pawn).map(|a| a.component("Late").is_some())).unwrap());
    // Asked twice: up to DataAvailable, whose work requested the component, then on from there.
    assert_eq!(walk_questions(&session).len() - before, 2);
    manager.end_play().await.unwrap();
}

/// Features a callback registers deferred go out in one host call, before its deferred walks (which then walk
/// them); a refused registration is logged once and the others still register. A class subscription naming
/// no feature hears of every feature of the class's actors.
#[tokio::test]
async fn deferred_registrations_go_in_one_call_before_the_walks() {
    let plugins = PluginDir::with(&[]);
    probe(&plugins, "probe", "handler 1 Pawn\nrequest Pawn Gear\n");
    let mut pawns = Vec::new();
    let (session, mut manager, _e) =
        world_with(&plugins, &["probe"], |w| pawns = (0..3).map(|_| w.spawn("Pawn").unwrap()).collect()).await;
    let mut host_calls = |event: &str| {
        let before = manager.with_world(|w| w.plugin_calls());
        manager.with_world(|w| w.send_extension_event(pawns[0], event).unwrap());
        manager.with_world(|w| w.plugin_calls()) - before
    };
    // Registers Gear (and Trim) on each pawn, then walks the chains (the probe allows every step): one host call
    // for the registrations, however many, besides the walks'.
    let walks = host_calls("do:defer-chains Pawn");
    host_calls("do:set-up Pawn Gear Gear"); // The first walk's questions also ask the host for the state names.
    assert_eq!(host_calls("do:set-up Pawn Gear Gear Trim"), walks + 2);
    let warnings =
        |session: &Session| session.timeline().texts(&track::instance("probe", "w"), EventKind::Log(LogLevel::Warn));
    assert!(warnings(&session).is_empty(), "{:?}", warnings(&session));
    // Subscribed now, with call-if-reached: told at once of every feature already there.
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:subscribe-class 2 Pawn *").unwrap());
    let notified = logs(&session, "probe");
    for pawn in &pawns {
        for feature in ["Gear", "Trim"] {
            assert_eq!(manager.with_world(|w| w.feature_state(*pawn, feature)), Ok(4), "{feature}");
            let ready = format!("init 2 {} {feature} InitState.GameplayReady", raw(*pawn));
            assert!(notified.contains(&ready), "every feature is heard: {notified:?}");
        }
    }
    // The pawns have no Nope component: each registration is refused, and so are the walks of what it did not
    // register. One line for each call's refusals.
    manager.with_world(|w| w.send_extension_event(pawns[0], "do:set-up Pawn Nope Ghost").unwrap());
    let lines = warnings(&session);
    let first = raw(pawns[0]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with(&format!("could not register Ghost on actor {first}: ")), "{lines:?}");
    assert!(lines[0].ends_with("(and 2 more deferred registrations refused)"), "{lines:?}");
    assert!(lines[1].starts_with(&format!("could not continue the chain of Ghost on actor {first}: ")), "{lines:?}");
    assert!(pawns.iter().all(|p| manager.with_world(|w| w.feature_state(*p, "Ghost")).is_err()));
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn deactivating_mid_flow_leaves_nothing_and_reactivating_reapplies() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, INPUT_BINDING]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character", "input-binding"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    {
        let w = world::lock(manager.world());
        assert_eq!((w.live_features(), w.live_subscriptions(), w.live_handlers()), (2, 2, 2));
        // The controller arrives, but before the plugins hear of it the feature is deactivated.
        drop(w);
        game::possess(&mut world::lock(manager.world()), &player).unwrap();
    }
    assert!(manager.deactivate_feature("lyra-character").await);
    {
        let w = world::lock(manager.world());
        assert_eq!(w.live_features(), 0, "its init-state features are gone");
        assert_eq!(w.live_subscriptions(), 0, "its subscriptions are gone");
        assert_eq!(w.live_handlers(), 1, "input-binding keeps its handler");
        let pawn = w.actor(player.pawn).unwrap();
        assert!(pawn.component("PawnExtensionComponent").is_none() && pawn.component("HeroComponent").is_none());
        assert_eq!(w.queued_work(), 0);
    }
    let lyra_logs = logs(&session, "lyra-character");
    assert!(
        !lyra_logs.iter().any(|l| l.contains("ControllerChanged")),
        "its queued events were discarded: {lyra_logs:?}"
    );
    let calls = session.timeline().texts(&track::instance("lyra-character", "w"), EventKind::Call);
    assert!(calls.iter().any(|c| c == "on-unregistering ok"), "{calls:?}");

    // Activating it again applies it to the pawn that exists now, which finishes its flow.
    manager.activate_feature("lyra-character").await.unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    {
        let w = world::lock(manager.world());
        for feature in ["PawnExtension", "Hero"] {
            let state = w.feature_state(player.pawn, feature).unwrap();
            assert_eq!(w.state_text(state), Some("InitState.GameplayReady"), "{feature}");
        }
    }
    manager.end_play().await.unwrap();
    let w = world::lock(manager.world());
    assert_eq!(
        (w.live_features(), w.live_subscriptions(), w.live_handlers(), w.requested_component_count()),
        (0, 0, 0, 0)
    );
}

/// The soak test's short form (`cargo run --release -p gamefeature-tests --example soak` runs 10,000 cycles):
/// activating and deactivating a plugin that adds components, handlers, init-state features and subscriptions
/// leaves nothing behind, cycle after cycle.
#[tokio::test]
async fn repeated_activation_leaves_nothing_behind() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["base-gameplay"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    manager.with_world(|w| {
        for _ in 0..5 {
            w.spawn("Character").unwrap();
        }
    });
    for _ in 0..50 {
        manager.activate_feature("lyra-character").await.unwrap();
        {
            let w = world::lock(manager.world());
            // Two components and two features per character; two class subscriptions for all of them.
            assert_eq!((w.requested_component_count(), w.live_features(), w.live_subscriptions()), (10, 10, 2));
        }
        assert!(manager.deactivate_feature("lyra-character").await);
        let w = world::lock(manager.world());
        let left = (
            w.requested_component_count(),
            w.live_handlers(),
            w.live_subscriptions(),
            w.live_features(),
            w.queued_work(),
        );
        assert_eq!(left, (0, 0, 0, 0, 0));
    }
    manager.end_play().await.unwrap();
}
