//! A game server: one world, its experience, and the clients playing in it.
//!
//! Each frame it takes what its transport saw (clients connecting, saying hello, acknowledging values, going
//! away), advances its world one tick, and sends each client what replication says it is due. Clients are
//! untrusted: a frame that is malformed, too large or out of protocol closes that client's connection, with the
//! reason logged; the server and the other clients carry on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::protocol::{decode, encode, ClientMessage, ServerMessage, PROTOCOL_VERSION};
use super::transport::{Channel, ServerEvent, ServerTransport};
use super::{Outgoing, ServerReplication};

use super::greeting::{Greeting, HELLO_WAIT};
use super::mod_sync::Offers;
use crate::experience::{ExperienceError, ExperienceManager};
use crate::game::{self, Player};
use crate::text;
use crate::world::{self, ClientId, PlayerOwner};

/// How a server lets clients in.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Frames per second the server runs at, told to clients.
    pub tick_rate: u32,
    /// When set, clients must present it.
    pub token: Option<String>,
    /// Players the server takes at most; more are refused, saying so. `None`: no limit.
    pub max_players: Option<usize>,
    /// When set, each client presents a join ticket signed with this key (in place of a token).
    pub tickets: Option<TicketPolicy>,
    /// Every client is refused: a fleet's server waiting for its match (and the secret its players hold).
    pub closed: bool,
    /// How long a ticketed player's actors wait for it after its connection ends; `None`: [`RECONNECT_GRACE`].
    pub reconnect_grace: Option<Duration>,
    /// The bytes of replicated values per second each client may be sent at most (Unreal's `MaxClientRate`);
    /// past it values wait, the client's own player's and the longest waiting first. `None`: no limit.
    pub client_rate: Option<u32>,
    /// What a join ticket presented while its player is playing on another connection does.
    pub ticket_reuse: TicketReuse,
}

/// What a join ticket presented while its player plays on another connection does: a ticket leaked or shared
/// is refused (the default), or, where the operator prefers reconnects that do not wait for the old
/// connection's timeout, takes the player over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TicketReuse {
    /// The new connection is refused, saying the player is playing; the player plays on.
    #[default]
    Refuse,
    /// The new connection takes the player (its actors) over, and the old one is closed.
    TakeOver,
}

/// The default [`ServerOptions::client_rate`] of `gfhost`'s servers, in bytes per second: Unreal's default
/// `MaxClientRate`.
pub const DEFAULT_CLIENT_RATE: u32 = 100_000;

/// How long the actors of a ticketed player whose connection ended wait for it to come back on a new one.
pub const RECONNECT_GRACE: Duration = Duration::from_secs(30);

/// How a server checks join tickets (see [`super::ticket`]).
#[derive(Debug, Clone)]
pub struct TicketPolicy {
    /// The key the matchmaker signs tickets with: a ticket that does not verify under it is refused.
    pub key: super::ticket::TicketKey,
    /// The match this server plays: tickets for another are refused.
    pub match_id: Option<String>,
}

/// Something that happened to a server's clients, for its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerNote {
    /// A client was welcomed and given a player (or took back its player's actors).
    Joined(ClientId),
    /// A client was refused or its connection closed for breaking the protocol.
    Dropped(ClientId, String),
    /// A playing client's connection ended, with why (and whether its player waits to reconnect).
    Left(ClientId, String),
}

impl ServerNote {
    /// The client the note is about.
    pub fn client(&self) -> ClientId {
        match self {
            ServerNote::Joined(client) | ServerNote::Dropped(client, _) | ServerNote::Left(client, _) => *client,
        }
    }
}

impl std::fmt::Display for ServerNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerNote::Joined(client) => write!(f, "{client} joined"),
            // Why may quote a peer (the reason it closed with): shown as data, whatever transport it came by.
            ServerNote::Dropped(client, why) => write!(f, "{client} dropped: {}", text::shown(why, text::MAX_CAUSE)),
            ServerNote::Left(client, why) => write!(f, "{client} left: {}", text::shown(why, text::MAX_CAUSE)),
        }
    }
}

