//! The arena played headless, frame by frame (each update is one 30 Hz frame, so every run plays the same match):
//! the mods in each language change what the game shows, a plugin's write moves an entity, and the picture shows
//! the arena.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_gamefeature::{FeatureCommand, GameFeatures, ToActor};
use bevy_time::TimeUpdateStrategy;
use gamefeature_arena::components::{Bot, Health, Movement, Position, Zone};
use gamefeature_arena::play::Arena;
use gamefeature_arena::{arena_app, picture, summary, ArenaOptions, TICK_HZ};
use gamefeature_plugin_artifacts::{default_experience, shared_cache, ExperienceDir, PluginDir, ARENA_PLUGINS};

struct Playing {
    app: App,
    _plugins: PluginDir,
    _experiences: ExperienceDir,
}

fn arena(heroes: usize, dashes: bool) -> Playing {
    let plugins = PluginDir::with(&ARENA_PLUGINS);
    let experiences = default_experience();
    let repository = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut options = ArenaOptions::new(plugins.path(), experiences.path().join("arena.toml"));
    options.heroes = heroes;
    options.host = options
        .host
        .config(repository.join("gfhost.toml"))
        .cache_dir(shared_cache())
        // The plugins' details (a prop's health, each score) are debug lines.
        .plugin_log_level(gamefeature_host::timeline::LogLevel::Debug);
    let mut app = arena_app(options).expect("the arena loads");
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(1.0 / TICK_HZ)));
    if !dashes {
        app.world_mut().resource_mut::<Arena>().dash_every = None;
    }
    Playing { app, _plugins: plugins, _experiences: experiences }
}

fn seconds(app: &mut App, seconds: f64) {
    for _ in 0..(seconds * TICK_HZ).round() as usize {
        app.update();
    }
}

fn said(app: &App) -> Vec<String> {
    app.world().resource::<GameFeatures>().timeline().events().into_iter().map(|e| e.text).collect()
}

fn hero(app: &mut App, number: usize) -> Entity {
    let mut heroes = app.world_mut().query::<(Entity, &Bot)>();
    heroes.iter(app.world()).find(|(_, bot)| bot.number == number).expect("the hero").0
}

#[test]
fn the_mods_in_each_language_change_what_the_game_shows() {
    let Playing { mut app, .. } = arena(4, true);
    #[derive(Resource, Default)]
    struct FastestBoost(f32);
    app.init_resource::<FastestBoost>().add_systems(
        bevy_app::FixedUpdate,
        |heroes: Query<'_, '_, &Movement>, mut fastest: ResMut<'_, FastestBoost>| {
            fastest.0 = heroes.iter().map(|m| m.boost).fold(fastest.0, f32::max);
        },
    );
    seconds(&mut app, 1.0);
    let start = summary(app.world_mut());
    let first_radius = start.zone_radius.expect("shrinking-zone (JavaScript) spawned its zone, the game has it");
    assert_eq!(start.props, 12, "damageable-props spawned the arena's dozen props: {start}");
    assert!(start.heroes.iter().all(|h| h.health == Some(150)), "shooter-core's health, tuned: {start}");

    seconds(&mut app, 14.0);
    let later = summary(app.world_mut());
    let radius = later.zone_radius.unwrap();
    assert!(radius < first_radius - 8.0, "the zone closed in, second by second: {first_radius} then {radius}");
    assert!(later.heroes.iter().all(|h| h.score >= 14), "score-keeper scored every player: {later}");
    let lines = said(&app);
    // The game's shots reached damageable-props as Hit events; the props' health it keeps came back to the game.
    assert!(lines.iter().any(|l| l.contains("health: none -> 90")), "a prop was hit: {later}");
    // Health packs (Python) were dropped, placed by the game, and picked up by a hurt hero.
    assert!(lines.iter().any(|l| l.contains("picked up a health pack")), "{later}");
    // Bots sent Dash now and then; dash (Rust) boosted them (respawns, in C, have a test of their own).
    assert_eq!(app.world().resource::<FastestBoost>().0, 3.0, "a hero dashed");
    let features = app.world().resource::<GameFeatures>();
    let live = features.with_loop(|game| game.manager().live_features());
    assert_eq!(live.len(), 12, "every plugin plays on: {live:?}");
    features.with_world(|w| w.check_invariants()).expect("a standalone world").expect("the component model holds");
}

#[test]
fn a_plugin_s_write_to_a_bridged_property_moves_the_entity() {
    let Playing { mut app, .. } = arena(2, false);
    seconds(&mut app, 1.0);
    let hero = hero(&mut app, 0);
    // Down: the game stops moving it; respawn (C) hears its health reach 0.
    app.world_mut().get_mut::<Health>(hero).unwrap().health = 0;
    seconds(&mut app, 0.5);
    let down_at = *app.world().get::<Position>(hero).unwrap();
    seconds(&mut app, 1.0);
    assert_eq!(*app.world().get::<Position>(hero).unwrap(), down_at, "a hero that is down stays put");

    // Two seconds after, respawn wrote its health and its Position: the entity is in a corner of the arena.
    for _ in 0..(TICK_HZ as usize) {
        if app.world().get::<Health>(hero).unwrap().health > 0 {
            break;
        }
        app.update();
    }
    let at = *app.world().get::<Position>(hero).unwrap();
    let corner = |v: f32, size: f32| (v - 3.0).abs() < 0.5 || (v - (size - 3.0)).abs() < 0.5;
    assert!(corner(at.x, 40.0) && corner(at.y, 30.0), "moved to a corner by the plugin: {at:?}");
    assert_eq!(app.world().get::<Health>(hero).unwrap().health, 150);
}

