//! The server's side of replication: what each client has been told, and what it must be told next.
//!
//! Every frame the server reads what its world touched ([`World::take_journal`]) and compares it with what its
//! clients know: an actor alive and unknown is spawned on them, a known one gone is destroyed, likewise for
//! replicated components; a replicated property whose value changed gets a new version. Updates go to every
//! client, in order, on the reliable channel. Property values go on the unreliable one: each client has a set
//! of values it has not acknowledged, sent again until it does — only the newest value of each property, so a
//! client may skip intermediate values but always ends with the last.

use std::collections::{hash_map, BTreeMap, HashMap};

use rustc_hash::{FxHashMap, FxHashSet};

use super::group_index::GroupIndex;
use super::protocol::{
    value_size, ComponentRef, ExperienceContent, Mutation, PackageOffer, PacketWriter, ServerMessage, Update,
    MAX_PACKET,
};
use crate::world::{ActorId, ClientId, Component, PlayerOwner, Relevancy, Touched, Value, World};

/// Frames after which a value a client has not acknowledged is sent again, at least: for a client whose
/// acknowledgements take longer, its smoothed round trip and four times its variation (QUIC's probe timeout,
/// at most [`RESEND_AFTER_FRAMES_MAX`]). A value lost among others is sent again sooner: as soon as the client's
/// acknowledgements skip its packet (see [`LOSS_PACKET_THRESHOLD`]).
pub const RESEND_AFTER_FRAMES: u64 = 2;

/// Frames after which a value is sent again to a client whose round trip is not measured yet (QUIC starts from
/// an assumed round trip the same way).
pub const RESEND_AFTER_FRAMES_UNMEASURED: u64 = 4;

/// A packet is lost once a packet sent this many after it is acknowledged, or once a later one is and it was
/// sent 9/8 of a round trip ago (QUIC's loss detection, RFC 9002 §6.1): its values are sent again at once.
pub const LOSS_PACKET_THRESHOLD: u64 = 3;

/// The longest a value waits before it is sent again, in frames, however slow the client's acknowledgements.
pub const RESEND_AFTER_FRAMES_MAX: u64 = 64;

/// How much more a value of the client's own player's actors counts than another's while they wait for a
/// client's bandwidth (see [`ServerReplication::set_client_budget`]).
pub const OWN_VALUE_WEIGHT: u64 = 4;

/// Mutation packets remembered per client while their acknowledgement may still come; an older packet's values
/// are sent again anyway if still unacknowledged. Also the most packets one acknowledgement may name.
pub const IN_FLIGHT_PACKETS: usize = 1024;

/// What replication makes equal on a server and each of its clients: every actor, by id, with its class and
/// its replicated components' replicated values.
pub type ReplicatedState = BTreeMap<ActorId, (String, BTreeMap<String, BTreeMap<String, Value>>)>;

/// The state of `world` that replication carries (see [`ReplicatedState`]).
pub fn replicated_state(world: &World) -> ReplicatedState {
    world
        .actors()
        .map(|actor| {
            let components = actor
                .components
                .iter()
                .filter(|c| c.replicated)
                .map(|c| {
                    let values = c
                        .properties
                        .iter()
                        .filter(|(name, _)| world.replicated_classes().replicates(&c.class, name))
                        .map(|(name, value)| (name.to_string(), value.clone()))
                        .collect();
                    (c.class.to_string(), values)
                })
                .collect();
            (actor.id, (actor.class().to_string(), components))
        })
        .collect()
}

/// A replicated property of one component incarnation: the property by its number (see [`PropertyNumbers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct PropKey {
    incarnation: u64,
    property: u32,
}

#[derive(Debug)]
struct Prop {
    value: Option<Value>,
    version: u64,
}

/// The numbers values carry instead of their property's name, given in the order names were first replicated.
/// They are the server's, so each connection is told each name once, whenever it joined.
#[derive(Debug, Default)]
struct PropertyNumbers {
    numbers: HashMap<String, u32>,
    names: Vec<String>,
}

impl PropertyNumbers {
    fn number(&mut self, name: &str) -> u32 {
        if let Some(number) = self.numbers.get(name) {
            return *number;
        }
        let number = u32::try_from(self.names.len()).expect("fewer than 2^32 property names");
        self.names.push(name.to_string());
        self.numbers.insert(name.to_string(), number);
        number
    }
}

#[derive(Debug)]
struct KnownActor {
    /// Its place in the order actors became known: clients hear of actors in that order.
    spawned: u64,
    class: String,
    receiver: bool,
    player: Option<ClientId>,
    components: Vec<ComponentRef>,
}

