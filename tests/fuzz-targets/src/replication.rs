//! The replication core driven by its input: the server's world changes (spawns, destroys, components that come
//! and go, values of every kind, a lazy component created by its first write, actors' relevancy and clients'
//! groups), clients join late, and every datagram is delivered, lost, duplicated or reordered as the input says;
//! reliable messages only wait. Once the network turns perfect, every client must hold the server's replicated
//! state of the actors relevant to it, have announced each property's changes in the order they were written
//! (none twice, but for a copy spawned again, which hears its current value anew), and keep nothing waiting.

use std::collections::{BTreeMap, VecDeque};

use gamefeature_host::net::protocol::{decode, encode, ClientMessage, ServerMessage};
use gamefeature_host::net::{replicated_state, ClientReplication, Outgoing, ServerReplication};
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags, RequestHandle};
use gamefeature_host::world::{
    check_groups, ActorId, ClientId, CreationPolicy, NetMode, Relevancy, RepNotify, Value, World,
};

/// The most steps one input drives, and the most clients that join.
const MAX_STEPS: usize = 1024;
const MAX_CLIENTS: u32 = 4;
/// Frames of a perfect network after the input, more than enough to settle anything the input left in flight.
const SETTLE_FRAMES: usize = 64;

fn world(mode: NetMode) -> World {
    let mut world = World::new("fuzz", mode);
    world.declare_replicated("Health", ["hp", "shield", "name"]);
    world.declare_replicated("Armor", ["ar"]);
    world.declare_creation("Armor", CreationPolicy::Lazy);
    world
}

/// The input, read a byte at a time; past its end, zeros.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let Some((first, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        *first
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.byte())
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> Option<T> {
        (!from.is_empty()).then(|| from[usize::from(self.byte()) % from.len()])
    }

    /// A value of any kind, NaNs and empty texts included.
    fn value(&mut self) -> Value {
        match self.byte() % 4 {
            0 => Value::Boolean(self.byte() & 1 == 1),
            1 => Value::Integer(i64::from_le_bytes(self.bytes())),
            2 => Value::Float(f64::from_le_bytes(self.bytes())),
            _ => {
                let length = usize::from(self.byte() % 48);
                let text: Vec<u8> = (0..length).map(|_| self.byte()).collect();
                Value::Text(String::from_utf8_lossy(&text).into_owned())
            }
        }
    }
}

struct Client {
    id: ClientId,
    world: World,
    replication: ClientReplication,
    reliable: VecDeque<Vec<u8>>,
    unreliable: Vec<Vec<u8>>,
    /// Acknowledgements on their way to the server, in order.
    acks: VecDeque<Vec<u8>>,
    notes: Vec<RepNotify>,
}

impl Client {
    fn receive_reliable(&mut self) {
        let Some(frame) = self.reliable.pop_front() else { return };
        match decode::<ServerMessage>(&frame).expect("the server's message decodes") {
            ServerMessage::Update { seq, update } => {
                if let Err(error) = self.replication.apply_update(&mut self.world, seq, update, &mut self.notes) {
                    panic!("client {} refused the server's update {seq}: {error}", self.id);
                }
            }
            other => panic!("a reliable message the replication core does not send: {other:?}"),
        }
        let _ = self.world.take_work();
    }

    fn receive_unreliable(&mut self, at: usize) {
        let frame = self.unreliable.remove(at);
        match decode::<ServerMessage>(&frame).expect("the server's message decodes") {
            ServerMessage::Mutations { packet, values } => {
                self.replication.apply_mutations(&mut self.world, packet, values, &mut self.notes)
            }
            other => panic!("an unreliable message the replication core does not send: {other:?}"),
        }
        let _ = self.world.take_work();
    }

    fn acknowledge(&mut self) {
        let packets = self.replication.take_acknowledgements().packets;
        if !packets.is_empty() {
            self.acks.push_back(encode(&ClientMessage::Ack { packets }));
        }
    }

    /// The oldest acknowledgement on its way reaches the server.
    fn deliver_ack(&mut self, server: &mut ServerReplication) {
        if let Some(frame) = self.acks.pop_front() {
            let Ok(ClientMessage::Ack { packets }) = decode(&frame) else { panic!("an acknowledgement decodes") };
            server.acknowledge(self.id, &packets);
        }
    }

