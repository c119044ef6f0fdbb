//! A world that keeps running while its features change: activation, deactivation, hot reload (a new
//! version; one that does not compile; one that fails to activate), install and uninstall — through the
//! library API, with real plugins.

use gamefeature_host::experience::{ExperienceManager, ReloadError};
use gamefeature_host::game;
use gamefeature_host::live::{Command, LiveWorld};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{Blame, Error, Session};
use gamefeature_tests::hostile::{hostile_named, play_beside_lyra};
use gamefeature_tests::*;

/// Where `lyra-character` has brought `pawn`'s Hero feature.
fn hero_state(manager: &ExperienceManager, pawn: world::ActorId) -> Option<String> {
    let w = world::lock(manager.world());
    let state = w.feature_state(pawn, "Hero").ok()?;
    w.state_text(state).map(str::to_string)
}

async fn lyra_world(session: &Session) -> (ExperienceManager, world::ActorId, ExperienceDir) {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    assert_eq!(hero_state(&manager, player.pawn).as_deref(), Some("InitState.GameplayReady"));
    (manager, player.pawn, experiences)
}

#[tokio::test]
async fn a_reloaded_plugin_is_reapplied_to_every_actor_and_leaves_nothing_of_the_old_instance() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    let (mut manager, pawn, _experiences) = lyra_world(&session).await;
    let before = {
        let w = world::lock(manager.world());
        (w.live_handlers(), w.live_subscriptions(), w.live_features(), w.requested_component_count())
    };
    plugins.edit_manifest(&LYRA_CHARACTER, |text| text.replace("version = \"0.1.0\"", "version = \"0.2.0\""));
    let reloaded = manager.reload_feature("lyra-character").await.unwrap();
    assert_eq!((reloaded.from.as_str(), reloaded.to.as_str()), ("0.1.0", "0.2.0"));
    assert_eq!(manager.live_features(), ["lyra-character"]);
    assert_eq!(hero_state(&manager, pawn).as_deref(), Some("InitState.GameplayReady"), "re-applied to the pawn");
    let after = {
        let w = world::lock(manager.world());
        (w.live_handlers(), w.live_subscriptions(), w.live_features(), w.requested_component_count())
    };
    assert_eq!(after, before, "the new instance holds what the old one did, and nothing of the old is left");
    let notes = session.timeline().texts(
        &gamefeature_host::timeline::track::plugin("lyra-character"),
        gamefeature_host::timeline::EventKind::Note,
    );
    assert!(notes.iter().any(|n| n == "reloaded 0.1.0 -> 0.2.0"), "{notes:?}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_broken_new_version_leaves_the_old_one_running() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    let (mut manager, pawn, _experiences) = lyra_world(&session).await;
    let component = plugins.folder(&LYRA_CHARACTER).join("lyra_character.wasm");
    let good = std::fs::read(&component).unwrap();

    std::fs::write(&component, b"not a component").unwrap();
    let refused = manager.reload_feature("lyra-character").await.unwrap_err();
    assert!(matches!(&refused, ReloadError::Refused { cause, .. } if cause.contains("not a valid")), "{refused}");
    assert_eq!(manager.live_features(), ["lyra-character"], "the old version was never taken out");
    assert_eq!(hero_state(&manager, pawn).as_deref(), Some("InitState.GameplayReady"));

    // A component that traps in on-activating: taken out, and the old version activated again.
    std::fs::copy(HOSTILE.component, &component).unwrap();
    std::fs::write(plugins.folder(&LYRA_CHARACTER).join("behaviour.txt"), "panic-activating").unwrap();
    plugins
        .edit_manifest(&LYRA_CHARACTER, |text| format!("{text}\n[bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n"));
    let failed = manager.reload_feature("lyra-character").await.unwrap_err();
    assert!(matches!(&failed, ReloadError::Failed { cause, .. } if cause.contains("panicked")), "{failed}");
    assert_eq!(manager.live_features(), ["lyra-character"]);
    assert_eq!(hero_state(&manager, pawn).as_deref(), Some("InitState.GameplayReady"), "the old one runs again");
    std::fs::write(&component, good).unwrap();
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn plugins_install_activate_and_uninstall_while_the_world_runs() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    let (manager, _pawn, _experiences) = lyra_world(&session).await;
    let mut live = LiveWorld::new(manager, &session);
    let elsewhere = PluginDir::with(&[BASE_GAMEPLAY]);
    let held_before = session.runtime().compiled_components();
    let installed = live.execute(&Command::Install(elsewhere.folder(&BASE_GAMEPLAY))).await.unwrap();
    assert!(installed.starts_with("base-gameplay installed"), "{installed}");
    let again = live.execute(&Command::Install(elsewhere.folder(&BASE_GAMEPLAY))).await.unwrap();
    assert!(again.starts_with("base-gameplay is installed already"), "{again}");
    live.execute(&Command::Activate("base-gameplay".into())).await.unwrap();
    assert_eq!(live.manager().live_features(), ["lyra-character", "base-gameplay"]);
    assert_eq!(session.runtime().compiled_components(), held_before + 1);
    live.execute(&Command::Uninstall("base-gameplay".into())).await.unwrap();
    assert_eq!(live.manager().live_features(), ["lyra-character"]);
    assert!(session.features().state("base-gameplay").is_none(), "forgotten");
    assert_eq!(session.runtime().compiled_components(), held_before, "its compiled code was freed");
    let refused = live.execute(&Command::Activate("base-gameplay".into())).await.unwrap_err();
    assert!(matches!(&refused, Error::NotFound { name, .. } if name == "base-gameplay"), "{refused:?}");
    assert!(refused.to_string().contains("no plugin named"), "{refused}");
    live.into_manager().end_play().await.unwrap();
}

