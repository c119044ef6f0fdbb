//! One test per plugin of `plugins/` and `tests/plugins/`: each shows the plugin doing its job through the host.
//! A plugin added without a test here is a compile error (see the end of this file).

use gamefeature_host::feature::{Destination, PluginState};
use gamefeature_host::game;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, NetMode, Value};
use gamefeature_tests::*;

fn info_logs(session: &gamefeature_host::Session, plugin: &str, world: &str) -> Vec<String> {
    session.timeline().texts(&track::instance(plugin, world), EventKind::Log(LogLevel::Info))
}

/// A plugin's details: the lines it logs at debug level (the tests' sessions keep them, see `trusted`).
fn debug_logs(session: &gamefeature_host::Session, plugin: &str, world: &str) -> Vec<String> {
    session.timeline().texts(&track::instance(plugin, world), EventKind::Log(LogLevel::Debug))
}

/// `plugins/` is what users read and what `gfhost run` finds by default: examples the repository's experiences play,
/// and nothing else (fixtures that misbehave or probe the host live in `tests/plugins/`).
#[tokio::test]
async fn the_default_plugin_directory_holds_exactly_the_experiences_plugins() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let session = gamefeature_host::Session::new(gamefeature_host::SessionOptions {
        plugin_dirs: vec![root.join("plugins")],
        ..Default::default()
    })
    .unwrap();
    let mut installed: Vec<String> = session.features().list().into_iter().map(|p| p.manifest.name.clone()).collect();
    installed.sort();
    let mut played: Vec<String> = Vec::new();
    for experience in ["default.toml", "rooms.toml", "arena.toml"] {
        let path = root.join("experiences").join(experience);
        let definition = gamefeature_host::experience::ExperienceDefinition::load(&path).await.unwrap();
        for feature in definition.all_features() {
            played.extend(session.features().dependency_order(&feature).unwrap());
        }
    }
    played.sort();
    played.dedup();
    assert_eq!(installed, played);
}

#[tokio::test]
async fn base_gameplay() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    experiences.write("tuning.toml", "a = 1\n\nb = 2\nc = 3\n");
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\ntuning = \"tuning.toml\"\n", experience_with_features(&["base-gameplay"])),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("arena", NetMode::ListenServer);
    manager.load(&path).await.unwrap();
    assert_eq!(
        info_logs(&session, "base-gameplay", "arena"),
        ["base gameplay active in arena (NetMode::ListenServer) with 3 tuning entries"]
    );
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn shooter_core() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let experiences = ExperienceDir::new();
    experiences.write("tuning.toml", "starting-health = 175\n");
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\ntuning = \"tuning.toml\"\n", experience_with_features(&["shooter-core"])),
    );
    let session = session(&plugins);
    for (mode, nameplate) in [(NetMode::Standalone, true), (NetMode::DedicatedServer, false), (NetMode::Client, true)] {
        let name = mode.to_string();
        let mut manager = session.create_world(&name, mode);
        let existing = world::lock(manager.world()).spawn("Character").unwrap();
        manager.load(&path).await.unwrap();
        let later = world::lock(manager.world()).spawn("Character").unwrap();
        manager.pump();
        {
            let w = world::lock(manager.world());
            for actor in [existing, later] {
                let actor = w.actor(actor).unwrap();
                assert!(actor.component("HealthComponent").is_some(), "{mode}");
                assert_eq!(actor.component("NameplateComponent").is_some(), nameplate, "{mode}: client-only component");
            }
            // The plugin set the starting health through the host on the characters the world has authority
            // over: the one there before it activated, and the one that came after.
            for actor in [existing, later] {
                let health = w.property(actor, "HealthComponent", "health").unwrap();
                assert_eq!(health, Some(&Value::Integer(175)), "{mode}");
            }
        }
        manager.end_play().await.unwrap();
        assert_eq!(world::lock(manager.world()).requested_component_count(), 0);
    }
}

#[tokio::test]
async fn failing_activation() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[FAILING_ACTIVATION]).await;
    assert!(report.active.is_empty());
    let calls = session.timeline().texts(&track::instance("failing-activation", "w"), EventKind::Call);
    assert_eq!(
        calls,
        ["on-registering ok", "on-loading ok", "on-activating failed: required map data is missing"],
        "activation stops at the failing call"
    );
    manager.end_play().await.unwrap();
    assert_eq!(session.features().state("failing-activation"), Some(PluginState::Stable(Destination::Installed)));
}

#[tokio::test]
async fn progress_save() {
    let LoadedWorld { session, mut manager, .. } = load_world(&[PROGRESS_SAVE]).await;
    manager.end_play().await.unwrap();
    let polls = session
        .timeline()
        .texts(&track::instance("progress-save", "w"), EventKind::Call)
        .into_iter()
        .filter(|c| c.starts_with("poll-deactivation"))
        .count();
    assert_eq!(polls, 3);
    assert_eq!(info_logs(&session, "progress-save", "w"), ["flushing state before deactivation", "flush complete"]);
}

