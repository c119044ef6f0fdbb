//! The replication core over the in-memory network, without plugins: worlds changed at random on a server,
//! clients joining at the start and in the middle, frames lost, duplicated and reordered — every client must
//! end with the server's replicated state, and see each property change at most once, in order.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::protocol::{decode, encode, ClientMessage, ServerMessage};
use super::transport::memory::{Conditions, MemoryClient, MemoryNetwork, MemoryServer};
use super::transport::{Channel, ClientEvent, ClientTransport, ServerEvent, ServerTransport};
use super::{replicated_state, ClientReplication, ServerReplication};
use crate::world::component_manager::{OwnerId, RequestFlags, RequestHandle};
use crate::world::RepNotify;
use crate::world::{ActorId, ClientId, NetMode, NetRole, Relevancy, Value, World};

const FRAME: Duration = Duration::from_millis(33);

fn world(mode: NetMode) -> World {
    let mut world = World::new("w", mode);
    world.declare_replicated("Health", ["hp", "shield"]);
    // Armor is lazy (seed 002): created on the server by the first write, then replicated.
    world.declare_replicated("Armor", ["ar"]);
    world.declare_creation("Armor", crate::world::CreationPolicy::Lazy);
    world
}

struct Server {
    world: World,
    replication: ServerReplication,
    transport: MemoryServer,
}

impl Server {
    /// A dedicated server's world, journaling for replication, serving `network`.
    fn dedicated(network: &MemoryNetwork) -> Server {
        let mut world = world(NetMode::DedicatedServer);
        world.start_journal();
        Server { world, replication: ServerReplication::new(), transport: network.server() }
    }

    fn frame(&mut self) {
        for event in self.transport.poll() {
            match event {
                ServerEvent::Connected(client) => {
                    let welcome = ServerMessage::Welcome { client, tick_rate: 30 };
                    self.transport.send(client, Channel::Reliable, encode(&welcome));
                    let joined = self.replication.join(client, &self.world);
                    self.send(joined);
                }
                ServerEvent::Received(client, frame) => match decode::<ClientMessage>(&frame) {
                    Ok(ClientMessage::Ack { packets }) => self.replication.acknowledge(client, &packets),
                    other => panic!("unexpected {other:?}"),
                },
                ServerEvent::Disconnected(client, _) => self.replication.leave(client),
            }
        }
        let outgoing = self.replication.collect(&mut self.world);
        self.send(outgoing);
    }

    fn send(&mut self, outgoing: Vec<super::Outgoing>) {
        for out in outgoing {
            let channel = if out.reliable { Channel::Reliable } else { Channel::Unreliable };
            self.transport.send(out.client, channel, encode(&out.message));
        }
    }
}

/// A change a watch heard: old value, new value.
type Heard = (Option<Value>, Option<Value>);

struct Client {
    world: World,
    replication: Option<ClientReplication>,
    transport: MemoryClient,
    notes: Vec<RepNotify>,
    /// Each replica's armor watch (set up as soon as the replica appears), whether the armor existed then, and
    /// what the watch heard.
    watched: BTreeMap<ActorId, (bool, Vec<Heard>)>,
}

impl Client {
    fn new(network: &MemoryNetwork) -> Self {
        let mut world = world(NetMode::Client);
        // The watches' owner, as a plugin would be.
        world.register_owner("watcher");
        let _armor = world.add_component_request(OwnerId(1), "Pawn", "Armor", RequestFlags::default());
        Client { world, replication: None, transport: network.connect(), notes: Vec::new(), watched: BTreeMap::new() }
    }

    fn frame(&mut self) {
        for event in self.transport.poll() {
            let ClientEvent::Received(frame) = event else { panic!("disconnected: {event:?}") };
            match decode::<ServerMessage>(&frame).unwrap() {
                ServerMessage::Welcome { client, .. } => self.replication = Some(ClientReplication::new(client)),
                ServerMessage::Update { seq, update } => {
                    // A replica destroyed (no longer relevant) is watched afresh if it comes back.
                    if let super::protocol::Update::Destroy { actor } = &update {
                        self.watched.remove(actor);
                    }
                    let replication = self.replication.as_mut().expect("welcomed before any update");
                    replication.apply_update(&mut self.world, seq, update, &mut self.notes).unwrap();
                }
                // Values overtaking the welcome are dropped unacknowledged, and come again.
                ServerMessage::Mutations { packet, values } => {
                    if let Some(replication) = &mut self.replication {
                        replication.apply_mutations(&mut self.world, packet, values, &mut self.notes);
                    }
                }
                ServerMessage::Refused { reason } => panic!("refused: {reason}"),
                ServerMessage::Chunk { .. } => panic!("a package chunk nobody asked for"),
            }
        }
        if let Some(replication) = &mut self.replication {
            let acks = replication.take_acknowledgements();
            let channel = if acks.unreliable { Channel::Unreliable } else { Channel::Reliable };
            if !acks.packets.is_empty() {
                self.transport.send(channel, encode(&ClientMessage::Ack { packets: acks.packets }));
            }
        }
        let replicas: Vec<ActorId> = self.world.actors_of_class("Pawn").unwrap();
        for actor in replicas {
            if let std::collections::btree_map::Entry::Vacant(entry) = self.watched.entry(actor) {
                let existed = self.world.actor(actor).unwrap().component("Armor").is_some();
                self.world.watch_property(OwnerId(1), actor, "Armor", "ar", 1).unwrap();
                entry.insert((existed, Vec::new()));
            }
        }
        // Nobody plays in these worlds: what the component manager queued is dropped, but what the watches heard
        // is kept.
        for work in self.world.take_work() {
            if let crate::world::component_manager::Work::PropertyChanged { actor, change, .. } = work {
                // A replica destroyed this frame (no longer relevant) is no longer watched.
                if let Some((_, heard)) = self.watched.get_mut(&actor) {
                    heard.push((change.old, change.new));
                }
            }
        }
    }
}

