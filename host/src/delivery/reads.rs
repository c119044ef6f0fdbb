//! The property reads a chain-step question carries (WIT `chain-facts`), coded as numbers.
//!
//! A read is what `actors.get-property` would answer: no value, a value, or an error. Sent as a list of
//! `result<option<value>, error>`, every read costs the call a lowering step per level of nesting; coded as a
//! kind and a number per read, a batch's reads cross the boundary as two copies of memory. Only texts and
//! errors, rare in a chain's decisions, go in lists of their own.

use crate::world::{Value, WorldError};

/// What a read found: its code in `chain-facts.read-kinds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ReadKind {
    /// No value (`ok(none)`).
    Absent = 0,
    /// A boolean: its number is `0` or `1`.
    Boolean = 1,
    /// An integer: its number is the integer.
    Integer = 2,
    /// A float: its number is its IEEE 754 bits.
    Float = 3,
    /// A text: its number is its index among the texts.
    Text = 4,
    /// An error: its number is its index among the errors.
    Error = 5,
}

impl ReadKind {
    fn from_code(code: u8) -> Option<ReadKind> {
        [Self::Absent, Self::Boolean, Self::Integer, Self::Float, Self::Text, Self::Error].get(code as usize).copied()
    }
}

/// Reads in order: read `j` is of kind `kinds[j]` with number `values[j]`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PropertyReads {
    /// Each read's [`ReadKind`], as its code.
    pub kinds: Vec<u8>,
    /// Each read's number, whose meaning its kind gives (the value itself, or an index into `texts` or `errors`).
    pub values: Vec<i64>,
    /// The text values read, in order, indexed by the numbers of `Text` reads.
    pub texts: Vec<String>,
    /// The errors the world answered, in order, indexed by the numbers of `Error` reads.
    pub errors: Vec<WorldError>,
}

impl PropertyReads {
    /// How many reads there are.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether there are no reads.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Makes room for `additional` more reads (their kinds and numbers), so pushing them does not reallocate.
    pub fn reserve(&mut self, additional: usize) {
        self.kinds.reserve(additional);
        self.values.reserve(additional);
    }

    /// Adds a read, as the world answered it.
    pub fn push(&mut self, read: Result<Option<&Value>, WorldError>) {
        let (kind, value) = match read {
            Ok(None) => (ReadKind::Absent, 0),
            Ok(Some(Value::Boolean(b))) => (ReadKind::Boolean, i64::from(*b)),
            Ok(Some(Value::Integer(i))) => (ReadKind::Integer, *i),
            Ok(Some(Value::Float(f))) => (ReadKind::Float, f.to_bits() as i64),
            Ok(Some(Value::Text(text))) => {
                self.texts.push(text.clone());
                (ReadKind::Text, self.texts.len() as i64 - 1)
            }
            Err(error) => {
                self.errors.push(error);
                (ReadKind::Error, self.errors.len() as i64 - 1)
            }
        };
        self.kinds.push(kind as u8);
        self.values.push(value);
    }

    /// Read `j` as the world answered it; `None` past the end, or for a code or index out of place.
    pub fn get(&self, j: usize) -> Option<Result<Option<Value>, WorldError>> {
        let (kind, value) = (ReadKind::from_code(*self.kinds.get(j)?)?, *self.values.get(j)?);
        Some(match kind {
            ReadKind::Absent => Ok(None),
            ReadKind::Boolean => Ok(Some(Value::Boolean(value != 0))),
            ReadKind::Integer => Ok(Some(Value::Integer(value))),
            ReadKind::Float => Ok(Some(Value::Float(f64::from_bits(value as u64)))),
            ReadKind::Text => Ok(Some(Value::Text(self.texts.get(usize::try_from(value).ok()?)?.clone()))),
            ReadKind::Error => Err(self.errors.get(usize::try_from(value).ok()?)?.clone()),
        })
    }

    /// Every read, in order.
    pub fn decoded(&self) -> Vec<Result<Option<Value>, WorldError>> {
        (0..self.len()).map_while(|j| self.get(j)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::ActorId;

    #[test]
    fn every_read_comes_back_as_it_was_answered() {
        let unknown = WorldError::UnknownActor(ActorId::from_raw(7));
        let answers = [
            Ok(None),
            Ok(Some(Value::Boolean(true))),
            Ok(Some(Value::Boolean(false))),
            Ok(Some(Value::Integer(i64::MIN))),
            Ok(Some(Value::Float(-0.5))),
            Ok(Some(Value::Float(f64::INFINITY))),
            Ok(Some(Value::Text("hero".into()))),
            Err(unknown.clone()),
            Ok(Some(Value::Text(String::new()))),
            Err(WorldError::Invalid("bad".into())),
            Ok(Some(Value::Integer(-1))),
        ];
        let mut reads = PropertyReads::default();
        for answer in &answers {
            reads.push(answer.as_ref().map(Option::as_ref).map_err(Clone::clone));
        }
        assert_eq!(reads.len(), answers.len());
        assert_eq!(reads.decoded(), answers);
        assert_eq!((reads.texts.len(), reads.errors.len()), (2, 2), "only texts and errors take lists of their own");
        assert_eq!(reads.kinds[..4], [0, 1, 1, 2]);
    }

    #[test]
    fn a_code_or_index_out_of_place_reads_as_nothing() {
        let mut reads = PropertyReads::default();
        reads.push(Ok(Some(&Value::Text("a".into()))));
        reads.push(Ok(Some(&Value::Integer(1))));
        reads.values[0] = 5;
        reads.kinds[1] = 9;
        assert_eq!(reads.get(0), None);
        assert_eq!(reads.get(1), None);
        assert_eq!(reads.get(2), None);
    }
}