/// Why a server's connection closed, as its operator counts them ([`GameServer::closed_connections`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Closed {
    /// The client went (it closed the connection, or left).
    Left,
    /// The network stopped carrying anything from it.
    TimedOut,
    /// It sent or asked for more than a client may.
    Flood,
    /// It broke the protocol (a frame that does not decode, a message out of turn).
    Protocol,
    /// Its hello was refused (token, ticket, protocol version, a full or closed server).
    Refused,
    /// It said no hello in time.
    Silent,
    /// Another connection from its address took its place while greeting, or its player joined again elsewhere.
    Replaced,
    /// Its player could not be set up.
    Failed,
    /// The server's operator closed it ([`GameServer::kick`]).
    Kicked,
}

impl Closed {
    /// Every reason, in order.
    pub const ALL: [Closed; 9] = [
        Closed::Left,
        Closed::TimedOut,
        Closed::Flood,
        Closed::Protocol,
        Closed::Refused,
        Closed::Silent,
        Closed::Replaced,
        Closed::Failed,
        Closed::Kicked,
    ];

    /// The reason as a metric label.
    pub fn label(self) -> &'static str {
        match self {
            Closed::Left => "left",
            Closed::TimedOut => "timeout",
            Closed::Flood => "flood",
            Closed::Protocol => "protocol",
            Closed::Refused => "refused",
            Closed::Silent => "silent",
            Closed::Replaced => "replaced",
            Closed::Failed => "failed",
            Closed::Kicked => "kicked",
        }
    }

    /// Why a transport says a connection the server did not close ended. (The transports' own words: a peer
    /// that closes with words of the same form only miscounts its own connection.)
    fn of_transport(reason: &str) -> Closed {
        if reason == "the connection timed out" {
            Closed::TimedOut
        } else if reason.starts_with("flooding") {
            Closed::Flood
        } else if reason.starts_with("closed for a bad frame") {
            Closed::Protocol
        } else {
            Closed::Left
        }
    }
}

/// One client of a server, as its operator watches it (see [`GameServer::client_stats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientStats {
    /// The client these numbers are about.
    pub client: ClientId,
    /// Joined and given a player (a client still greeting is not).
    pub playing: bool,
    /// What has crossed the wire with the client so far; zeros where the transport does not count.
    pub traffic: super::transport::Traffic,
    /// Replicated values whose newest version the client has not acknowledged.
    pub backlog: usize,
    /// Replicated values sent to the client so far, sent again ones included.
    pub values_sent: u64,
    /// Package bytes the client fetched (mod sync) on this connection.
    pub fetched_bytes: u64,
}

/// A world served to clients.
pub struct GameServer {
    manager: ExperienceManager,
    replication: ServerReplication,
    transport: Box<dyn ServerTransport>,
    options: ServerOptions,
    /// Connected, not yet welcomed, and since when.
    greeting: Greeting,
    /// Dropped, until their transport says they are gone: what they still send is ignored.
    dropped: BTreeSet<ClientId>,
    /// Connections closed since the server started, by why.
    closed: BTreeMap<Closed, u64>,
    players: BTreeMap<ClientId, Player>,
    /// Where each client connects from (where the network has addresses), for the log: kept one frame past
    /// its connection's end, so the note of its end names it too.
    peers: BTreeMap<ClientId, std::net::SocketAddr>,
    gone_last_frame: Vec<ClientId>,
    /// The player each ticketed client is.
    identities: BTreeMap<ClientId, super::ticket::Ticket>,
    /// Ticketed players whose connection ended, by player id: their actors wait [`RECONNECT_GRACE`] for them.
    parked: BTreeMap<String, Parked>,
    /// The packages of the experience, for clients that fetch them.
    offers: Offers,
    /// What each player (or address) may still fetch of the packages: a budget that outlives connections.
    budgets: super::fetch_budget::FetchBudgets,
    /// Package bytes sent so far, to every client.
    fetched_bytes: u64,
    /// Package bytes sent to each connected client.
    fetched_by: BTreeMap<ClientId, u64>,
    /// What happened between frames (a kick), told with the next frame's notes.
    between_frames: Vec<ServerNote>,
}

/// A ticketed player whose connection ended, waiting for it to come back (see [`RECONNECT_GRACE`]).
#[derive(Debug)]
struct Parked {
    player: Player,
    since: std::time::Instant,
    /// The connection it played on: plugins still name it through its actors.
    connection: ClientId,
    /// The relevancy groups it was in, given back with its actors.
    groups: BTreeSet<compact_str::CompactString>,
}