/// What one client has been told.
#[derive(Debug, Default)]
struct ClientView {
    /// The number of the last update sent.
    seq: u64,
    /// The actors this client has: those relevant to it (see [`crate::world::Relevancy`]).
    actors: FxHashSet<ActorId>,
    /// The update that introduced each live component incarnation to this client.
    introduced: FxHashMap<u64, u64>,
    /// The update that named each property number to this client (by number; 0: not named yet).
    named: Vec<u64>,
    /// Properties whose newest version this client has not acknowledged.
    pending: FxHashMap<PropKey, Pending>,
    /// Mutation packets sent and not yet acknowledged, by packet number (the oldest forgotten past
    /// [`IN_FLIGHT_PACKETS`]): the frame each was sent in, and the version of each value it carried.
    in_flight: BTreeMap<u64, (u64, Vec<(PropKey, u64)>)>,
    next_packet: u64,
    /// Frames from a packet's sending to its acknowledgement, smoothed (in eighths of a frame; 0: none yet).
    round_trip_eighths: u64,
    /// How much the round trip varies, smoothed (in eighths of a frame).
    round_trip_variation_eighths: u64,
    /// Values sent in mutation packets, sent again ones included.
    values_sent: u64,
}

/// A property whose newest version a client has not acknowledged.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// The newest version: the one to be acknowledged.
    version: u64,
    /// The frame the client's copy fell behind: the first change it has not acknowledged.
    behind_since: u64,
    /// The version last sent, and the frame it was sent in; `None`: not sent yet.
    sent: Option<(u64, u64)>,
    /// The first packet whose acknowledgement counts: a copy spawned again on the client (relevant again) lost
    /// what packets sent before told its former copy.
    counts_from_packet: u64,
    /// Whether it is a value of the client's own player's actor, as replication knew the actor's player when the
    /// value was queued: it goes first when the client's budget cannot carry everything.
    own: bool,
    /// The update that introduced its component to the client (0: not looked up yet), kept from the first
    /// sending on: looking it up for every value every frame costs more than the rest of the sending.
    after: u64,
}

impl Pending {
    fn new(version: u64, frame: u64, own: bool) -> Self {
        Pending { version, behind_since: frame, sent: None, counts_from_packet: 0, own, after: 0 }
    }

    /// The frame from which the value has waited for this client, if it is due: since the client fell behind
    /// or was last sent it (a value that changes every frame waits from its last sending, so it too comes to
    /// the front), or since its last sending went unacknowledged too long.
    fn due_since(&self, frame: u64, resend_after: u64) -> Option<u64> {
        match self.sent {
            None => Some(self.behind_since),
            Some((version, at)) if version < self.version => Some(at.max(self.behind_since)),
            Some((_, at)) => Some(at + resend_after).filter(|due| *due <= frame),
        }
    }
}

impl ClientView {
    /// Frames after which an unacknowledged value is sent again to this client: the round trip and four times
    /// its variation (at least a frame more), as QUIC's probe timeout.
    fn resend_after(&self) -> u64 {
        if self.round_trip_eighths == 0 {
            return RESEND_AFTER_FRAMES_UNMEASURED;
        }
        let margin = (4 * self.round_trip_variation_eighths).max(8);
        (self.round_trip_eighths + margin).div_ceil(8).clamp(RESEND_AFTER_FRAMES, RESEND_AFTER_FRAMES_MAX)
    }

    /// Frames after which a packet sent before one acknowledged is taken for lost: 9/8 of the round trip.
    fn loss_delay(&self) -> u64 {
        (self.round_trip_eighths * 9).div_ceil(64).max(1)
    }

    /// A packet sent at frame `sent` was acknowledged at frame `now` (RFC 6298's smoothing).
    fn round_trip_measured(&mut self, sent: u64, now: u64) {
        let sample = now.saturating_sub(sent).min(RESEND_AFTER_FRAMES_MAX) * 8;
        if self.round_trip_eighths == 0 {
            self.round_trip_eighths = sample.max(1);
            self.round_trip_variation_eighths = sample / 2;
            return;
        }
        let deviation = self.round_trip_eighths.abs_diff(sample);
        self.round_trip_variation_eighths = (self.round_trip_variation_eighths * 3 + deviation) / 4;
        // Never back to 0, which means "not measured yet": a link faster than a frame stays measured.
        self.round_trip_eighths = ((self.round_trip_eighths * 7 + sample) / 8).max(1);
    }

    /// Takes the packets sent before `largest` (acknowledged) for lost where the acknowledgements have skipped
    /// them long enough ([`LOSS_PACKET_THRESHOLD`], [`loss_delay`](Self::loss_delay)): their values, where they
    /// were the last sending, are due again now.
    fn detect_losses(&mut self, largest: u64, now: u64) {
        let delay = self.loss_delay();
        let lost: Vec<u64> = (self.in_flight.range(..largest))
            .filter(|(packet, (sent, _))| largest - **packet >= LOSS_PACKET_THRESHOLD || now - *sent >= delay)
            .map(|(packet, _)| *packet)
            .collect();
        for packet in lost {
            let Some((sent, values)) = self.in_flight.remove(&packet) else { continue };
            for (key, version) in values {
                if let Some(pending) = self.pending.get_mut(&key) {
                    if pending.sent == Some((version, sent)) {
                        pending.sent = None;
                    }
                }
            }
        }
    }

