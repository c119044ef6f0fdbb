//! Bevy apps playing together through the project's own server and client, over QUIC on loopback: a headless app
//! is the dedicated server, two more are its clients. One client has the plugins installed; the other has none
//! and fetches the server's signed packages as it joins. Both see every player, with the scores the server keeps.
//! Frames are stepped by hand, each app one update at a time; the loops waiting on the network are bounded.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_gamefeature::{Actor, GameFeatureApp, GameFeaturePlugin, GameFeatures, HostSettings, Join, SpawnedInWorld};
use bevy_reflect::Reflect;
use bevy_time::{Fixed, Time, TimePlugin, TimeUpdateStrategy};
use gamefeature_host::net::mod_sync::ModSync;
use gamefeature_host::net::transport::trust::{ServerIdentity, ServerTrust};
use gamefeature_host::net::ServerOptions;
use gamefeature_host::package::{install, Package, SecretKey, TrustPolicy, TrustedPublisher};
use gamefeature_plugin_artifacts::{shared_cache, PluginDir, LYRA_CHARACTER, SCORE_KEEPER};

/// score-keeper's component on each player state: replicated from the server.
#[derive(Component, Reflect, Default, Debug)]
struct Score {
    score: i64,
}

const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);

fn repository() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn app(features: GameFeatures) -> App {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .insert_resource(Time::<Fixed>::from_duration(FRAME))
        .insert_resource(features)
        .add_plugins(GameFeaturePlugin)
        .bridge_component::<Score>("ScoreComponent");
    app
}

fn trusting(key: &SecretKey) -> TrustPolicy {
    let publisher = TrustedPublisher { key: key.public_key(), permissions: None };
    TrustPolicy { publishers: BTreeMap::from([("studio".to_string(), publisher)]), allow_untrusted: false }
}

/// The scores of the player states an app has, lowest first.
fn scores(app: &mut App) -> Vec<i64> {
    let mut query = app.world_mut().query::<(&Actor, &Score)>();
    let mut scores: Vec<i64> =
        query.iter(app.world()).filter(|(a, _)| a.class == "PlayerState").map(|(_, s)| s.score).collect();
    scores.sort();
    scores
}

fn heroes(app: &mut App) -> usize {
    let mut query = app.world_mut().query_filtered::<&Actor, With<SpawnedInWorld>>();
    query.iter(app.world()).filter(|a| a.class == "HeroCharacter").count()
}

#[test]
fn a_bevy_server_and_two_bevy_clients_play_together_one_fetching_the_mods_as_it_joins() {
    // The server's plugins come from packages the studio signed, so that it can offer them to players.
    let key = SecretKey::generate();
    let built = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    let installed = tempfile::tempdir().unwrap();
    for plugin in [&LYRA_CHARACTER, &SCORE_KEEPER] {
        let package = Package::from_folder(&built.folder(plugin)).unwrap();
        let signature = key.sign("studio", package.summary());
        install::install(&package, Some(&signature), installed.path(), &trusting(&key)).unwrap();
    }
    let experiences = repository().join("host/examples");
    let settings = |plugins: &Path| {
        HostSettings::new(plugins, experiences.join("embedded_game.toml"))
            .class("HeroCharacter", "Character")
            .config(repository().join("gfhost.toml"))
            .cache_dir(shared_cache())
    };
    let identity = ServerIdentity::self_signed().unwrap();
    let trust = ServerTrust::Pinned(identity.fingerprint());
    let options = ServerOptions { tick_rate: 30, ..Default::default() };
    let listen = "127.0.0.1:0".parse().unwrap();
    let server_features =
        GameFeatures::start_server(settings(installed.path()).trust(trusting(&key)), listen, identity, options)
            .expect("the server starts");
    let address = server_features.server_address().expect("a server listens");
    let mut server = app(server_features);

    // One player installed the mods; the other has none, and an empty folder of experiences.
    let join = |experiences: &Path, mod_sync: Option<ModSync>| Join {
        server: address,
        trust: trust.clone(),
        token: None,
        experiences: experiences.to_path_buf(),
        mod_sync,
    };
    let first = GameFeatures::start_client(settings(built.path()), join(&experiences, None)).expect("joins");
    let empty = tempfile::tempdir().unwrap();
    let fetched = tempfile::tempdir().unwrap();
    let sync = ModSync::new(fetched.path().to_path_buf(), trusting(&key));
    let second = GameFeatures::start_client(settings(empty.path()), join(empty.path(), Some(sync))).expect("joins");
    let mut clients = [app(first), app(second)];

    // Bounded: on loopback the joins, the fetch and a few seconds of scores take a few hundred frames.
    for _ in 0..3_000 {
        server.update();
        for client in &mut clients {
            client.update();
        }
        let done = clients.iter_mut().all(|c| heroes(c) == 2 && scores(c).len() == 2 && scores(c)[0] >= 3);
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // The server's players are its clients': two heroes, two scores, kept on the server.
    assert_eq!(heroes(&mut server), 2, "the clients' players are entities of the server's app");
    let kept = scores(&mut server);
    for client in &mut clients {
        assert_eq!(heroes(client), 2, "each client sees both players' heroes");
        let seen = scores(client);
        assert_eq!(seen.len(), 2, "{seen:?}");
        // Replicated: what a client shows is the server's score, or the one before it while the newest travels.
        for (seen, kept) in seen.iter().zip(&kept) {
            assert!(*seen >= 3 && (kept - 1..=*kept).contains(seen), "client {seen}, server {kept}");
        }
    }

    // The player with no mods fetched them from the server and plays them from its cache, as the server does.
    let played = |app: &App| app.world().resource::<GameFeatures>().with_loop(|g| g.manager().live_features());
    assert_eq!(played(&clients[1]), played(&server));
    assert_eq!(played(&clients[0]), played(&server));
    let fetched_dirs: Vec<bool> = clients[1].world().resource::<GameFeatures>().with_loop(|game| {
        let manager = game.manager();
        manager
            .played_plugins()
            .iter()
            .map(|p| manager.features().manifest(p).is_some_and(|m| m.dir.starts_with(fetched.path())))
            .collect()
    });
    assert!(!fetched_dirs.is_empty() && fetched_dirs.iter().all(|f| *f), "every plugin runs from the fetch cache");

    // A client's world is the server's copy: the game spawns no actor in it.
    let refused = clients[0].world_mut().spawn(Actor::new("HeroCharacter")).id();
    clients[0].update();
    assert!(clients[0].world().get::<bevy_gamefeature::NotAnActor>(refused).is_some());
}