/// One random change to the server's world.
fn change_at_random(rng: &mut ChaCha8Rng, world: &mut World, request: &mut Option<RequestHandle>, counter: &mut i64) {
    let pawns = world.actors_of_class("Pawn").unwrap();
    match rng.random_range(0..100) {
        // A hit: its first write creates the pawn's lazy armor.
        85..100 if !pawns.is_empty() => {
            *counter += 1;
            let pawn = pawns[rng.random_range(0..pawns.len())];
            world.set_property(pawn, "Armor", "ar", Value::Integer(*counter)).unwrap();
        }
        0..25 => {
            world.spawn("Pawn").unwrap();
        }
        25..35 if !pawns.is_empty() => {
            world.destroy(pawns[rng.random_range(0..pawns.len())]).unwrap();
        }
        // Relevancy: a pawn for every client, for nobody (it has no owner), or for the clients in group `a`;
        // a client put in group `a` or taken out.
        42..47 if !pawns.is_empty() => {
            let pawn = pawns[rng.random_range(0..pawns.len())];
            let relevancy = match rng.random_range(0..3) {
                0 => Relevancy::Always,
                1 => Relevancy::OwnerOnly,
                _ => Relevancy::Groups(crate::world::check_groups(["a"]).unwrap()),
            };
            world.set_relevancy(pawn, relevancy).unwrap();
        }
        47..49 => {
            let groups =
                if rng.random_bool(0.5) { crate::world::check_groups(["a"]).unwrap() } else { Default::default() };
            world.set_client_groups(ClientId(rng.random_range(1..=3)), groups);
        }
        35..42 => match request.take() {
            Some(handle) => world.release_component_request(handle),
            None => {
                *request =
                    Some(world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap())
            }
        },
        _ => {
            let with_health: Vec<ActorId> =
                pawns.into_iter().filter(|p| world.actor(*p).unwrap().component("Health").is_some()).collect();
            if let Some(pawn) = with_health.get(rng.random_range(0..with_health.len().max(1))) {
                *counter += 1;
                let property = if rng.random_bool(0.7) { "hp" } else { "shield" };
                world.set_property(*pawn, "Health", property, Value::Integer(*counter)).unwrap();
            }
        }
    }
    let _ = world.take_work();
}

/// Plays one seed: returns the server and its clients once everything has settled.
fn play(seed: u64, conditions: Conditions) -> (Server, Vec<Client>) {
    let network = MemoryNetwork::new(seed, conditions);
    let mut server = Server::dedicated(&network);
    std::mem::forget(server.world.add_component_request(OwnerId::HOST, "Pawn", "Armor", RequestFlags::default()));
    let experience = server.replication.set_experience("test.toml", None);
    server.send(experience);
    let mut clients = vec![Client::new(&network), Client::new(&network)];
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let (mut request, mut counter) = (None, 0);
    for frame in 0..60 {
        if frame == 25 {
            clients.push(Client::new(&network));
        }
        for _ in 0..rng.random_range(0..4) {
            change_at_random(&mut rng, &mut server.world, &mut request, &mut counter);
        }
        server.frame();
        network.advance(FRAME);
        clients.iter_mut().for_each(Client::frame);
    }
    // Bounded: with 20 % loss, everything is acknowledged within a few dozen frames.
    for _ in 0..600 {
        server.frame();
        network.advance(FRAME);
        clients.iter_mut().for_each(Client::frame);
        if server.replication.is_settled() && network.in_flight() == 0 {
            break;
        }
    }
    (server, clients)
}