    /// Forgets an incarnation, whose properties had these numbers.
    fn forget_incarnation(&mut self, incarnation: u64, properties: &[u32]) {
        self.introduced.remove(&incarnation);
        for property in properties {
            self.pending.remove(&PropKey { incarnation, property: *property });
        }
    }
}

/// A message for one client, and whether it goes on the reliable channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The client the message is for.
    pub client: ClientId,
    /// `true` for an update, sent on the reliable channel; `false` for a packet of values, sent unreliably.
    pub reliable: bool,
    /// The message to send.
    pub message: ServerMessage,
}

/// The server's replication state for one world.
#[derive(Debug, Default)]
pub struct ServerReplication {
    known: FxHashMap<ActorId, KnownActor>,
    /// Known actors in the order they were spawned; destroyed ones are swept out once they are half of it.
    order: Vec<ActorId>,
    destroyed_in_order: usize,
    props: FxHashMap<PropKey, Prop>,
    /// The numbers of each incarnation's properties in `props`.
    properties_of: FxHashMap<u64, Vec<u32>>,
    property_numbers: PropertyNumbers,
    next_version: u64,
    experience: Option<(String, Option<ExperienceContent>)>,
    clients: BTreeMap<ClientId, ClientView>,
    /// The clients that have each actor (the actors of their views, the other way round): a value that changes
    /// is queued for those alone, so a frame's cost grows with what each client sees, not with every client
    /// times every actor.
    holders: FxHashMap<ActorId, FxHashSet<ClientId>>,
    /// The relevancy groups of the actors relevant by groups, and of the clients.
    actor_groups: GroupIndex<ActorId>,
    client_groups: GroupIndex<ClientId>,
    /// Actors that became known so far.
    spawned: u64,
    /// The actor of each incarnation in `props`, whose player's client sees its values first.
    incarnation_actors: FxHashMap<u64, ActorId>,
    /// The bytes of values each client may be sent per frame; `None`: no limit.
    client_budget: Option<usize>,
    /// Actors whose relevancy to each client is looked at again at the end of the frame.
    reconsider: FxHashSet<ActorId>,
    frame: u64,
}

impl ServerReplication {
    /// Replication with no clients yet and nothing known of the world.
    pub fn new() -> Self {
        Self::default()
    }

    /// The experience the server plays (with what it is made of, for clients that lack it), told to every
    /// client now and to those joining later.
    pub fn set_experience(&mut self, name: &str, content: Option<ExperienceContent>) -> Vec<Outgoing> {
        self.experience = Some((name.to_string(), content.clone()));
        let mut out = Vec::new();
        self.broadcast(Update::Experience { name: name.to_string(), content }, &mut out);
        out
    }

    /// A plugin of the experience has a new version: every client is told, and clients joining later are
    /// offered it in place of the old one.
    pub fn update_package(&mut self, offer: PackageOffer) -> Vec<Outgoing> {
        if let Some((_, Some(content))) = &mut self.experience {
            content.packages.retain(|p| p.package.name != offer.package.name);
            content.packages.push(offer.clone());
        }
        let mut out = Vec::new();
        self.broadcast(Update::Package { offer }, &mut out);
        out
    }

    /// An actor changed hands (a player reconnecting on a new connection): clients joining from now on receive
    /// it as `client`'s. (Clients already playing see it as another's either way.) Which clients have it is
    /// looked at again in the next frame, as its owner decides that too.
    pub fn hand_over(&mut self, actor: ActorId, client: ClientId) {
        if let Some(known) = self.known.get_mut(&actor) {
            known.player = Some(client);
            self.reconsider.insert(actor);
        }
    }

    /// A client joins: the messages that tell it everything it must know (the experience, every actor relevant
    /// to it with its components); each of their replicated values is queued for it.
    pub fn join(&mut self, client: ClientId, world: &World) -> Vec<Outgoing> {
        // Joined again: it starts over, holding nothing.
        self.leave(client);
        let mut view = ClientView::default();
        let mut out = Vec::new();
        if let Some((name, content)) = &self.experience {
            let update = Update::Experience { name: name.clone(), content: content.clone() };
            Self::send_update(&mut view, client, update, &mut out);
        }
        self.clients.insert(client, view);
        self.client_groups.set(client, world.client_groups(client).unwrap_or(&Default::default()));
        let actors: Vec<ActorId> = self.order.iter().filter(|a| self.known.contains_key(a)).copied().collect();
        for actor in actors {
            if world.is_relevant_to(actor, client) {
                self.spawn_on(client, actor, &mut out);
            }
        }
        out
    }