#[tokio::test]
async fn missing_exports() {
    let LoadedWorld { mut manager, report, .. } = load_world(&[MISSING_EXPORTS]).await;
    assert!(report.active.is_empty());
    assert!(report.failures[0].cause.contains("does not fit the gamefeature:plugin world"), "{}", report.failures[0]);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn asset_probe() {
    let LoadedWorld { session, mut manager, .. } = load_world(&[ASSET_PROBE]).await;
    assert_eq!(
        info_logs(&session, "asset-probe", "w"),
        ["equipped: no", "client-only: no", "server-only: no", "own-data: yes"],
        "a plugin reads its own bundle even when the experience declares none"
    );
    manager.end_play().await.unwrap();
}

/// Lyra's character flow for one pawn whose controller and player state arrive after it: the init states it
/// goes through, in order, per feature.
async fn lyra_flow(plugins: &[TestPlugin]) -> (LoadedWorld, game::Player) {
    let mut loaded = load_world(plugins).await;
    let player = loaded.manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    (loaded, player)
}

fn states_of(manager: &gamefeature_host::ExperienceManager, pawn: world::ActorId, feature: &str) -> Option<String> {
    let w = world::lock(manager.world());
    w.feature_state(pawn, feature).ok().and_then(|s| w.state_text(s).map(str::to_string))
}

#[tokio::test]
async fn lyra_character() {
    let (LoadedWorld { session, mut manager, .. }, player) = lyra_flow(&[LYRA_CHARACTER]).await;
    let pawn = player.pawn;
    assert_eq!(states_of(&manager, pawn, "PawnExtension").as_deref(), Some("InitState.Spawned"));
    assert_eq!(states_of(&manager, pawn, "Hero").as_deref(), Some("InitState.Spawned"));

    manager.with_world(|w| game::possess(w, &player)).unwrap();
    assert_eq!(states_of(&manager, pawn, "PawnExtension").as_deref(), Some("InitState.DataAvailable"));
    assert_eq!(states_of(&manager, pawn, "Hero").as_deref(), Some("InitState.Spawned"), "waits for its player state");

    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    for feature in ["PawnExtension", "Hero"] {
        assert_eq!(states_of(&manager, pawn, feature).as_deref(), Some("InitState.GameplayReady"), "{feature}");
    }
    // The timeline holds the seed's order: the hero reaches DataAvailable before the pawn extension may
    // initialize, and the hero initializes (sending BindInputsNow) only after the pawn extension did.
    let world_events = session.timeline().texts(&track::world("w"), EventKind::World);
    let position = |text: &str| {
        world_events.iter().position(|e| e == text).unwrap_or_else(|| panic!("{text} in {world_events:#?}"))
    };
    let order = [
        format!("{pawn} PawnExtension -> InitState.Spawned"),
        format!("{pawn} PawnExtension -> InitState.DataAvailable"),
        format!("{pawn} Hero -> InitState.DataAvailable"),
        format!("{pawn} PawnExtension -> InitState.DataInitialized"),
        format!("event BindInputsNow sent to {pawn}"),
        format!("{pawn} Hero -> InitState.DataInitialized"),
        format!("{pawn} Hero -> InitState.GameplayReady"),
    ];
    let positions: Vec<usize> = order.iter().map(|t| position(t)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?} in {world_events:#?}");
    let debug_lines =
        session.timeline().texts(&track::instance("lyra-character", "w"), EventKind::Log(LogLevel::Debug));
    assert!(debug_lines.is_empty(), "below the default Info threshold nothing is kept: {debug_lines:?}");
    manager.end_play().await.unwrap();
    let w = world::lock(manager.world());
    assert_eq!((w.live_features(), w.live_subscriptions(), w.live_handlers()), (0, 0, 0));
}

#[tokio::test]
async fn input_binding() {
    let (LoadedWorld { session, mut manager, plugins: _plugins, .. }, player) =
        lyra_flow(&[LYRA_CHARACTER, INPUT_BINDING]).await;
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    let bindings = |manager: &gamefeature_host::ExperienceManager| {
        world::lock(manager.world()).property(player.pawn, "HeroComponent", "input-bindings").unwrap().cloned()
    };
    assert_eq!(bindings(&manager), None, "nothing is bound before BindInputsNow");
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    assert_eq!(bindings(&manager), Some(Value::Text("Move,Look,Fire".into())));
    let logs = info_logs(&session, "input-binding", "w");
    assert_eq!(logs, [format!("pawn {}: bound Move,Look,Fire", player.pawn.to_raw())]);
    // Reloaded (or activated late), it binds the heroes that are already initialised, at `ExtensionAdded`.
    manager.reload_feature("input-binding").await.unwrap();
    assert_eq!(bindings(&manager), Some(Value::Text("Move,Look,Fire".into())));
    let pawn = player.pawn.to_raw();
    let expected = [
        format!("pawn {pawn}: bound Move,Look,Fire"),
        format!("pawn {pawn}: unbound"),
        format!("pawn {pawn}: bound Move,Look,Fire"),
    ];
    assert_eq!(info_logs(&session, "input-binding", "w"), expected);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn manager_probe() {
    let plugins = PluginDir::with(&[MANAGER_PROBE]);
    let experiences = ExperienceDir::new();
    experiences.write(
        "script.txt",
        "handler 3 Pawn\nrequest Pawn ProbeComponent\nsubscribe-class 9 Pawn Hero\nspawn Pawn\nhandles\nbogus command\n",
    );
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\nscript = \"script.txt\"\n", experience_with_features(&["manager-probe"])),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let spawned = world::lock(manager.world()).actors_of_class("Pawn").unwrap();
    assert_eq!(spawned.len(), 1, "the script spawned a pawn");
    let pawn = spawned[0].to_raw();
    assert_eq!(
        info_logs(&session, "manager-probe", "w"),
        [
            "handle: extension handler 3 on Pawn".to_string(),
            "handle: request ProbeComponent on Pawn".to_string(),
            "handle: subscription 9".to_string(),
            format!("event 3 {pawn} ReceiverAdded"),
            format!("event 3 {pawn} GameActorReady"),
        ]
    );
    let warnings = session.timeline().texts(&track::instance("manager-probe", "w"), EventKind::Log(LogLevel::Warn));
    assert_eq!(warnings, ["unknown command \"bogus command\""]);
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn event_sink() {
    let LoadedWorld { session, mut manager, .. } = load_world(&[EVENT_SINK]).await;
    manager.with_world(|w| {
        let pawn = w.spawn("Pawn").unwrap();
        for _ in 0..5 {
            w.send_extension_event(pawn, "Tick").unwrap();
        }
        w.spawn("PlayerState").unwrap();
    });
    manager.end_play().await.unwrap();
    // ReceiverAdded, GameActorReady and five ticks for the pawn; nothing for the player state.
    assert_eq!(info_logs(&session, "event-sink", "w"), ["received 7 events"]);
}

/// A plugin built against the first API version plays beside plugins of the newest, and reloads without state
/// (0.1.0 has no `snapshot`).
#[tokio::test]
async fn legacy_pawn_counter() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, LEGACY_PAWN_COUNTER]);
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character", "legacy-pawn-counter"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    manager.with_world(|w| game::possess(w, &player)).unwrap();
    manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
    assert_eq!(manager.live_features(), ["lyra-character", "legacy-pawn-counter"]);
    assert_eq!(states_of(&manager, player.pawn, "Hero").as_deref(), Some("InitState.GameplayReady"), "0.2.0 plays");
    let tally = |manager: &gamefeature_host::ExperienceManager| {
        let w = world::lock(manager.world());
        w.property(player.pawn, "PawnTally", "pawns-seen").ok().flatten().cloned()
    };
    assert_eq!(tally(&manager), Some(world::Value::Integer(1)), "0.1.0 extended the pawn");
    // Its chain was walked with 0.1.0's two calls a step: each step it allowed was prepared, the one it refused
    // (to GameplayReady, the fourth state) was not.
    let pawn = player.pawn.to_raw();
    let steps = info_logs(&session, "legacy-pawn-counter", "w");
    let steps: Vec<&String> = steps.iter().filter(|l| l.starts_with("Tally of")).collect();
    assert_eq!(steps, [0, 1, 2].map(|s| format!("Tally of {pawn}: {s} to {}", s + 1)).iter().collect::<Vec<_>>());
    assert_eq!(manager.with_world(|w| w.feature_state(player.pawn, "Tally")), Ok(3));

    manager.reload_feature("legacy-pawn-counter").await.unwrap();
    assert_eq!(manager.live_features(), ["lyra-character", "legacy-pawn-counter"]);
    assert_eq!(tally(&manager), Some(world::Value::Integer(1)), "counted afresh: nothing carried over");
    let calls = session.timeline().texts(&track::instance("legacy-pawn-counter", "w"), EventKind::Call);
    assert!(calls.iter().any(|c| c.starts_with("snapshot")), "{calls:?}");
    assert!(!calls.iter().any(|c| c.starts_with("restore")), "nothing to restore: {calls:?}");
    manager.end_play().await.unwrap();
    assert!(info_logs(&session, "legacy-pawn-counter", "w").contains(&"counted 1 pawns".to_string()));
}