/// Checks a seed's outcome; how many watches set up before their component existed heard it arrive.
fn check(seed: u64, server: &Server, clients: &[Client]) -> usize {
    let mut deferred = 0;
    assert!(server.replication.is_settled(), "seed {seed}: values never acknowledged");
    let everything = replicated_state(&server.world);
    for (index, client) in clients.iter().enumerate() {
        // What is relevant to the client, of the server's.
        let me = client.replication.as_ref().expect("welcomed").me();
        let mut expected = everything.clone();
        expected.retain(|actor, _| server.world.is_relevant_to(*actor, me));
        assert_eq!(replicated_state(&client.world), expected, "seed {seed}: client {index} differs from the server");
        // Each property's changes, as announced: strictly increasing values (they were written so), so none
        // twice and none out of order. A copy spawned again (relevant again) starts from no value, and hears its
        // current one as new, as Unreal's re-opened actor channels do.
        let mut seen: BTreeMap<(ActorId, String), i64> = BTreeMap::new();
        for note in &client.notes {
            let Value::Integer(new) = note.new else { panic!("seed {seed}: {note:?}") };
            let key = (note.actor, note.property.to_string());
            if note.old.is_none() {
                seen.remove(&key);
            }
            let last = seen.insert(key, new);
            assert!(
                last.is_none_or(|last| last < new),
                "seed {seed}: client {index} announced {note:?} after {last:?}"
            );
        }
        assert_eq!(client.replication.as_ref().unwrap().waiting(), 0, "seed {seed}: values left waiting");
        // Deferred callbacks: a watch set up before the replica's armor existed heard a chain from no value to the
        // server's last, each change once and in order; one set up after heard the rest of the chain.
        for (actor, (existed, heard)) in &client.watched {
            let armor = server.world.actor(*actor).ok().and_then(|a| a.component("Armor"));
            let Some(final_value) = armor.and_then(|c| c.properties.get("ar")) else { continue };
            if !existed {
                assert_eq!(heard.first().map(|(old, _)| old.clone()), Some(None), "seed {seed}: {actor} {heard:?}");
                deferred += 1;
            } else if heard.is_empty() {
                continue;
            }
            for pair in heard.windows(2) {
                assert_eq!(pair[1].0, pair[0].1, "seed {seed}: {actor} {heard:?}");
                assert!(
                    matches!((&pair[0].1, &pair[1].1), (Some(Value::Integer(a)), Some(Value::Integer(b))) if a < b)
                );
            }
            assert_eq!(heard.last().and_then(|(_, new)| new.as_ref()), Some(final_value), "seed {seed}: {actor}");
        }
    }
    // Untouched pawns have no armor anywhere (replicated state is equal above, so checking the server suffices).
    for actor in server.world.actors() {
        if let Some(armor) = actor.component("Armor") {
            assert!(armor.properties.contains_key("ar"), "seed {seed}: armor exists only where it was written");
        }
    }
    deferred
}

#[test]
fn a_thousand_seeds_of_loss_duplication_and_reordering_converge_with_ordered_rep_notifies() {
    let conditions = Conditions {
        latency: Duration::from_millis(20),
        // Frames are 33 ms apart: up to three frames of jitter reorders datagrams across frames.
        jitter: Duration::from_millis(100),
        loss: 0.2,
        duplication: 0.1,
    };
    let (mut overtaken, mut deferred, mut kept_from) = (0, 0, 0);
    for seed in 0..1000 {
        let (server, clients) = play(seed, conditions);
        deferred += check(seed, &server, &clients);
        for client in &clients {
            let me = client.replication.as_ref().unwrap().me();
            kept_from += server.world.actors().filter(|a| !server.world.is_relevant_to(a.id, me)).count();
        }
        overtaken += clients.iter().map(|c| c.replication.as_ref().unwrap().stats().applied_late).sum::<u64>();
    }
    assert!(overtaken > 0, "values overtook their components in some seed, and were applied when it arrived");
    assert!(kept_from > 0, "some clients ended without actors not relevant to them");
    assert!(deferred > 0, "watches set up before their lazy component existed heard it arrive");
}

#[test]
fn a_perfect_network_replicates_roles_and_values() {
    let (server, clients) = play(7, Conditions::PERFECT);
    let _ = check(7, &server, &clients);
    let client = &clients[0];
    let replica = client.world.actors().next().expect("pawns were spawned");
    assert_eq!(replica.role, NetRole::SimulatedProxy);
    assert!(!client.world.has_authority(replica.id).unwrap());
    assert!(server.world.has_authority(replica.id).unwrap());
}

