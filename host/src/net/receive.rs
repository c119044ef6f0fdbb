//! The client's side of replication: updates applied in order, property values applied when their component is
//! there, and the changes announced (rep-notify).
//!
//! Values travel unreliably and may overtake the update that brings their component (or names their property):
//! such a value waits in a buffer until the client has applied that update (each value names it), then lands —
//! or is dropped, if its component has gone since. This is seed 002's buffer of attribute values waiting for
//! their ability system component, for every replicated component; it is capped per component incarnation
//! (values carry no actor: the update introducing the incarnation says whose it is) and emptied with its actor.
//!
//! A value older than one already applied is dropped, so each change is applied at most once and in order (a
//! value from a packet numbered before the one its property's current value came from is older: the server
//! sends only each property's newest value); the server re-sends until acknowledged, so the last value always
//! arrives.

use std::collections::{BTreeMap, HashMap};

use super::protocol::{ComponentRef, Mutation, Update, ValuePacket};
use crate::world::{ActorId, ClientId, NetRole, PlayerOwner, RepNotify, World, WorldError};

/// Values kept waiting for their component at most, in all and per actor; past it, a packet's values are
/// dropped unacknowledged (and counted), so the server sends them again later: a flood never grows the buffer.
pub const MAX_BUFFERED: usize = 65_536;
/// Values kept waiting for one component incarnation at most; past it, as past [`MAX_BUFFERED`], a packet's
/// values are dropped unacknowledged.
pub const MAX_BUFFERED_PER_COMPONENT: usize = 1_024;

/// The longest property name a server may give, in bytes (as long as a plugin may pass): a longer one is a
/// broken server, so the table of names stays small.
pub const MAX_PROPERTY_NAME_BYTES: usize = 256;

/// The highest property number a server may name, plus one: past it is a broken server (so a client's table of
/// names stays small).
pub const MAX_PROPERTY_NAMES: usize = 1 << 16;

/// An update the game around the world must act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEvent {
    /// Load this experience: the file of this name, or the content the server sent.
    Experience {
        /// The experience's file name.
        name: String,
        /// What it is made of, to fetch what the client lacks; `None`: the client's own copy is loaded.
        content: Option<super::protocol::ExperienceContent>,
    },
    /// A plugin has a new version on the server.
    Package(super::protocol::PackageOffer),
    /// The server ended play.
    EndPlay(String),
}

/// A server broke the protocol: the client disconnects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplicationError {
    /// An update arrived out of its number's order (the reliable channel promises order, so the server is broken).
    #[error("update {got} arrived where {expected} was due")]
    OutOfOrder {
        /// The number of the update due: one past the last applied.
        expected: u64,
        /// The number of the update that came.
        got: u64,
    },
    /// A property number was named twice, is past [`MAX_PROPERTY_NAMES`], or its name is longer than
    /// [`MAX_PROPERTY_NAME_BYTES`].
    #[error(
        "update {seq}: property number {property} named twice, past {MAX_PROPERTY_NAMES}, or with a name over \
         {MAX_PROPERTY_NAME_BYTES} bytes"
    )]
    PropertyNumber {
        /// The update's number.
        seq: u64,
        /// The number the update named.
        property: u32,
    },
    /// An update could not be applied to the client's world (an actor spawned twice, say, or one unknown).
    #[error("update {seq}: {cause}")]
    Rejected {
        /// The update's number.
        seq: u64,
        /// Why the world refused it.
        cause: WorldError,
    },
}

/// How many buffered values were applied and dropped, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferStats {
    /// Values that arrived before the update bringing their component, and waited for it.
    pub buffered: u64,
    /// Waiting values applied once their component's update had been applied.
    pub applied_late: u64,
    /// Values dropped because their component or actor had gone by the time they could land.
    pub dropped_stale: u64,
    /// Values dropped unacknowledged because the buffer was full (the server sends them again).
    pub dropped_over_cap: u64,
}

/// A component incarnation the client has: whose it is, and the update that brought it.
#[derive(Debug)]
struct LiveComponent {
    actor: ActorId,
    class: String,
    /// The update that brought this copy: a value the server sent for an earlier copy of the same incarnation
    /// (before the actor stopped being relevant and came back) names an earlier one, and is older than the copy.
    since: u64,
}

/// A value waiting for the update it needs.
#[derive(Debug)]
struct Waiting {
    arrival: u64,
    packet: u64,
    mutation: Mutation,
}

