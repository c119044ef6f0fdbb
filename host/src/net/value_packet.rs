//! The compact wire form of a packet of replicated values.
//!
//! A value is most of what a server sends while a game plays, so its form decides the bandwidth. Nothing in it
//! is text: a property is a number the server named once per connection ([`Update::PropertyNames`]), a
//! component is its incarnation (the update that introduced it told the client its actor and class), and
//! numbers that follow each other are sent as differences, as varints:
//!
//! - the values of one component incarnation share a header: the incarnation, as the difference from the
//!   previous header's, and the update the client must have applied first (`after`), likewise;
//! - each value is its property number and the value, whose variant tag also says "removed".
//!
//! A value carries no version: the packet's number orders it. The server always sends a property's newest value,
//! so a property's value in a later packet is never older than in an earlier one, and a client lands a value
//! only from a packet numbered after the one its current value came in.
//!
//! A value costs 3-4 bytes this way (an integer below 64: number 1, tag 1, integer 1) against about 22 with its
//! names and version written out. Decoding adds the differences wrapping, so any bytes decode to some values; a
//! hostile server's values are then checked like any other.
//!
//! [`Update::PropertyNames`]: super::protocol::Update::PropertyNames

use serde::{Deserialize, Serialize};

use crate::world::Value;

/// One replicated property's value as the replication core reads and writes it, with every number whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    /// The component incarnation the value is for: if that incarnation has gone, the value is dropped.
    pub incarnation: u64,
    /// The update (of this client's numbering) the client must have applied before the value can land: the one
    /// that introduced the component, or named the property if that came later.
    pub after: u64,
    /// The property's number, named by an earlier [`PropertyNames`](super::protocol::Update::PropertyNames).
    pub property: u32,
    /// The property's value; `None` when it was removed.
    pub value: Option<Value>,
}

/// A packet of values in their compact form (see the module documentation).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ValuePacket {
    components: Vec<ComponentValues>,
}

/// The values of one component incarnation, and what they share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ComponentValues {
    /// The incarnation, less the previous header's (the first: less 0).
    incarnation: i64,
    /// The update to wait for, less the previous header's.
    after: i64,
    values: Vec<PropertyValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PropertyValue {
    property: u32,
    value: WireValue,
}

