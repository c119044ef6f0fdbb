//! What a server and its clients say to each other, and how it is framed.
//!
//! Two kinds of server message, as real engines and bevy_replicon separate them: **updates** (the experience,
//! spawns, destroys, components added and removed, end of play) go on the reliable, ordered channel, numbered
//! per client; **mutations** (replicated property values) go unreliably, latest value wins, and are re-sent until
//! the client acknowledges them. A mutation names the update that introduced its component to this client
//! (`after`), so a client that receives it first keeps it until that update has been applied. Values travel in
//! a compact form ([`ValuePacket`]): no names, numbers as differences.

use serde::{Deserialize, Serialize};

pub use super::value_packet::{value_size, Mutation, PacketWriter, ValuePacket};
use crate::world::{ActorId, ClientId};

/// Bumped whenever a message changes shape; a client and server must agree on it.
pub const PROTOCOL_VERSION: u32 = 4;

/// The largest message either side accepts: a larger one closes the connection that sent it.
pub const MAX_FRAME: usize = 1 << 20;

/// The largest unreliable packet: it must fit one UDP datagram on any path (QUIC guarantees 1,200 bytes of
/// payload).
pub const MAX_PACKET: usize = 1_100;

/// What a client says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClientMessage {
    /// The first message of a connection.
    Hello {
        /// The [`PROTOCOL_VERSION`] the client speaks: a server speaking another refuses it.
        protocol: u32,
        /// The join token, or the player's join ticket where the server asks for tickets; `None`: neither.
        token: Option<String>,
    },
    /// Mutation packets received since the last acknowledgement.
    Ack {
        /// The numbers of the packets received, at most [`IN_FLIGHT_PACKETS`](super::IN_FLIGHT_PACKETS).
        packets: Vec<u64>,
    },
    /// Send the package of this digest from `offset` on (a client fetching a plugin it lacks, a chunk at a time).
    Fetch {
        /// The digest of the package wanted, as the server's offer gives it (`sha256:<hex>`).
        digest: String,
        /// Where in the package's archive the chunk wanted starts, in bytes.
        offset: u64,
    },
}

/// What a server says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ServerMessage {
    /// The answer to a good `Hello`: who the client is, and the server's tick rate.
    Welcome {
        /// The number the server gave this client, which names its player's actors.
        client: ClientId,
        /// The frames per second the server runs at.
        tick_rate: u32,
    },
    /// The answer to a bad `Hello`, just before the server closes the connection.
    Refused {
        /// Why, in words for the player: a wrong token or ticket, another protocol version, a full server.
        reason: String,
    },
    /// A reliable update, numbered from 1 per client in the order sent.
    Update {
        /// The update's number: the client applies update `n` only after `n - 1`.
        seq: u64,
        /// The change itself.
        update: Update,
    },
    /// An unreliable packet of replicated property values.
    Mutations {
        /// The packet's number, which the client acknowledges once it has kept its values.
        packet: u64,
        /// The newest value of each property in the packet.
        values: ValuePacket,
    },
    /// Part of a package archive a client asked for, on the bulk channel: `bytes` from `offset` of `total`.
    Chunk {
        /// The digest of the package the chunk is of.
        digest: String,
        /// Where in its archive `bytes` start.
        offset: u64,
        /// The archive's whole size in bytes.
        total: u64,
        /// The archive's bytes from `offset` on, a chunk's worth at most.
        bytes: Vec<u8>,
    },
}

/// A reliable, ordered change of what the client has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Update {
    /// The experience the server plays: the client loads the experience file of this name — the one in
    /// `content`, with the plugins offered there, where the server sends it; otherwise its own.
    Experience {
        /// The experience's file name, such as `default.toml`.
        name: String,
        /// What the experience is made of, for a client to fetch what it lacks; `None` when it cannot travel and
        /// clients must have it already.
        content: Option<ExperienceContent>,
    },
    /// An actor, with the replicated components it has. `player`: the client whose player it belongs to.
    Spawn {
        /// The actor's id, the same on the server and every client.
        actor: ActorId,
        /// The actor's class.
        class: String,
        /// Whether the actor is a receiver: the client makes it one and begins its play too.
        receiver: bool,
        /// The client whose player it belongs to, where it is an autonomous proxy (a simulated one elsewhere);
        /// `None`: nobody's.
        player: Option<ClientId>,
        /// Its replicated components, each with its incarnation.
        components: Vec<ComponentRef>,
    },
    /// An actor was destroyed on the server: the client destroys its copy, and drops values waiting for its
    /// components.
    Destroy {
        /// The actor destroyed.
        actor: ActorId,
    },
    /// A replicated component was added to an actor the client has.
    AddComponent {
        /// The actor it was added to.
        actor: ActorId,
        /// The component, a new incarnation.
        component: ComponentRef,
    },
    /// A replicated component was removed from an actor: values for its incarnation are dropped from now on.
    RemoveComponent {
        /// The actor it was removed from.
        actor: ActorId,
        /// The component removed.
        component: ComponentRef,
    },
    /// A plugin the experience plays has a new version on the server (hot-reloaded there): fetch its package
    /// as on joining, and hot-reload it, keeping its state.
    Package {
        /// The new version's package.
        offer: PackageOffer,
    },
    /// The numbers the values of properties of these names carry from now on, on this connection (a name travels
    /// once, its number with every value). The numbers are the server's, given from 0 in the order it first
    /// replicated each name, so a connection is named those it needs, in any order, each once. Named together,
    /// the values that needed them share the update they wait for, and so their packet's headers.
    PropertyNames {
        /// Each property's number and name.
        names: Vec<(u32, String)>,
    },
    /// The server ended play; the client ends its own and disconnects.
    EndPlay {
        /// Why play ended, for the client's log and its player.
        reason: String,
    },
}