impl GameServer {
    /// A server for `manager`'s world (not yet loaded), listening through `transport`.
    pub fn new(manager: ExperienceManager, transport: Box<dyn ServerTransport>, options: ServerOptions) -> Self {
        // Everything the world does from now on is noted for replication, the experience's load included.
        {
            let mut w = world::lock(manager.world());
            w.start_journal();
            game::declare_replicated_natives(&mut w);
        }
        let mut replication = ServerReplication::new();
        let tick_rate = options.tick_rate.max(1);
        replication.set_client_budget(options.client_rate.map(|rate| (rate / tick_rate) as usize));
        GameServer {
            manager,
            replication,
            transport,
            options,
            greeting: Greeting::default(),
            dropped: BTreeSet::new(),
            closed: BTreeMap::new(),
            players: BTreeMap::new(),
            peers: BTreeMap::new(),
            gone_last_frame: Vec::new(),
            identities: BTreeMap::new(),
            parked: BTreeMap::new(),
            offers: Offers::default(),
            budgets: Default::default(),
            fetched_bytes: 0,
            fetched_by: BTreeMap::new(),
            between_frames: Vec::new(),
        }
    }

    /// Loads the experience at `path`. Clients are told its file name and offered what it is made of (see
    /// [`super::mod_sync`]); where it cannot be packed they load the file of that name from their own folder.
    pub async fn load(&mut self, path: &Path) -> Result<(), ExperienceError> {
        self.manager.load(path).await?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let content = match Offers::of(&self.manager) {
            Ok((content, offers)) => {
                self.offers = offers;
                Some(content)
            }
            Err(why) => {
                tracing::warn!("clients must have experience {name} installed: it cannot travel: {why}");
                None
            }
        };
        let outgoing = self.replication.set_experience(&name, content);
        self.send(outgoing);
        Ok(())
    }

    /// Hot-reloads `plugin` from its files as they are now, keeping its state, and offers its new version to
    /// every client, which fetches and hot-reloads it in turn.
    pub async fn reload(&mut self, plugin: &str) -> Result<String, crate::Error> {
        let new = crate::experience::NewVersion::prepare(self.manager.features(), plugin).await?;
        self.apply_new_version(new).await
    }

    /// The second half of [`reload`](Self::reload), between frames, for a new version compiled off the frame
    /// (see [`NewVersion::prepare`](crate::experience::NewVersion::prepare)): applied, then offered to every
    /// client.
    pub async fn apply_new_version(&mut self, new: crate::experience::NewVersion) -> Result<String, crate::Error> {
        let plugin = new.plugin().to_string();
        let plugin = plugin.as_str();
        let reloaded = self.manager.apply_new_version(new).await?;
        let offer = self.offers.pack(&self.manager, plugin)?;
        let outgoing = self.replication.update_package(offer);
        self.send(outgoing);
        Ok(format!("{reloaded}; clients follow"))
    }

    /// The experience manager of the server's world.
    pub fn manager(&self) -> &ExperienceManager {
        &self.manager
    }

    /// The experience manager of the server's world, to drive it (spawn actors, say); what it changes replicates.
    pub fn manager_mut(&mut self) -> &mut ExperienceManager {
        &mut self.manager
    }

    /// The clients playing, with their players' actors.
    pub fn players(&self) -> &BTreeMap<ClientId, Player> {
        &self.players
    }

    /// Players whose connection ended and whose actors wait for them to come back (see [`RECONNECT_GRACE`]).
    pub fn players_away(&self) -> usize {
        self.parked.len()
    }

    /// Changes how clients who say hello from now on must prove they may join: an orchestrator hands a server
    /// its match's ticket key when it allocates it. Clients already playing stay.
    pub fn set_tickets(&mut self, tickets: Option<TicketPolicy>) {
        self.options.tickets = tickets;
    }

    /// Opens the server to players, or closes it to new ones (see [`ServerOptions::closed`]).
    pub fn set_open(&mut self, open: bool) {
        self.options.closed = !open;
    }

