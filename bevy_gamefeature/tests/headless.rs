//! A headless Bevy app hosting the game-feature world: its entities are actors, plugins' writes appear on them,
//! and a despawned entity's actor is gone. Time advances by exactly one frame per update, so every run plays the
//! same frames.

use std::path::Path;
use std::time::Duration;

use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_gamefeature::diagnostics;
use bevy_gamefeature::{
    Actor, ActorHandle, FeatureCommand, FeatureOutcome, FromPlugins, GameFeatureApp, GameFeatureDiagnosticsPlugin,
    GameFeaturePlugin, GameFeatures, HostSettings, InitStates, NotAnActor, Player, PlayerActors, SpawnedInWorld,
    ToActor,
};
use bevy_reflect::Reflect;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
use gamefeature_host::world::{self, Value};
use gamefeature_plugin_artifacts::{
    default_experience, shared_cache, ExperienceDir, PluginDir, DAMAGEABLE_PROPS, DEFAULT_PLUGINS, LYRA_CHARACTER,
    SCORE_KEEPER,
};

/// score-keeper's component on each player state: a point a second.
#[derive(Component, Reflect, Default, Debug)]
struct Score {
    score: i64,
}

/// A component of the game's own, bridged both ways.
#[derive(Component, Reflect, Default, Debug)]
struct Health {
    points: i32,
    armored: bool,
}

/// damageable-props' component: it watches every prop's health and says each change.
#[derive(Component, Reflect, Default, Debug)]
struct PropHealth {
    health: i64,
}

/// The component the hostile plugin (as `restartable`) requests on every pawn.
#[derive(Component, Reflect, Default, Debug)]
struct HostileStats {}

const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);

fn app(plugins: &PluginDir) -> App {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    app_playing(plugins, &repository.join("host/examples/embedded_game.toml"))
}

fn app_playing(plugins: &PluginDir, experience: &Path) -> App {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let settings = HostSettings::new(plugins.path(), experience)
        .class("HeroCharacter", "Character")
        .config(repository.join("gfhost.toml"))
        // The plugins' details (a prop's health, each score) are debug lines.
        .plugin_log_level(gamefeature_host::timeline::LogLevel::Debug);
    app_with(settings)
}

fn app_with(settings: HostSettings) -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .insert_resource(Time::<Fixed>::from_duration(FRAME))
        .insert_resource(GameFeatures::start(settings).expect("the experience loads"))
        .add_plugins(GameFeaturePlugin)
        .bridge_component::<Score>("ScoreComponent")
        .bridge_component::<Health>("Health")
        .bridge_component::<PropHealth>("PropHealth")
        .bridge_component::<HostileStats>("HostileStats");
    app
}

fn frames(app: &mut App, count: usize) {
    for _ in 0..count {
        app.update();
    }
}