#[tokio::test]
async fn a_plugin_folder_dropped_in_while_the_world_runs_is_found_by_a_rescan() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    let (manager, _pawn, _experiences) = lyra_world(&session).await;
    let mut live = LiveWorld::new(manager, &session);
    assert_eq!(live.execute(&Command::Rescan).await.unwrap(), "no new plugins");
    plugins.add(&BASE_GAMEPLAY);
    assert_eq!(live.execute(&Command::Rescan).await.unwrap(), "installed base-gameplay");
    live.execute(&Command::Activate("base-gameplay".into())).await.unwrap();
    assert_eq!(live.manager().live_features(), ["lyra-character", "base-gameplay"]);
    live.into_manager().end_play().await.unwrap();
}

/// `--watch`: a plugin folder's changed component is seen once it has settled, and reloading the changed files
/// reloads the plugin they belong to.
#[tokio::test]
async fn a_changed_component_on_disk_is_seen_and_its_plugin_reloaded() {
    use gamefeature_host::live::FolderWatcher;
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = session(&plugins);
    let (manager, pawn, _experiences) = lyra_world(&session).await;
    let mut live = LiveWorld::new(manager, &session);
    let mut watcher = FolderWatcher::new(&live.plugin_folders()).unwrap();
    plugins.edit_manifest(&LYRA_CHARACTER, |text| text.replace("version = \"0.1.0\"", "version = \"0.3.0\""));
    // Bounded: file events arrive within milliseconds; ten seconds only guards against a lost event.
    let started = std::time::Instant::now();
    let mut changed = Vec::new();
    while changed.is_empty() && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        changed = watcher.changed();
    }
    assert_eq!(changed, [plugins.folder(&LYRA_CHARACTER).join("plugin.toml")]);
    let outcomes = live.reload_changed(&changed).await;
    assert_eq!(outcomes, [Ok("lyra-character reloaded: 0.1.0 -> 0.3.0".to_string())]);
    assert_eq!(hero_state(live.manager(), pawn).as_deref(), Some("InitState.GameplayReady"));
    live.into_manager().end_play().await.unwrap();
}