    fn is_idle(&self) -> bool {
        self.reliable.is_empty() && self.unreliable.is_empty() && self.acks.is_empty()
    }
}

struct Server {
    world: World,
    replication: ServerReplication,
    /// Every value written, encoded, per actor, component and property, in the order written.
    written: BTreeMap<(ActorId, String, String), Vec<Vec<u8>>>,
    health: Option<RequestHandle>,
}

impl Server {
    fn new() -> Self {
        let mut world = world(NetMode::DedicatedServer);
        world.start_journal();
        // Armor is lazy: this request lets the first write create it on a pawn.
        let armor = world.add_component_request(OwnerId::HOST, "Pawn", "Armor", RequestFlags::default());
        std::mem::forget(armor);
        let mut replication = ServerReplication::new();
        let _ = replication.set_experience("fuzz.toml", None);
        Server { world, replication, written: BTreeMap::new(), health: None }
    }

    fn change(&mut self, input: &mut Input<'_>, kind: u8) {
        let pawns = self.world.actors_of_class("Pawn").unwrap_or_default();
        match kind {
            0 => {
                self.world.spawn("Pawn").expect("the server spawns");
            }
            1 => {
                if let Some(pawn) = input.pick(&pawns) {
                    self.world.destroy(pawn).expect("a live pawn is destroyed");
                }
            }
            2 => match self.health.take() {
                Some(handle) => self.world.release_component_request(handle),
                None => {
                    let request = self.world.add_component_request(OwnerId::HOST, "Pawn", "Health", Default::default());
                    self.health = Some(request.expect("the host requests a component"));
                }
            },
            _ => {
                let Some(pawn) = input.pick(&pawns) else { return };
                let (component, property) =
                    input.pick(&[("Health", "hp"), ("Health", "shield"), ("Health", "name"), ("Armor", "ar")]).unwrap();
                let value = input.value();
                // Health may be missing from the pawn: the write is refused, and nothing was written.
                if self.world.set_property(pawn, component, property, value.clone()).is_ok() {
                    let key = (pawn, component.to_string(), property.to_string());
                    self.written.entry(key).or_default().push(encode(&value));
                }
            }
        }
        let _ = self.world.take_work();
    }

    /// A pawn made relevant to every client, nobody, or group `a` or `b`; or a client put in some of them.
    fn change_relevancy(&mut self, input: &mut Input<'_>) {
        let groups = |pick: u8| match pick % 4 {
            0 => Default::default(),
            1 => check_groups(["a"]).unwrap(),
            2 => check_groups(["b"]).unwrap(),
            _ => check_groups(["a", "b"]).unwrap(),
        };
        let choice = input.byte();
        if choice & 1 == 0 {
            let pawns = self.world.actors_of_class("Pawn").unwrap_or_default();
            let Some(pawn) = input.pick(&pawns) else { return };
            let relevancy = match choice >> 1 & 3 {
                0 => Relevancy::Always,
                1 => Relevancy::OwnerOnly,
                _ => Relevancy::Groups(groups(input.byte() | 1)),
            };
            self.world.set_relevancy(pawn, relevancy).expect("a live pawn's relevancy is set");
        } else {
            let client = ClientId(u32::from(choice >> 1) % MAX_CLIENTS + 1);
            self.world.set_client_groups(client, groups(input.byte()));
        }
    }

    fn frame(&mut self, clients: &mut [Client]) {
        let outgoing = self.replication.collect(&mut self.world);
        send(outgoing, clients);
    }
}

fn send(outgoing: Vec<Outgoing>, clients: &mut [Client]) {
    for out in outgoing {
        let client = clients.iter_mut().find(|c| c.id == out.client).expect("sent to a client that joined");
        let frame = encode(&out.message);
        if out.reliable {
            client.reliable.push_back(frame);
        } else {
            client.unreliable.push(frame);
        }
    }
}

fn join(server: &mut Server, clients: &mut Vec<Client>) {
    let id = ClientId(clients.len() as u32 + 1);
    clients.push(Client {
        id,
        world: world(NetMode::Client),
        replication: ClientReplication::new(id),
        reliable: VecDeque::new(),
        unreliable: Vec::new(),
        acks: VecDeque::new(),
        notes: Vec::new(),
    });
    let joined = server.replication.join(id, &server.world);
    send(joined, clients);
}

