//! Mod sync on join: a client with no plugins and no experience joins a server playing the default experience
//! (Rust, Python, JavaScript and C plugins, installed there from signed packages), fetches every package over
//! the game connection, checks it, and plays; a client that does not trust the publisher, or fetches nothing,
//! refuses — saying which package — and the server's log says why the client left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gamefeature_host::experience::ExperienceLoadState;
use gamefeature_host::net::mod_sync::{Fetch, FetchPolicy, ModSync};
use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
use gamefeature_host::net::{ClientError, GameClient, GameServer, ServerNote, ServerOptions};
use gamefeature_host::package::{install, Package, SecretKey, TrustPolicy, TrustedPublisher};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{Session, SessionOptions};
use gamefeature_tests::*;

const FRAME: Duration = Duration::from_millis(33);

fn trusting(key: &SecretKey) -> TrustPolicy {
    let publisher = TrustedPublisher { key: key.public_key(), permissions: None };
    TrustPolicy { publishers: BTreeMap::from([("studio".to_string(), publisher)]), allow_untrusted: false }
}

fn session_over(dir: &Path, trust: TrustPolicy) -> Session {
    let options = SessionOptions {
        plugin_dirs: vec![dir.to_path_buf()],
        runtime: runtime_config(Some(&shared_cache())),
        manager: trusted(),
        trust,
    };
    Session::new(options).expect("the runtime starts")
}

/// A server whose plugins were installed from packages `key` signed, over a simulated network.
struct Served {
    network: MemoryNetwork,
    server: GameServer,
    notes: Vec<ServerNote>,
    _session: Session,
    installed: tempfile::TempDir,
    _experiences: ExperienceDir,
}

async fn serve_signed(key: &SecretKey) -> Served {
    let built = PluginDir::with(&DEFAULT_PLUGINS);
    let installed = tempfile::tempdir().unwrap();
    for plugin in &DEFAULT_PLUGINS {
        let package = Package::from_folder(&built.folder(plugin)).unwrap();
        let signature = key.sign("studio", package.summary());
        install::install(&package, Some(&signature), installed.path(), &trusting(key)).unwrap();
    }
    let session = session_over(installed.path(), trusting(key));
    assert!(session.discovery().errors.is_empty(), "{:?}", session.discovery().errors);
    let experiences = default_experience();
    let network = MemoryNetwork::new(7, Conditions::PERFECT);
    let manager = session.create_world("server", NetMode::DedicatedServer);
    let mut server =
        GameServer::new(manager, Box::new(network.server()), ServerOptions { tick_rate: 30, ..Default::default() });
    server.load(&experiences.path().join("default.toml")).await.unwrap();
    Served { network, server, notes: Vec::new(), _session: session, installed, _experiences: experiences }
}

/// A client world with an empty plugin folder and an empty experience folder.
struct Joiner {
    client: GameClient,
    session: Session,
    cache: tempfile::TempDir,
    _empty: tempfile::TempDir,
}

fn join(served: &Served, sync: impl FnOnce(PathBuf) -> ModSync, cache: Option<tempfile::TempDir>) -> Joiner {
    let empty = tempfile::tempdir().unwrap();
    let cache = cache.unwrap_or_else(|| tempfile::tempdir().unwrap());
    let session = session_over(empty.path(), TrustPolicy::default());
    let manager = session.create_world("client", NetMode::Client);
    let client = GameClient::connect(manager, Box::new(served.network.connect()), None, empty.path())
        .with_mod_sync(sync(cache.path().to_path_buf()));
    Joiner { client, session, cache, _empty: empty }
}

/// Frames on both sides until `done` or the client fails (at most `limit` frames).
async fn play(
    served: &mut Served,
    joiner: &mut Joiner,
    limit: usize,
    done: impl Fn(&Joiner) -> bool,
) -> Result<(), ClientError> {
    for _ in 0..limit {
        if done(joiner) {
            return Ok(());
        }
        served.notes.extend(served.server.frame(FRAME));
        served.network.advance(FRAME);
        joiner.client.frame(FRAME).await?;
    }
    assert!(done(joiner), "not reached in {limit} frames; server notes {:?}", served.notes);
    Ok(())
}

