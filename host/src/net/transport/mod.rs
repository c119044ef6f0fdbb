//! How a server and its clients exchange frames: one trait for each side, and two networks behind them — QUIC
//! over UDP ([`quic`]) and an in-memory network with seeded latency, jitter, loss, duplication and reordering
//! ([`memory`]), which makes a networked test reproducible from its seed.
//!
//! Transports carry bytes; the protocol ([`super::protocol`]) gives them meaning. Both are polled from the
//! game's loop: nothing here calls into the game.

pub mod memory;
pub mod quic;
pub mod trust;

use crate::world::ClientId;

/// Which guarantees a frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Delivered once, in the order sent (updates, hellos, acknowledgements).
    Reliable,
    /// May be lost, duplicated or reordered (property values, re-sent until acknowledged).
    Unreliable,
    /// Delivered once, in the order sent among bulk frames, but behind everything else and never holding it
    /// up: large transfers (packages a client fetches) that must not delay gameplay.
    Bulk,
}

/// What a server's transport saw happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// A client connected; the transport numbered it.
    Connected(ClientId),
    /// A frame from a client, whole, on any channel.
    Received(ClientId, Vec<u8>),
    /// A client went away (it disconnected, its connection failed, or the server closed it).
    Disconnected(ClientId, String),
}

/// What a client's transport saw happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent {
    /// A frame from the server, whole, on any channel.
    Received(Vec<u8>),
    /// The connection is over, with why.
    Disconnected(String),
}

/// A server's end of a network.
pub trait ServerTransport: Send {
    /// Everything that happened since the last call, in order.
    fn poll(&mut self) -> Vec<ServerEvent>;
    /// Sends a frame to a client on `channel`, without waiting for it to leave.
    fn send(&mut self, client: ClientId, channel: Channel, frame: Vec<u8>);
    /// Closes a client's connection; it is told `reason`.
    fn disconnect(&mut self, client: ClientId, reason: &str);

    /// Where a client connects from, where the network has addresses.
    fn peer_address(&self, _client: ClientId) -> Option<std::net::SocketAddr> {
        None
    }

    /// Bytes this transport has put on the wire to the clients connected now, its own overhead included (for
    /// measurements; 0 where it does not count).
    fn bytes_sent(&self) -> u64 {
        0
    }

    /// What has crossed the wire with one client so far, where the network counts it.
    fn traffic(&self, _client: ClientId) -> Option<Traffic> {
        None
    }

    /// Bytes queued for a client on `channel` that the network has not taken yet (0 where the transport does
    /// not queue).
    fn queued(&self, _client: ClientId, _channel: Channel) -> usize {
        0
    }

    /// What has crossed the wire with every connection since the transport started, those closed since
    /// included (a flood closed between two looks at it still counts), where the network counts it.
    fn total_traffic(&self) -> Traffic {
        Traffic::default()
    }
}

/// What has crossed the wire with one client, the transport's own overhead (headers, encryption,
/// acknowledgements, retransmissions) included.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes sent to the client.
    pub bytes_sent: u64,
    /// Packets (UDP datagrams, on QUIC) sent to the client.
    pub packets_sent: u64,
    /// Bytes received from the client.
    pub bytes_received: u64,
    /// Packets (UDP datagrams, on QUIC) received from the client.
    pub packets_received: u64,
    /// The transport's estimate of the round trip, where it keeps one.
    pub round_trip: Option<std::time::Duration>,
}

/// A client's end of a network.
pub trait ClientTransport: Send {
    /// Everything that happened since the last call, in order.
    fn poll(&mut self) -> Vec<ClientEvent>;
    /// Sends a frame to the server on `channel`, without waiting for it to leave.
    fn send(&mut self, channel: Channel, frame: Vec<u8>);
    /// Closes the connection; the server is told `reason`.
    fn disconnect(&mut self, reason: &str);

    /// After [`disconnect`](Self::disconnect): resolves once the server has been told why (or a bound has
    /// passed), so a process about to exit does not cut its goodbye short.
    fn closed(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(std::future::ready(()))
    }
}

impl Traffic {
    /// The sum of two counts (a round trip is not summed: the sum has none).
    pub fn plus(self, other: Traffic) -> Traffic {
        Traffic {
            bytes_sent: self.bytes_sent.saturating_add(other.bytes_sent),
            packets_sent: self.packets_sent.saturating_add(other.packets_sent),
            bytes_received: self.bytes_received.saturating_add(other.bytes_received),
            packets_received: self.packets_received.saturating_add(other.packets_received),
            round_trip: None,
        }
    }
}