    /// Spawns a known actor on one client, with its components, and queues its values for it.
    fn spawn_on(&mut self, client: ClientId, actor: ActorId, out: &mut Vec<Outgoing>) {
        let (Some(known), Some(view)) = (self.known.get(&actor), self.clients.get_mut(&client)) else { return };
        if !view.actors.insert(actor) {
            return;
        }
        self.holders.entry(actor).or_default().insert(client);
        let frame = self.frame;
        for component in &known.components {
            for property in self.properties_of.get(&component.incarnation).into_iter().flatten() {
                let key = PropKey { incarnation: component.incarnation, property: *property };
                let pending = Pending {
                    counts_from_packet: view.next_packet + 1,
                    ..Pending::new(self.props[&key].version, frame, known.player == Some(client))
                };
                view.pending.insert(key, pending);
            }
        }
        let spawn = Update::Spawn {
            actor,
            class: known.class.clone(),
            receiver: known.receiver,
            player: known.player,
            components: known.components.clone(),
        };
        Self::send_update(view, client, spawn, out);
    }

    /// Destroys an actor's copy on one client, which stops hearing of it.
    fn destroy_on(&mut self, client: ClientId, actor: ActorId, out: &mut Vec<Outgoing>) {
        let Some(view) = self.clients.get_mut(&client) else { return };
        if !view.actors.remove(&actor) {
            return;
        }
        let_go(&mut self.holders, actor, client);
        for component in self.known.get(&actor).map(|known| known.components.as_slice()).unwrap_or_default() {
            let properties = self.properties_of.get(&component.incarnation).map(Vec::as_slice).unwrap_or_default();
            view.forget_incarnation(component.incarnation, properties);
        }
        Self::send_update(view, client, Update::Destroy { actor }, out);
    }

    /// A client left: nothing more is sent to it.
    pub fn leave(&mut self, client: ClientId) {
        self.client_groups.remove(client);
        if let Some(view) = self.clients.remove(&client) {
            for actor in view.actors {
                let_go(&mut self.holders, actor, client);
            }
        }
    }

    /// The clients being replicated to.
    pub fn clients(&self) -> Vec<ClientId> {
        self.clients.keys().copied().collect()
    }

    /// Tells every client that play ended.
    pub fn end_play(&mut self, reason: &str) -> Vec<Outgoing> {
        let mut out = Vec::new();
        self.broadcast(Update::EndPlay { reason: reason.to_string() }, &mut out);
        out
    }

    /// A client acknowledged mutation packets: what they carried need not be sent again, unless it changed
    /// since. Only the newest [`IN_FLIGHT_PACKETS`] named are looked at: older packets are no longer
    /// remembered, so however long the list, the work is bounded.
    pub fn acknowledge(&mut self, client: ClientId, packets: &[u64]) {
        let Some(view) = self.clients.get_mut(&client) else { return };
        let mut largest = None;
        for packet in packets.iter().rev().take(IN_FLIGHT_PACKETS) {
            let Some((sent, values)) = view.in_flight.remove(packet) else { continue };
            largest = largest.max(Some(*packet));
            view.round_trip_measured(sent, self.frame);
            for (key, version) in values {
                if let hash_map::Entry::Occupied(pending) = view.pending.entry(key) {
                    if pending.get().version <= version && *packet >= pending.get().counts_from_packet {
                        pending.remove();
                    }
                }
            }
        }
        if let Some(largest) = largest {
            view.detect_losses(largest, self.frame);
        }
    }

    /// The values a client has not acknowledged the newest version of (its backlog), `None` for a client not
    /// joined.
    pub fn backlog(&self, client: ClientId) -> Option<usize> {
        self.clients.get(&client).map(|view| view.pending.len())
    }

    /// Values sent to a client in mutation packets so far, sent again ones included (`None` for a client not
    /// joined): beside the bytes its transport sent, what each value costs on the wire.
    pub fn values_sent(&self, client: ClientId) -> Option<u64> {
        self.clients.get(&client).map(|view| view.values_sent)
    }

    /// Limits the bytes of values sent to each client per frame (`None`: no limit), so a client is sent what its
    /// link carries: past the budget, values wait for later frames, those of its own player's actors and those
    /// waiting longest first (see [`OWN_VALUE_WEIGHT`]). Updates (spawns, components) are not counted.
    pub fn set_client_budget(&mut self, bytes_per_frame: Option<usize>) {
        self.client_budget = bytes_per_frame;
    }

    /// Whether every client has acknowledged every value (nothing left to send).
    pub fn is_settled(&self) -> bool {
        self.clients.values().all(|view| view.pending.is_empty())
    }

    /// One frame of replication: reads what the world touched, then returns the updates for every client and
    /// the mutation packets each one is due.
    pub fn collect(&mut self, world: &mut World) -> Vec<Outgoing> {
        self.frame += 1;
        let mut updates = Vec::new();
        // Each client once, however often its groups changed in the frame (a plugin may flip them a thousand
        // times in one call): each is paired with every actor below.
        let mut groups_changed = std::collections::BTreeSet::new();
        for touched in world.take_journal() {
            match touched {
                Touched::Actor(actor) => self.look_at_actor(world, actor, &mut updates),
                Touched::Component(actor, class) => self.look_at_component(world, actor, &class, &mut updates),
                Touched::Property(actor, class, property) => self.look_at_property(world, actor, &class, &property),
                Touched::Relevancy(actor) => {
                    self.reconsider.insert(actor);
                }
                Touched::ClientGroups(client) => {
                    groups_changed.insert(client);
                }
            }
        }
        let mut out = Vec::new();
        for update in updates {
            self.send_actor_update(world, update, &mut out);
        }
        let groups_changed: Vec<ClientId> = groups_changed.into_iter().collect();
        self.reconsider_relevancy(world, &groups_changed, &mut out);
        let clients: Vec<ClientId> = self.clients.keys().copied().collect();
        for client in clients {
            self.mutations_for(client, &mut out);
        }
        out
    }