#[test]
fn a_client_cannot_write_a_replicated_property_but_keeps_its_own_components() {
    let network = MemoryNetwork::new(1, Conditions::PERFECT);
    let mut server = Server::dedicated(&network);
    let mut client = Client::new(&network);
    let _request = server.world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default());
    let pawn = server.world.spawn("Pawn").unwrap();
    server.world.set_property(pawn, "Health", "hp", Value::Integer(100)).unwrap();
    // The client asks for Health (replicated: the server's arrives instead) and for a Mesh of its own.
    let _health = client.world.add_component_request(OwnerId(9), "Pawn", "Health", RequestFlags::default());
    let _mesh = client.world.add_component_request(OwnerId(9), "Pawn", "Mesh", RequestFlags::default());
    for _ in 0..3 {
        server.frame();
        client.frame();
    }
    let replica = client.world.actor(pawn).unwrap();
    let classes: Vec<&str> = replica.components.iter().map(|c| &*c.class).collect();
    assert_eq!(classes, ["Health", "Mesh"], "one Health, the server's");
    assert_eq!(client.world.property(pawn, "Health", "hp").unwrap(), Some(&Value::Integer(100)));
    let refused = client.world.set_property_by(OwnerId(9), 1 << 20, pawn, "Health", "hp", Value::Integer(1));
    assert!(matches!(refused, Err(crate::world::WorldError::Denied(_))), "{refused:?}");
    assert!(client.world.set_property_by(OwnerId(9), 1 << 20, pawn, "Mesh", "lod", Value::Integer(1)).is_ok());
    // A lazy replicated component is the server's to create, even for an actor the client spawned itself.
    let own = client.world.spawn("Pawn").unwrap();
    let _armor = client.world.add_component_request(OwnerId(9), "Pawn", "Armor", RequestFlags::default());
    assert!(client.world.ensure_component(own, "Armor").is_err());
    // A replicated component is one per actor, however many requests give it.
    let hero = server.world.spawn("Character").unwrap();
    let _more = server.world.add_component_request(OwnerId::HOST, "Character", "Health", RequestFlags::default());
    let count = server.world.actor(hero).unwrap().components.iter().filter(|c| &*c.class == "Health").count();
    assert_eq!(count, 1);
}

#[test]
fn a_value_arriving_before_its_component_waits_for_it_and_a_stale_one_is_dropped() {
    use super::protocol::{ComponentRef, Mutation, PacketWriter, Update, ValuePacket};
    let mut world = world(NetMode::Client);
    let mut replication = ClientReplication::new(ClientId(1));
    let mut notes = Vec::new();
    let pawn = ActorId::from_raw(4);
    // The value of Health.hp; packets are numbered in the order sent, so a later packet's value is newer.
    let hp = |hp: i64| -> ValuePacket {
        let mut writer = PacketWriter::new();
        let value = Some(Value::Integer(hp));
        writer.push(Mutation { incarnation: 1, after: 2, property: 0, value });
        writer.take()
    };
    replication.apply_mutations(&mut world, 2, hp(50), &mut notes);
    // Duplicated by the network, and overtaken by it, while it waits: still one value waiting, the newest.
    replication.apply_mutations(&mut world, 2, hp(50), &mut notes);
    replication.apply_mutations(&mut world, 1, hp(40), &mut notes);
    assert_eq!(replication.waiting(), 1);
    // The property's name comes first, the component after it: the value waits for both.
    let name = Update::PropertyNames { names: vec![(0, "hp".into())] };
    replication.apply_update(&mut world, 1, name, &mut notes).unwrap();
    assert_eq!(replication.waiting(), 1);
    let health = ComponentRef { class: "Health".into(), incarnation: 1 };
    let spawn = Update::Spawn {
        actor: pawn,
        class: "Pawn".into(),
        receiver: true,
        player: Some(ClientId(1)),
        components: vec![health],
    };
    replication.apply_update(&mut world, 2, spawn, &mut notes).unwrap();
    assert_eq!(world.property(pawn, "Health", "hp").unwrap(), Some(&Value::Integer(50)));
    assert_eq!(world.actor(pawn).unwrap().role, NetRole::AutonomousProxy);
    assert!(world.is_locally_controlled(pawn).unwrap());
    // An older version (re-sent, reordered) and a duplicate change nothing and announce nothing.
    replication.apply_mutations(&mut world, 1, hp(40), &mut notes);
    replication.apply_mutations(&mut world, 2, hp(50), &mut notes);
    assert_eq!(world.property(pawn, "Health", "hp").unwrap(), Some(&Value::Integer(50)));
    assert_eq!(notes.len(), 1);
    assert_eq!((notes[0].old.clone(), notes[0].new.clone()), (None, Value::Integer(50)));
    // A value for a component the client has since seen removed is dropped, not applied to a newer one.
    let removed =
        Update::RemoveComponent { actor: pawn, component: ComponentRef { class: "Health".into(), incarnation: 1 } };
    replication.apply_update(&mut world, 3, removed, &mut notes).unwrap();
    replication.apply_mutations(&mut world, 3, hp(60), &mut notes);
    assert_eq!(replication.stats().dropped_stale, 1);
    let acks = replication.take_acknowledgements();
    assert_eq!((acks.packets.as_slice(), acks.unreliable), (&[2, 2, 1, 1, 2, 3][..], true));
    // Each is named again in the next two acknowledgements, then no more.
    assert_eq!(replication.take_acknowledgements().packets, [2, 2, 1, 1, 2, 3]);
    assert_eq!(replication.take_acknowledgements().packets, [2, 2, 1, 1, 2, 3]);
    assert!(replication.take_acknowledgements().packets.is_empty());
    // Out-of-order updates, and properties named out of turn, are a broken server.
    let late = Update::Destroy { actor: pawn };
    assert!(replication.apply_update(&mut world, 5, late, &mut notes).is_err());
    let shield = Update::PropertyNames { names: vec![(7, "shield".into())] };
    replication.apply_update(&mut world, 4, shield, &mut notes).unwrap();
    for (property, name) in
        [(7, "armor".to_string()), (super::MAX_PROPERTY_NAMES as u32, "armor".into()), (8, "a".repeat(257))]
    {
        let seq = 5;
        let again = Update::PropertyNames { names: vec![(property, name)] };
        let refused = replication.apply_update(&mut world, seq, again, &mut notes).unwrap_err();
        assert_eq!(refused, super::ReplicationError::PropertyNumber { seq: 5, property });
    }
}