/// What an experience is made of, for clients to play it without having it: its files, and a package of each
/// plugin it plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExperienceContent {
    /// The experience file (first), its action sets and the bundle files they declare, by path relative to
    /// the experience's folder.
    pub files: Vec<(String, Vec<u8>)>,
    /// A package of each plugin the experience plays, for a client to fetch those it lacks.
    pub packages: Vec<PackageOffer>,
}

/// A plugin package a server offers: what it is, who signed it, and how large its archive is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageOffer {
    /// The plugin's name and version, and the package's digest and size.
    pub package: crate::package::PackageSummary,
    /// The publisher's signature of the package; `None`: unsigned, which a client fetches only if its policy
    /// allows unsigned packages.
    pub signature: Option<crate::package::Signature>,
    /// The bytes of its archive, as the chunks carry it.
    pub archive_size: u64,
    /// What its manifest says of it, for the client to check and show before fetching it (boxed: offers are
    /// rare beside the messages of play they share an enum with).
    pub plugin: Box<OfferedPlugin>,
}

/// What a package's `plugin.toml` says, as an offer carries it: a client refuses a plugin it could not run
/// before fetching it, shows the player what it asks for, and checks the package it receives says the same.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferedPlugin {
    /// The plugin API it is built against (`plugin.api`).
    pub api: String,
    /// The host versions it runs on (`plugin.host`), when it says.
    pub host: Option<String>,
    /// What it asks to be allowed (`[permissions]`).
    pub permissions: crate::feature::Permissions,
    /// The plugins it depends on, by name.
    pub dependencies: Vec<String>,
}

/// A replicated component on the server. Each time a component is added it is a new `incarnation` (numbered by
/// the server, never reused), so a value meant for a component that was since removed never lands on the one
/// that replaced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentRef {
    /// The component's class.
    pub class: String,
    /// Which time the component was added, numbered by the server.
    pub incarnation: u64,
}

/// A message that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame is larger than [`MAX_FRAME`]; its size in bytes.
    #[error("a frame of {0} bytes is over the limit of {MAX_FRAME}")]
    TooLarge(usize),
    /// The bytes are not a message of this protocol; the decoder's message.
    #[error("malformed frame: {0}")]
    Malformed(String),
}

/// A message as bytes.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    postcard::to_stdvec(message).expect("protocol messages always serialize")
}

/// A message from bytes a peer sent, refusing what is too large or does not parse.
pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, FrameError> {
    if bytes.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(bytes.len()));
    }
    postcard::from_bytes(bytes).map_err(|e| FrameError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Value;

    #[test]
    fn messages_round_trip_and_garbage_is_refused() {
        let hello = ClientMessage::Hello { protocol: PROTOCOL_VERSION, token: Some("t".into()) };
        assert_eq!(decode::<ClientMessage>(&encode(&hello)), Ok(hello));
        assert!(matches!(decode::<ClientMessage>(&[0xff, 0xff, 0xff]), Err(FrameError::Malformed(_))));
        assert_eq!(decode::<ClientMessage>(&vec![0; MAX_FRAME + 1]), Err(FrameError::TooLarge(MAX_FRAME + 1)));
    }

    #[test]
    fn a_nan_value_travels_bit_for_bit() {
        // Found by fuzzing (fuzz/regressions/server_message/nan-float-value): NaN equals nothing, so a message
        // carrying one is compared by its encoding.
        let nan = f64::from_bits(0x7ff8_0000_dead_beef);
        let mut writer = PacketWriter::new();
        writer.push(Mutation { incarnation: 1, after: 1, property: 0, value: Some(Value::Float(nan)) });
        let message = ServerMessage::Mutations { packet: 1, values: writer.take() };
        let bytes = encode(&message);
        let ServerMessage::Mutations { values, .. } = decode::<ServerMessage>(&bytes).unwrap() else { panic!() };
        assert_eq!(encode(&ServerMessage::Mutations { packet: 1, values: values.clone() }), bytes);
        let Some(Value::Float(arrived)) = values.into_mutations()[0].value else { panic!() };
        assert_eq!(arrived.to_bits(), nan.to_bits());
    }
}