    fn look_at_actor(&mut self, world: &World, actor: ActorId, updates: &mut Vec<Update>) {
        let alive = world.actor(actor).ok().filter(|a| !a.ending);
        match (alive, self.known.contains_key(&actor)) {
            (Some(found), false) => {
                let mut components = Vec::new();
                for component in found.components.iter().filter(|c| c.replicated) {
                    components.push(self.adopt_component(world, actor, component));
                }
                let player = match found.player {
                    Some(PlayerOwner::Remote(client)) => Some(client),
                    _ => None,
                };
                self.spawned += 1;
                let known = KnownActor {
                    spawned: self.spawned,
                    class: found.class().to_string(),
                    receiver: found.receiver,
                    player,
                    components: components.clone(),
                };
                self.known.insert(actor, known);
                self.order.push(actor);
                self.index_actor(world, actor);
                updates.push(Update::Spawn {
                    actor,
                    class: found.class().to_string(),
                    receiver: found.receiver,
                    player,
                    components,
                });
            }
            (None, true) => {
                let known = self.known.remove(&actor).expect("checked above");
                self.actor_groups.remove(actor);
                self.destroyed_in_order += 1;
                if self.destroyed_in_order * 2 > self.order.len() {
                    let known_now = &self.known;
                    self.order.retain(|a| known_now.contains_key(a));
                    self.destroyed_in_order = 0;
                }
                for component in known.components {
                    self.drop_incarnation(component.incarnation);
                }
                updates.push(Update::Destroy { actor });
            }
            _ => {}
        }
    }

    fn look_at_component(&mut self, world: &World, actor: ActorId, class: &str, updates: &mut Vec<Update>) {
        let Some(known) = self.known.get(&actor) else { return };
        let now =
            world.actor(actor).ok().and_then(|a| a.components.iter().find(|c| &*c.class == class && c.replicated));
        let known_index = known.components.iter().position(|c| c.class == class);
        // Removed and added again since clients last heard is another component: the old one goes first.
        if let Some(index) = known_index {
            if now.is_none_or(|c| c.serial != known.components[index].incarnation) {
                let component = self.known.get_mut(&actor).expect("known").components.remove(index);
                self.drop_incarnation(component.incarnation);
                updates.push(Update::RemoveComponent { actor, component });
            }
        }
        let known = &self.known[&actor];
        if let Some(component) = now.filter(|c| !known.components.iter().any(|k| k.incarnation == c.serial)) {
            let component = self.adopt_component(world, actor, component);
            self.known.get_mut(&actor).expect("known").components.push(component.clone());
            updates.push(Update::AddComponent { actor, component });
        }
    }

    fn look_at_property(&mut self, world: &World, actor: ActorId, class: &str, property: &str) {
        let Some(known) = self.known.get(&actor) else { return };
        let Some(component) = known.components.iter().find(|c| c.class == class) else { return };
        // A value of a component that was since replaced travels with the new component, when it is adopted.
        let current =
            world.actor(actor).ok().and_then(|a| a.components.iter().find(|c| &*c.class == class && c.replicated));
        if current.is_none_or(|c| c.serial != component.incarnation) {
            return;
        }
        let value = world.property(actor, class, property).ok().flatten().cloned();
        let key = PropKey { incarnation: component.incarnation, property: self.property_numbers.number(property) };
        self.set_value(key, value);
    }

    /// A component clients are to receive (its serial is its incarnation), with its replicated values queued.
    fn adopt_component(&mut self, world: &World, actor: ActorId, component: &Component) -> ComponentRef {
        let incarnation = component.serial;
        self.incarnation_actors.insert(incarnation, actor);
        for (property, value) in &component.properties {
            if world.replicated_classes().replicates(&component.class, property) {
                let key = PropKey { incarnation, property: self.property_numbers.number(property) };
                self.set_value(key, Some(value.clone()));
            }
        }
        ComponentRef { class: component.class.to_string(), incarnation }
    }

    fn set_value(&mut self, key: PropKey, value: Option<Value>) {
        match self.props.get_mut(&key) {
            Some(prop) if Value::identical(prop.value.as_ref(), value.as_ref()) => return,
            Some(prop) => {
                self.next_version += 1;
                prop.value = value;
                prop.version = self.next_version;
            }
            None if value.is_none() => return,
            None => {
                self.next_version += 1;
                self.props.insert(key, Prop { value, version: self.next_version });
                self.properties_of.entry(key.incarnation).or_default().push(key.property);
            }
        }
        let (version, frame) = (self.next_version, self.frame);
        // Only the clients that have the actor: one it is spawned on later is queued all its values then.
        let actor = self.incarnation_actors.get(&key.incarnation);
        let player = actor.and_then(|actor| self.known.get(actor)).and_then(|known| known.player);
        for client in actor.and_then(|actor| self.holders.get(actor)).into_iter().flatten() {
            let Some(view) = self.clients.get_mut(client) else { continue };
            let own = player == Some(*client);
            view.pending
                .entry(key)
                .and_modify(|pending| (pending.version, pending.own) = (version, own))
                .or_insert(Pending::new(version, frame, own));
        }
    }