/// A server replicates one component of a class per actor, with a valid name: a second of a class, or a
/// nameless one, is refused as the server breaking the protocol (found by the `client_frames` fuzz target).
#[test]
fn a_second_replicated_component_of_a_class_or_a_nameless_one_is_refused() {
    use super::protocol::{ComponentRef, Update};
    use super::ReplicationError;
    let pawn = ActorId::from_raw(4);
    let spawn = |components: Vec<ComponentRef>| Update::Spawn {
        actor: pawn,
        class: "Pawn".into(),
        receiver: true,
        player: None,
        components,
    };
    let health = |incarnation| ComponentRef { class: "Health".into(), incarnation };
    let nameless = ComponentRef { class: String::new(), incarnation: 3 };
    for components in [vec![health(1), health(2)], vec![nameless]] {
        let mut world = world(NetMode::Client);
        let mut replication = ClientReplication::new(ClientId(1));
        let refused = replication.apply_update(&mut world, 1, spawn(components), &mut Vec::new()).unwrap_err();
        assert!(matches!(refused, ReplicationError::Rejected { seq: 1, .. }), "{refused}");
        assert_eq!(world.check_invariants(), Ok(()));
    }
    // Added later, the same.
    let mut world = world(NetMode::Client);
    let mut replication = ClientReplication::new(ClientId(1));
    replication.apply_update(&mut world, 1, spawn(vec![health(1)]), &mut Vec::new()).unwrap();
    let again = Update::AddComponent { actor: pawn, component: health(2) };
    assert!(replication.apply_update(&mut world, 2, again, &mut Vec::new()).is_err());
    assert_eq!(world.actor(pawn).unwrap().components.iter().filter(|c| &*c.class == "Health").count(), 1);
}

/// The numbers of the value packets among a frame's messages.
fn value_packets(outgoing: Vec<super::Outgoing>) -> Vec<u64> {
    outgoing
        .into_iter()
        .filter_map(|out| match out.message {
            ServerMessage::Mutations { packet, .. } => Some(packet),
            _ => None,
        })
        .collect()
}

/// A client whose acknowledgements take longer than [`super::RESEND_AFTER_FRAMES`] (a long path) is sent a value
/// again only after its measured round trip (and its variation), not every few frames: the link carries each
/// change about once.
#[test]
fn a_client_slow_to_acknowledge_is_sent_each_change_about_once() {
    use std::collections::VecDeque;
    const ROUND_TRIP: u64 = 10;
    let mut world = world(NetMode::DedicatedServer);
    world.start_journal();
    let _health = world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
    let pawn = world.spawn("Pawn").unwrap();
    let mut replication = ServerReplication::new();
    let client = ClientId(1);
    replication.join(client, &world);
    let mut acknowledgements: VecDeque<(u64, Vec<u64>)> = VecDeque::new();
    for frame in 0..200u64 {
        // A change every 50 frames: 4 in all.
        world.set_property(pawn, "Health", "hp", Value::Integer((frame / 50) as i64)).unwrap();
        let packets = value_packets(replication.collect(&mut world));
        acknowledgements.push_back((frame + ROUND_TRIP, packets));
        while acknowledgements.front().is_some_and(|(due, _)| *due <= frame) {
            let (_, packets) = acknowledgements.pop_front().unwrap();
            replication.acknowledge(client, &packets);
        }
    }
    assert_eq!(replication.backlog(client), Some(0));
    // The first change goes out every 4 frames until the first acknowledgement measures the round trip (3 times);
    // each later one once. Every 4 frames throughout, it would be 12.
    assert_eq!(replication.values_sent(client), Some(3 + 3));
}