    /// How clients must prove they may join with a ticket, if they must.
    pub fn tickets(&self) -> Option<TicketPolicy> {
        self.options.tickets.clone()
    }

    /// Package bytes sent to clients fetching the experience's plugins, since the server started.
    pub fn fetched_bytes(&self) -> u64 {
        self.fetched_bytes
    }

    /// Connections closed since the server started, by why: a flood of connections closed between two looks
    /// still counts.
    pub fn closed_connections(&self) -> &BTreeMap<Closed, u64> {
        &self.closed
    }

    /// What has crossed the wire with every connection since the server started, closed ones included (see
    /// [`ServerTransport::total_traffic`]).
    pub fn total_traffic(&self) -> super::transport::Traffic {
        self.transport.total_traffic()
    }

    /// Bytes the transport has sent to the clients connected now (see [`ServerTransport::bytes_sent`]).
    pub fn bytes_sent(&self) -> u64 {
        self.transport.bytes_sent()
    }

    /// How each client connected now is doing, for an operator's metrics: clients still greeting included
    /// (with no backlog), in the order of their ids.
    pub fn client_stats(&self) -> Vec<ClientStats> {
        let greeting = self.greeting.clients();
        let mut clients: Vec<ClientId> = self.replication.clients().into_iter().chain(greeting).collect();
        clients.sort_unstable();
        clients.dedup();
        clients
            .into_iter()
            .map(|client| ClientStats {
                client,
                playing: self.players.contains_key(&client),
                traffic: self.transport.traffic(client).unwrap_or_default(),
                backlog: self.replication.backlog(client).unwrap_or(0),
                values_sent: self.replication.values_sent(client).unwrap_or(0),
                fetched_bytes: self.fetched_by.get(&client).copied().unwrap_or(0),
            })
            .collect()
    }

    /// Whether every client has acknowledged every replicated value.
    pub fn is_settled(&self) -> bool {
        self.replication.is_settled()
    }

    /// One frame: clients' messages, one tick of the world (`delta` of game time), then replication.
    pub fn frame(&mut self, delta: Duration) -> Vec<ServerNote> {
        let notes = self.receive();
        self.release_expired_players(std::time::Instant::now());
        self.manager.tick(delta);
        let outgoing = self.replication.collect(&mut world::lock(self.manager.world()));
        self.send(outgoing);
        notes
    }

    /// A frame in which the world stands still: clients' messages are read and what they have not acknowledged
    /// is sent again. Played until [`is_settled`](Self::is_settled) (boundedly) before
    /// [`end_play`](Self::end_play), it gets the world's final values to every client even over a lossy link.
    pub fn flush(&mut self) -> Vec<ServerNote> {
        let notes = self.receive();
        let outgoing = self.replication.collect(&mut world::lock(self.manager.world()));
        self.send(outgoing);
        notes
    }

    /// Reads what the clients sent: connections, hellos, acknowledgements, departures.
    fn receive(&mut self) -> Vec<ServerNote> {
        let mut notes = std::mem::take(&mut self.between_frames);
        for client in std::mem::take(&mut self.gone_last_frame) {
            self.peers.remove(&client);
        }
        for event in self.transport.poll() {
            match event {
                ServerEvent::Connected(client) => {
                    let peer = self.transport.peer_address(client);
                    if let Some(peer) = peer {
                        self.peers.insert(client, peer);
                    }
                    let address = peer.map(|a| a.ip());
                    for (evicted, why) in self.greeting.admit(client, address, std::time::Instant::now()) {
                        self.drop_client(evicted, Closed::Replaced, why, &mut notes);
                    }
                }
                ServerEvent::Received(client, frame) => self.received(client, &frame, &mut notes),
                ServerEvent::Disconnected(client, reason) => self.gone(client, reason, &mut notes),
            }
        }
        for client in self.greeting.silent(std::time::Instant::now()) {
            self.drop_client(client, Closed::Silent, format!("no hello within {HELLO_WAIT:?}"), &mut notes);
        }
        notes
    }