    /// A component clients will hear is gone: its values are neither kept nor sent any more.
    fn drop_incarnation(&mut self, incarnation: u64) {
        self.incarnation_actors.remove(&incarnation);
        let properties = self.properties_of.remove(&incarnation).unwrap_or_default();
        for property in &properties {
            self.props.remove(&PropKey { incarnation, property: *property });
        }
        for view in self.clients.values_mut() {
            view.forget_incarnation(incarnation, &properties);
        }
    }

    /// Sends an update about an actor to the clients that have it: a spawn to those it is relevant to.
    fn send_actor_update(&mut self, world: &World, update: Update, out: &mut Vec<Outgoing>) {
        match &update {
            Update::Spawn { actor, .. } => {
                let clients: Vec<ClientId> = self.clients.keys().copied().collect();
                for client in clients {
                    if world.is_relevant_to(*actor, client) {
                        self.spawn_on(client, *actor, out);
                    }
                }
            }
            Update::Destroy { actor } | Update::AddComponent { actor, .. } | Update::RemoveComponent { actor, .. } => {
                let destroyed = matches!(update, Update::Destroy { .. });
                let holders = if destroyed { self.holders.remove(actor) } else { self.holders.get(actor).cloned() };
                // In the clients' order, as every other update goes out.
                let mut holders: Vec<ClientId> = holders.into_iter().flatten().collect();
                holders.sort_unstable();
                for client in holders {
                    let Some(view) = self.clients.get_mut(&client) else { continue };
                    if destroyed {
                        view.actors.remove(actor);
                    }
                    Self::send_update(view, client, update.clone(), out);
                }
            }
            _ => self.broadcast(update, out),
        }
    }

    /// Spawns on each client the actors that became relevant to it, and destroys there those that stopped
    /// being: the actors whose relevancy or owner changed, and the clients whose groups changed. Each is weighed
    /// against those it may have changed for: the clients (actors) that have it now, and those it shares a
    /// group with (an actor relevant to every client, against every client).
    fn reconsider_relevancy(&mut self, world: &World, groups_changed: &[ClientId], out: &mut Vec<Outgoing>) {
        let mut actors: Vec<ActorId> = std::mem::take(&mut self.reconsider).into_iter().collect();
        actors.retain(|actor| self.known.contains_key(actor));
        let mut pairs: Vec<(ClientId, ActorId)> = Vec::new();
        for actor in actors {
            self.index_actor(world, actor);
            let mut clients: FxHashSet<ClientId> = self.holders.get(&actor).cloned().unwrap_or_default();
            // Its owner, as replication knows it and as the world says now.
            clients.extend(self.known[&actor].player);
            if let Ok(Some(PlayerOwner::Remote(owner))) = world.actor(actor).map(|found| found.player) {
                clients.insert(owner);
            }
            match world.actor(actor).map(|found| &found.relevancy) {
                Ok(Relevancy::Always) => clients.extend(self.clients.keys().copied()),
                Ok(Relevancy::Groups(groups)) => clients.extend(self.client_groups.sharing(groups)),
                Ok(Relevancy::OwnerOnly) | Err(_) => {}
            }
            pairs.extend(clients.into_iter().filter(|c| self.clients.contains_key(c)).map(|client| (client, actor)));
        }
        for &client in groups_changed {
            let Some(view) = self.clients.get(&client) else { continue };
            let groups = world.client_groups(client).cloned().unwrap_or_default();
            self.client_groups.set(client, &groups);
            let mut candidates = self.actor_groups.sharing(&groups);
            candidates.extend(view.actors.iter().copied());
            pairs.extend(candidates.into_iter().filter(|a| self.known.contains_key(a)).map(|actor| (client, actor)));
        }
        // In spawn order, so a client hears of actors in the order they came.
        pairs.sort_unstable_by_key(|(client, actor)| (*client, self.known[actor].spawned));
        pairs.dedup();
        for (client, actor) in pairs {
            let has = self.clients[&client].actors.contains(&actor);
            match (world.is_relevant_to(actor, client), has) {
                (true, false) => self.spawn_on(client, actor, out),
                (false, true) => self.destroy_on(client, actor, out),
                _ => {}
            }
        }
    }

    /// Files a known actor under the groups its relevancy names (under none when it is not relevant by groups).
    fn index_actor(&mut self, world: &World, actor: ActorId) {
        match world.actor(actor).map(|found| &found.relevancy) {
            Ok(Relevancy::Groups(groups)) => self.actor_groups.set(actor, groups),
            _ => self.actor_groups.remove(actor),
        }
    }