/// Past a client's budget of bytes per frame, values wait: each frame's values fit the budget, the client's own
/// player's values go every frame they change, no other value waits forever behind newer ones, and once the
/// writes stop the client catches up.
#[test]
fn a_client_budget_sends_its_own_players_values_first_and_starves_nothing() {
    use std::collections::BTreeSet;
    const BUDGET: usize = 1_100;
    let mut world = world(NetMode::DedicatedServer);
    world.start_journal();
    let _health = world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()).unwrap();
    let crowd: Vec<ActorId> = (0..600).map(|_| world.spawn("Pawn").unwrap()).collect();
    let client = ClientId(1);
    let own = world.spawn("Pawn").unwrap();
    world.actor_mut(own).unwrap().player = Some(crate::world::PlayerOwner::Remote(client));
    let incarnation = |world: &World, actor| world.actor(actor).unwrap().component("Health").unwrap().serial;
    let own_incarnation = incarnation(&world, own);
    let mut replication = ServerReplication::new();
    replication.set_client_budget(Some(BUDGET));
    replication.join(client, &world);
    let mut reached = BTreeSet::new();
    for frame in 0..60 {
        // Every pawn's health changes every frame: far more than the budget carries.
        for actor in crowd.iter().chain([&own]) {
            world.set_property(*actor, "Health", "hp", Value::Integer(frame)).unwrap();
        }
        let mut bytes = 0;
        let mut packets = Vec::new();
        let mut own_sent = false;
        for out in replication.collect(&mut world) {
            if let ServerMessage::Mutations { packet, values } = out.message {
                bytes += encode(&ServerMessage::Mutations { packet, values: values.clone() }).len();
                packets.push(packet);
                for mutation in values.into_mutations() {
                    own_sent |= mutation.incarnation == own_incarnation;
                    reached.insert(mutation.incarnation);
                }
            }
        }
        assert!(bytes <= BUDGET + 2 * 11, "frame {frame}: {bytes} bytes of values past a budget of {BUDGET}");
        assert!(own_sent, "frame {frame}: the client's own pawn's new value waited");
        replication.acknowledge(client, &packets);
    }
    let everyone: BTreeSet<u64> = crowd.iter().map(|actor| incarnation(&world, *actor)).collect();
    assert!(everyone.is_subset(&reached), "{} of the crowd's values never sent", everyone.difference(&reached).count());
    // The writes stop: the client catches up, a budget at a time.
    for _ in 0..60 {
        let packets = value_packets(replication.collect(&mut world));
        replication.acknowledge(client, &packets);
    }
    assert_eq!(replication.backlog(client), Some(0));
}

/// An actor goes to the clients its relevancy names, always to its owner's; when its relevancy or a client's
/// groups change, it is spawned where it became relevant, with its current values, and destroyed where it
/// stopped being.
#[test]
fn relevancy_decides_which_clients_have_an_actor_and_changes_spawn_and_destroy_copies() {
    use crate::world::{check_groups, PlayerOwner};
    let network = MemoryNetwork::new(3, Conditions::PERFECT);
    let mut server = Server::dedicated(&network);
    let mut clients = [Client::new(&network), Client::new(&network)];
    let play = |server: &mut Server, clients: &mut [Client; 2]| {
        for _ in 0..5 {
            server.frame();
            clients.iter_mut().for_each(Client::frame);
        }
    };
    play(&mut server, &mut clients);
    let ids: Vec<ClientId> = clients.iter().map(|c| c.replication.as_ref().unwrap().me()).collect();
    let (first, second) = (ids[0], ids[1]);
    let _health = server.world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default());
    let [everyone, owned, red] = [0, 1, 2].map(|_| server.world.spawn("Pawn").unwrap());
    server.world.actor_mut(owned).unwrap().player = Some(PlayerOwner::Remote(first));
    server.world.set_relevancy(owned, Relevancy::OwnerOnly).unwrap();
    server.world.set_relevancy(red, Relevancy::Groups(check_groups(["red"]).unwrap())).unwrap();
    server.world.set_client_groups(second, check_groups(["red", "lobby"]).unwrap());
    for (hp, actor) in [everyone, owned, red].into_iter().enumerate() {
        server.world.set_property(actor, "Health", "hp", Value::Integer(hp as i64)).unwrap();
    }
    play(&mut server, &mut clients);
    let has = |client: &Client, actor| client.world.actor(actor).is_ok();
    assert!(has(&clients[0], everyone) && has(&clients[0], owned) && !has(&clients[0], red));
    assert!(has(&clients[1], everyone) && !has(&clients[1], owned) && has(&clients[1], red));
    assert_eq!(clients[1].world.property(red, "Health", "hp").unwrap(), Some(&Value::Integer(2)));
    // Changed while only the second client has it: the first gets it, with the value of now, when it becomes
    // relevant to it.
    server.world.set_property(red, "Health", "hp", Value::Integer(20)).unwrap();
    play(&mut server, &mut clients);
    server.world.set_relevancy(red, Relevancy::Always).unwrap();
    // The owner keeps its own actor whatever its relevancy says; the second client is in `red`.
    server.world.set_relevancy(owned, Relevancy::Groups(check_groups(["red"]).unwrap())).unwrap();
    play(&mut server, &mut clients);
    assert_eq!(clients[0].world.property(red, "Health", "hp").unwrap(), Some(&Value::Integer(20)));
    assert!(has(&clients[0], owned) && has(&clients[1], owned));
    // Out of every group, the second client's copy of the owned pawn is destroyed; back in, it comes back.
    server.world.set_client_groups(second, Default::default());
    play(&mut server, &mut clients);
    assert!(!has(&clients[1], owned) && has(&clients[0], owned));
    server.world.set_property(owned, "Health", "hp", Value::Integer(11)).unwrap();
    server.world.set_client_groups(second, check_groups(["red"]).unwrap());
    play(&mut server, &mut clients);
    assert_eq!(clients[1].world.property(owned, "Health", "hp").unwrap(), Some(&Value::Integer(11)));
    assert!(server.replication.is_settled());
    for client in &clients {
        assert_eq!(client.world.check_invariants(), Ok(()));
    }
}