/// See the module's documentation.
pub fn replication(data: &[u8]) {
    let mut input = Input(data);
    let mut server = Server::new();
    let mut clients = Vec::new();
    join(&mut server, &mut clients);
    join(&mut server, &mut clients);
    for _ in 0..MAX_STEPS {
        if input.0.is_empty() {
            break;
        }
        let step = input.byte();
        let who = usize::from(input.byte()) % clients.len();
        match step % 16 {
            kind @ 0..=4 => server.change(&mut input, kind.min(3)),
            5 => server.change_relevancy(&mut input),
            6 | 7 => server.frame(&mut clients),
            15 if clients.len() < MAX_CLIENTS as usize => join(&mut server, &mut clients),
            network => carry(&mut input, network, &mut clients[who], &mut server.replication),
        }
    }
    settle(&mut server, &mut clients);
    check(&server, &clients);
}

/// One step of the network between the server and one client.
fn carry(input: &mut Input<'_>, step: u8, client: &mut Client, server: &mut ServerReplication) {
    let mut pick = |among: &[Vec<u8>]| (!among.is_empty()).then(|| usize::from(input.byte()) % among.len());
    match step {
        8 => client.receive_reliable(),
        // Delivered (in any order), lost or duplicated.
        9 | 10 => {
            if let Some(at) = pick(&client.unreliable) {
                client.receive_unreliable(at);
            }
        }
        11 => {
            if let Some(at) = pick(&client.unreliable) {
                client.unreliable.remove(at);
            }
        }
        12 => {
            if let Some(at) = pick(&client.unreliable) {
                let copy = client.unreliable[at].clone();
                client.unreliable.push(copy);
            }
        }
        13 => client.acknowledge(),
        _ => client.deliver_ack(server),
    }
}

/// Frames of a perfect network: everything sent arrives, in order, and is acknowledged.
fn settle(server: &mut Server, clients: &mut [Client]) {
    for _ in 0..SETTLE_FRAMES {
        server.frame(clients);
        for client in clients.iter_mut() {
            while !client.reliable.is_empty() {
                client.receive_reliable();
            }
            while !client.unreliable.is_empty() {
                client.receive_unreliable(0);
            }
            client.acknowledge();
            while !client.acks.is_empty() {
                client.deliver_ack(&mut server.replication);
            }
        }
        if server.replication.is_settled() && clients.iter().all(Client::is_idle) {
            return;
        }
    }
    panic!("replication did not settle within {SETTLE_FRAMES} frames of a perfect network");
}

fn check(server: &Server, clients: &[Client]) {
    // Compared encoded: a NaN equals nothing, itself included, yet must travel bit for bit.
    let everything = replicated_state(&server.world);
    for client in clients {
        let id = client.id;
        let mut relevant = everything.clone();
        relevant.retain(|actor, _| server.world.is_relevant_to(*actor, id));
        let expected = encode(&relevant);
        let state = replicated_state(&client.world);
        if encode(&state) != expected {
            let differ: Vec<_> = relevant
                .iter()
                .filter(|(actor, value)| state.get(actor).map(encode) != Some(encode(value)))
                .map(|(actor, value)| format!("{actor}: server {value:?}, client {:?}", state.get(actor)))
                .chain(state.keys().filter(|a| !relevant.contains_key(a)).map(|a| format!("{a}: only on the client")))
                .collect();
            panic!("client {id} differs from the server: {differ:?}");
        }
        assert_eq!(client.replication.waiting(), 0, "client {id} keeps values waiting");
        // Each property's announced changes are written values, in the order written, none announced twice.
        let mut next: BTreeMap<(ActorId, &str, &str), usize> = BTreeMap::new();
        for note in &client.notes {
            let key = (note.actor, note.component.to_string(), note.property.to_string());
            let written = server.written.get(&key).map_or(&[][..], Vec::as_slice);
            let from = next.entry((note.actor, &note.component, &note.property)).or_default();
            // A copy spawned again (relevant again) hears its current value anew: the last announced, or later.
            if note.old.is_none() {
                *from = from.saturating_sub(1);
            }
            let new = encode(&note.new);
            let Some(found) = written[*from..].iter().position(|value| *value == new) else {
                panic!("client {id} announced {note:?}, not written after what it announced before");
            };
            *from += found + 1;
        }
    }
}