/// The hostile plugin's folder is among those a `--watch` follows.
fn assert_watched(live: &LiveWorld<'_>, folder: &std::path::Path) {
    let watched: Vec<_> = live.plugin_folders().iter().map(|f| f.canonicalize().unwrap()).collect();
    assert!(watched.contains(&folder.canonicalize().unwrap()), "its folder is watched: {watched:?}");
}

/// A fixed version of the hostile plugin in `folder`: it behaves, as version 0.1.1.
fn fix_hostile(folder: &std::path::Path) {
    std::fs::write(folder.join("behaviour.txt"), "behave").unwrap();
    let manifest = std::fs::read_to_string(folder.join("plugin.toml")).unwrap();
    std::fs::write(folder.join("plugin.toml"), manifest.replace("version = \"0.1.0\"", "version = \"0.1.1\"")).unwrap();
}

/// `--watch` keeps watching a plugin this world quarantined: a new version of it is how it comes back, so a
/// modder's fix, saved, reloads it — without state, and saying so.
#[tokio::test]
async fn a_quarantined_plugin_is_still_watched_and_a_new_version_brings_it_back() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let folder = hostile_named(&plugins, "hostile", "panic-event");
    let session = session(&plugins);
    let manager = play_beside_lyra(&session, "panic-event").await;
    assert_eq!(manager.live_features(), ["lyra-character"], "quarantined for its panic");
    let mut live = LiveWorld::new(manager, &session);
    assert_watched(&live, &folder);

    // The fix: a version that behaves.
    fix_hostile(&folder);
    let outcomes = live.reload_changed(&[folder.join("plugin.toml")]).await;
    // Said, not silent: the quarantined instance had no state to hand over.
    let fresh = "hostile reloaded: 0.1.0 -> 0.1.1 (it starts fresh: the version before it handed over no state)";
    assert_eq!(outcomes, [Ok(fresh.to_string())]);
    assert_eq!(live.manager().live_features(), ["lyra-character", "hostile"], "back in the world");
    live.into_manager().end_play().await.unwrap();
}

/// A plugin whose activation failed in this world is watched too, and a fixed version of it is activated.
#[tokio::test]
async fn a_plugin_that_failed_to_activate_comes_in_with_a_fixed_version() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let folder = hostile_named(&plugins, "hostile", "panic-activating");
    let session = session(&plugins);
    let manager = play_beside_lyra(&session, "panic-activating").await;
    assert_eq!(manager.live_features(), ["lyra-character"], "its activation failed");
    let mut live = LiveWorld::new(manager, &session);
    assert_watched(&live, &folder);

    // Still broken: it stays out, and says why.
    let outcomes = live.reload_changed(&[folder.join("plugin.toml")]).await;
    let [Err(why)] = &outcomes[..] else { panic!("{outcomes:?}") };
    assert_eq!(why.blame(), Blame::Plugin("hostile".into()), "{why}");
    assert!(why.to_string().contains("panicked"), "{why}");
    // Fixed.
    fix_hostile(&folder);
    let outcomes = live.reload_changed(&[folder.join("plugin.toml")]).await;
    // Said, not silent: the quarantined instance had no state to hand over.
    let fresh = "hostile reloaded: 0.1.0 -> 0.1.1 (it starts fresh: the version before it handed over no state)";
    assert_eq!(outcomes, [Ok(fresh.to_string())]);
    assert_eq!(live.manager().live_features(), ["lyra-character", "hostile"], "in the world at last");
    live.into_manager().end_play().await.unwrap();
}

