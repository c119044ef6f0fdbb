//! Multiplayer: a server-authoritative world replicated to clients.
//!
//! The replication core ([`ServerReplication`], [`ClientReplication`]) is plain Rust over worlds and messages,
//! with no I/O: transports ([`transport`]) carry its messages — QUIC over UDP for real games, an in-memory
//! network with seeded latency, loss, duplication and reordering for tests.

pub mod consent;
pub mod fetch_budget;
mod game_client;
mod game_server;
mod greeting;
mod group_index;
pub mod mod_sync;
pub mod protocol;
mod receive;
mod replicate;
pub mod swarm;
pub mod ticket;
pub mod transport;
mod value_packet;

pub use game_client::{ClientError, ClientState, GameClient};
pub use game_server::{
    ClientStats, Closed, GameServer, ServerNote, ServerOptions, TicketPolicy, TicketReuse, DEFAULT_CLIENT_RATE,
    RECONNECT_GRACE,
};
pub use receive::{
    BufferStats, ClientReplication, ReplicationError, SessionEvent, MAX_BUFFERED, MAX_BUFFERED_PER_COMPONENT,
    MAX_PROPERTY_NAMES, MAX_PROPERTY_NAME_BYTES,
};
pub use replicate::{
    replicated_state, Outgoing, ReplicatedState, ServerReplication, IN_FLIGHT_PACKETS, OWN_VALUE_WEIGHT,
    RESEND_AFTER_FRAMES, RESEND_AFTER_FRAMES_MAX,
};

#[cfg(test)]
mod tests;