#[test]
fn a_bevy_app_plays_the_plugins_on_its_entities() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let mut app = app(&plugins);
    let hero = app.world_mut().spawn((Actor::new("HeroCharacter"), Player, Health { points: 100, armored: true })).id();
    let prop = app.world_mut().spawn(Actor::new("NoSuchClass")).id();
    let stranger = app.world_mut().spawn((Actor::new("NoSuchClass"), Player)).id();
    frames(&mut app, 100);

    // The world spawned the player's three actors; score-keeper's component (added by the experience's action on
    // player states) appears on the player state's entity, with the points plugins wrote: about one a second.
    let actors = *app.world().get::<PlayerActors>(hero).expect("a player's actors");
    let score = app.world().get::<Score>(actors.player_state).expect("score-keeper's component, bridged");
    assert!((2..=4).contains(&score.score), "{score:?} after 3 s");
    let pawn = app.world().get::<ActorHandle>(hero).expect("the pawn is an actor").0;
    let features = app.world().resource::<GameFeatures>();
    assert!(features.has_actor(pawn));

    // The game's component is the world's, its fields its properties.
    let health = features.with_world(|w| w.property(pawn, "Health", "points").map(|v| v.cloned())).unwrap();
    assert_eq!(health, Ok(Some(Value::Integer(100))));
    // Lyra's init states, on the entity: every feature of the hero reached GameplayReady.
    let states = app.world().get::<InitStates>(hero).expect("the hero's init states").clone();
    assert_eq!(states.of("PawnExtension"), Some("InitState.GameplayReady"), "{states:?}");
    assert!(states.0.len() >= 2 && states.all_in("InitState.GameplayReady"), "{states:?}");

    // A system's write reaches the world; a plugin-side write reaches the entity.
    app.world_mut().get_mut::<Health>(hero).unwrap().points = 40;
    frames(&mut app, 1);
    let features = app.world().resource::<GameFeatures>();
    let health = features.with_world(|w| w.property(pawn, "Health", "points").map(|v| v.cloned())).unwrap();
    assert_eq!(health, Ok(Some(Value::Integer(40))));
    features.with_world(|w| w.set_property(pawn, "Health", "armored", Value::Boolean(false))).unwrap().unwrap();
    frames(&mut app, 1);
    assert!(!app.world().get::<Health>(hero).unwrap().armored, "what the world holds, the entity shows");

    // An entity of a class the world does not know is refused, with why, and asked no more; a player of one leaves
    // no controller or player state behind.
    let refused = app.world().get::<NotAnActor>(prop).expect("refused");
    assert!(refused.0.contains("NoSuchClass"), "{refused:?}");
    assert!(app.world().get::<NotAnActor>(stranger).is_some());
    let features = app.world().resource::<GameFeatures>();
    let controllers = features.with_world(|w| w.actors_of_class("PlayerController").map(|a| a.len())).unwrap();
    assert_eq!(controllers, Ok(1), "the hero's player's controller only");

    // Despawning an entity ends its actor.
    app.world_mut().despawn(hero);
    frames(&mut app, 1);
    assert!(!app.world().resource::<GameFeatures>().has_actor(pawn), "the pawn's actor ended with its entity");
}

#[test]
fn an_entity_despawned_between_the_world_s_frames_ends_its_actor() {
    // A window's frame rate over the world's: eight app updates to each fixed step. Bevy keeps a removal for two
    // updates only; the bridge must not miss it.
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let mut app = app(&plugins);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(FRAME / 8));
    let prop = app.world_mut().spawn(Actor::new("Actor")).id();
    frames(&mut app, 16);
    let actor = app.world().get::<ActorHandle>(prop).expect("an actor").0;
    app.world_mut().despawn(prop);
    frames(&mut app, 16);
    assert!(!app.world().resource::<GameFeatures>().has_actor(actor), "its actor ended with it");
}

#[test]
fn events_plugins_send_to_actors_reach_the_game() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let mut app = app(&plugins);
    #[derive(Resource, Default)]
    struct Heard(Vec<String>);
    app.init_resource::<Heard>().add_systems(
        bevy_app::FixedUpdate,
        |mut heard: MessageReader<'_, '_, FromPlugins>, mut log: ResMut<'_, Heard>| {
            log.0.extend(heard.read().map(|e| e.event.clone()));
        },
    );
    app.world_mut().spawn((Actor::new("HeroCharacter"), Player));
    frames(&mut app, 30);
    // Lyra's character flow asks the pawn to bind its inputs once it is ready (BindInputsNow).
    let heard = &app.world().resource::<Heard>().0;
    assert!(heard.iter().any(|e| e == "BindInputsNow"), "{heard:?}");
}

/// An app playing damageable-props alone (200 props of its own), with the folders it plays from.
fn props_app() -> (App, (PluginDir, ExperienceDir)) {
    let plugins = PluginDir::with(&[DAMAGEABLE_PROPS]);
    let experiences = ExperienceDir::new();
    let experience = experiences.write(
        "props.toml",
        "[experience]\nname = \"Props\"\nfeatures = [\"damageable-props\"]\n\n[classes]\nDamageableProp = \"Actor\"\n",
    );
    (app_playing(&plugins, &experience), (plugins, experiences))
}

