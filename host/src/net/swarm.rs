//! A swarm of lightweight players, for load tests: protocol clients with no world and no plugins.
//!
//! A real client ([`super::GameClient`]) loads the experience and runs its plugins; a thousand of them would
//! measure the machine running them, not the server. A [`SwarmPlayer`] only speaks the protocol as a client
//! must for a server to keep sending to it — it says hello, and acknowledges every packet of values as a real
//! client does, once a frame (each named in three acknowledgements, unreliably) — and counts what it is sent. A
//! poll is a frame, unless the player is [paced](SwarmPlayer::paced) by the server's tick rate in real time. Many of them share one thread ([`Swarm::poll`]), over any transport: the in-memory network
//! for a reproducible run, QUIC for the real thing (`gfhost swarm`, or the capacity bench's swarm processes).

use std::time::{Duration, Instant};

use super::protocol::{decode, encode, ClientMessage, ServerMessage, PROTOCOL_VERSION};
use super::transport::{Channel, ClientEvent, ClientTransport};
use crate::world::ClientId;

/// Where a swarm player is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwarmState {
    /// Said hello, not yet welcomed.
    Greeting,
    /// Welcomed and given a player.
    Playing(ClientId),
    /// Its connection ended (refused, closed by the server, or the network), with why.
    Gone(String),
}

/// What a swarm player has been sent, as it counts it (payload bytes: the transport adds its own framing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Received {
    /// Frames from the server.
    pub frames: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Packets of replicated values (each acknowledged).
    pub value_packets: u64,
    /// Replicated values in them.
    pub values: u64,
    /// Reliable updates (spawns, components, the experience).
    pub updates: u64,
}

impl Received {
    /// What was sent after `earlier` (a count taken from the same players before).
    pub fn since(self, earlier: Received) -> Received {
        Received {
            frames: self.frames.saturating_sub(earlier.frames),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            value_packets: self.value_packets.saturating_sub(earlier.value_packets),
            values: self.values.saturating_sub(earlier.values),
            updates: self.updates.saturating_sub(earlier.updates),
        }
    }

    fn plus(self, other: Received) -> Received {
        Received {
            frames: self.frames + other.frames,
            bytes: self.bytes + other.bytes,
            value_packets: self.value_packets + other.value_packets,
            values: self.values + other.values,
            updates: self.updates + other.updates,
        }
    }
}

/// One lightweight player on its own connection.
pub struct SwarmPlayer {
    transport: Box<dyn ClientTransport>,
    state: SwarmState,
    connected: Instant,
    joined_after: Option<Duration>,
    received: Received,
    acknowledgements: super::receive::Acknowledger,
    /// Whether it acknowledges at most once a frame of the server's tick rate in real time (else on every
    /// poll), and when it last did.
    paced: bool,
    frame: Duration,
    acknowledged: Option<Instant>,
}

impl SwarmPlayer {
    /// A player on `transport` (connected at `connected`), saying hello with `token`.
    pub fn new(mut transport: Box<dyn ClientTransport>, token: Option<String>, connected: Instant) -> Self {
        transport.send(Channel::Reliable, encode(&ClientMessage::Hello { protocol: PROTOCOL_VERSION, token }));
        SwarmPlayer {
            transport,
            state: SwarmState::Greeting,
            connected,
            joined_after: None,
            received: Received::default(),
            acknowledgements: Default::default(),
            paced: false,
            frame: Duration::ZERO,
            acknowledged: None,
        }
    }

    /// The player acknowledges at most once a frame of the server's tick rate, in real time, however often it
    /// is polled: a swarm polled every few milliseconds acknowledges as often as real clients would.
    pub fn paced(mut self) -> Self {
        self.paced = true;
        self
    }