/// In a standalone game the score keeper is its own server: a point a second, for each player.
#[tokio::test]
async fn score_keeper() {
    let plugins = PluginDir::with(&[SCORE_KEEPER]);
    let experiences = ExperienceDir::new();
    let path = experiences.write(
        "e.toml",
        &format!(
            "{}[[actions]]\nkind = \"add-components\"\nactor-class = \"PlayerState\"\ncomponent-class = \"ScoreComponent\"\n",
            experience_with_features(&["score-keeper"])
        ),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| game::spawn_player(w, "Pawn")).unwrap();
    for _ in 0..10 {
        manager.tick(std::time::Duration::from_millis(350));
    }
    let score = world::lock(manager.world()).property(player.player_state, "ScoreComponent", "score").unwrap().cloned();
    assert_eq!(score, Some(Value::Integer(3)), "3.5 seconds: three points");
    assert!(world::lock(manager.world()).replicated_classes().replicates("ScoreComponent", "score"));
    assert!(info_logs(&session, "score-keeper", "w").is_empty(), "nothing replicates to a standalone game");
    manager.end_play().await.unwrap();
}

/// A world with `damageable-props`, its prop class declared, and the experience's creation policy for
/// `PropHealth` when given.
async fn props_world(
    policy: Option<&str>,
) -> (gamefeature_host::Session, gamefeature_host::ExperienceManager, PluginDir) {
    let plugins = PluginDir::with(&[DAMAGEABLE_PROPS]);
    let experiences = ExperienceDir::new();
    let overriding = policy.map(|p| format!("[component-creation]\nPropHealth = \"{p}\"\n")).unwrap_or_default();
    let text = format!(
        "{}[classes]\nDamageableProp = \"Actor\"\n{overriding}",
        experience_with_features(&["damageable-props"])
    );
    let path = experiences.write("e.toml", &text);
    let session = session_with(&plugins, None, trusted_with_details());
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    (session, manager, plugins)
}

fn props_with_health(manager: &gamefeature_host::ExperienceManager) -> Vec<(u64, Option<Value>)> {
    let w = world::lock(manager.world());
    w.actors()
        .filter(|a| a.class() == "DamageableProp" && a.component("PropHealth").is_some())
        .map(|a| (a.id.to_raw(), a.component("PropHealth").unwrap().properties.get("health").cloned()))
        .collect()
}

/// Lazy (the plugin's policy): only the props that were hit have a health component; a watch set up before the
/// component existed hears every change from the first hit on. The experience overrides the policy: `always`
/// gives every prop one from the start, `never` refuses the plugin's request outright.
#[tokio::test]
async fn damageable_props() {
    let (session, mut manager, _plugins) = props_world(None).await;
    let props: Vec<u64> =
        world::lock(manager.world()).actors_of_class("DamageableProp").unwrap().iter().map(|a| a.to_raw()).collect();
    assert_eq!(props.len(), 200);
    assert!(props_with_health(&manager).is_empty(), "untouched props have no component");
    assert_eq!(world::lock(manager.world()).lazy_components(), (0, 200));
    for _ in 0..3 {
        manager.tick(std::time::Duration::from_secs(1));
    }
    // Second 1 hits prop 0; second 2 props 0 and 7; second 3 props 0, 7 and 42.
    let expected = vec![
        (props[0], Some(Value::Integer(70))),
        (props[7], Some(Value::Integer(80))),
        (props[42], Some(Value::Integer(90))),
    ];
    assert_eq!(props_with_health(&manager), expected);
    assert_eq!(world::lock(manager.world()).lazy_components(), (3, 197));
    let heard: Vec<String> = debug_logs(&session, "damageable-props", "w")
        .into_iter()
        .filter(|l| l.starts_with(&format!("prop {} ", props[0])))
        .collect();
    let first = props[0];
    assert_eq!(
        heard,
        [
            format!("prop {first} health: none -> 90"),
            format!("prop {first} health: 90 -> 80"),
            format!("prop {first} health: 80 -> 70")
        ]
    );
    manager.end_play().await.unwrap();
    assert_eq!(world::lock(manager.world()).live_watches(), 0, "watches go with their plugin");

    let (_session, mut always, _plugins) = props_world(Some("always")).await;
    assert_eq!(props_with_health(&always).len(), 200, "always: every prop from the start");
    always.end_play().await.unwrap();

    let (_session, never, _plugins) = props_world(Some("never")).await;
    let failure = never.report().failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n");
    assert!(failure.contains("PropHealth has creation policy never"), "{failure}");
    assert!(never.live_features().is_empty());
}

/// The hostile plugin's behaviours are exercised in `sandbox.rs`; here it is harmless without one.
#[tokio::test]
async fn hostile() {
    let LoadedWorld { mut manager, report, .. } = load_world(&[HOSTILE]).await;
    assert_eq!(report.active, ["hostile"]);
    manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.end_play().await.unwrap();
}

/// How the host calls `plugin`, as `gfhost inspect` shows it.
fn call_path(plugin: &TestPlugin) -> String {
    let plugins = PluginDir::with(&[*plugin]);
    let session = session(&plugins);
    let manifest = session.features().manifest(plugin.name).unwrap();
    let inspection = session.runtime().inspect_plugin(&manifest).unwrap();
    inspection.call_path.expect("it fits the world").to_string()
}

/// A plugin whose imports never wait (a Rust plugin printing and calling the host) is called directly, with
/// wasmtime's synchronous API; one importing WASI's file functions, or built against 0.1.0, on a fiber. Both
/// run the same: the sandbox tests run the hostile plugin's waits on both paths.
#[test]
fn plugins_whose_imports_never_wait_are_called_directly() {
    for plugin in [HOSTILE, EVENT_SINK, LYRA_CHARACTER, MANAGER_PROBE] {
        assert_eq!(call_path(&plugin), "direct (wasmtime's synchronous API)", "{}", plugin.name);
    }
    let fiber = "on a fiber (wasmtime's async API), because";
    assert!(call_path(&DATA_PROBE).starts_with(&format!("{fiber} it imports wasi:filesystem/types@")));
    assert!(call_path(&EVENT_SINK_PY).starts_with(fiber));
    assert_eq!(call_path(&LEGACY_PAWN_COUNTER), format!("{fiber} it was built against gamefeature:plugin@0.1.0"));
}

