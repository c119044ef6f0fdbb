//! The wire protocol's decoders, fed what anyone on the network may send.

use gamefeature_host::net::protocol::{decode, encode, ClientMessage, ServerMessage};

/// A message a client sent (anyone on the network): decoded or refused, never a panic; what decodes
/// round-trips.
pub fn client_message(data: &[u8]) {
    round_trips::<ClientMessage>(data);
}

/// A message a server sent (a client trusts its server less than its own code).
pub fn server_message(data: &[u8]) {
    round_trips::<ServerMessage>(data);
}

/// A message that decodes encodes again to bytes that decode to the same encoding. Compared as bytes, not
/// with `==`: a replicated float may be NaN, which equals nothing, itself included, yet travels bit for bit.
fn round_trips<M: serde::Serialize + for<'de> serde::Deserialize<'de>>(data: &[u8]) {
    if let Ok(message) = decode::<M>(data) {
        let bytes = encode(&message);
        let again = decode::<M>(&bytes).expect("an encoded message decodes");
        assert_eq!(encode(&again), bytes, "a message round-trips");
    }
}