#[test]
fn what_a_bevy_system_writes_reaches_the_plugins_watching_it() {
    let (mut app, _files) = props_app();
    let prop = app.world_mut().spawn((Actor::new("DamageableProp"), PropHealth { health: 100 })).id();
    frames(&mut app, 2);
    app.world_mut().get_mut::<PropHealth>(prop).unwrap().health = 70;
    frames(&mut app, 2);

    let actor = app.world().get::<ActorHandle>(prop).expect("the prop is an actor").0;
    let features = app.world().resource::<GameFeatures>();
    let said: Vec<String> = features.timeline().events().into_iter().map(|e| e.text).collect();
    let heard =
        |change: &str| said.iter().any(|line| line.contains(&format!("prop {} health: {change}", actor.to_raw())));
    // The prop arrived in the world with the game's value (the plugin first heard of it with its health at 100),
    // and the game's later write reached the plugin watching it.
    assert!(heard("100 -> 70") && !heard("none -> 100"), "damageable-props heard the game's write: {said:?}");
    features.with_world(|w| w.check_invariants()).expect("a standalone world").expect("the component model holds");
}

#[test]
fn actors_plugins_spawn_are_entities_and_leave_with_their_plugin() {
    let (mut app, _files) = props_app();
    frames(&mut app, 2);
    let spawned = |app: &mut App| -> Vec<(Entity, String, world::ActorId)> {
        let mut query = app.world_mut().query_filtered::<(Entity, &Actor, &ActorHandle), With<SpawnedInWorld>>();
        query.iter(app.world()).map(|(entity, actor, handle)| (entity, actor.class.clone(), handle.0)).collect()
    };
    // damageable-props spawns its props on activation: each is an entity of the game's.
    let props = spawned(&mut app);
    assert_eq!(props.len(), 200, "one entity per prop the plugin spawned");
    assert!(props.iter().all(|(_, class, _)| class == "DamageableProp"), "{props:?}");

    // A bridged component the game gives such an entity later is the actor's too.
    let (entity, _, actor) = props[3];
    app.world_mut().entity_mut(entity).insert(Health { points: 5, armored: false });
    frames(&mut app, 1);
    let features = app.world().resource::<GameFeatures>();
    let points = features.with_world(|w| w.property(actor, "Health", "points").map(|v| v.cloned())).unwrap();
    assert_eq!(points, Ok(Some(Value::Integer(5))));

    // The plugin's actors go with it, and so do their entities.
    app.world_mut().write_message(FeatureCommand::Deactivate("damageable-props".into()));
    frames(&mut app, 3);
    assert!(spawned(&mut app).is_empty(), "no entity outlives its actor");
    assert!(app.world().get_entity(entity).is_err());
    app.world()
        .resource::<GameFeatures>()
        .with_world(|w| w.check_invariants())
        .expect("a standalone world")
        .expect("the component model holds");
}

#[test]
fn features_reload_and_deactivate_by_message_while_the_app_runs() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let mut app = app(&plugins);
    #[derive(Resource, Default)]
    struct Outcomes(Vec<(FeatureCommand, Result<String, gamefeature_host::Error>)>);
    app.init_resource::<Outcomes>().add_systems(
        bevy_app::FixedUpdate,
        |mut outcomes: MessageReader<'_, '_, FeatureOutcome>, mut log: ResMut<'_, Outcomes>| {
            log.0.extend(outcomes.read().map(|o| (o.command.clone(), o.outcome.clone())));
        },
    );
    let hero = app.world_mut().spawn((Actor::new("HeroCharacter"), Player)).id();
    frames(&mut app, 90);
    let state = app.world().get::<PlayerActors>(hero).unwrap().player_state;
    let score = |app: &App| app.world().get::<Score>(state).map_or(0, |s| s.score);
    let before = score(&app);

    // A reload compiles off the frame while the app plays on (bounded: a compile takes well under a minute).
    app.world_mut().write_message(FeatureCommand::Reload("score-keeper".into()));
    for _ in 0..30_000 {
        frames(&mut app, 1);
        if !app.world().resource::<Outcomes>().0.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let outcomes = std::mem::take(&mut app.world_mut().resource_mut::<Outcomes>().0);
    assert!(
        matches!(&outcomes[..], [(FeatureCommand::Reload(p), Ok(text))] if p == "score-keeper" && text.contains("reloaded")),
        "{outcomes:?}"
    );
    frames(&mut app, 45);
    assert!(score(&app) > before, "the scores went on from where they were: {before} then {}", score(&app));

    // Deactivated, it scores no more; an unknown plugin is refused, naming it.
    app.world_mut().write_message(FeatureCommand::Deactivate("score-keeper".into()));
    app.world_mut().write_message(FeatureCommand::Activate("nobody".into()));
    frames(&mut app, 2);
    let stopped = score(&app);
    frames(&mut app, 60);
    assert_eq!(score(&app), stopped, "a deactivated plugin plays no more");
    let outcomes = &app.world().resource::<Outcomes>().0;
    assert!(matches!(&outcomes[0], (FeatureCommand::Deactivate(_), Ok(_))), "{outcomes:?}");
    assert!(
        matches!(&outcomes[1], (FeatureCommand::Activate(_), Err(gamefeature_host::Error::NotFound { name, .. })) if name == "nobody"),
        "{outcomes:?}"
    );
}