    fn broadcast(&mut self, update: Update, out: &mut Vec<Outgoing>) {
        for (client, view) in self.clients.iter_mut() {
            Self::send_update(view, *client, update.clone(), out);
        }
    }

    fn send_update(view: &mut ClientView, client: ClientId, update: Update, out: &mut Vec<Outgoing>) {
        view.seq += 1;
        match &update {
            Update::Spawn { components, .. } => {
                for component in components {
                    view.introduced.insert(component.incarnation, view.seq);
                }
            }
            Update::AddComponent { component, .. } => {
                view.introduced.insert(component.incarnation, view.seq);
            }
            _ => {}
        }
        out.push(Outgoing { client, reliable: true, message: ServerMessage::Update { seq: view.seq, update } });
    }

    /// The mutation packets due to one client: every unacknowledged value not sent in the last
    /// [`RESEND_AFTER_FRAMES`] frames, or changed since it was sent, packed into packets of at most
    /// [`MAX_PACKET`] bytes. A property the client has not heard named is named first, on the reliable channel.
    fn mutations_for(&mut self, client: ClientId, out: &mut Vec<Outgoing>) {
        let frame = self.frame;
        let view = self.clients.get_mut(&client).expect("listed client");
        let resend_after = view.resend_after();
        let mut due = Vec::new();
        let mut gone = Vec::new();
        for (key, pending) in view.pending.iter_mut() {
            let Some(since) = pending.due_since(frame, resend_after) else { continue };
            let Some(prop) = self.props.get(key) else {
                gone.push(*key);
                continue;
            };
            if pending.after == 0 {
                let Some(after) = view.introduced.get(&key.incarnation) else {
                    gone.push(*key);
                    continue;
                };
                pending.after = *after;
            }
            due.push(Due {
                key: *key,
                version: pending.version,
                after: pending.after,
                since,
                own: pending.own,
                value: prop.value.clone(),
            });
        }
        for key in gone {
            view.pending.remove(&key);
        }
        if let Some(budget) = self.client_budget {
            due = within_budget(due, budget, frame);
        }
        let view = self.clients.get_mut(&client).expect("listed client");
        for due in &due {
            if let Some(pending) = view.pending.get_mut(&due.key) {
                pending.sent = Some((due.version, frame));
            }
        }
        // In key order: the values of one component together, and the numbers in their headers near each other.
        due.sort_unstable_by_key(|due| due.key);
        // The properties not named to this client yet are named in one update, which their values wait for.
        let mut names = Vec::new();
        for Due { key, .. } in &due {
            let number = key.property as usize;
            if view.named.len() <= number {
                view.named.resize(number + 1, 0);
            }
            if view.named[number] == 0 {
                view.named[number] = u64::MAX;
                names.push((key.property, self.property_numbers.names[number].clone()));
            }
        }
        if !names.is_empty() {
            Self::send_update(view, client, Update::PropertyNames { names }, out);
            for named in view.named.iter_mut().filter(|seq| **seq == u64::MAX) {
                *named = view.seq;
            }
        }
        let mut writer = PacketWriter::new();
        let mut carried: Vec<(PropKey, u64)> = Vec::new();
        for Due { key, version, after: introduced, value, .. } in due {
            let mutation = Mutation {
                incarnation: key.incarnation,
                after: introduced.max(view.named[key.property as usize]),
                property: key.property,
                value,
            };
            if !writer.is_empty() && writer.size_with(&mutation) + PACKET_HEADER > MAX_PACKET {
                Self::send_packet(view, frame, client, &mut writer, std::mem::take(&mut carried), out);
            }
            writer.push(mutation);
            carried.push((key, version));
        }
        if !writer.is_empty() {
            Self::send_packet(view, frame, client, &mut writer, carried, out);
        }
    }

    fn send_packet(
        view: &mut ClientView,
        frame: u64,
        client: ClientId,
        writer: &mut PacketWriter,
        carried: Vec<(PropKey, u64)>,
        out: &mut Vec<Outgoing>,
    ) {
        view.next_packet += 1;
        view.values_sent += carried.len() as u64;
        let packet = view.next_packet;
        view.in_flight.insert(packet, (frame, carried));
        if view.in_flight.len() > IN_FLIGHT_PACKETS {
            view.in_flight.pop_first();
        }
        let message = ServerMessage::Mutations { packet, values: writer.take() };
        out.push(Outgoing { client, reliable: false, message });
    }
}

/// `client` no longer has `actor` (see [`ServerReplication::holders`]).
fn let_go(holders: &mut FxHashMap<ActorId, FxHashSet<ClientId>>, actor: ActorId, client: ClientId) {
    if let Some(clients) = holders.get_mut(&actor) {
        clients.remove(&client);
        if clients.is_empty() {
            holders.remove(&actor);
        }
    }
}