#[test]
fn a_dash_is_the_mod_s_and_goes_with_it() {
    let Playing { mut app, .. } = arena(1, false);
    seconds(&mut app, 1.0);
    let hero = hero(&mut app, 0);
    let boost = |app: &App| app.world().get::<Movement>(hero).unwrap().boost;
    app.world_mut().write_message(ToActor { entity: hero, event: "Dash".into() });
    seconds(&mut app, 2.0 / TICK_HZ);
    assert_eq!(boost(&app), 3.0, "dash (Rust) boosted the pawn the game sent Dash");
    seconds(&mut app, 0.3);
    assert_eq!(boost(&app), 1.0, "for a quarter of a second");

    // Deactivated mid-dash: what it wrote goes with it, and the game's component is back to its own speed.
    app.world_mut().write_message(ToActor { entity: hero, event: "Dash".into() });
    seconds(&mut app, 2.0);
    app.world_mut().write_message(ToActor { entity: hero, event: "Dash".into() });
    seconds(&mut app, 2.0 / TICK_HZ);
    assert_eq!(boost(&app), 3.0);
    app.world_mut().write_message(FeatureCommand::Deactivate("dash".into()));
    seconds(&mut app, 2.0 / TICK_HZ);
    assert_eq!(boost(&app), 1.0, "the boost went with the mod");

    // Without the mod, Dash does nothing.
    app.world_mut().write_message(ToActor { entity: hero, event: "Dash".into() });
    seconds(&mut app, 2.0 / TICK_HZ);
    assert_eq!(boost(&app), 1.0, "no dash without the dash mod");
}

#[test]
fn the_same_seed_plays_the_same_match_and_the_picture_shows_it() {
    let mut a = arena(3, true);
    let mut b = arena(3, true);
    seconds(&mut a.app, 8.0);
    seconds(&mut b.app, 8.0);
    let (first, second) = (summary(a.app.world_mut()), summary(b.app.world_mut()));
    assert_eq!(first, second, "one seed, one match");

    let zone = a.app.world_mut().query::<&Zone>().iter(a.app.world()).next().copied().unwrap();
    let pixmap = picture::draw(a.app.world_mut()).expect("drawn");
    assert_eq!((pixmap.width(), pixmap.height()), (800, 600), "40 by 30 arena units, 20 pixels each");
    // Inside the zone is the floor, outside it red; the first hero is drawn in its blue.
    let pixel = |x: f32, y: f32| {
        let p = pixmap.pixel((x * 20.0) as u32, (y * 20.0) as u32).unwrap();
        (p.red(), p.green(), p.blue())
    };
    assert_eq!(pixel(0.3, 29.7), (58, 24, 28), "outside the zone");
    assert_ne!(pixel(zone.x + 0.2, zone.y - zone.radius + 0.5), (58, 24, 28), "inside the zone");
    let first_hero = first.heroes[0].at;
    assert_eq!(pixel(first_hero.x, first_hero.y), (66, 165, 245), "the first hero, in its colour");
    let png = pixmap.encode_png().expect("a PNG");
    assert!(png.starts_with(b"\x89PNG"), "a PNG file");
}

/// The arena with its web console: a snapshot read over loopback while the game plays shows the arena's mods
/// running and its actors placed (what the console's map draws), heroes and the zone among them.
#[test]
fn the_console_maps_the_arena_s_actors_and_lists_its_mods() {
    let mut playing = arena(4, false);
    let address = "127.0.0.1:0".parse().unwrap();
    playing.app.add_plugins(bevy_gamefeature::GameFeatureConsolePlugin { address, token: None });
    let served = playing.app.world().resource::<bevy_gamefeature::ConsoleAddress>().0;
    seconds(&mut playing.app, 1.0);
    // Read on another thread while the game plays on: a snapshot is built by the game's frames.
    let reader = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(served).unwrap();
        let request = format!("GET /api/snapshot HTTP/1.1\r\nHost: {served}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    });
    for _ in 0..(60.0 * TICK_HZ) as usize {
        if reader.is_finished() {
            break;
        }
        playing.app.update();
        std::thread::sleep(Duration::from_millis(2));
    }
    let answer = reader.join().unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    let snapshot: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
    let running: Vec<&str> = snapshot["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in_world"] == "running")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for mod_name in ["dash", "pickups", "shrinking-zone", "respawn"] {
        assert!(running.contains(&mod_name), "{mod_name} runs: {running:?}");
    }
    let placed: Vec<&str> = snapshot["actors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["position"].is_array())
        .map(|a| a["class"].as_str().unwrap())
        .collect();
    assert_eq!(placed.iter().filter(|class| **class == "HeroCharacter").count(), 4, "{placed:?}");
    assert_eq!(snapshot["actions"]["allowed"], false, "no token: read-only");
}