#[test]
fn a_quarantined_plugin_leaves_nothing_on_the_entities_and_the_others_play_on() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    gamefeature_tests::hostile::hostile(&plugins, "restartable");
    let experiences = ExperienceDir::new();
    let experience = experiences.write(
        "hostile.toml",
        "[experience]\nname = \"Hostile\"\nfeatures = [\"lyra-character\", \"hostile\"]\n\n[pawn-data]\npawn-class = \"HeroCharacter\"\n",
    );
    let settings = HostSettings::new(plugins.path(), &experience)
        .class("HeroCharacter", "Character")
        .grants(gamefeature_host::feature::GrantPolicy::Declared);
    let mut app = app_with(settings);
    app.add_plugins((bevy_diagnostic::DiagnosticsPlugin, GameFeatureDiagnosticsPlugin));
    let hero = app.world_mut().spawn((Actor::new("HeroCharacter"), Player)).id();
    frames(&mut app, 5);
    assert!(app.world().get::<HostileStats>(hero).is_some(), "the hostile plugin's component, bridged");
    let diagnostic = |app: &App, path: &bevy_diagnostic::DiagnosticPath| {
        app.world().resource::<bevy_diagnostic::DiagnosticsStore>().get(path).and_then(|d| d.value())
    };
    assert_eq!(diagnostic(&app, &diagnostics::QUARANTINED), Some(0.0));
    assert!(diagnostic(&app, &diagnostics::WORLD_FRAME).is_some_and(|ms| ms > 0.0), "the world's frame, timed");
    assert!(diagnostic(&app, &diagnostics::ACTORS).is_some_and(|n| n >= 3.0), "a player's three actors at least");

    // It panics on a Crash event: quarantined, what it added is gone from the world and from the entity.
    app.world_mut().write_message(ToActor { entity: hero, event: "Crash".into() });
    frames(&mut app, 3);
    assert!(app.world().get::<HostileStats>(hero).is_none(), "nothing of the quarantined plugin stays");
    let features = app.world().resource::<GameFeatures>();
    assert_eq!(features.with_loop(|game| game.manager().live_features()), ["lyra-character"]);
    let said: Vec<String> = features.timeline().events().into_iter().map(|e| e.text).collect();
    assert!(said.iter().any(|line| line.starts_with("quarantined")), "{said:?}");
    let pawn = app.world().get::<ActorHandle>(hero).unwrap().0;
    assert!(features.has_actor(pawn), "the entity's actor plays on");
    // Bevy's diagnostics count the quarantine, and time the plugins still playing.
    assert_eq!(diagnostic(&app, &diagnostics::QUARANTINED), Some(1.0));
    let store = app.world().resource::<bevy_diagnostic::DiagnosticsStore>();
    let lyra = store.get(&diagnostics::plugin_cpu("lyra-character")).expect("lyra-character's CPU time, measured");
    assert!(lyra.history_len() > 0);
    features.with_world(|w| w.check_invariants()).expect("a standalone world").expect("the component model holds");
}