    fn received(&mut self, client: ClientId, frame: &[u8], notes: &mut Vec<ServerNote>) {
        if self.dropped.contains(&client) {
            return;
        }
        let message = match decode::<ClientMessage>(frame) {
            Ok(message) => message,
            Err(e) => return self.drop_client(client, Closed::Protocol, e.to_string(), notes),
        };
        match message {
            ClientMessage::Hello { protocol, token } if self.greeting.hello(client) => {
                let refusal = if protocol != PROTOCOL_VERSION {
                    Some(format!("the server speaks protocol {PROTOCOL_VERSION}; the client speaks {protocol}"))
                } else if self.options.closed {
                    Some("the server takes no players yet: it has no match".to_string())
                } else if self.options.token.as_deref().is_some_and(|expected| {
                    !token.as_deref().is_some_and(|presented| super::transport::trust::same_secret(expected, presented))
                }) {
                    Some("a wrong or missing token".to_string())
                } else if let Some(why) = self.check_ticket(client, token.as_deref(), notes) {
                    Some(format!("its join ticket was refused: {why}"))
                } else if self.options.max_players.is_some_and(|max| self.players.len() >= max) {
                    Some(format!("the server is full: {} players", self.players.len()))
                } else {
                    None
                };
                match refusal {
                    Some(reason) => {
                        self.transport.send(
                            client,
                            Channel::Reliable,
                            encode(&ServerMessage::Refused { reason: reason.clone() }),
                        );
                        self.drop_client(client, Closed::Refused, format!("refused: {reason}"), notes);
                    }
                    None => self.welcome(client, notes),
                }
            }
            ClientMessage::Ack { packets } if self.players.contains_key(&client) => {
                self.replication.acknowledge(client, &packets)
            }
            ClientMessage::Fetch { digest, offset } if self.players.contains_key(&client) => {
                self.fetch(client, &digest, offset, notes)
            }
            other => {
                let what = match other {
                    ClientMessage::Hello { .. } => "a second hello",
                    ClientMessage::Ack { .. } => "an acknowledgement before its hello",
                    ClientMessage::Fetch { .. } => "a fetch before its hello",
                };
                self.drop_client(client, Closed::Protocol, format!("out of protocol: {what}"), notes)
            }
        }
    }

    /// Sends a client the chunk of a package it asked for, on the bulk channel.
    fn fetch(&mut self, client: ClientId, digest: &str, offset: u64, notes: &mut Vec<ServerNote>) {
        let Some(chunk) = self.offers.chunk(digest, offset) else {
            let why = format!("out of protocol: it asked for package {digest} at {offset}, which is not offered");
            return self.drop_client(client, Closed::Protocol, why, notes);
        };
        let ServerMessage::Chunk { bytes, .. } = &chunk else { unreachable!("offers hand out chunks") };
        let size = bytes.len() as u64;
        // Chunks go out as fast as the client takes them: it may have asked for a window of them, no more.
        let window = (super::mod_sync::WINDOW + 1) * super::mod_sync::CHUNK;
        if self.transport.queued(client, Channel::Bulk) as u64 + size > window {
            let why = format!(
                "flooding: it asked for more than {} package chunks it had not taken yet",
                super::mod_sync::WINDOW
            );
            return self.drop_client(client, Closed::Flood, why, notes);
        }
        let fetcher = match (self.identities.get(&client), self.peers.get(&client)) {
            (Some(ticket), _) => super::fetch_budget::Fetcher::Player(ticket.player.clone()),
            (None, Some(peer)) => super::fetch_budget::Fetcher::Address(peer.ip()),
            (None, None) => super::fetch_budget::Fetcher::Connection(client.0),
        };
        let offered = self.offers.total_bytes();
        if !self.budgets.charge(&fetcher, size, offered, std::time::Instant::now()) {
            let why = format!(
                "flooding: {fetcher} fetched more than its budget of the {offered} bytes offered (a few times over \
                 at once, then once a minute a player)"
            );
            return self.drop_client(client, Closed::Flood, why, notes);
        }
        self.fetched_bytes += size;
        *self.fetched_by.entry(client).or_default() += size;
        self.transport.send(client, Channel::Bulk, encode(&chunk));
    }

