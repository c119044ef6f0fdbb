//! Mod sync on join over loopback QUIC: how long a client with no plugins takes from connecting to playing the
//! default experience — every package (Rust, Python, JavaScript and C plugins, about 33 MB) fetched over the
//! game connection, checked against its digest and signature, unpacked into an empty mods folder, and the
//! experience loaded (components from the compile cache, as on a player's second visit to any server).
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench mod_sync
//! ```
//!
//! Beside it, for scale: the same client joining with every package already in its mods folder (nothing
//! fetched; each package's folder checked against its digest again).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::experience::ExperienceLoadState;
use gamefeature_host::net::mod_sync::ModSync;
use gamefeature_host::net::transport::quic::{QuicClient, QuicServer};
use gamefeature_host::net::transport::trust::{ServerIdentity, ServerTrust};
use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
use gamefeature_host::package::{install, Package, SecretKey, TrustPolicy, TrustedPublisher};
use gamefeature_host::world::NetMode;
use gamefeature_host::{Session, SessionOptions};
use gamefeature_tests::*;

fn trusting(key: &SecretKey) -> TrustPolicy {
    let publisher = TrustedPublisher { key: key.public_key(), permissions: None };
    TrustPolicy { publishers: BTreeMap::from([("studio".to_string(), publisher)]), allow_untrusted: false }
}

fn session_over(dir: &std::path::Path, trust: TrustPolicy) -> Session {
    let runtime = runtime_config(Some(&shared_cache()));
    Session::new(SessionOptions { plugin_dirs: vec![dir.to_path_buf()], runtime, manager: trusted(), trust }).unwrap()
}

fn mod_sync(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let key = SecretKey::generate();
    let built = PluginDir::with(&DEFAULT_PLUGINS);
    let installed = tempfile::tempdir().unwrap();
    for plugin in &DEFAULT_PLUGINS {
        let package = Package::from_folder(&built.folder(plugin)).unwrap();
        let signature = key.sign("studio", package.summary());
        install::install(&package, Some(&signature), installed.path(), &trusting(&key)).unwrap();
    }
    let server_session = session_over(installed.path(), trusting(&key));
    let experiences = default_experience();
    let identity = ServerIdentity::self_signed().unwrap();
    let trust = ServerTrust::Pinned(identity.fingerprint());
    let transport = QuicServer::bind("127.0.0.1:0".parse().unwrap(), identity, tokio.handle()).unwrap();
    let addr = transport.local_addr().unwrap();
    let manager = server_session.create_world("server", NetMode::DedicatedServer);
    let options = ServerOptions { tick_rate: 30, ..Default::default() };
    let mut server = GameServer::new(manager, Box::new(transport), options);
    tokio.block_on(server.load(&experiences.path().join("default.toml"))).unwrap();

    let empty = tempfile::tempdir().unwrap();
    // One client joins, playing server and client frames back to back, until its experience has loaded.
    let mut join = |mods: &std::path::Path| -> Duration {
        let session = session_over(empty.path(), TrustPolicy::default());
        let manager = session.create_world("client", NetMode::Client);
        let started = Instant::now();
        let transport = tokio.block_on(QuicClient::connect(addr, &trust, Duration::from_secs(5))).unwrap();
        let mut client = GameClient::connect(manager, Box::new(transport), None, empty.path())
            .with_mod_sync(ModSync::new(mods.to_path_buf(), trusting(&key)));
        while client.manager().state() != ExperienceLoadState::Loaded {
            let _ = server.frame(Duration::ZERO);
            tokio.block_on(client.frame(Duration::ZERO)).unwrap();
        }
        let took = started.elapsed();
        tokio.block_on(client.leave());
        let _ = server.frame(Duration::ZERO);
        took
    };
    // Every component is compiled into the shared cache once, before anything is measured.
    join(tempfile::tempdir().unwrap().path());

    let mut group = c.benchmark_group("mod_sync");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("join, fetching every package of the default experience", |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| join(tempfile::tempdir().unwrap().path())).sum())
    });
    let warm = tempfile::tempdir().unwrap();
    join(warm.path());
    group.bench_function("join, every package already in the mods folder", |b| {
        b.iter_custom(|iterations| (0..iterations).map(|_| join(warm.path())).sum())
    });
    group.finish();
}

criterion_group!(benches, mod_sync);
criterion_main!(benches);