    /// Reads what the server sent, and acknowledges its packets of values once a frame of the server's tick
    /// rate. A frame the player cannot read ends it, as a real client would end.
    pub fn poll(&mut self) {
        if matches!(self.state, SwarmState::Gone(_)) {
            return;
        }
        for event in self.transport.poll() {
            match event {
                // A refusal says why better than the close that follows it.
                ClientEvent::Disconnected(why) if !matches!(self.state, SwarmState::Gone(_)) => {
                    self.state = SwarmState::Gone(why)
                }
                ClientEvent::Disconnected(_) => {}
                ClientEvent::Received(frame) => {
                    self.received.frames += 1;
                    self.received.bytes += frame.len() as u64;
                    match decode::<ServerMessage>(&frame) {
                        Ok(ServerMessage::Welcome { client, tick_rate }) => {
                            self.frame = Duration::from_secs(1) / tick_rate.max(1);
                            self.state = SwarmState::Playing(client);
                            self.joined_after = Some(self.connected.elapsed());
                        }
                        Ok(ServerMessage::Refused { reason }) => self.state = SwarmState::Gone(reason),
                        Ok(ServerMessage::Mutations { packet, values }) => {
                            self.received.value_packets += 1;
                            self.received.values += values.len() as u64;
                            self.acknowledgements.arrived(packet);
                        }
                        Ok(ServerMessage::Update { .. }) => self.received.updates += 1,
                        Ok(ServerMessage::Chunk { .. }) => {}
                        Err(e) => {
                            let why = format!("a frame it could not read: {e}");
                            self.transport.disconnect(&why);
                            self.state = SwarmState::Gone(why);
                            return;
                        }
                    }
                }
            }
        }
        let due = !self.paced || self.acknowledged.is_none_or(|at| at.elapsed() >= self.frame);
        if matches!(self.state, SwarmState::Playing(_)) && due {
            self.acknowledged = Some(Instant::now());
            self.acknowledgements.take().send(&mut *self.transport);
        }
    }

    /// Where the player is.
    pub fn state(&self) -> &SwarmState {
        &self.state
    }

    /// How long after connecting it was welcomed; `None` while it is not.
    pub fn joined_after(&self) -> Option<Duration> {
        self.joined_after
    }

    /// What it has been sent so far.
    pub fn received(&self) -> Received {
        self.received
    }

    /// Leaves, telling the server why.
    pub fn leave(&mut self, why: &str) {
        if !matches!(self.state, SwarmState::Gone(_)) {
            self.transport.disconnect(why);
            self.state = SwarmState::Gone(why.to_string());
        }
    }

    /// Resolves once the server has been told the player left (or a bound passed).
    pub async fn closed(&mut self) {
        self.transport.closed().await
    }
}

/// Many lightweight players, polled together.
#[derive(Default)]
pub struct Swarm {
    players: Vec<SwarmPlayer>,
}

/// What a swarm saw, summed over its players.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SwarmReport {
    /// Players in the swarm.
    pub players: usize,
    /// Players welcomed and still playing.
    pub playing: usize,
    /// Why each player that is gone went, by player (in the order they joined the swarm).
    pub gone: Vec<(usize, String)>,
    /// How long each welcomed player waited for its welcome, shortest first.
    pub join_times: Vec<Duration>,
    /// What every player was sent.
    pub received: Received,
}

impl SwarmReport {
    /// The join time that `fraction` (0.0-1.0) of the welcomed players waited at most (`None` when none was).
    pub fn join_time(&self, fraction: f64) -> Option<Duration> {
        let last = self.join_times.len().checked_sub(1)?;
        Some(self.join_times[((last as f64) * fraction.clamp(0.0, 1.0)).round() as usize])
    }
}

impl Swarm {
    /// An empty swarm.
    pub fn new() -> Self {
        Swarm::default()
    }

    /// Adds a player.
    pub fn add(&mut self, player: SwarmPlayer) {
        self.players.push(player);
    }

    /// Polls every player once.
    pub fn poll(&mut self) {
        for player in &mut self.players {
            player.poll();
        }
    }

    /// Players in the swarm.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// Whether the swarm has no player.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// Players welcomed and still playing.
    pub fn playing(&self) -> usize {
        self.players.iter().filter(|p| matches!(p.state, SwarmState::Playing(_))).count()
    }