/// Pawns walking between cells, as a game with a cull distance keeps relevancy: in one frame a pawn moves to
/// another cell's group while a client moves its groups to where the pawn was. Each client ends holding exactly
/// the pawns of its groups, its own, and those relevant to everyone, with their values of now; a client that
/// leaves takes nothing with it.
#[test]
fn pawns_and_clients_changing_groups_in_one_frame_leave_each_client_with_exactly_its_groups_pawns() {
    use crate::world::{check_groups, PlayerOwner};
    let network = MemoryNetwork::new(5, Conditions::PERFECT);
    let mut server = Server::dedicated(&network);
    let mut clients = [Client::new(&network), Client::new(&network), Client::new(&network)];
    let play = |server: &mut Server, clients: &mut [Client; 3]| {
        for _ in 0..5 {
            server.frame();
            clients.iter_mut().for_each(Client::frame);
        }
    };
    play(&mut server, &mut clients);
    let ids: Vec<ClientId> = clients.iter().map(|c| c.replication.as_ref().unwrap().me()).collect();
    let _health = server.world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default());
    let cell = |name: &str| check_groups([name]).unwrap();
    // A pawn of each client, in cells a, b and c; a beacon relevant to everyone.
    let pawns: Vec<ActorId> = (0..3).map(|_| server.world.spawn("Pawn").unwrap()).collect();
    let beacon = server.world.spawn("Pawn").unwrap();
    for (index, (pawn, name)) in pawns.iter().zip(["a", "b", "c"]).enumerate() {
        server.world.actor_mut(*pawn).unwrap().player = Some(PlayerOwner::Remote(ids[index]));
        server.world.set_relevancy(*pawn, Relevancy::Groups(cell(name))).unwrap();
        server.world.set_property(*pawn, "Health", "hp", Value::Integer(index as i64)).unwrap();
    }
    server.world.set_client_groups(ids[0], cell("a"));
    server.world.set_client_groups(ids[1], check_groups(["a", "b"]).unwrap());
    server.world.set_client_groups(ids[2], cell("c"));
    play(&mut server, &mut clients);
    let holds = |clients: &[Client; 3], client: usize| -> Vec<bool> {
        pawns.iter().chain([&beacon]).map(|actor| clients[client].world.actor(*actor).is_ok()).collect()
    };
    assert_eq!(holds(&clients, 0), [true, false, false, true]);
    assert_eq!(holds(&clients, 1), [true, true, false, true]);
    assert_eq!(holds(&clients, 2), [false, false, true, true]);
    // One frame: the first pawn walks into c, and changes as it goes; the third client looks at a and b instead.
    server.world.set_relevancy(pawns[0], Relevancy::Groups(cell("c"))).unwrap();
    server.world.set_property(pawns[0], "Health", "hp", Value::Integer(40)).unwrap();
    server.world.set_client_groups(ids[2], check_groups(["a", "b"]).unwrap());
    play(&mut server, &mut clients);
    assert_eq!(holds(&clients, 0), [true, false, false, true], "its own pawn stays, whatever its cell");
    assert_eq!(holds(&clients, 1), [false, true, false, true]);
    assert_eq!(holds(&clients, 2), [false, true, true, true]);
    // Frames later the pawn walks on into b: the third client, looking there since, gets it.
    server.world.set_relevancy(pawns[0], Relevancy::Groups(cell("b"))).unwrap();
    play(&mut server, &mut clients);
    assert_eq!(holds(&clients, 2), [true, true, true, true]);
    // The second client, which lost it, sees it again with its value of now.
    server.world.set_client_groups(ids[1], check_groups(["b"]).unwrap());
    play(&mut server, &mut clients);
    assert_eq!(holds(&clients, 1), [true, true, false, true]);
    assert_eq!(clients[1].world.property(pawns[0], "Health", "hp").unwrap(), Some(&Value::Integer(40)));
    // A client gone holds nothing on the server: its pawn's values go to the others alone.
    server.replication.leave(ids[2]);
    server.world.set_property(pawns[1], "Health", "hp", Value::Integer(7)).unwrap();
    play(&mut server, &mut clients);
    assert_eq!(clients[1].world.property(pawns[1], "Health", "hp").unwrap(), Some(&Value::Integer(7)));
    assert_eq!(server.replication.backlog(ids[2]), None);
    assert!(server.replication.is_settled());
    for client in &clients[..2] {
        assert_eq!(client.world.check_invariants(), Ok(()));
    }
}

