//! A 100-player server: the bytes each client is sent per second, and the time of a server frame, with every
//! pawn relevant to every client beside the same players in rooms of 10 (relevancy groups).
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench interest
//! ```
//!
//! Each frame every player's pawn moves (three float properties written), as a shooter's pawns do; the
//! replication core runs the frame and every client acknowledges at once (no transport: the bytes are the
//! messages' encoded bytes, each mutation packet one datagram). With every pawn relevant, each client is sent
//! every player's values, so a server's traffic grows with the square of its players; in rooms, with the
//! players of its room.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::game::spawn_player_for;
use gamefeature_host::net::protocol::{encode, ServerMessage};
use gamefeature_host::net::ServerReplication;
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{check_groups, ClientId, NetMode, PlayerOwner, Relevancy, Value, World};

const PLAYERS: u32 = 100;
const ROOM: u32 = 10;
const TICK_RATE: u32 = 30;

struct Server {
    world: World,
    replication: ServerReplication,
    pawns: Vec<gamefeature_host::world::ActorId>,
    frame: u64,
}

impl Server {
    fn new(rooms: bool) -> Self {
        let mut world = World::new("server", NetMode::DedicatedServer);
        world.start_journal();
        world.declare_replicated("Motion", ["x", "y", "z"]);
        // The request stands for the whole run.
        std::mem::forget(world.add_component_request(OwnerId::HOST, "Pawn", "Motion", RequestFlags::default()));
        let mut replication = ServerReplication::new();
        let mut pawns = Vec::new();
        for player in 1..=PLAYERS {
            let client = ClientId(player);
            let pawn = spawn_player_for(&mut world, "Pawn", PlayerOwner::Remote(client)).unwrap().pawn;
            if rooms {
                let room = check_groups([format!("room-{}", player % ROOM).as_str()]).unwrap();
                world.set_relevancy(pawn, Relevancy::Groups(room.clone())).unwrap();
                world.set_client_groups(client, room);
            }
            pawns.push(pawn);
        }
        for player in 1..=PLAYERS {
            replication.join(ClientId(player), &world);
        }
        let mut server = Server { world, replication, pawns, frame: 0 };
        while !server.replication.is_settled() {
            server.frame();
        }
        server
    }

    /// One frame: every pawn moves, then replication; the bytes and datagrams sent to each client.
    fn frame(&mut self) -> (usize, usize) {
        self.frame += 1;
        let step = self.frame as f64;
        for (index, pawn) in self.pawns.iter().enumerate() {
            let at = index as f64;
            for (axis, value) in [("x", at + step), ("y", at - step), ("z", step * 0.5)] {
                self.world.set_property(*pawn, "Motion", axis, Value::Float(value)).unwrap();
            }
        }
        let (mut bytes, mut datagrams) = (0, 0);
        let mut packets: Vec<(ClientId, u64)> = Vec::new();
        for out in self.replication.collect(&mut self.world) {
            bytes += encode(&out.message).len();
            if let ServerMessage::Mutations { packet, .. } = out.message {
                datagrams += 1;
                packets.push((out.client, packet));
            }
        }
        for (client, packet) in packets {
            self.replication.acknowledge(client, &[packet]);
        }
        let _ = self.world.take_work();
        (bytes, datagrams)
    }
}

fn interest(c: &mut Criterion) {
    let mut group = c.benchmark_group("interest");
    group.sample_size(20).measurement_time(Duration::from_secs(10));
    let mut lines = Vec::new();
    for (rooms, name) in [(false, "every pawn relevant to every client"), (true, "rooms of 10")] {
        let mut server = Server::new(rooms);
        let (mut bytes, mut datagrams, mut frames) = (0, 0, 0);
        group.bench_function(format!("a frame of a {PLAYERS}-player server, {name}"), |b| {
            b.iter(|| {
                let (sent, packets) = server.frame();
                bytes += sent;
                datagrams += packets;
                frames += 1;
            })
        });
        let per_client = |total: usize| total as f64 / frames as f64 / f64::from(PLAYERS) * f64::from(TICK_RATE);
        lines.push(format!(
            "interest: {name}: {:.0} bytes/s per client at {TICK_RATE} Hz in {:.0} datagrams/s (payload; QUIC adds \
             about 30 bytes per datagram)",
            per_client(bytes),
            per_client(datagrams)
        ));
    }
    group.finish();
    for line in lines {
        println!("{line}");
    }
}

criterion_group!(benches, interest);
criterion_main!(benches);