    /// A client said a good hello: it is told who it is and everything it must know, and its player spawns —
    /// or, for a ticketed player back within [`RECONNECT_GRACE`], takes back the actors it had.
    fn welcome(&mut self, client: ClientId, notes: &mut Vec<ServerNote>) {
        let welcome = ServerMessage::Welcome { client, tick_rate: self.options.tick_rate };
        self.transport.send(client, Channel::Reliable, encode(&welcome));
        let back = self.identities.get(&client).and_then(|ticket| self.parked.remove(&ticket.player));
        if let Some(Parked { player, connection, groups, .. }) = back {
            // Handed over before the snapshot, so the client receives them as its own, with the relevancy
            // groups it was in (or those a plugin put it in while it was away).
            let handed = self.manager.with_world(|w| {
                let groups = w.client_groups(connection).cloned().unwrap_or(groups);
                w.set_client_groups(connection, Default::default());
                w.set_client_groups(client, groups);
                game::hand_player_to(w, &player, PlayerOwner::Remote(client))
            });
            if handed.is_ok() {
                for actor in [player.controller, player.player_state, player.pawn] {
                    self.replication.hand_over(actor, client);
                }
                let snapshot = self.replication.join(client, &world::lock(self.manager.world()));
                self.send(snapshot);
                self.players.insert(client, player);
                notes.push(ServerNote::Joined(client));
                return;
            }
        }
        let snapshot = self.replication.join(client, &world::lock(self.manager.world()));
        self.send(snapshot);
        let pawn_class = self.manager.pawn_class();
        let spawned = self.manager.with_world(|w| game::spawn_player_for(w, &pawn_class, PlayerOwner::Remote(client)));
        match spawned {
            Ok(player) => {
                // The server's side of the player's arrival, as `gfhost run` plays it.
                let _ = self.manager.with_world(|w| game::possess(w, &player));
                let _ = self.manager.with_world(|w| game::replicate_player_state(w, &player));
                self.players.insert(client, player);
                notes.push(ServerNote::Joined(client));
            }
            Err(e) => self.drop_client(client, Closed::Failed, format!("its player could not spawn: {e}"), notes),
        }
    }

    /// Closes a client's connection, with why, and cleans up after it.
    fn drop_client(&mut self, client: ClientId, why: Closed, reason: String, notes: &mut Vec<ServerNote>) {
        tracing::warn!(%client, "dropping: {}", text::shown(&reason, text::MAX_CAUSE));
        if !self.dropped.contains(&client) {
            *self.closed.entry(why).or_default() += 1;
        }
        self.transport.disconnect(client, &reason);
        self.forget(client);
        self.dropped.insert(client);
        notes.push(ServerNote::Dropped(client, reason));
    }

    /// Checks a client's join ticket when the server asks for one: why it is refused, if it is. A player whose
    /// ticket is already playing here is refused, or, if the options say so, taken to have reconnected: the older
    /// connection is let go.
    fn check_ticket(
        &mut self,
        client: ClientId,
        presented: Option<&str>,
        notes: &mut Vec<ServerNote>,
    ) -> Option<String> {
        let policy = self.options.tickets.as_ref()?;
        let ticket =
            match policy.key.verify(presented.unwrap_or(""), super::ticket::unix_now(), policy.match_id.as_deref()) {
                Ok(ticket) => ticket,
                Err(why) => return Some(why.to_string()),
            };
        let older: Vec<ClientId> =
            self.identities.iter().filter(|(_, t)| t.player == ticket.player).map(|(c, _)| *c).collect();
        if !older.is_empty() && self.options.ticket_reuse == TicketReuse::Refuse {
            return Some(format!("player {} is playing on another connection", ticket.player));
        }
        for old in older {
            // Its actors wait for the new connection (see `welcome`).
            self.park(old);
            let why = format!("player {} joined again on another connection", ticket.player);
            self.drop_client(old, Closed::Replaced, why, notes);
        }
        self.identities.insert(client, ticket);
        None
    }

    /// The player a ticketed client is.
    pub fn identity(&self, client: ClientId) -> Option<&super::ticket::Ticket> {
        self.identities.get(&client)
    }

    /// Where a client connects from, if the network says (and until a frame after it has gone).
    pub fn peer(&self, client: ClientId) -> Option<std::net::SocketAddr> {
        self.peers.get(&client).copied()
    }