fn loaded(joiner: &Joiner) -> bool {
    joiner.client.manager().state() == ExperienceLoadState::Loaded
}

#[tokio::test]
async fn a_client_with_no_plugins_fetches_the_servers_signed_packages_and_plays() {
    let key = SecretKey::generate();
    let mut served = serve_signed(&key).await;
    let mut joiner = join(&served, |cache| ModSync::new(cache, trusting(&key)), None);
    play(&mut served, &mut joiner, 600, loaded).await.unwrap();

    // Every plugin the experience plays now runs here, from the cache, in the server's version.
    let report = joiner.client.manager().report().clone();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.active, served.server.manager().report().active);
    for plugin in joiner.client.manager().played_plugins() {
        let manifest = joiner.session.features().manifest(&plugin).unwrap();
        assert!(manifest.dir.starts_with(joiner.cache.path()), "{plugin} runs from {}", manifest.dir.display());
        // Fetched plugins get nothing beyond the sandbox unless the client says otherwise.
        assert_eq!(manifest.permissions, Default::default(), "{plugin}");
    }
    // What the client fetched is counted against it, as a server's operator sees it (the console's clients).
    let stats = served.server.client_stats();
    assert_eq!(stats.len(), 1);
    assert!(stats[0].fetched_bytes > 0, "{stats:?}");
    assert_eq!(stats[0].fetched_bytes, served.server.fetched_bytes(), "one client fetched everything fetched");
    // The client's player arrives, with the server's actors.
    play(&mut served, &mut joiner, 60, |j| {
        let me = j.client.id();
        let w = world::lock(j.client.manager().world());
        let arrived =
            w.actors().any(|a| a.class() == "HeroCharacter" && a.player == me.map(world::PlayerOwner::Remote));
        arrived
    })
    .await
    .unwrap();

    // A second visit finds everything in the cache: nothing left to fetch.
    let content = served_content(&served);
    let sync = ModSync::new(joiner.cache.path().to_path_buf(), trusting(&key));
    let again = Fetch::plan(&content, |_| None, &sync).unwrap();
    assert!(again.is_done(), "every package is cached");
}

/// What the server offers, as a joining client receives it.
fn served_content(served: &Served) -> gamefeature_host::net::protocol::ExperienceContent {
    let (content, _) = gamefeature_host::net::mod_sync::Offers::of(served.server.manager()).unwrap();
    assert_eq!(content.packages.len(), DEFAULT_PLUGINS.len());
    content
}

#[tokio::test]
async fn a_client_refuses_packages_it_may_not_fetch_naming_them_on_both_sides() {
    let key = SecretKey::generate();
    let mut served = serve_signed(&key).await;

    // A client trusting another publisher refuses before fetching a byte.
    let stranger = SecretKey::generate();
    let mut joiner = join(&served, |cache| ModSync::new(cache, trusting(&stranger)), None);
    let error = play(&mut served, &mut joiner, 100, loaded).await.unwrap_err().to_string();
    assert!(error.contains("refused plugin") && error.contains("does not trust"), "{error}");
    for _ in 0..5 {
        served.notes.extend(served.server.frame(FRAME));
        served.network.advance(FRAME);
    }
    let left: Vec<String> =
        served.notes.iter().filter(|n| matches!(n, ServerNote::Left(..))).map(|n| n.to_string()).collect();
    assert!(left.iter().any(|n| n.contains("does not trust")), "the server's log names the refusal: {left:?}");
    assert_eq!(std::fs::read_dir(joiner.cache.path()).unwrap().count(), 0, "nothing was fetched");

    // A client that fetches nothing says which plugin it lacks.
    let mut never =
        join(&served, |cache| ModSync { policy: FetchPolicy::Never, ..ModSync::new(cache, trusting(&key)) }, None);
    let error = play(&mut served, &mut never, 100, loaded).await.unwrap_err().to_string();
    assert!(error.contains("is not installed here, and this client fetches no plugins"), "{error}");
}