/// How long a change takes to reach a client on a lossy link: one change a frame, each pawn's value changing
/// every twenty frames, 30 Hz, one-way latency 50 ± 20 ms (a 100 ms round trip), 20 % of datagrams lost.
/// Returns the lags, in milliseconds, of every change, from the frame it was made to the frame the client holds it.
fn lags_on_a_lossy_link(seed: u64, frame_time: Duration) -> Vec<u64> {
    let conditions = Conditions {
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(40),
        loss: 0.2,
        duplication: 0.0,
    };
    let network = MemoryNetwork::new(seed, conditions);
    let mut server = Server::dedicated(&network);
    std::mem::forget(server.world.add_component_request(OwnerId::HOST, "Pawn", "Health", RequestFlags::default()));
    let pawns: Vec<ActorId> = (0..20).map(|_| server.world.spawn("Pawn").unwrap()).collect();
    let mut client = Client::new(&network);
    let mut waiting: Vec<(ActorId, i64, u64)> = Vec::new();
    let mut lags = Vec::new();
    // Changes for 39 s, then up to 10 s for the last to arrive.
    for frame in 0..1500u64 {
        if frame >= 1200 && waiting.is_empty() {
            break;
        }
        // The first second settles the join; then a change a frame.
        if (30..1200).contains(&frame) {
            let pawn = pawns[frame as usize % pawns.len()];
            server.world.set_property(pawn, "Health", "hp", Value::Integer(frame as i64)).unwrap();
            waiting.push((pawn, frame as i64, frame));
        }
        server.frame();
        network.advance(frame_time);
        client.frame();
        waiting.retain(|(pawn, value, set)| {
            let held = client.world.property(*pawn, "Health", "hp").ok().flatten();
            let arrived = matches!(held, Some(Value::Integer(now)) if now >= value);
            if arrived {
                lags.push((frame + 1 - set) * frame_time.as_millis() as u64);
            }
            !arrived
        });
    }
    assert!(waiting.is_empty(), "seed {seed}: changes never arrived: {waiting:?}");
    lags
}

/// A lost value comes back in about one round trip: its packet is taken for lost as soon as the client's
/// acknowledgements skip it, not after a timer of twice a round trip; and the acknowledgements themselves travel
/// unreliably, each named in three, so a lost one does not wait behind a stream's retransmission (which
/// stretched the round trip the server measured, and with it every resend). On a 100 ms round trip with 20 %
/// loss, over ten seeds, nine changes in ten arrive within two round trips and the two frames the ends take to
/// act (the server and the client each act once a frame): at 30 Hz p90 231 ms, where it was 396 ms; at 60 Hz
/// 192 ms, within two round trips.
#[test]
fn on_a_lossy_link_nine_changes_in_ten_arrive_within_two_round_trips() {
    for (hz, frame_time) in [(30, FRAME), (60, Duration::from_micros(16_667))] {
        let mut lags: Vec<u64> = (0..10).flat_map(|seed| lags_on_a_lossy_link(seed, frame_time)).collect();
        lags.sort_unstable();
        let at = |share: f64| lags[((lags.len() - 1) as f64 * share) as usize];
        let (p50, p90, p99, max) = (at(0.5), at(0.9), at(0.99), lags[lags.len() - 1]);
        let said = format!("{hz} Hz: p50 {p50} ms, p90 {p90} ms, p99 {p99} ms, max {max} ms");
        eprintln!("lag on a 100 ms round trip, 20 % loss, {said}");
        let two_round_trips_and_two_frames = 2 * 100 + 2 * frame_time.as_millis() as u64;
        assert!(p90 <= two_round_trips_and_two_frames, "{said}");
    }
}