    /// Players still greeting.
    pub fn greeting(&self) -> usize {
        self.players.iter().filter(|p| p.state == SwarmState::Greeting).count()
    }

    /// The players, in the order they were added.
    pub fn players_mut(&mut self) -> &mut [SwarmPlayer] {
        &mut self.players
    }

    /// What every player has been sent so far.
    pub fn received(&self) -> Received {
        self.players.iter().fold(Received::default(), |sum, p| sum.plus(p.received))
    }

    /// What the swarm saw so far.
    pub fn report(&self) -> SwarmReport {
        let mut join_times: Vec<Duration> = self.players.iter().filter_map(|p| p.joined_after).collect();
        join_times.sort_unstable();
        let gone = (self.players.iter().enumerate())
            .filter_map(|(index, p)| match &p.state {
                SwarmState::Gone(why) => Some((index, why.clone())),
                _ => None,
            })
            .collect();
        SwarmReport {
            players: self.players.len(),
            playing: self.playing(),
            gone,
            join_times,
            received: self.received(),
        }
    }

    /// Every player leaves, telling the server why, and the swarm waits (boundedly) for the server to be told.
    pub async fn leave(&mut self, why: &str) {
        for player in &mut self.players {
            player.leave(why);
        }
        for player in &mut self.players {
            player.closed().await;
        }
    }
}

/// How a swarm joins a server over QUIC (see [`quic_swarm`]).
#[derive(Debug, Clone)]
pub struct QuicSwarmOptions {
    /// The server's address.
    pub server: std::net::SocketAddr,
    /// How the server is trusted.
    pub trust: super::transport::trust::ServerTrust,
    /// What each player says hello with.
    pub token: Option<String>,
    /// Players to join.
    pub players: usize,
    /// Connections opened at once: a server lets only so many connections from one address greet at a time
    /// (8), and a swarm on one machine is one address.
    pub at_once: usize,
    /// How long each connection may take to be answered, and then its hello.
    pub connect_wait: Duration,
}