#[tokio::test]
async fn a_plugin_reloaded_on_the_server_runs_in_its_new_version_on_the_client_without_reconnecting() {
    let key = SecretKey::generate();
    let mut served = serve_signed(&key).await;
    let mut joiner = join(&served, |cache| ModSync::new(cache, trusting(&key)), None);
    play(&mut served, &mut joiner, 600, loaded).await.unwrap();
    let me = joiner.client.id();

    // The studio ships score-keeper 0.1.1; the server installs it and hot-reloads it.
    let newer = PluginDir::with(&[SCORE_KEEPER]);
    newer.edit_manifest(&SCORE_KEEPER, |text| text.replace("version = \"0.1.0\"", "version = \"0.1.1\""));
    let package = Package::from_folder(&newer.folder(&SCORE_KEEPER)).unwrap();
    let signature = key.sign("studio", package.summary());
    install::install(&package, Some(&signature), served.installed.path(), &trusting(&key)).unwrap();
    let said = served.server.reload("score-keeper").await.unwrap();
    assert!(said.contains("0.1.0 -> 0.1.1"), "{said}");

    // Within a few frames the client runs 0.1.1, fetched and checked like any package, on the same connection.
    let version = |j: &Joiner| j.session.features().manifest("score-keeper").map(|m| m.version.clone());
    play(&mut served, &mut joiner, 100, |j| version(j).as_deref() == Some("0.1.1")).await.unwrap();
    assert_eq!(joiner.client.id(), me, "the same connection");
    assert!(joiner.client.manager().live_features().contains(&"score-keeper".to_string()));
    let dir = joiner.session.features().manifest("score-keeper").unwrap().dir.clone();
    assert!(dir.to_string_lossy().contains(&package.digest().replace(':', "-")), "{}", dir.display());
    assert_eq!(joiner.client.fetched().last(), Some(package.summary()));
    // Play goes on: the replicated scores keep arriving and the client's plugins keep running.
    let errors = joiner.client.manager().report().failures.clone();
    assert!(errors.is_empty(), "{errors:?}");
}

#[tokio::test]
async fn a_client_fetching_without_end_is_dropped_while_an_honest_one_joins() {
    use gamefeature_host::net::protocol::{encode, ClientMessage, PROTOCOL_VERSION};
    use gamefeature_host::net::transport::{Channel, ClientTransport};

    let key = SecretKey::generate();
    let mut served = serve_signed(&key).await;
    let largest = served_content(&served).packages.into_iter().max_by_key(|p| p.archive_size).unwrap();
    let mut flooder = served.network.connect();
    flooder.send(Channel::Reliable, encode(&ClientMessage::Hello { protocol: PROTOCOL_VERSION, token: None }));
    let mut joiner = join(&served, |cache| ModSync::new(cache, trusting(&key)), None);
    // The flooder asks for the first chunk of the largest package over and over, forty times a frame.
    let flood = encode(&ClientMessage::Fetch { digest: largest.package.digest.clone(), offset: 0 });
    for _ in 0..600 {
        if loaded(&joiner) && served.notes.iter().any(|n| matches!(n, ServerNote::Dropped(..))) {
            break;
        }
        for _ in 0..40 {
            flooder.send(Channel::Reliable, flood.clone());
        }
        let _ = flooder.poll();
        served.notes.extend(served.server.frame(FRAME));
        served.network.advance(FRAME);
        joiner.client.frame(FRAME).await.unwrap();
    }
    assert!(loaded(&joiner), "the honest client joined; server notes {:?}", served.notes);
    let dropped: Vec<String> =
        served.notes.iter().filter(|n| matches!(n, ServerNote::Dropped(..))).map(|n| n.to_string()).collect();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(dropped[0].contains("fetched more than its budget of the "), "{dropped:?}");
    assert_eq!(served.server.closed_connections().get(&gamefeature_host::net::Closed::Flood), Some(&1));
}