#[tokio::test]
async fn data_probe() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[DATA_PROBE]).await;
    assert_eq!(report.active, ["data-probe"]);
    // The tests' sessions grant no data directory: every file operation is refused, on the fiber path.
    let lines = info_logs(&session, "data-probe", "w");
    assert_eq!(lines.len(), 7, "{lines:#?}");
    assert!(lines.iter().all(|l| l.starts_with("fs ") && l.contains(": refused (")), "{lines:#?}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn wrong_wit_version() {
    let plugins = PluginDir::with(&[WRONG_WIT_VERSION]);
    let session = session(&plugins);
    let error = session.features().load("wrong-wit-version").await.unwrap_err().to_string();
    assert!(error.contains("wrong_wit_version.wasm"), "names the file: {error}");
    assert!(
        error.contains("built against gamefeature:plugin@0.9.0; this host implements 0.1.0, 0.2.0"),
        "names both versions: {error}"
    );
}

/// A manifest must declare the version its component was built against: loading a 0.2.0 component as 0.1.0
/// (or the other way round) would bind it to the wrong world.
#[tokio::test]
async fn a_manifest_declaring_another_api_than_its_component_is_refused() {
    let plugins = PluginDir::with(&[]);
    for (folder, declared, from) in [("older", "0.1.0", &BASE_GAMEPLAY), ("newer", "0.2.0", &LEGACY_PAWN_COUNTER)] {
        let component = std::path::Path::new(from.component).file_name().unwrap().to_str().unwrap().to_string();
        let manifest = format!(
            "[plugin]\nname = \"{folder}\"\nversion = \"1.0.0\"\napi = \"{declared}\"\ncomponent = \"{component}\"\n"
        );
        plugins.add_custom(folder, &manifest, Some(from));
    }
    let session = session(&plugins);
    let older = session.features().load("older").await.unwrap_err().to_string();
    assert!(older.contains("built against gamefeature:plugin@0.2.0, but"), "{older}");
    assert!(older.contains("declares api = \"0.1.0\""), "{older}");
    let newer = session.features().load("newer").await.unwrap_err().to_string();
    assert!(newer.contains("built against gamefeature:plugin@0.1.0, but"), "{newer}");
}

/// The default experience — Rust, Python, JavaScript and C plugins together — in a standalone world `w`, with
/// two players who arrived the Lyra way (pawn, then controller, then player state).
async fn default_world_with_players(
) -> (gamefeature_host::Session, gamefeature_host::ExperienceManager, Vec<game::Player>, PluginDir) {
    let plugins = PluginDir::with(&DEFAULT_PLUGINS);
    let experiences = default_experience();
    let session = session_with(&plugins, Some(&shared_cache()), trusted_with_details());
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&experiences.path().join("default.toml")).await.unwrap().clone();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let mut players = Vec::new();
    for _ in 0..2 {
        let player = manager.with_world(|w| game::spawn_player(w, "HeroCharacter")).unwrap();
        manager.with_world(|w| game::possess(w, &player)).unwrap();
        manager.with_world(|w| game::replicate_player_state(w, &player)).unwrap();
        players.push(player);
    }
    (session, manager, players, plugins)
}

/// The lifecycle calls a plugin received in world `w`, in order, without their outcomes.
fn lifecycle_calls(session: &gamefeature_host::Session, plugin: &str) -> Vec<String> {
    let calls = session.timeline().texts(&track::instance(plugin, "w"), EventKind::Call);
    calls
        .iter()
        .map(|call| call.split(' ').next().unwrap_or_default().to_string())
        .filter(|name| LIFECYCLE.contains(&name.as_str()))
        .collect()
}

const LIFECYCLE: [&str; 7] = [
    "on-registering",
    "on-loading",
    "on-activating",
    "on-activated",
    "on-deactivating",
    "on-unloading",
    "on-unregistering",
];

/// Python: the scoreboard follows scores through a property watch and seats heroes from an init-state
/// subscription.
#[tokio::test]
async fn scoreboard() {
    let (session, mut manager, players, _plugins) = default_world_with_players().await;
    let raw = |actor: world::ActorId| actor.to_raw();
    let (first, second) = (&players[0], &players[1]);
    let seated = info_logs(&session, "scoreboard", "w");
    assert!(seated.contains(&format!("hero {} takes seat 1 on the scoreboard", raw(first.pawn))), "{seated:#?}");
    assert!(seated.contains(&format!("hero {} takes seat 2 on the scoreboard", raw(second.pawn))), "{seated:#?}");

    manager.with_world(|w| w.set_property(second.player_state, "ScoreComponent", "score", Value::Integer(5))).unwrap();
    manager.with_world(|w| w.set_property(first.player_state, "ScoreComponent", "score", Value::Integer(2))).unwrap();
    let logs = debug_logs(&session, "scoreboard", "w");
    let (p1, p2) = (raw(first.player_state), raw(second.player_state));
    assert!(logs.contains(&format!("player {p2}: 0 -> 5 points (leader: player {p2})")), "{logs:#?}");
    assert!(logs.contains(&format!("player {p1}: 0 -> 2 points (leader: player {p2})")), "{logs:#?}");

    manager.end_play().await.unwrap();
    let logs = info_logs(&session, "scoreboard", "w");
    let standings = format!("final standings in w: player {p2}: 5, player {p1}: 2; 2 hero(es) seated");
    assert!(logs.contains(&standings), "{logs:#?}");
    assert_eq!(lifecycle_calls(&session, "scoreboard"), LIFECYCLE);
    assert_eq!(world::lock(manager.world()).live_watches(), 0, "its watches went with it");
}