/// The client's replication state for one world.
#[derive(Debug)]
pub struct ClientReplication {
    me: ClientId,
    applied: u64,
    /// Live component incarnations: which actor and class each is.
    live: HashMap<u64, LiveComponent>,
    /// The incarnations on each actor.
    by_actor: HashMap<ActorId, Vec<u64>>,
    /// The names of the property numbers the server named, by number.
    property_names: Vec<Option<String>>,
    /// The packet each (incarnation, property number)'s value landed from: a value from an earlier packet is
    /// older (the server sends each property's newest value), so it is dropped.
    landed_from: BTreeMap<(u64, u32), u64>,
    /// Values waiting for their update: the newest of each (incarnation, property number), with when it arrived
    /// and the packet it came in.
    waiting: HashMap<(u64, u32), Waiting>,
    arrivals: u64,
    waiting_per_component: HashMap<u64, usize>,
    acknowledgements: Acknowledger,
    stats: BufferStats,
}

/// The packets a client has to acknowledge, and when to name each again (see [`Acknowledger::take`]).
#[derive(Debug, Default)]
pub(super) struct Acknowledger {
    new: Vec<u64>,
    /// Packets acknowledged lately, each with how many more acknowledgements name it again: acknowledgements
    /// travel unreliably (see [`Acknowledgements`]), so each is repeated in the next few.
    repeated: std::collections::VecDeque<(u64, u8)>,
}

impl Acknowledger {
    /// A packet arrived: the next acknowledgement names it.
    pub(super) fn arrived(&mut self, packet: u64) {
        self.new.push(packet);
    }

    /// Packets to acknowledge now: those that arrived since the last call, and those of the last few calls
    /// again (each [`ACK_REPEATS`] times in all), unreliably when they fit one datagram.
    pub(super) fn take(&mut self) -> Acknowledgements {
        let new = std::mem::take(&mut self.new);
        if new.len() > MAX_UNRELIABLE_ACK {
            // Catching up (a slow first load): named once, reliably.
            self.repeated.clear();
            return Acknowledgements { packets: new, unreliable: false };
        }
        let mut packets: Vec<u64> = self.repeated.iter().map(|(packet, _)| *packet).collect();
        for entry in self.repeated.iter_mut() {
            entry.1 -= 1;
        }
        self.repeated.retain(|(_, left)| *left > 0);
        packets.extend_from_slice(&new);
        if ACK_REPEATS > 1 {
            self.repeated.extend(new.into_iter().map(|packet| (packet, ACK_REPEATS - 1)));
        }
        while self.repeated.len() > MAX_UNRELIABLE_ACK / 2 {
            self.repeated.pop_front();
        }
        let unreliable = packets.len() <= MAX_UNRELIABLE_ACK;
        Acknowledgements { packets, unreliable }
    }
}

/// What a client acknowledges after a frame (see [`ClientReplication::take_acknowledgements`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acknowledgements {
    /// The packets to name.
    pub packets: Vec<u64>,
    /// Whether they may travel unreliably: few enough for one datagram, and each named again in the next
    /// acknowledgements, so a lost one costs nothing. A long list (a client catching up) goes reliably.
    pub unreliable: bool,
}

impl Acknowledgements {
    /// Sends them to the server: in one datagram when they may travel unreliably; otherwise (a client catching
    /// up after a slow frame, its first load) reliably, in messages of at most what the server remembers.
    pub fn send(self, transport: &mut dyn super::transport::ClientTransport) {
        use super::protocol::{encode, ClientMessage};
        use super::transport::Channel;
        if self.unreliable && !self.packets.is_empty() {
            transport.send(Channel::Unreliable, encode(&ClientMessage::Ack { packets: self.packets }));
        } else {
            for packets in self.packets.chunks(super::IN_FLIGHT_PACKETS) {
                transport.send(Channel::Reliable, encode(&ClientMessage::Ack { packets: packets.to_vec() }));
            }
        }
    }
}

/// How many acknowledgements name each packet: a packet's acknowledgement is lost only if all are.
pub const ACK_REPEATS: u8 = 3;

/// The most packets an unreliable acknowledgement names (a few hundred bytes).
pub const MAX_UNRELIABLE_ACK: usize = 128;

impl ClientReplication {
    /// Replication for the client the server numbered `me`.
    pub fn new(me: ClientId) -> Self {
        ClientReplication {
            me,
            applied: 0,
            live: HashMap::new(),
            by_actor: HashMap::new(),
            property_names: Vec::new(),
            landed_from: BTreeMap::new(),
            waiting: HashMap::new(),
            arrivals: 0,
            waiting_per_component: HashMap::new(),
            acknowledgements: Acknowledger::default(),
            stats: BufferStats::default(),
        }
    }