    fn gone(&mut self, client: ClientId, reason: String, notes: &mut Vec<ServerNote>) {
        self.gone_last_frame.push(client);
        // A connection the server closed was counted when it did; one the client or the network ended is
        // counted now.
        if !self.dropped.remove(&client) {
            *self.closed.entry(Closed::of_transport(&reason)).or_default() += 1;
        }
        let was_playing = self.players.contains_key(&client);
        let parked = self.park(client);
        self.forget(client);
        if was_playing {
            let reason = match parked {
                true => format!("{reason} (its player waits {}s to reconnect)", self.reconnect_grace().as_secs()),
                false => reason,
            };
            notes.push(ServerNote::Left(client, reason));
        }
    }

    /// Keeps a ticketed client's player for it to take back on a new connection; whether it was kept.
    fn park(&mut self, client: ClientId) -> bool {
        let Some(ticket) = self.identities.get(&client) else { return false };
        let Some(player) = self.players.remove(&client) else { return false };
        let groups = world::lock(self.manager.world()).client_groups(client).cloned().unwrap_or_default();
        let parked = Parked { player, since: std::time::Instant::now(), connection: client, groups };
        self.parked.insert(ticket.player.clone(), parked);
        true
    }

    /// The actors of players who did not come back within [`RECONNECT_GRACE`] leave the world.
    fn reconnect_grace(&self) -> Duration {
        self.options.reconnect_grace.unwrap_or(RECONNECT_GRACE)
    }

    fn release_expired_players(&mut self, now: std::time::Instant) {
        let expired: Vec<String> = (self.parked.iter())
            .filter(|(_, parked)| now.saturating_duration_since(parked.since) > self.reconnect_grace())
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(parked) = self.parked.remove(&id) {
                // Groups a plugin gave it while it was away go with it.
                world::lock(self.manager.world()).set_client_groups(parked.connection, Default::default());
                self.destroy_player(&parked.player);
            }
        }
    }

    fn destroy_player(&mut self, player: &Player) {
        self.manager.with_world(|w| {
            for actor in [player.pawn, player.player_state, player.controller] {
                let _ = w.destroy(actor);
            }
        });
    }

    /// A client is gone: nothing more is sent to it, and its player's actors — controller, player state, pawn,
    /// and their components — leave the world (clients still playing hear they were destroyed).
    fn forget(&mut self, client: ClientId) {
        self.greeting.forget(client);
        self.fetched_by.remove(&client);
        self.identities.remove(&client);
        self.replication.leave(client);
        // Its relevancy groups go with it: a connection's number is never given again.
        world::lock(self.manager.world()).set_client_groups(client, Default::default());
        if let Some(player) = self.players.remove(&client) {
            self.destroy_player(&player);
        }
    }

    fn send(&mut self, outgoing: Vec<Outgoing>) {
        for out in outgoing {
            let channel = if out.reliable { Channel::Reliable } else { Channel::Unreliable };
            self.transport.send(out.client, channel, encode(&out.message));
        }
    }

    /// Ends play: every client is told (and disconnects), then the server's world deactivates its plugins.
    pub async fn end_play(&mut self, reason: &str) -> Result<(), ExperienceError> {
        let outgoing = self.replication.end_play(reason);
        self.send(outgoing);
        self.manager.end_play().await
    }

    /// Closes every connection (after [`end_play`](Self::end_play) has told them).
    pub fn close(&mut self, reason: &str) {
        let waiting: Vec<ClientId> = self.greeting.clients().collect();
        for client in self.replication.clients().into_iter().chain(waiting) {
            self.transport.disconnect(client, reason);
        }
    }

    /// Closes `client`'s connection between frames, telling it `reason`: its player's actors leave the world, and
    /// the next frame's notes say it was dropped. A ticketed player may join again (a ban is the matchmaker's).
    /// `false` when no such client is connected.
    pub fn kick(&mut self, client: ClientId, reason: &str) -> bool {
        let connected = self.players.contains_key(&client) || self.greeting.clients().any(|c| c == client);
        if !connected || self.dropped.contains(&client) {
            return false;
        }
        let mut notes = Vec::new();
        self.drop_client(client, Closed::Kicked, format!("kicked: {reason}"), &mut notes);
        self.between_frames.extend(notes);
        true
    }

    /// Gives back the world's manager (for reports once play has ended).
    pub fn into_manager(self) -> ExperienceManager {
        self.manager
    }
}