/// A [`Value`] or its removal, in one tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum WireValue {
    Removed,
    Boolean(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl From<Option<Value>> for WireValue {
    fn from(value: Option<Value>) -> Self {
        match value {
            None => WireValue::Removed,
            Some(Value::Boolean(b)) => WireValue::Boolean(b),
            Some(Value::Integer(i)) => WireValue::Integer(i),
            Some(Value::Float(f)) => WireValue::Float(f),
            Some(Value::Text(t)) => WireValue::Text(t),
        }
    }
}

impl From<WireValue> for Option<Value> {
    fn from(value: WireValue) -> Self {
        match value {
            WireValue::Removed => None,
            WireValue::Boolean(b) => Some(Value::Boolean(b)),
            WireValue::Integer(i) => Some(Value::Integer(i)),
            WireValue::Float(f) => Some(Value::Float(f)),
            WireValue::Text(t) => Some(Value::Text(t)),
        }
    }
}

/// `now` less `before`, as the wire carries it (two's complement, so every pair has one).
fn difference(now: u64, before: u64) -> i64 {
    now.wrapping_sub(before) as i64
}

/// `before` plus a difference from the wire.
fn add(before: u64, difference: i64) -> u64 {
    before.wrapping_add(difference as u64)
}

/// Bytes a varint of `value` takes.
fn varint_len(value: u64) -> usize {
    (64 - value.max(1).leading_zeros() as usize).div_ceil(7)
}

/// Bytes a zigzag varint of `value` takes.
fn zigzag_len(value: i64) -> usize {
    varint_len(((value << 1) ^ (value >> 63)) as u64)
}

/// The bytes a property's value takes in a packet, without the header it shares with the other values of its
/// component (`None`: removed).
pub fn value_size(property: u32, value: Option<&Value>) -> usize {
    let value = match value {
        None => 1,
        Some(Value::Boolean(_)) => 2,
        Some(Value::Integer(i)) => 1 + zigzag_len(*i),
        Some(Value::Float(_)) => 9,
        Some(Value::Text(t)) => 1 + varint_len(t.len() as u64) + t.len(),
    };
    varint_len(u64::from(property)) + value
}

impl ValuePacket {
    /// The values, with every number whole again, in the order written.
    pub fn into_mutations(self) -> Vec<Mutation> {
        let (mut incarnation, mut after) = (0u64, 0u64);
        let mut mutations = Vec::new();
        for component in self.components {
            incarnation = add(incarnation, component.incarnation);
            after = add(after, component.after);
            for value in component.values {
                mutations.push(Mutation { incarnation, after, property: value.property, value: value.value.into() });
            }
        }
        mutations
    }

    /// How many values the packet holds.
    pub fn len(&self) -> usize {
        self.components.iter().map(|c| c.values.len()).sum()
    }

    /// Whether the packet holds no value.
    pub fn is_empty(&self) -> bool {
        self.components.iter().all(|c| c.values.is_empty())
    }
}

/// Writes values into a [`ValuePacket`], knowing its encoded size as it grows.
#[derive(Debug, Default)]
pub struct PacketWriter {
    packet: ValuePacket,
    incarnation: u64,
    after: u64,
    size: usize,
}

impl PacketWriter {
    /// An empty packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The encoded size of the packet with `mutation` added: at most a byte or two more than it will be (the
    /// count of values may take a byte less than counted).
    pub fn size_with(&self, mutation: &Mutation) -> usize {
        self.size + self.cost(mutation) + varint_len(self.packet.components.len() as u64 + 1)
    }

    /// The encoded size of the packet so far, at most a byte or two more than it is.
    pub fn size(&self) -> usize {
        self.size + varint_len(self.packet.components.len() as u64)
    }

    /// Whether no value has been written.
    pub fn is_empty(&self) -> bool {
        self.packet.components.is_empty()
    }

    fn opens_header(&self, mutation: &Mutation) -> bool {
        self.packet.components.is_empty() || mutation.incarnation != self.incarnation || mutation.after != self.after
    }

    fn cost(&self, mutation: &Mutation) -> usize {
        let header = if self.opens_header(mutation) {
            // The header's two differences, and its count of values (two bytes past 127 values).
            zigzag_len(difference(mutation.incarnation, self.incarnation))
                + zigzag_len(difference(mutation.after, self.after))
                + 2
        } else {
            0
        };
        header + value_size(mutation.property, mutation.value.as_ref())
    }

    /// Adds a value.
    pub fn push(&mut self, mutation: Mutation) {
        self.size += self.cost(&mutation);
        if self.opens_header(&mutation) {
            self.packet.components.push(ComponentValues {
                incarnation: difference(mutation.incarnation, self.incarnation),
                after: difference(mutation.after, self.after),
                values: Vec::new(),
            });
            self.incarnation = mutation.incarnation;
            self.after = mutation.after;
        }
        let value = PropertyValue { property: mutation.property, value: mutation.value.into() };
        self.packet.components.last_mut().expect("a header was opened").values.push(value);
    }

    /// The packet written, leaving this writer empty.
    pub fn take(&mut self) -> ValuePacket {
        std::mem::take(self).packet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutation(incarnation: u64, after: u64, property: u32, value: Option<Value>) -> Mutation {
        Mutation { incarnation, after, property, value }
    }

    #[test]
    fn values_come_back_whole_in_the_order_written_and_the_size_is_never_underestimated() {
        let written = vec![
            mutation(7, 3, 0, Some(Value::Integer(5))),
            mutation(7, 3, 1, None),
            mutation(9, 4, 0, Some(Value::Text("hello".into()))),
            mutation(2, 1, 300, Some(Value::Float(f64::NAN))),
            mutation(u64::MAX, 0, u32::MAX, Some(Value::Boolean(true))),
            mutation(u64::MAX, 0, 3, Some(Value::Integer(i64::MIN))),
        ];
        let mut writer = PacketWriter::new();
        for m in &written {
            let expected = writer.size_with(m);
            writer.push(m.clone());
            assert!(writer.size() <= expected);
            let encoded = crate::net::protocol::encode(&writer.packet).len();
            assert!(encoded <= writer.size(), "{encoded} > {}", writer.size());
            assert!(
                writer.size() <= encoded + 2 * writer.packet.components.len() + 1,
                "{} vs {encoded}",
                writer.size()
            );
        }
        let packet = writer.take();
        assert!(writer.is_empty());
        let decoded: ValuePacket = crate::net::protocol::decode(&crate::net::protocol::encode(&packet)).unwrap();
        let read = decoded.into_mutations();
        assert_eq!(read.len(), written.len());
        for (read, written) in read.iter().zip(&written) {
            assert_eq!(
                (read.incarnation, read.after, read.property),
                (written.incarnation, written.after, written.property)
            );
            assert_eq!(format!("{:?}", read.value), format!("{:?}", written.value));
        }
    }

    #[test]
    fn a_run_of_small_integers_costs_a_few_bytes_each() {
        let mut writer = PacketWriter::new();
        for incarnation in 500..600u64 {
            for property in 0..10 {
                writer.push(mutation(incarnation, 2_000, property, Some(Value::Integer(42))));
            }
        }
        let bytes = crate::net::protocol::encode(&writer.take()).len();
        // Property 1 + tag 1 + integer 1, and a header shared by ten values.
        assert!(bytes <= 3 * 1_000 + 5 * 100 + 10, "{bytes} bytes for 1,000 values");
    }

    #[test]
    fn any_bytes_that_decode_give_values_without_panicking() {
        // Differences that overflow wrap, as the writer wrote them.
        let packet = ValuePacket {
            components: vec![ComponentValues {
                incarnation: i64::MIN,
                after: -1,
                values: vec![PropertyValue { property: 1, value: WireValue::Removed }; 3],
            }],
        };
        let read = packet.into_mutations();
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].incarnation, i64::MIN as u64);
        assert_eq!(read[0].after, u64::MAX);
    }
}