    /// The number the server gave this client.
    pub fn me(&self) -> ClientId {
        self.me
    }

    /// Applies the next update; values that were waiting for it land (their changes pushed to `notes`).
    pub fn apply_update(
        &mut self,
        world: &mut World,
        seq: u64,
        update: Update,
        notes: &mut Vec<RepNotify>,
    ) -> Result<Option<SessionEvent>, ReplicationError> {
        if seq != self.applied + 1 {
            return Err(ReplicationError::OutOfOrder { expected: self.applied + 1, got: seq });
        }
        let event = match update {
            Update::PropertyNames { names } => {
                for (property, name) in names {
                    let number = property as usize;
                    if number >= MAX_PROPERTY_NAMES
                        || name.len() > MAX_PROPERTY_NAME_BYTES
                        || self.property_names.get(number).is_some_and(Option::is_some)
                    {
                        return Err(ReplicationError::PropertyNumber { seq, property });
                    }
                    if self.property_names.len() <= number {
                        self.property_names.resize(number + 1, None);
                    }
                    self.property_names[number] = Some(name);
                }
                None
            }
            update => self.apply(world, seq, update).map_err(|cause| ReplicationError::Rejected { seq, cause })?,
        };
        self.applied = seq;
        self.land_waiting(world, notes);
        Ok(event)
    }

    fn apply(&mut self, world: &mut World, seq: u64, update: Update) -> Result<Option<SessionEvent>, WorldError> {
        match update {
            Update::Experience { name, content } => return Ok(Some(SessionEvent::Experience { name, content })),
            Update::EndPlay { reason } => return Ok(Some(SessionEvent::EndPlay(reason))),
            Update::Package { offer } => return Ok(Some(SessionEvent::Package(offer))),
            Update::PropertyNames { .. } => unreachable!("named in apply_update"),
            Update::Spawn { actor, class, receiver, player, components } => {
                let role = if player == Some(self.me) { NetRole::AutonomousProxy } else { NetRole::SimulatedProxy };
                // Destroyed here when it stopped being relevant, and relevant again before its copy was gone.
                world.finish_ending(actor);
                world.spawn_replica(actor, &class, role, player.map(PlayerOwner::Remote))?;
                for component in components {
                    self.attach(world, seq, actor, component)?;
                }
                if receiver {
                    world.add_receiver(actor)?;
                    world.begin_play(actor)?;
                }
            }
            Update::Destroy { actor } => {
                let incarnations = self.by_actor.remove(&actor).unwrap_or_default();
                for incarnation in &incarnations {
                    self.forget(*incarnation);
                }
                // Nothing waiting for this copy outlives it: values waiting for an update up to this one (which
                // only a broken server sends: a live copy's values land at once). Those waiting for a later
                // update are for a copy spawned again (relevant again), and keep waiting for it.
                if incarnations.iter().any(|i| self.waiting_per_component.contains_key(i)) {
                    let before = self.waiting.len();
                    self.waiting
                        .retain(|(incarnation, _), w| !incarnations.contains(incarnation) || w.mutation.after > seq);
                    self.stats.dropped_stale += (before - self.waiting.len()) as u64;
                    for incarnation in &incarnations {
                        let left = self.waiting.keys().filter(|(i, _)| i == incarnation).count();
                        if left == 0 {
                            self.waiting_per_component.remove(incarnation);
                        } else {
                            self.waiting_per_component.insert(*incarnation, left);
                        }
                    }
                }
                world.destroy(actor)?;
            }
            Update::AddComponent { actor, component } => self.attach(world, seq, actor, component)?,
            Update::RemoveComponent { actor, component } => {
                self.forget(component.incarnation);
                if let Some(list) = self.by_actor.get_mut(&actor) {
                    list.retain(|i| *i != component.incarnation);
                }
                world.detach_replicated_component(actor, &component.class)?;
            }
        }
        Ok(None)
    }

    fn attach(
        &mut self,
        world: &mut World,
        seq: u64,
        actor: ActorId,
        component: ComponentRef,
    ) -> Result<(), WorldError> {
        world.attach_replicated_component(actor, &component.class)?;
        self.by_actor.entry(actor).or_default().push(component.incarnation);
        self.live.insert(component.incarnation, LiveComponent { actor, class: component.class, since: seq });
        Ok(())
    }

    fn forget(&mut self, incarnation: u64) {
        self.live.remove(&incarnation);
        let keys: Vec<(u64, u32)> =
            self.landed_from.range((incarnation, 0)..(incarnation.saturating_add(1), 0)).map(|(key, _)| *key).collect();
        for key in keys {
            self.landed_from.remove(&key);
        }
    }