/// The values due to a client that its budget of bytes this frame carries: those that have waited longest,
/// a wait counting [`OWN_VALUE_WEIGHT`] times more for the values of the client's own player's actors (so they
/// go first, and no value waits forever behind newer ones). At least a packet's worth goes, whatever the
/// budget, so every client makes progress.
fn within_budget(due: Vec<Due>, budget: usize, frame: u64) -> Vec<Due> {
    let budget = budget.max(MAX_PACKET);
    let sizes: Vec<usize> = due.iter().map(|due| value_size(due.key.property, due.value.as_ref()) + 3).collect();
    // Most frames everything fits: nothing to weigh.
    if sizes.iter().sum::<usize>() <= budget {
        return due;
    }
    let weights: Vec<u64> = due
        .iter()
        .map(|due| {
            let waited = frame.saturating_sub(due.since) + 1;
            waited.saturating_mul(if due.own { OWN_VALUE_WEIGHT } else { 1 })
        })
        .collect();
    // The values go heaviest first, those of one weight in key order, as far as the budget reaches. Rather
    // than sorting them all (a backlog can be thousands), the weights that fit whole are found from the bytes
    // of each weight (few distinct ones), and only the values of the weight the budget runs out in are
    // sorted.
    let mut bytes_by_weight: BTreeMap<std::cmp::Reverse<u64>, usize> = BTreeMap::new();
    for (weight, size) in weights.iter().zip(&sizes) {
        *bytes_by_weight.entry(std::cmp::Reverse(*weight)).or_default() += size;
    }
    let mut spent = 0;
    let mut partly = 0;
    for (std::cmp::Reverse(weight), bytes) in bytes_by_weight {
        if spent + bytes > budget {
            partly = weight;
            break;
        }
        spent += bytes;
    }
    let mut chosen = Vec::new();
    let mut last = Vec::new();
    for ((due, weight), size) in due.into_iter().zip(weights).zip(sizes) {
        match weight.cmp(&partly) {
            std::cmp::Ordering::Greater => chosen.push(due),
            std::cmp::Ordering::Equal => last.push((due, size)),
            std::cmp::Ordering::Less => {}
        }
    }
    last.sort_unstable_by_key(|(due, _)| due.key);
    for (due, size) in last {
        // The value's own bytes and, at most, a header of its own.
        spent += size;
        if spent > budget && !chosen.is_empty() {
            break;
        }
        chosen.push(due);
    }
    chosen
}

/// A value due to a client this frame.
#[derive(Debug, Clone)]
struct Due {
    key: PropKey,
    version: u64,
    /// The update the client must have applied first: the one that introduced the component.
    after: u64,
    /// The frame it has been due since.
    since: u64,
    /// A value of the client's own player's actor (see [`Pending::own`]).
    own: bool,
    /// Its newest value.
    value: Option<Value>,
}

/// The bytes of a mutation message around its values at most: the message's tag and the packet's number.
const PACKET_HEADER: usize = 1 + 10;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What [`within_budget`] chooses, the plain way: every value sorted heaviest first (a weight's values in key
    /// order), taken while the budget lasts.
    fn sorted_choice(due: &[Due], budget: usize, frame: u64) -> Vec<PropKey> {
        let budget = budget.max(MAX_PACKET);
        let weight = |due: &Due| (frame - due.since + 1) * if due.own { OWN_VALUE_WEIGHT } else { 1 };
        let size = |due: &Due| value_size(due.key.property, due.value.as_ref()) + 3;
        if due.iter().map(size).sum::<usize>() <= budget {
            return due.iter().map(|due| due.key).collect();
        }
        let mut sorted: Vec<&Due> = due.iter().collect();
        sorted.sort_by(|a, b| weight(b).cmp(&weight(a)).then(a.key.cmp(&b.key)));
        let (mut spent, mut chosen) = (0, Vec::new());
        for due in sorted {
            spent += size(due);
            if spent > budget && !chosen.is_empty() {
                break;
            }
            chosen.push(due.key);
        }
        chosen
    }

    proptest! {
        #[test]
        fn the_budget_takes_the_values_a_full_sort_would(
            values in proptest::collection::vec((0u64..40, 0u32..4, 0u64..20, any::<bool>(), 0usize..30), 0..400),
            budget in 0usize..6_000,
        ) {
            let frame = 20;
            let mut seen = std::collections::BTreeSet::new();
            let due: Vec<Due> = values
                .into_iter()
                .filter(|(incarnation, property, ..)| seen.insert((*incarnation, *property)))
                .map(|(incarnation, property, since, own, text)| Due {
                    key: PropKey { incarnation, property },
                    version: 1,
                    after: 1,
                    since,
                    own,
                    value: Some(if text == 0 { Value::Float(1.5) } else { Value::Text("x".repeat(text * 10)) }),
                })
                .collect();
            let mut chosen: Vec<PropKey> = within_budget(due.clone(), budget, frame).iter().map(|d| d.key).collect();
            let mut expected = sorted_choice(&due, budget, frame);
            chosen.sort_unstable();
            expected.sort_unstable();
            prop_assert_eq!(chosen, expected);
        }
    }
}