/// Joins `options.players` lightweight players to a server over QUIC, and plays them — polling every player
/// every `poll_every` — until `stop` says so (it is shown the swarm, and how many connections failed); then they leave and the swarm's report is returned. Players
/// connect `at_once` at a time while the others play. Must run inside a tokio runtime's context (its
/// connections' tasks run there); the calling thread polls, so it should not be one of the runtime's workers.
pub fn quic_swarm(
    options: &QuicSwarmOptions,
    runtime: &tokio::runtime::Handle,
    poll_every: Duration,
    mut stop: impl FnMut(&Swarm, usize) -> bool,
) -> SwarmReport {
    use super::transport::quic::QuicClient;
    type Arrival = (Result<QuicClient, String>, Instant, tokio::sync::OwnedSemaphorePermit);
    let (connected, arrivals) = std::sync::mpsc::channel::<Arrival>();
    // A turn lasts from connecting until the server has answered the hello: what the server counts as greeting.
    let turns = std::sync::Arc::new(tokio::sync::Semaphore::new(options.at_once.max(1)));
    for _ in 0..options.players {
        let (connected, turns, options) = (connected.clone(), turns.clone(), options.clone());
        runtime.spawn(async move {
            let Ok(turn) = turns.acquire_owned().await else { return };
            let started = Instant::now();
            let client = QuicClient::connect(options.server, &options.trust, options.connect_wait).await;
            let _ = connected.send((client.map_err(|e| e.to_string()), started, turn));
        });
    }
    drop(connected);
    let mut swarm = Swarm::new();
    let mut waiting_for_answer = Vec::new();
    let mut failed = Vec::new();
    loop {
        for (client, started, turn) in arrivals.try_iter() {
            match client {
                Ok(client) => {
                    waiting_for_answer.push((swarm.len(), turn));
                    swarm.add(SwarmPlayer::new(Box::new(client), options.token.clone(), started).paced());
                }
                Err(why) => failed.push(why),
            }
        }
        swarm.poll();
        // A server that never answers a hello (its frame loop stalled, say) does not hold the swarm forever.
        for player in swarm.players.iter_mut().filter(|p| p.state == SwarmState::Greeting) {
            if player.connected.elapsed() > options.connect_wait {
                player.leave(&format!("no welcome within {:?} of connecting", options.connect_wait));
            }
        }
        waiting_for_answer.retain(|(player, _)| swarm.players[*player].state == SwarmState::Greeting);
        if stop(&swarm, failed.len()) {
            break;
        }
        std::thread::sleep(poll_every);
    }
    runtime.block_on(swarm.leave("the swarm left"));
    let mut report = swarm.report();
    let never = options.players.saturating_sub(report.players + failed.len());
    failed.extend(std::iter::repeat_n("never connected: the swarm stopped first".to_string(), never));
    let first_failed = report.players;
    report.players += failed.len();
    report.gone.extend(failed.into_iter().enumerate().map(|(n, why)| (first_failed + n, why)));
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::transport::memory::{Conditions, MemoryNetwork};
    use crate::net::transport::{ServerEvent, ServerTransport};

    /// The swarm says hello, is welcomed, and acknowledges every packet of values it is sent as a real client
    /// does: unreliably, each packet named in three acknowledgements, a poll (a frame) apart.
    #[test]
    fn a_swarm_player_says_hello_and_acknowledges_each_packet_of_values_as_a_client_does() {
        let network = MemoryNetwork::new(7, Conditions::PERFECT);
        let mut server = network.server();
        let mut swarm = Swarm::new();
        for _ in 0..3 {
            swarm.add(SwarmPlayer::new(Box::new(network.connect()), Some("secret".into()), Instant::now()));
        }
        network.advance(Duration::from_millis(50));
        let mut hellos = Vec::new();
        for event in server.poll() {
            if let ServerEvent::Received(client, frame) = event {
                hellos.push((client, decode::<ClientMessage>(&frame).unwrap()));
            }
        }
        assert_eq!(hellos.len(), 3);
        assert!(hellos.iter().all(|(_, hello)| matches!(hello,
            ClientMessage::Hello { protocol, token } if *protocol == PROTOCOL_VERSION && token.as_deref() == Some("secret"))));
        let (first, _) = hellos[0];
        server.send(first, Channel::Reliable, encode(&ServerMessage::Welcome { client: first, tick_rate: 30 }));
        let values = crate::net::value_packet::ValuePacket::default();
        server.send(first, Channel::Unreliable, encode(&ServerMessage::Mutations { packet: 41, values }));
        let mut acks = Vec::new();
        for _ in 0..5 {
            network.advance(Duration::from_millis(50));
            swarm.poll();
            network.advance(Duration::from_millis(50));
            for event in server.poll() {
                if let ServerEvent::Received(client, frame) = event {
                    acks.push((client, decode::<ClientMessage>(&frame).unwrap()));
                }
            }
        }
        assert_eq!(acks, vec![(first, ClientMessage::Ack { packets: vec![41] }); 3]);
        let report = swarm.report();
        assert_eq!((report.players, report.playing, report.join_times.len()), (3, 1, 1));
        assert_eq!(report.received.value_packets, 1);
        assert_eq!(swarm.greeting(), 2);
    }

    /// A refused player is gone, saying why the server refused it.
    #[test]
    fn a_refused_player_is_gone_with_the_servers_reason() {
        let network = MemoryNetwork::new(7, Conditions::PERFECT);
        let mut server = network.server();
        let mut swarm = Swarm::new();
        swarm.add(SwarmPlayer::new(Box::new(network.connect()), None, Instant::now()));
        network.advance(Duration::from_millis(50));
        let client = (server.poll().into_iter())
            .find_map(|event| match event {
                ServerEvent::Connected(client) => Some(client),
                _ => None,
            })
            .unwrap();
        server.send(client, Channel::Reliable, encode(&ServerMessage::Refused { reason: "full".into() }));
        network.advance(Duration::from_millis(50));
        swarm.poll();
        assert_eq!(swarm.report().gone, vec![(0, "full".to_string())]);
    }
}
