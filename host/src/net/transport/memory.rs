//! An in-memory network for tests: frames take simulated time to arrive, and the unreliable channel loses,
//! duplicates and reorders them — all decided by a seeded random generator, so a failing seed replays exactly.
//! Time moves only when the test says ([`MemoryNetwork::advance`]).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Channel, ClientEvent, ClientTransport, ServerEvent, ServerTransport};
use crate::world::ClientId;

/// How the simulated network behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    /// The least time a frame takes.
    pub latency: Duration,
    /// Up to this much more, drawn per frame (reliable frames still arrive in order).
    pub jitter: Duration,
    /// The share of datagrams lost: an unreliable frame is gone; a reliable one is sent again (as QUIC does, once
    /// it finds it lost, about a round trip and a half later), and the frames after it on its stream wait for it.
    pub loss: f64,
    /// The share of unreliable frames delivered twice.
    pub duplication: f64,
}

impl Conditions {
    /// Instant, lossless delivery.
    pub const PERFECT: Conditions =
        Conditions { latency: Duration::ZERO, jitter: Duration::ZERO, loss: 0.0, duplication: 0.0 };
}

/// What travels.
enum Delivery {
    Frame(Vec<u8>),
    /// The server closed the connection: it arrives after every reliable frame sent before it, as a QUIC
    /// connection's close follows its flushed streams.
    Close(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Endpoint {
    Server,
    Client(ClientId),
}

struct State {
    now: Duration,
    rng: ChaCha8Rng,
    conditions: Conditions,
    next_client: u32,
    /// Frames (and closes) on their way, by arrival time (then by sending order).
    in_flight: BTreeMap<(Duration, u64), (Endpoint, Endpoint, Delivery)>,
    sent: u64,
    /// The arrival time of the last reliable frame on each (from, to) link, which the next may not precede.
    last_reliable: BTreeMap<(Endpoint, Endpoint), Duration>,
    server_events: Vec<ServerEvent>,
    client_events: BTreeMap<ClientId, Vec<ClientEvent>>,
    closed: HashSet<ClientId>,
}

impl State {
    fn send(&mut self, from: Endpoint, to: Endpoint, channel: Channel, frame: Vec<u8>) {
        let copies = match channel {
            Channel::Reliable | Channel::Bulk => 1,
            Channel::Unreliable if self.rng.random_bool(self.conditions.loss) => 0,
            Channel::Unreliable if self.rng.random_bool(self.conditions.duplication) => 2,
            Channel::Unreliable => 1,
        };
        for _ in 0..copies {
            let jitter = self.conditions.jitter.mul_f64(self.rng.random::<f64>());
            let mut at = self.now + self.conditions.latency + jitter;
            if channel != Channel::Unreliable {
                if self.conditions.loss > 0.0 && self.rng.random_bool(self.conditions.loss) {
                    // Lost, found lost after about a round trip and a half, and sent again.
                    at += self.conditions.latency * 3 + self.conditions.jitter * 2;
                }
                let last = self.last_reliable.entry((from, to)).or_default();
                at = at.max(*last);
                *last = at;
            }
            self.sent += 1;
            self.in_flight.insert((at, self.sent), (from, to, Delivery::Frame(frame.clone())));
        }
    }

    /// Closes a client's connection from the server's side: no more frames from it are accepted, and it hears
    /// of the close after the reliable frames already sent to it.
    fn close(&mut self, client: ClientId, reason: &str) {
        if !self.closed.insert(client) {
            return;
        }
        let link = (Endpoint::Server, Endpoint::Client(client));
        let at = (self.now + self.conditions.latency).max(self.last_reliable.get(&link).copied().unwrap_or_default());
        self.sent += 1;
        self.in_flight.insert((at, self.sent), (link.0, link.1, Delivery::Close(reason.to_string())));
        self.server_events.push(ServerEvent::Disconnected(client, reason.to_string()));
    }

    /// Moves the frames that have arrived into their receivers' events.
    fn deliver(&mut self) {
        let now = self.now;
        let due: Vec<(Duration, u64)> = self.in_flight.range(..(now, u64::MAX)).map(|(key, _)| *key).collect();
        for key in due {
            let (from, to, delivery) = self.in_flight.remove(&key).expect("listed above");
            match (from, to, delivery) {
                (Endpoint::Client(client), Endpoint::Server, Delivery::Frame(frame))
                    if !self.closed.contains(&client) =>
                {
                    self.server_events.push(ServerEvent::Received(client, frame))
                }
                (Endpoint::Server, Endpoint::Client(client), Delivery::Frame(frame)) => {
                    self.client_events.entry(client).or_default().push(ClientEvent::Received(frame))
                }
                (Endpoint::Server, Endpoint::Client(client), Delivery::Close(reason)) => {
                    self.client_events.entry(client).or_default().push(ClientEvent::Disconnected(reason))
                }
                _ => {}
            }
        }
    }
}

/// A simulated network: one server and any number of clients.
#[derive(Clone)]
pub struct MemoryNetwork {
    state: Arc<Mutex<State>>,
}

impl MemoryNetwork {
    /// A network with no clients at simulated time zero, whose delays, losses and duplicates are drawn from `seed`:
    /// the same seed replays the same run.
    pub fn new(seed: u64, conditions: Conditions) -> Self {
        let state = State {
            now: Duration::ZERO,
            rng: ChaCha8Rng::seed_from_u64(seed),
            conditions,
            next_client: 1,
            in_flight: BTreeMap::new(),
            sent: 0,
            last_reliable: BTreeMap::new(),
            server_events: Vec::new(),
            client_events: BTreeMap::new(),
            closed: HashSet::new(),
        };
        MemoryNetwork { state: Arc::new(Mutex::new(state)) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The server's end.
    pub fn server(&self) -> MemoryServer {
        MemoryServer { network: self.clone() }
    }

    /// A new client's end; the server sees it connect at its next poll.
    pub fn connect(&self) -> MemoryClient {
        let mut state = self.lock();
        let client = ClientId(state.next_client);
        state.next_client += 1;
        state.server_events.push(ServerEvent::Connected(client));
        MemoryClient { network: self.clone(), client }
    }

    /// Lets `by` of simulated time pass.
    pub fn advance(&self, by: Duration) {
        self.lock().now += by;
    }

    /// Frames still on their way.
    pub fn in_flight(&self) -> usize {
        self.lock().in_flight.len()
    }
}

/// The server's end of a [`MemoryNetwork`].
pub struct MemoryServer {
    network: MemoryNetwork,
}

impl ServerTransport for MemoryServer {
    fn poll(&mut self) -> Vec<ServerEvent> {
        let mut state = self.network.lock();
        state.deliver();
        std::mem::take(&mut state.server_events)
    }

    fn send(&mut self, client: ClientId, channel: Channel, frame: Vec<u8>) {
        self.network.lock().send(Endpoint::Server, Endpoint::Client(client), channel, frame);
    }

    fn disconnect(&mut self, client: ClientId, reason: &str) {
        self.network.lock().close(client, reason);
    }
}

/// A client's end of a [`MemoryNetwork`].
pub struct MemoryClient {
    network: MemoryNetwork,
    client: ClientId,
}

impl MemoryClient {
    /// The number the network gave this client (the server's [`ClientId`] for it).
    pub fn id(&self) -> ClientId {
        self.client
    }
}

impl ClientTransport for MemoryClient {
    fn poll(&mut self) -> Vec<ClientEvent> {
        let mut state = self.network.lock();
        state.deliver();
        state.client_events.remove(&self.client).unwrap_or_default()
    }

    fn send(&mut self, channel: Channel, frame: Vec<u8>) {
        let mut state = self.network.lock();
        if !state.closed.contains(&self.client) {
            state.send(Endpoint::Client(self.client), Endpoint::Server, channel, frame);
        }
    }

    fn disconnect(&mut self, reason: &str) {
        let mut state = self.network.lock();
        if state.closed.insert(self.client) {
            state.server_events.push(ServerEvent::Disconnected(self.client, reason.to_string()));
        }
    }
}