/// What a world did: the plugins playing, every init-state feature's state on every actor (counted), and every
/// call into each plugin (counted by plugin and what the timeline shows of it, the world's name left out).
#[derive(Debug, PartialEq)]
struct Played {
    live: Vec<String>,
    states: std::collections::BTreeMap<String, usize>,
    calls: std::collections::BTreeMap<(String, String), usize>,
}

fn played(manager: &gamefeature_host::ExperienceManager, timeline: &gamefeature_host::Timeline, world: &str) -> Played {
    let w = world::lock(manager.world());
    let mut states = std::collections::BTreeMap::new();
    for actor in w.actors() {
        for (feature, state) in w.feature_states(actor.id) {
            let text = format!("{} {} {}", actor.class(), w.name_text(feature), w.state_text(state).unwrap_or("-"));
            *states.entry(text).or_default() += 1;
        }
    }
    let mut calls = std::collections::BTreeMap::new();
    let suffix = format!("@{world}");
    for event in timeline.events() {
        let Some(plugin) = event.track.strip_prefix("plugin:").and_then(|t| t.strip_suffix(&suffix)) else { continue };
        if event.kind == gamefeature_host::timeline::EventKind::Call {
            *calls.entry((plugin.to_string(), event.text.clone())).or_default() += 1;
        }
    }
    Played { live: manager.live_features(), states, calls }
}

#[test]
fn the_default_experience_plays_in_bevy_as_the_library_s_own_loop_plays_it() {
    let plugins = PluginDir::with(&DEFAULT_PLUGINS);
    let experiences = default_experience();
    let experience = experiences.path().join("default.toml");
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = gamefeature_host::config::HostConfig::from_file(&repository.join("gfhost.toml")).unwrap();
    const PLAYERS: usize = 2;
    const FRAMES: usize = 60;

    // As `gfhost run` plays it: the library's loop, players spawned as the console's `spawn` does, then frames.
    let expected = {
        let data = tempfile::tempdir().unwrap();
        let session = gamefeature_host::Session::new(gamefeature_host::SessionOptions {
            plugin_dirs: vec![plugins.path().to_path_buf()],
            manager: gamefeature_host::experience::ManagerOptions {
                grants: config.grants.clone(),
                data_dir: Some(data.path().to_path_buf()),
                ..Default::default()
            },
            trust: config.trust.clone(),
            runtime: gamefeature_host::runtime::RuntimeConfig { cache_dir: Some(shared_cache()), ..Default::default() },
        })
        .unwrap();
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let mut manager = session.create_world("main", gamefeature_host::NetMode::Standalone);
        tokio.block_on(manager.load(&experience)).unwrap();
        let mut game = gamefeature_host::game_loop::GameLoop::new(
            gamefeature_host::game_loop::Played::Standalone(Box::new(manager)),
            tokio.handle().clone(),
        );
        game.execute(&session, &gamefeature_host::live::Command::Spawn(PLAYERS), "spawn 2").unwrap();
        for _ in 0..FRAMES {
            game.step(FRAME);
        }
        let played = played(game.manager(), session.timeline(), "main");
        game.end("over", Duration::ZERO, &mut ()).unwrap();
        played
    };

    // The same in a Bevy app: two Player entities, the same frames.
    let data = tempfile::tempdir().unwrap();
    let settings = HostSettings::new(plugins.path(), &experience)
        .config(repository.join("gfhost.toml"))
        .cache_dir(shared_cache())
        .data_dir(data.path());
    let mut app = app_with(settings);
    for _ in 0..PLAYERS {
        app.world_mut().spawn((Actor::new("HeroCharacter"), Player));
    }
    // The first update starts the clock; each one after plays a frame.
    frames(&mut app, FRAMES + 1);
    let features = app.world().resource::<GameFeatures>();
    let bevy = features.with_loop(|game| played(game.manager(), features.timeline(), "standalone"));

    assert_eq!(bevy.live, expected.live);
    assert_eq!(bevy.states, expected.states);
    assert_eq!(bevy.calls, expected.calls);
}
