//! Replicated property values from a server to two clients over loopback QUIC: how many updates per second
//! reach both clients, counted only once every final value has arrived and been acknowledged, and how many bytes
//! each update costs on the wire.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench replication
//! ```
//!
//! Each iteration writes a new value into each of 1,000 actors' 10 replicated properties (10,000 updates), then
//! runs server and client frames until both clients hold all 10,000 new values and the server has their
//! acknowledgements.
//!
//! Beside the bytes on the wire it prints a baseline from the same values: the payload bytes per value of the
//! compact form the protocol sends, and of the same values with their names as text, as protocol 2 sent them.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gamefeature_host::net::protocol::{encode, Mutation, PacketWriter, ServerMessage, MAX_PACKET};
use gamefeature_host::net::transport::quic::{QuicClient, QuicServer};
use gamefeature_host::net::transport::trust::{ServerIdentity, ServerTrust};
use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{self, ActorId, NetMode, Value};
use gamefeature_host::{Session, SessionOptions};

const ACTORS: usize = 1000;
const PROPERTIES: [&str; 10] = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"];
const UPDATES: usize = ACTORS * PROPERTIES.len();

fn declare(manager: &gamefeature_host::ExperienceManager) {
    world::lock(manager.world()).declare_replicated("Stats", PROPERTIES);
}

fn replication(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let empty = tempfile::TempDir::new().unwrap();
    let session =
        Session::new(SessionOptions { plugin_dirs: vec![empty.path().to_path_buf()], ..SessionOptions::default() })
            .unwrap();
    let identity = ServerIdentity::self_signed().unwrap();
    let trust = ServerTrust::Pinned(identity.fingerprint());
    let transport = QuicServer::bind("127.0.0.1:0".parse().unwrap(), identity, tokio.handle()).unwrap();
    let addr = transport.local_addr().unwrap();
    let server_manager = session.create_world("server", NetMode::DedicatedServer);
    declare(&server_manager);
    let mut server = GameServer::new(
        server_manager,
        Box::new(transport),
        ServerOptions { tick_rate: 30, token: None, ..Default::default() },
    );
    let actors: Vec<ActorId> = server.manager_mut().with_world(|w| {
        w.set_recording(false);
        // The request stands for the whole run.
        let _request = w.add_component_request(OwnerId::HOST, "Pawn", "Stats", RequestFlags::default()).unwrap();
        let actors: Vec<ActorId> = (0..ACTORS).map(|_| w.spawn("Pawn").unwrap()).collect();
        for actor in &actors {
            for property in PROPERTIES {
                w.set_property(*actor, "Stats", property, Value::Integer(0)).unwrap();
            }
        }
        actors
    });
    let mut clients: Vec<GameClient> = (1..=2)
        .map(|i| {
            let manager = session.create_world(&format!("client-{i}"), NetMode::Client);
            declare(&manager);
            world::lock(manager.world()).set_recording(false);
            let transport = tokio.block_on(QuicClient::connect(addr, &trust, Duration::from_secs(5))).unwrap();
            GameClient::connect(manager, Box::new(transport), None, empty.path())
        })
        .collect();
    let mut round: i64 = 0;
    let play_until_delivered = |server: &mut GameServer, clients: &mut Vec<GameClient>, round: i64| {
        let last = (*actors.last().unwrap(), PROPERTIES[PROPERTIES.len() - 1]);
        loop {
            let _ = server.frame(Duration::ZERO);
            for client in clients.iter_mut() {
                tokio.block_on(client.frame(Duration::ZERO)).unwrap();
            }
            let delivered = clients.iter().all(|c| {
                let w = world::lock(c.manager().world());
                w.property(last.0, "Stats", last.1).ok().flatten() == Some(&Value::Integer(round))
            });
            if delivered && server.is_settled() {
                return;
            }
            std::thread::yield_now();
        }
    };
    // Connected, welcomed, the actors replicated.
    play_until_delivered(&mut server, &mut clients, 0);

    let mut group = c.benchmark_group("replication");
    group.throughput(Throughput::Elements(UPDATES as u64)).sample_size(20).measurement_time(Duration::from_secs(15));
    let mut bytes = 0u64;
    let mut updates = 0u64;
    let mut sent = 0u64;
    let values_sent = |server: &GameServer| -> u64 { server.client_stats().iter().map(|s| s.values_sent).sum() };
    group.bench_function("10,000 property updates to 2 clients over loopback QUIC, all delivered", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                round += 1;
                let before = server.bytes_sent();
                let sent_before = values_sent(&server);
                let started = Instant::now();
                server.manager_mut().with_world(|w| {
                    for actor in &actors {
                        for property in PROPERTIES {
                            w.set_property(*actor, "Stats", property, Value::Integer(round)).unwrap();
                        }
                    }
                });
                play_until_delivered(&mut server, &mut clients, round);
                total += started.elapsed();
                bytes += server.bytes_sent() - before;
                sent += values_sent(&server) - sent_before;
                updates += UPDATES as u64 * 2;
            }
            for client in &clients {
                let w = world::lock(client.manager().world());
                for actor in &actors {
                    for property in PROPERTIES {
                        assert_eq!(w.property(*actor, "Stats", property).unwrap(), Some(&Value::Integer(round)));
                    }
                }
            }
            total
        })
    });
    group.finish();
    let (compact, named) = payload_per_value(&actors);
    println!(
        "replication: {:.2} UDP bytes on the wire per value delivered to a client (target <= 8); {:.3} values \
         sent per value delivered; payload per value: {compact:.2} bytes compact, {named:.2} with names as text \
         (protocol 2's form, versions in key order)",
        bytes as f64 / updates as f64,
        sent as f64 / updates as f64
    );
}

/// A value as protocol 2 sent it: with its actor, and its component's and property's names.
#[derive(serde::Serialize)]
struct NamedMutation<'a> {
    actor: u64,
    component: &'a str,
    incarnation: u64,
    after: u64,
    property: &'a str,
    version: u64,
    value: Option<Value>,
}

/// The payload bytes per value of one round of the bench's values, packed into packets of at most `MAX_PACKET`
/// bytes: in the compact form, and with names as text.
fn payload_per_value(actors: &[ActorId]) -> (f64, f64) {
    let mut version = 1_000_000;
    let (mut compact, mut named) = (0, 0);
    let mut writer = PacketWriter::new();
    let mut named_packet = 0;
    for (index, actor) in actors.iter().enumerate() {
        for (number, property) in PROPERTIES.iter().enumerate() {
            version += 1;
            let (incarnation, after) = (index as u64 + 1, index as u64 + 2);
            let value = Some(Value::Integer(1_000));
            let mutation = Mutation { incarnation, after, property: number as u32, value: value.clone() };
            if writer.size_with(&mutation) + 11 > MAX_PACKET {
                compact += encode(&ServerMessage::Mutations { packet: 1_000, values: writer.take() }).len();
            }
            writer.push(mutation);
            let actor = actor.to_raw();
            let old = NamedMutation { actor, component: "Stats", incarnation, after, property, version, value };
            let size = postcard::to_stdvec(&old).unwrap().len();
            if named_packet + size + 16 > MAX_PACKET {
                named += named_packet + 16;
                named_packet = 0;
            }
            named_packet += size;
        }
    }
    compact += encode(&ServerMessage::Mutations { packet: 1_000, values: writer.take() }).len();
    named += named_packet + 16;
    (compact as f64 / UPDATES as f64, named as f64 / UPDATES as f64)
}

criterion_group!(benches, replication);
criterion_main!(benches);