/// JavaScript: the announcer's own init-state feature joins each hero's chain — the pawn extension waits for
/// it, as Lyra's does for every feature of the pawn — and announces heroes entering and leaving.
#[tokio::test]
async fn announcer() {
    let (session, mut manager, players, _plugins) = default_world_with_players().await;
    for player in &players {
        for feature in ["Announcer", "PawnExtension", "Hero"] {
            let state = states_of(&manager, player.pawn, feature);
            assert_eq!(state.as_deref(), Some("InitState.GameplayReady"), "{feature} of {}", player.pawn);
        }
    }
    let pawn = players[0].pawn;
    let world_events = session.timeline().texts(&track::world("w"), EventKind::World);
    let position = |text: String| {
        world_events.iter().position(|e| *e == text).unwrap_or_else(|| panic!("{text} in {world_events:#?}"))
    };
    let order = [
        position(format!("{pawn} Announcer -> InitState.Spawned")),
        position(format!("{pawn} Hero -> InitState.DataAvailable")),
        position(format!("{pawn} Announcer -> InitState.DataAvailable")),
        position(format!("{pawn} PawnExtension -> InitState.DataInitialized")),
        position(format!("{pawn} Announcer -> InitState.DataInitialized")),
        position(format!("{pawn} Announcer -> InitState.GameplayReady")),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?} in {world_events:#?}");
    let logs = info_logs(&session, "announcer", "w");
    assert!(logs.contains(&format!("hero {} enters the arena (1 so far)", pawn.to_raw())), "{logs:#?}");

    manager.with_world(|w| w.destroy(players[1].pawn)).unwrap();
    manager.end_play().await.unwrap();
    let logs = info_logs(&session, "announcer", "w");
    assert!(logs.contains(&format!("hero {} has left the arena", players[1].pawn.to_raw())), "{logs:#?}");
    assert_eq!(logs.last().map(String::as_str), Some("announcer signing off: 2 hero(es) announced"));
    assert_eq!(lifecycle_calls(&session, "announcer"), LIFECYCLE);
    let w = world::lock(manager.world());
    assert_eq!((w.live_features(), w.live_subscriptions(), w.live_handlers()), (0, 0, 0), "nothing left behind");
}

/// C: match statistics from extension events, an init-state subscription, property reads and a timer, reported
/// at end of play.
#[tokio::test]
async fn match_stats() {
    let (session, mut manager, players, _plugins) = default_world_with_players().await;
    manager.with_world(|w| w.destroy(players[1].pawn)).unwrap();
    for _ in 0..75 {
        manager.tick(std::time::Duration::from_secs(1) / 30); // two and a half seconds of play
    }
    manager.end_play().await.unwrap();
    let logs = info_logs(&session, "match-stats", "w");
    let ready = |p: &game::Player| {
        format!("hero {} (player {}): Hero reached InitState.GameplayReady", p.pawn.to_raw(), p.player_state.to_raw())
    };
    let expected = [
        "keeping match statistics in w".to_string(),
        ready(&players[0]),
        ready(&players[1]),
        "match over after 2 s: 2 player(s), 2 character(s) arrived, 1 left, 2 hero(es) ready".to_string(),
    ];
    assert_eq!(logs, expected);
    assert_eq!(lifecycle_calls(&session, "match-stats"), LIFECYCLE);
    let w = world::lock(manager.world());
    assert_eq!((w.live_features(), w.live_subscriptions(), w.live_handlers()), (0, 0, 0), "nothing left behind");
}

/// What the shape probes log, in order: every WIT shape through each helper library. The languages differ in
/// one line: componentize-js cannot send a negative 64-bit integer, and the JavaScript helper refuses one with
/// an exception rather than let the instance abort.
fn expected_shapes(negative_integer: &str) -> Vec<String> {
    let lines = [
        "net mode: standalone standalone",
        "world: w w",
        "class: Pawn, is an Actor: true",
        "pawns: 1",
        "role: authority, authority: true",
        "locally controlled: false",
        "player groups: error invalid",
        "request: Pawn + ProbeComponent",
        "components: ProbeComponent",
        "property b: true",
        "property i: 4611686018427387905",
        "property f: 0.25",
        "property t: h\u{e9}llo",
        "property missing: none",
        "watch id: 9",
        "NEGATIVE",
        "handler id: 4, receiver: Pawn",
        "timer id: 3, frame: 0",
        "states: InitState.Spawned, InitState.DataAvailable, InitState.DataInitialized, InitState.GameplayReady",
        "feature state: none",
        "feature state: InitState.Spawned",
        "all reached: true",
        "all but Probe reached: true",
        "subscription id: 6",
        "error unknown-actor: 999999",
        "error unknown-asset: nope",
        "error unknown-class: NoSuchClass",
        "error invalid: component requests and extension handlers on the root class \"Actor\" are refused: they would \
         extend every actor",
        "released: true",
        // Delivered after the call, in the dispatch's order: extension events, init states, property changes.
        "event 4 ExtensionAdded probe",
        "event 4 ExtensionRemoved probe",
        "init 6: Probe InitState.Spawned",
        "watch 9: 4611686018427387905 -> 5",
        // The chain walked after the call: each step asked, then prepared; GameplayReady refused.
        "may Probe go InitState.Spawned -> InitState.DataAvailable?",
        "Probe goes InitState.Spawned -> InitState.DataAvailable",
        "may Probe go InitState.DataAvailable -> InitState.DataInitialized?",
        "Probe goes InitState.DataAvailable -> InitState.DataInitialized",
        "may Probe go InitState.DataInitialized -> InitState.GameplayReady?",
        "init 6: Probe InitState.DataAvailable",
        "init 6: Probe InitState.DataInitialized",
        "timer 3 x1",
    ];
    lines.iter().map(|line| if *line == "NEGATIVE" { negative_integer } else { line }).map(String::from).collect()
}

/// Every shape of the WIT, through a helper library: the probe logs what each call returned.
async fn shapes(plugin: TestPlugin, negative_integer: &str) {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[plugin]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    for _ in 0..20 {
        manager.tick(std::time::Duration::from_millis(50));
    }
    manager.end_play().await.unwrap();
    assert_eq!(info_logs(&session, plugin.name, "w"), expected_shapes(negative_integer));
    // The deferred registrations of a component the actor lacks, the deferred events about an actor that does not
    // exist, then the deferred walks of a feature it lacks: refused, each pair in one line (each line is a host
    // call), in that order.
    let warnings = session.timeline().texts(&track::instance(plugin.name, "w"), EventKind::Log(LogLevel::Warn));
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    let (unregistered, unsent, refused) = (&warnings[0], &warnings[1], &warnings[2]);
    assert_eq!(
        unsent,
        "could not send Lost about actor 999999: unknown-actor: 999999 (and 1 more deferred events refused)"
    );
    assert!(unregistered.starts_with("could not register Extra on actor "), "{unregistered}");
    assert!(
        unregistered.contains(r#"has no "NoSuchComponent" component"#)
            && unregistered.ends_with("(and 1 more deferred registrations refused)"),
        "{unregistered}"
    );
    assert!(refused.starts_with("could not continue the chain of Missing on actor "), "{refused}");
    assert!(
        refused.contains("has no feature") && refused.ends_with("(and 1 more deferred walks refused)"),
        "{refused}"
    );
    let w = world::lock(manager.world());
    assert_eq!((w.live_features(), w.live_subscriptions(), w.live_handlers(), w.live_watches()), (0, 0, 0, 0));
}

#[tokio::test]
async fn shapes_py() {
    shapes(SHAPES_PY, "negative integer: -5").await;
}

#[tokio::test]
async fn shapes_js() {
    let refused = "negative integer refused: integer -5 cannot be sent: componentize-js sends integers from 0 to \
                   2^63-1 only";
    shapes(SHAPES_JS, refused).await;
}

/// The C helper defers registrations as the Rust SDK does: sent in one host call when the callback returns, before
/// the deferred walks (which then walk the feature registered); a refusal is logged.
#[tokio::test]
async fn c_plugins_defer_registrations_before_their_walks() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[EVENT_SINK_C]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let spawn = |w: &mut world::World| w.spawn("Pawn").unwrap();
    let (first, pawn, bare) = manager.with_world(|w| (spawn(w), spawn(w), spawn(w)));
    for meshed in [first, pawn] {
        manager.with_world(|w| w.attach_native_component(meshed, "Mesh")).unwrap();
    }
    // The first walk also asks for the state names, once.
    manager.with_world(|w| w.send_extension_event(first, "Register:Late")).unwrap();
    let before = manager.with_world(|w| w.plugin_calls());
    manager.with_world(|w| w.send_extension_event(pawn, "Register:Late")).unwrap();
    // The registration and the walk: one call into the world each.
    assert_eq!(manager.with_world(|w| w.plugin_calls()) - before, 2);
    let ready = manager.with_world(|w| w.state_ordinal("InitState.GameplayReady")).unwrap();
    assert_eq!(manager.with_world(|w| w.feature_state(pawn, "Late")), Ok(ready), "registered, then walked");
    manager.with_world(|w| w.send_extension_event(bare, "Register:Other")).unwrap();
    manager.end_play().await.unwrap();
    let warnings = session.timeline().texts(&track::instance("event-sink-c", "w"), EventKind::Log(LogLevel::Warn));
    let unregistered = format!("could not register Other on actor {}: ", bare.to_raw());
    assert_eq!(warnings.len(), 2, "the registration and the walk of the bare pawn: {warnings:?}");
    assert!(warnings[0].starts_with(&unregistered), "{warnings:?}");
    assert!(warnings[0].contains(r#"has no "Mesh" component"#), "{warnings:?}");
    assert!(warnings[1].starts_with("could not continue the chain of Other on actor "), "{warnings:?}");
}

/// The C helper defers events as the Rust SDK does: sent in one host call when the callback returns, delivered
/// to the handlers like any other; a refusal is logged.
#[tokio::test]
async fn c_plugins_defer_events() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[EVENT_SINK_C]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let pawn = manager.with_world(|w| w.spawn("Pawn")).unwrap();
    manager.with_world(|w| w.send_extension_event(pawn, "Relay:Log:Relayed")).unwrap();
    manager.with_world(|w| w.send_extension_event(pawn, "Relay:")).unwrap();
    manager.end_play().await.unwrap();
    assert!(info_logs(&session, "event-sink-c", "w").contains(&"Log:Relayed".to_string()), "relayed");
    let warnings = session.timeline().texts(&track::instance("event-sink-c", "w"), EventKind::Log(LogLevel::Warn));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let unsent = format!("could not send  about actor {}: invalid: an event name may not be empty", pawn.to_raw());
    assert_eq!(warnings[0], unsent);
}

/// The C helper defers chain walks as the Rust SDK does: sent in one host call when the callback returns, a
/// refusal logged once for the call.
#[tokio::test]
async fn c_plugins_defer_chain_walks_and_hear_of_refusals_once() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[EVENT_SINK_C]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let pawn = manager.with_world(|w| w.spawn("Pawn")).unwrap();
    let before = manager.with_world(|w| w.plugin_calls());
    manager.with_world(|w| w.send_extension_event(pawn, "Defer:Missing")).unwrap();
    // The two deferred walks go in one call into the world (the warning telling of their refusal is a log line).
    assert_eq!(manager.with_world(|w| w.plugin_calls()) - before, 1);
    manager.end_play().await.unwrap();
    let warnings = session.timeline().texts(&track::instance("event-sink-c", "w"), EventKind::Log(LogLevel::Warn));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let refused = format!("could not continue the chain of Missing on actor {}: ", pawn.to_raw());
    assert!(warnings[0].starts_with(&refused), "{warnings:?}");
    assert!(warnings[0].contains(r#"has no feature "Missing""#), "{warnings:?}");
    assert!(warnings[0].ends_with("(and 1 more deferred walks refused)"), "{warnings:?}");
}

/// The event sink in another language receives the same events as the Rust one beside it, and carries its
/// count across a hot reload (snapshot and restore, in the Rust sink's state format).
async fn event_sink_in(plugin: TestPlugin) {
    let LoadedWorld { session, mut manager, report, plugins, .. } = load_world(&[EVENT_SINK, plugin]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    for _ in 0..3 {
        manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    }
    let reloaded = manager.reload_feature(plugin.name).await.unwrap();
    assert_eq!(reloaded.to, "0.1.0");
    let fourth = manager.with_world(|w| game::spawn_player(w, "Character")).unwrap();
    // Events one at a time take the scalar export; each sink in another language logs the names it is given (the
    // Rust sink, the benchmarks' least-work handler, only counts: manager-probe checks names in Rust).
    for name in ["Log:first", "Log:second", "Log:first"] {
        manager.with_world(|w| w.send_extension_event(fourth.pawn, name)).unwrap();
    }
    manager.end_play().await.unwrap();
    // Three pawns bring ReceiverAdded and GameActorReady each (6); the reloaded sink's new instance restores 6,
    // hears ExtensionAdded for the three (9), then the fourth pawn's two events (11) and the three single ones
    // (14). The Rust sink, not reloaded, hears 6 + 2 + 3.
    let singles = ["Log:first", "Log:second", "Log:first"];
    assert_eq!(info_logs(&session, "event-sink", "w"), ["received 11 events"]);
    // Each instance also printed a line to standard output when activated (after `restore`): it reached the
    // log then.
    let expected = [
        &["sink active", "received 6 events", "restored a count of 6 events", "sink active"][..],
        &singles,
        &["received 14 events"],
    ]
    .concat();
    assert_eq!(info_logs(&session, plugin.name, "w"), expected);
    for sink in ["event-sink", plugin.name] {
        let calls = session.timeline().texts(&track::instance(sink, "w"), EventKind::Call);
        let single = calls.iter().filter(|c| *c == "handle-extension-event (1)").count();
        assert_eq!(single, 3, "{sink}: {calls:?}");
    }
    drop(plugins);
}

#[tokio::test]
async fn event_sink_py() {
    event_sink_in(EVENT_SINK_PY).await;
}

#[tokio::test]
async fn event_sink_js() {
    event_sink_in(EVENT_SINK_JS).await;
}

#[tokio::test]
async fn event_sink_c() {
    event_sink_in(EVENT_SINK_C).await;
}

/// The host-call fuzz target's plugins (`tests/fuzz-targets` feeds them arbitrary programs): a program calling
/// every import of each WIT version runs to its end beside lyra-character, whose player still reaches
/// GameplayReady, and play ends leaving nothing behind.
#[tokio::test]
async fn call_fuzzer() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, CALL_FUZZER, CALL_FUZZER_LEGACY]);
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = call_fuzzer::experience(&experiences);
    call_fuzzer::set_program(&experiences, &call_fuzzer::every_import_program());
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    gamefeature_tests::hostile::play_one_player(&mut manager, "every import");
    for _ in 0..40 {
        manager.tick(std::time::Duration::from_millis(33));
    }
    for (plugin, kinds) in [("call-fuzzer", 46), ("call-fuzzer-legacy", 32)] {
        let lines = session.timeline().texts(&track::instance(plugin, "w"), EventKind::Log(LogLevel::Info));
        let done = format!("of {kinds} kinds");
        assert!(lines.iter().any(|l| l.starts_with("program done:") && l.ends_with(&done)), "{plugin}: {lines:?}");
    }
    assert_eq!(manager.live_features(), ["call-fuzzer", "call-fuzzer-legacy", "lyra-character"]);
    manager.end_play().await.unwrap();
    let w = world::lock(manager.world());
    assert_eq!(
        (w.live_handlers(), w.live_subscriptions(), w.live_timers(), w.requested_component_count()),
        (0, 0, 0, 0)
    );
}

/// The rooms example places players only where there are clients to send the world to: in a standalone game it
/// has nothing to do, and its player plays on (the multiplayer tests show it placing players on a server).
#[tokio::test]
async fn rooms() {
    let LoadedWorld { session, mut manager, report, .. } = load_world(&[LYRA_CHARACTER, ROOMS]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    gamefeature_tests::hostile::play_one_player(&mut manager, "rooms");
    assert_eq!(info_logs(&session, "rooms", "w"), ["no clients here: nobody to place in rooms"]);
    assert_eq!(manager.live_features(), ["lyra-character", "rooms"]);
    manager.end_play().await.unwrap();
}

/// A world playing `features` (trusted with what they declare) with the arena's classes and an `arena` asset of
/// 20 by 10 units, where a test places heroes itself: the game's `Position` and shooter-core's `HealthComponent`
/// given to them as the arena game gives them.
async fn arena_world(
    plugins: &[TestPlugin],
    features: &[&str],
) -> (gamefeature_host::Session, gamefeature_host::ExperienceManager, PluginDir, ExperienceDir) {
    let dir = PluginDir::with(plugins);
    let experiences = ExperienceDir::new();
    experiences.write("arena.txt", "width = 20\nheight = 10\n");
    let classes = "[classes]\nHeroCharacter = \"Character\"\nPickup = \"Actor\"\nZone = \"Actor\"\n";
    let bundles = "[bundles.Equipped]\narena = \"arena.txt\"\n";
    let path = experiences.write("e.toml", &format!("{}{classes}{bundles}", experience_with_features(features)));
    let session = session_with(&dir, Some(&shared_cache()), trusted());
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.expect("the experience loads").clone();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    (session, manager, dir, experiences)
}

/// A hero of the arena's at (x, y) with this much health.
fn arena_hero(manager: &mut gamefeature_host::ExperienceManager, x: f64, y: f64, health: i64) -> world::ActorId {
    manager
        .with_world(|w| -> Result<world::ActorId, world::WorldError> {
            let hero = w.spawn("HeroCharacter")?;
            place(w, hero, x, y)?;
            w.attach_native_component(hero, "HealthComponent")?;
            w.set_property(hero, "HealthComponent", "health", Value::Integer(health))?;
            Ok(hero)
        })
        .unwrap()
}

/// Gives an actor the game's `Position`, at (x, y).
fn place(w: &mut world::World, actor: world::ActorId, x: f64, y: f64) -> Result<(), world::WorldError> {
    if w.actor(actor)?.component("Position").is_none() {
        w.attach_native_component(actor, "Position")?;
    }
    w.set_property(actor, "Position", "x", Value::Float(x))?;
    w.set_property(actor, "Position", "y", Value::Float(y))
}

fn property(
    manager: &gamefeature_host::ExperienceManager,
    actor: world::ActorId,
    component: &str,
    name: &str,
) -> Option<Value> {
    world::lock(manager.world()).property(actor, component, name).ok().flatten().cloned()
}

fn seconds(manager: &mut gamefeature_host::ExperienceManager, seconds: f64) {
    manager.tick(std::time::Duration::from_secs_f64(seconds));
}

/// A pawn the game sends `Dash` moves three times as fast for a quarter of a second, and not again until its
/// cooldown is over.
#[tokio::test]
async fn dash() {
    let (session, mut manager, _plugins, _experiences) = arena_world(&[DASH], &["dash"]).await;
    let pawn = manager
        .with_world(|w| -> Result<world::ActorId, world::WorldError> {
            let pawn = w.spawn("Pawn")?;
            w.attach_native_component(pawn, "Movement")?;
            w.set_property(pawn, "Movement", "boost", Value::Float(1.0))?;
            Ok(pawn)
        })
        .unwrap();
    let dash = |manager: &mut gamefeature_host::ExperienceManager| {
        manager.with_world(|w| w.send_extension_event(pawn, "Dash")).unwrap();
        seconds(manager, 0.01);
    };
    let boost = |manager: &gamefeature_host::ExperienceManager| property(manager, pawn, "Movement", "boost");
    dash(&mut manager);
    assert_eq!(boost(&manager), Some(Value::Float(3.0)));
    seconds(&mut manager, 0.3);
    assert_eq!(boost(&manager), Some(Value::Float(1.0)), "a quarter of a second");
    dash(&mut manager);
    assert_eq!(boost(&manager), Some(Value::Float(1.0)), "not again before its cooldown");
    seconds(&mut manager, 1.5);
    dash(&mut manager);
    assert_eq!(boost(&manager), Some(Value::Float(3.0)), "again once it is over");
    // Deactivated mid-dash: the boost it wrote goes with it, and the game's own speed is back.
    assert!(manager.deactivate_feature("dash").await);
    assert_eq!(boost(&manager), None);
    assert_eq!(info_logs(&session, "dash", "w"), ["2 dash(es) in this match"]);
    manager.end_play().await.unwrap();
}

/// Health packs (Python) are dropped every three seconds; one within reach of a hero heals it and goes.
#[tokio::test]
async fn pickups() {
    let (session, mut manager, _plugins, _experiences) = arena_world(&[PICKUPS], &["pickups"]).await;
    let hero = arena_hero(&mut manager, 4.0, 4.0, 50);
    seconds(&mut manager, 3.05);
    let packs = world::lock(manager.world()).actors_of_class("Pickup").unwrap();
    assert_eq!(packs.len(), 1, "a pack dropped");
    seconds(&mut manager, 0.25);
    assert_eq!(property(&manager, hero, "HealthComponent", "health"), Some(Value::Integer(50)), "not placed yet");

    // The game places it beside the hero: the next check heals the hero, and the pack is gone.
    manager.with_world(|w| place(w, packs[0], 4.5, 4.0)).unwrap();
    seconds(&mut manager, 0.25);
    assert_eq!(property(&manager, hero, "HealthComponent", "health"), Some(Value::Integer(90)));
    assert!(world::lock(manager.world()).actors_of_class("Pickup").unwrap().is_empty());
    assert_eq!(
        info_logs(&session, "pickups", "w"),
        [format!("hero {} picked up a health pack: 50 -> 90", hero.to_raw())]
    );
    manager.end_play().await.unwrap();
}

/// The zone (JavaScript) starts round the whole arena and closes in every second; a hero outside loses health.
#[tokio::test]
async fn shrinking_zone() {
    let (session, mut manager, _plugins, _experiences) = arena_world(&[SHRINKING_ZONE], &["shrinking-zone"]).await;
    let zone = world::lock(manager.world()).actors_of_class("Zone").unwrap()[0];
    assert_eq!(property(&manager, zone, "ZoneComponent", "x"), Some(Value::Float(10.0)), "the 20 by 10 arena's centre");
    let start = 20f64.hypot(10.0) / 2.0;
    assert_eq!(property(&manager, zone, "ZoneComponent", "radius"), Some(Value::Float(start)));
    let inside = arena_hero(&mut manager, 10.0, 5.0, 100);
    let edge = arena_hero(&mut manager, 19.9, 9.9, 100);
    seconds(&mut manager, 1.0);
    assert_eq!(property(&manager, zone, "ZoneComponent", "radius"), Some(Value::Float(start - 0.75)));
    assert_eq!(property(&manager, inside, "HealthComponent", "health"), Some(Value::Integer(100)));
    assert_eq!(property(&manager, edge, "HealthComponent", "health"), Some(Value::Integer(92)), "outside: hurt");
    for _ in 0..20 {
        seconds(&mut manager, 1.0);
    }
    assert_eq!(property(&manager, zone, "ZoneComponent", "radius"), Some(Value::Float(5.0)), "down to its last circle");
    assert_eq!(property(&manager, edge, "HealthComponent", "health"), Some(Value::Integer(0)), "health stops at 0");
    manager.end_play().await.unwrap();
    assert_eq!(info_logs(&session, "shrinking-zone", "w"), ["the zone closed to 5.0; it hurt heroes 13 time(s)"]);
}

/// A hero whose health reaches zero comes back two seconds later, healed, in the arena's next corner.
#[tokio::test]
async fn respawn() {
    let (session, mut manager, _plugins, _experiences) = arena_world(&[RESPAWN], &["respawn"]).await;
    let hero = arena_hero(&mut manager, 8.0, 6.0, 100);
    seconds(&mut manager, 0.1);
    manager.with_world(|w| w.set_property(hero, "HealthComponent", "health", Value::Integer(0))).unwrap();
    seconds(&mut manager, 1.9);
    assert_eq!(property(&manager, hero, "HealthComponent", "health"), Some(Value::Integer(0)), "down for two seconds");
    seconds(&mut manager, 0.2);
    assert_eq!(property(&manager, hero, "HealthComponent", "health"), Some(Value::Integer(150)));
    assert_eq!(property(&manager, hero, "Position", "x"), Some(Value::Float(3.0)));
    assert_eq!(property(&manager, hero, "Position", "y"), Some(Value::Float(3.0)));
    // Down again: the next corner, across the 20 by 10 arena.
    manager.with_world(|w| w.set_property(hero, "HealthComponent", "health", Value::Integer(0))).unwrap();
    seconds(&mut manager, 2.1);
    assert_eq!(property(&manager, hero, "Position", "x"), Some(Value::Float(17.0)));
    assert_eq!(property(&manager, hero, "Position", "y"), Some(Value::Float(3.0)));
    manager.end_play().await.unwrap();
    let logs = info_logs(&session, "respawn", "w");
    assert_eq!(logs.last().map(String::as_str), Some("2 respawn(s) in this match"), "{logs:?}");
}

// One test runs both call-fuzzers.
use self::call_fuzzer as call_fuzzer_legacy;

macro_rules! assert_plugin_has_a_test {
    ($name:ident, $constant:ident) => {
        #[allow(unused_imports)]
        use self::$name as _;
    };
}
gamefeature_plugin_artifacts::foreach_plugin!(assert_plugin_has_a_test);

/// Lyra's init chain asks the host only what it cannot be told: the properties and feature states its
/// decisions read come with each chain-step question (`chain-facts`), so twenty pawns reach GameplayReady with
/// a bounded number of host calls each — the count the chain's speed is measured in.
#[tokio::test]
async fn lyra_init_chain_host_calls_per_pawn() {
    const PAWNS: u64 = 20;
    let LoadedWorld { mut manager, report, .. } = load_world(&[LYRA_CHARACTER]).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let before = manager.with_world(|w| w.plugin_calls());
    let players: Vec<game::Player> =
        manager.with_world(|w| (0..PAWNS).map(|_| game::spawn_player(w, "Character").unwrap()).collect());
    manager.with_world(|w| players.iter().for_each(|p| game::possess(w, p).unwrap()));
    manager.with_world(|w| players.iter().for_each(|p| game::replicate_player_state(w, p).unwrap()));
    let calls = manager.with_world(|w| w.plugin_calls()) - before;
    for player in &players {
        for feature in ["Hero", "PawnExtension"] {
            assert_eq!(states_of(&manager, player.pawn, feature).as_deref(), Some("InitState.GameplayReady"));
        }
    }
    // Per pawn: two features registered, two subscriptions, three default-initialization checks (each two
    // calls), a chain continued on each wake-up, input bound once. No property or state reads.
    let per_pawn = calls as f64 / PAWNS as f64;
    assert!(per_pawn <= 18.0, "{per_pawn} host calls per pawn");
}