    /// Applies a packet of values: each lands now, waits for the update that brings its component, or is
    /// dropped as stale. The packet is acknowledged unless the buffer was too full to keep its waiting values.
    pub fn apply_mutations(&mut self, world: &mut World, packet: u64, values: ValuePacket, notes: &mut Vec<RepNotify>) {
        let mut kept_all = true;
        for mutation in values.into_mutations() {
            if mutation.after > self.applied {
                // Only the newest value of each property waits (the server re-sends what is unacknowledged).
                let key = (mutation.incarnation, mutation.property);
                if let Some(waiting) = self.waiting.get_mut(&key) {
                    if waiting.packet < packet {
                        waiting.packet = packet;
                        waiting.mutation = mutation;
                    }
                    continue;
                }
                let for_component = self.waiting_per_component.get(&mutation.incarnation).copied().unwrap_or(0);
                if self.waiting.len() >= MAX_BUFFERED || for_component >= MAX_BUFFERED_PER_COMPONENT {
                    self.stats.dropped_over_cap += 1;
                    kept_all = false;
                } else {
                    *self.waiting_per_component.entry(mutation.incarnation).or_default() += 1;
                    self.stats.buffered += 1;
                    self.arrivals += 1;
                    self.waiting.insert(key, Waiting { arrival: self.arrivals, packet, mutation });
                }
                continue;
            }
            self.land(world, packet, mutation, notes);
        }
        if kept_all {
            self.acknowledgements.arrived(packet);
        } else {
            tracing::warn!(
                client = %self.me,
                packet,
                dropped = self.stats.dropped_over_cap,
                "values waiting for their components are over the buffer's cap: dropped unacknowledged (sent again)"
            );
        }
    }

    /// Lands the waiting values whose update has been applied, in the order they arrived.
    fn land_waiting(&mut self, world: &mut World, notes: &mut Vec<RepNotify>) {
        if self.waiting.is_empty() {
            return;
        }
        let applied = self.applied;
        let ready_keys: Vec<(u64, u32)> =
            self.waiting.iter().filter(|(_, w)| w.mutation.after <= applied).map(|(key, _)| *key).collect();
        let mut ready: Vec<Waiting> = ready_keys.iter().filter_map(|key| self.waiting.remove(key)).collect();
        // In the order they arrived.
        ready.sort_by_key(|waiting| waiting.arrival);
        for Waiting { mutation, .. } in &ready {
            if let Some(count) = self.waiting_per_component.get_mut(&mutation.incarnation) {
                *count -= 1;
                if *count == 0 {
                    self.waiting_per_component.remove(&mutation.incarnation);
                }
            }
        }
        for Waiting { packet, mutation, .. } in ready {
            self.stats.applied_late += 1;
            self.land(world, packet, mutation, notes);
        }
    }

    fn land(&mut self, world: &mut World, packet: u64, mutation: Mutation, notes: &mut Vec<RepNotify>) {
        // A value of a component gone since, of an earlier copy of it, or of a property never named (a broken
        // server), lands nowhere.
        let (Some(LiveComponent { actor, class: component, .. }), Some(property)) = (
            self.live.get(&mutation.incarnation).filter(|live| mutation.after >= live.since),
            self.property_names.get(mutation.property as usize).and_then(Option::as_ref),
        ) else {
            self.stats.dropped_stale += 1;
            return;
        };
        let key = (mutation.incarnation, mutation.property);
        if self.landed_from.get(&key).is_some_and(|landed| *landed >= packet) {
            return;
        }
        self.landed_from.insert(key, packet);
        let value = mutation.value;
        let Ok(old) = world.apply_replicated_property(*actor, component, property, value.clone()) else { return };
        if let Some(new) = value {
            if !old.as_ref().is_some_and(|old| old.is_identical(&new)) {
                notes.push(RepNotify {
                    actor: *actor,
                    component: component.as_str().into(),
                    property: property.as_str().into(),
                    old,
                    new,
                });
            }
        }
    }

    /// Packets to acknowledge after a frame: those that arrived since the last call, and those of the last few
    /// calls again (each [`ACK_REPEATS`] times in all), unreliably when they fit one datagram: the server hears of
    /// a packet as soon as any of them arrives, with no stream's retransmission in the way, and so learns both
    /// its client's round trip and which packets were lost (those its acknowledgements skip) within about one.
    pub fn take_acknowledgements(&mut self) -> Acknowledgements {
        self.acknowledgements.take()
    }

    /// Values waiting for their component.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// How values that overtook their components fared so far.
    pub fn stats(&self) -> BufferStats {
        self.stats
    }
}