/// A reloaded plugin's dependents leave the world before it and come back after it.
#[tokio::test]
async fn dependents_are_reloaded_with_their_dependency() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["shooter-core"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    manager.reload_feature("base-gameplay").await.unwrap();
    assert_eq!(manager.live_features(), ["base-gameplay", "shooter-core"]);
    let calls = |plugin: &str| {
        session.timeline().texts(
            &gamefeature_host::timeline::track::instance(plugin, "w"),
            gamefeature_host::timeline::EventKind::Call,
        )
    };
    let shooter = calls("shooter-core");
    assert_eq!(shooter.iter().filter(|c| c.starts_with("on-activating")).count(), 2, "{shooter:?}");
    assert_eq!(shooter.iter().filter(|c| c.starts_with("on-deactivating")).count(), 1, "{shooter:?}");
    let events: Vec<(String, String)> = session.timeline().events().into_iter().map(|e| (e.track, e.text)).collect();
    let at = |track: &str, text: &str| events.iter().rposition(|(t, x)| t == track && x.starts_with(text)).unwrap();
    assert!(at("plugin:shooter-core@w", "on-unregistering") < at("plugin:base-gameplay@w", "on-deactivating"));
    assert!(at("plugin:base-gameplay@w", "on-activated") < at("plugin:shooter-core@w", "on-activating"));
    manager.end_play().await.unwrap();
}

/// The info lines an instance of `plugin` logged in world `w`.
fn info_lines(session: &Session, plugin: &str) -> Vec<String> {
    use gamefeature_host::timeline::{track, EventKind, LogLevel};
    session.timeline().texts(&track::instance(plugin, "w"), EventKind::Log(LogLevel::Info))
}

/// `event-sink` counts the events it hears and carries the count across a reload with `snapshot`/`restore`;
/// a new version of the wrong WIT is refused without touching the old instance; one that fails to activate
/// hands the same state back to the old one.
#[tokio::test]
async fn a_reload_keeps_the_state_a_plugin_carries_over_even_when_the_new_version_fails() {
    let plugins = PluginDir::with(&[EVENT_SINK]);
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["event-sink"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    // Each pawn: `ReceiverAdded` and `GameActorReady`.
    let spawn_pawns = |manager: &mut ExperienceManager, n: usize| {
        for _ in 0..n {
            manager.with_world(|w| w.spawn("Pawn").unwrap());
        }
    };
    spawn_pawns(&mut manager, 3);
    manager.reload_feature("event-sink").await.unwrap();
    // The snapshot is taken while the instance still plays, before its handler's `ExtensionRemoved`s.
    assert!(info_lines(&session, "event-sink").contains(&"restored a count of 6 events".to_string()));
    spawn_pawns(&mut manager, 2);

    let component = plugins.folder(&EVENT_SINK).join("event_sink.wasm");
    let good = std::fs::read(&component).unwrap();
    // A component built against a WIT version the host does not implement is refused before the old instance
    // is touched: it keeps running, and its count.
    std::fs::copy(WRONG_WIT_VERSION.component, &component).unwrap();
    let refused = manager.reload_feature("event-sink").await.unwrap_err();
    assert!(
        matches!(&refused, ReloadError::Refused { cause, .. } if cause.contains("gamefeature:plugin@0.9.0")),
        "{refused}"
    );
    assert_eq!(manager.live_features(), ["event-sink"]);

    std::fs::copy(HOSTILE.component, &component).unwrap();
    std::fs::write(plugins.folder(&EVENT_SINK).join("behaviour.txt"), "panic-activating").unwrap();
    plugins.edit_manifest(&EVENT_SINK, |text| format!("{text}\n[bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n"));
    let failed = manager.reload_feature("event-sink").await.unwrap_err();
    assert!(matches!(&failed, ReloadError::Failed { cause, .. } if cause.contains("panicked")), "{failed}");
    assert_eq!(manager.live_features(), ["event-sink"], "the old version runs again");
    // 6, then the new handler's 3 `ExtensionAdded` and the 2 new pawns' 4 events: 13, handed back to the old
    // version.
    assert!(info_lines(&session, "event-sink").contains(&"restored a count of 13 events".to_string()));
    std::fs::write(&component, good).unwrap();
    manager.end_play().await.unwrap();
    // ... plus 5 `ExtensionAdded` when the old version came back.
    assert_eq!(info_lines(&session, "event-sink").last().map(String::as_str), Some("received 18 events"));
}
