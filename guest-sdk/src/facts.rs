//! The facts a `try-change-init-states` batch brings (WIT `chain-facts`): while the plugin answers it, questions
//! about the batch's actors that the facts cover — a feature's state, whether features reached a state, a
//! property asked for with [`add_chain_read`](crate::init_state::add_chain_read) — are answered from them,
//! without a host call. The facts are what the host knew when it asked; a plugin that changes the world while
//! deciding (through the SDK) drops them, and the host answers its questions from then on.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use crate::bindings::exports::gamefeature::plugin::init_state_callbacks::ChainFacts;
use crate::names::{same, same_or_none};
use crate::{Error, Value};

/// A property read as `actors.get-property` answers it.
type PropertyRead = Result<Option<Value>, Error>;

/// What a read found, as `chain-facts.read-kinds` codes it (see the WIT); its number in `read-values` is the
/// value, or an index into `read-texts` or `read-errors`.
mod read_kind {
    pub const ABSENT: u8 = 0;
    pub const BOOLEAN: u8 = 1;
    pub const INTEGER: u8 = 2;
    pub const FLOAT: u8 = 3;
    pub const TEXT: u8 = 4;
    pub const ERROR: u8 = 5;
}

/// One batch's facts, by actor.
pub(crate) struct Facts {
    actors: Vec<u64>,
    /// Each entry's feature, by its index in `names`.
    features: Vec<u32>,
    /// The entry being decided: the plugin nearly always asks about its actor, found without a lookup.
    deciding: Cell<usize>,
    /// Every entry by actor, made the first time the plugin asks about another batch's actor.
    entries: OnceCell<HashMap<u64, usize>>,
    /// Per feature of the batch (by its index in `names`): where each read asked for (by its index in
    /// [`READS`]) sits among an entry's reads, if the feature's entries carry it. Made the first time the
    /// plugin reads a property of an entry of that feature, so that a read compares no feature names.
    read_positions: RefCell<Vec<(u32, Vec<Option<u16>>)>>,
    names: Rc<Vec<String>>,
    facts: ChainFacts,
}

thread_local! {
    static CURRENT: RefCell<Option<Facts>> = const { RefCell::new(None) };
    /// The reads asked for, in the order asked (the order the host sends them in).
    static READS: RefCell<Vec<Read>> = const { RefCell::new(Vec::new()) };
}

/// A property asked for with the chain steps of one feature (`None`: of every feature).
struct Read {
    feature: Option<String>,
    component: String,
    property: String,
}

impl Read {
    fn is(&self, feature: Option<&str>, component: &str, property: &str) -> bool {
        same_or_none(self.feature.as_deref(), feature)
            && same(&self.component, component)
            && same(&self.property, property)
    }

    /// Whether the questions about `feature` carry it.
    fn concerns(&self, feature: &str) -> bool {
        self.feature.as_deref().is_none_or(|wanted| same(wanted, feature))
    }
}

impl Facts {
    pub(crate) fn new(actors: &[u64], features: &[u32], names: Rc<Vec<String>>, facts: ChainFacts) -> Self {
        let (actors, features) = (actors.to_vec(), features.to_vec());
        let read_positions = RefCell::new(Vec::new());
        Facts { actors, features, deciding: Cell::new(0), entries: OnceCell::new(), read_positions, names, facts }
    }

    /// The entry about `actor`.
    fn entry(&self, actor: u64) -> Option<usize> {
        let deciding = self.deciding.get();
        if self.actors.get(deciding) == Some(&actor) {
            return Some(deciding);
        }
        let entries = self.entries.get_or_init(|| self.actors.iter().enumerate().map(|(i, a)| (*a, i)).collect());
        entries.get(&actor).copied()
    }

    /// Entry `i`'s features, as (name, state ordinal); `None` when the facts do not cover them.
    fn features(&self, i: usize) -> Option<impl Iterator<Item = (&str, u8)>> {
        let facts = &self.facts;
        let start = *facts.feature_starts.get(i)? as usize;
        let end = facts.feature_starts.get(i + 1).map_or(facts.feature_names.len(), |end| *end as usize);
        let names = facts.feature_names.get(start..end)?;
        let states = facts.feature_states.get(start..end)?;
        let named = names.iter().map(|n| self.names.get(*n as usize).map_or("", String::as_str));
        Some(named.zip(states.iter().copied()))
    }

    /// Read `read` (its index in [`READS`]) of entry `i`, when the entry carries it.
    fn read(&self, i: usize, read: usize) -> Option<PropertyRead> {
        let k = self.with_positions(i, |positions| *positions.get(read)?)?;
        self.entry_read(i, k as usize)
    }

    /// Entry `i`'s read of `property` of `component`: the first read asked for it that the entry carries.
    fn read_named(&self, i: usize, component: &str, property: &str) -> Option<PropertyRead> {
        let k = self.with_positions(i, |positions| {
            READS.with_borrow(|asked| {
                let mut named = asked.iter().zip(positions).filter(|(read, k)| {
                    k.is_some() && same(&read.component, component) && same(&read.property, property)
                });
                named.next().and_then(|(_, k)| *k)
            })
        })?;
        self.entry_read(i, k as usize)
    }

    /// Entry `i`'s `k`-th read (its reads are in the order asked).
    fn entry_read(&self, i: usize, k: usize) -> Option<PropertyRead> {
        let facts = &self.facts;
        let start = *facts.read_starts.get(i)? as usize;
        let end = facts.read_starts.get(i + 1).map_or(facts.read_kinds.len(), |end| *end as usize);
        let j = start.checked_add(k).filter(|j| *j < end)?;
        self.decode(j)
    }

    /// Read `j` of the batch, from its kind and number (see WIT `chain-facts`); `None` for a code or an index out
    /// of place, which leaves the question to the host.
    fn decode(&self, j: usize) -> Option<PropertyRead> {
        let facts = &self.facts;
        let (kind, value) = (*facts.read_kinds.get(j)?, *facts.read_values.get(j)?);
        let index = || usize::try_from(value).ok();
        Some(match kind {
            read_kind::ABSENT => Ok(None),
            read_kind::BOOLEAN => Ok(Some(Value::Boolean(value != 0))),
            read_kind::INTEGER => Ok(Some(Value::Integer(value))),
            read_kind::FLOAT => Ok(Some(Value::Float(f64::from_bits(value as u64)))),
            read_kind::TEXT => Ok(Some(Value::Text(facts.read_texts.get(index()?)?.clone()))),
            read_kind::ERROR => Err(facts.read_errors.get(index()?)?.clone()),
            _ => return None,
        })
    }

    /// Runs `find` with where each read asked for sits among the reads of entry `i`'s feature.
    fn with_positions<R>(&self, i: usize, find: impl FnOnce(&[Option<u16>]) -> Option<R>) -> Option<R> {
        let feature = *self.features.get(i)?;
        let mut positions = self.read_positions.borrow_mut();
        if let Some((_, of_feature)) = positions.iter().find(|(f, _)| *f == feature) {
            return find(of_feature);
        }
        let name = self.names.get(feature as usize)?;
        let of_feature: Vec<Option<u16>> = READS.with_borrow(|asked| {
            let mut rank = 0;
            let mut position = |read: &Read| {
                let concerned = read.concerns(name).then_some(rank);
                rank += u16::from(concerned.is_some());
                concerned
            };
            asked.iter().map(&mut position).collect()
        });
        positions.push((feature, of_feature));
        find(&positions.last()?.1)
    }
}

/// Runs `answer` with `facts` as the current batch's.
pub(crate) fn answering<R>(facts: Facts, answer: impl FnOnce() -> R) -> R {
    CURRENT.set(Some(facts));
    let result = answer();
    CURRENT.set(None);
    result
}

/// Says which entry of the current batch the plugin is deciding now.
pub(crate) fn deciding(entry: usize) {
    CURRENT.with_borrow(|current| {
        if let Some(facts) = current {
            facts.deciding.set(entry);
        }
    });
}

/// Drops the current batch's facts: the plugin changed the world while deciding, so the host answers from now on.
pub(crate) fn forget() {
    CURRENT.set(None);
}

/// Records that entry `entry`'s feature took a step to `state` (the host applies it after the batch), so that
/// deciding its next step sees it; `false` when the facts are gone (the plugin changed the world while
/// deciding): the host knows the world again only once it has applied the steps taken, so the walk stops here.
pub(crate) fn advance(entry: usize, state: u8) -> bool {
    CURRENT.with_borrow_mut(|current| {
        let Some(facts) = current else { return false };
        // The entry's feature and the facts' feature names are indices into the same names: compared as numbers.
        let Some(feature) = facts.features.get(entry).copied() else { return false };
        let chain = &mut facts.facts;
        let Some(start) = chain.feature_starts.get(entry).map(|s| *s as usize) else { return false };
        let end = chain.feature_starts.get(entry + 1).map_or(chain.feature_names.len(), |end| *end as usize);
        match (start..end).find(|j| chain.feature_names.get(*j) == Some(&feature)) {
            Some(j) if j < chain.feature_states.len() => {
                chain.feature_states[j] = state;
                true
            }
            _ => false,
        }
    })
}

/// What the current batch's facts say about `actor`, when they cover it.
fn about<R>(actor: u64, read: impl FnOnce(&Facts, usize) -> Option<R>) -> Option<R> {
    CURRENT.with_borrow(|current| {
        let facts = current.as_ref()?;
        read(facts, facts.entry(actor)?)
    })
}

/// The state ordinal (0: none yet) of `feature` of `actor`, when the facts know the feature.
pub(crate) fn feature_state(actor: u64, feature: &str) -> Option<u8> {
    about(actor, |facts, i| facts.features(i)?.find(|(name, _)| same(name, feature)).map(|(_, state)| state))
}

/// Whether every feature of `actor` but `excluding` is at state ordinal `state` or later.
pub(crate) fn all_reached(actor: u64, state: u8, excluding: Option<&str>) -> Option<bool> {
    about(actor, |facts, i| {
        Some(facts.features(i)?.filter(|(name, _)| !same_or_none(Some(name), excluding)).all(|(_, s)| s >= state))
    })
}

/// Property `property` of `actor`'s `component`, when it was asked for the feature being asked about. The
/// entry's reads are those asked for its feature, in the order asked; reads asked for after the host built this
/// batch come after them, and are not in it: the host answers those.
pub(crate) fn property(actor: u64, component: &str, property: &str) -> Option<PropertyRead> {
    about(actor, |facts, i| facts.read_named(i, component, property))
}

/// Read `read` (its index among the reads asked for) of `actor`, when the entry about it carries it.
pub(crate) fn read_of(actor: u64, read: usize) -> Option<PropertyRead> {
    about(actor, |facts, i| facts.read(i, read))
}

/// Records a read the host accepted to send with the chain steps of `feature` (of every feature when `None`);
/// its index among the reads asked for, and whether it is new.
pub(crate) fn add_read(feature: Option<&str>, component: &str, property: &str) -> (usize, bool) {
    READS.with_borrow_mut(|reads| {
        if let Some(index) = reads.iter().position(|read| read.is(feature, component, property)) {
            return (index, false);
        }
        let (feature, component, property) = (feature.map(str::to_string), component.into(), property.into());
        reads.push(Read { feature, component, property });
        (reads.len() - 1, true)
    })
}

/// The index of the read, if it was already asked for.
pub(crate) fn find_read(feature: Option<&str>, component: &str, property: &str) -> Option<usize> {
    READS.with_borrow(|reads| reads.iter().position(|read| read.is(feature, component, property)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two entries: actor 7 (asked about Hero) with Hero at 2 and Input at 0, and actor 9 (asked about Input)
    /// with Hero at 4. The reads: the controller for every feature, the player state for Input only.
    fn facts() -> Facts {
        let chain = ChainFacts {
            feature_starts: vec![0, 2],
            feature_names: vec![0, 1, 0],
            feature_states: vec![2, 0, 4],
            read_starts: vec![0, 1],
            // The controller (1) of actor 7; for actor 9 an error (no `Possession` class) and the player state (5).
            read_kinds: vec![2, 5, 2],
            read_values: vec![1, 0, 5],
            read_texts: vec![],
            read_errors: vec![Error::UnknownClass("Possession".into())],
        };
        Facts::new(&[7, 9], &[0, 1], Rc::new(vec!["Hero".into(), "Input".into()]), chain)
    }

    #[test]
    fn every_kind_of_read_is_decoded_and_one_out_of_place_is_left_to_the_host() {
        let chain = ChainFacts {
            feature_starts: vec![0],
            feature_names: vec![0],
            feature_states: vec![1],
            read_starts: vec![0],
            read_kinds: vec![0, 1, 3, 4, 5, 2, 9, 4],
            read_values: vec![0, 1, (-0.5f64).to_bits() as i64, 0, 0, -3, 0, 3],
            read_texts: vec!["hero".into()],
            read_errors: vec![Error::UnknownActor(3)],
        };
        let facts = Facts::new(&[7], &[0], Rc::new(vec!["Hero".into()]), chain);
        assert!(matches!(facts.entry_read(0, 0), Some(Ok(None))));
        assert!(matches!(facts.entry_read(0, 1), Some(Ok(Some(Value::Boolean(true))))));
        assert!(matches!(facts.entry_read(0, 2), Some(Ok(Some(Value::Float(f)))) if f == -0.5));
        assert!(matches!(facts.entry_read(0, 3), Some(Ok(Some(Value::Text(t)))) if t == "hero"));
        assert!(matches!(facts.entry_read(0, 4), Some(Err(Error::UnknownActor(3)))));
        assert!(matches!(facts.entry_read(0, 5), Some(Ok(Some(Value::Integer(-3))))));
        assert!(facts.entry_read(0, 6).is_none(), "a kind no version has");
        assert!(facts.entry_read(0, 7).is_none(), "a text past the texts");
        assert!(facts.entry_read(0, 8).is_none(), "past the entry's reads");
    }

    #[test]
    fn questions_about_the_batchs_actors_are_answered_from_the_facts() {
        add_read(None, "Possession", "controller");
        add_read(Some("Input"), "Possession", "player-state");
        answering(facts(), || {
            assert_eq!(feature_state(7, "Input"), Some(0));
            assert_eq!(feature_state(9, "Hero"), Some(4));
            assert_eq!(feature_state(9, "Input"), None, "unknown to the facts: the host answers");
            assert_eq!(feature_state(8, "Hero"), None, "not in the batch: the host answers");
            assert_eq!(all_reached(7, 2, None), Some(false));
            assert_eq!(all_reached(7, 2, Some("Input")), Some(true));
            // Deciding the second entry: its actor and the others' are found alike.
            deciding(1);
            assert_eq!(feature_state(9, "Hero"), Some(4));
            assert_eq!(feature_state(7, "Hero"), Some(2));
            assert_eq!(feature_state(8, "Hero"), None);
            assert!(matches!(property(7, "Possession", "controller"), Some(Ok(Some(Value::Integer(1))))));
            // By the read's index: the controller (read 0) for both, the player state (read 1) for Input only.
            assert!(matches!(read_of(7, 0), Some(Ok(Some(Value::Integer(1))))));
            assert!(matches!(read_of(9, 1), Some(Ok(Some(Value::Integer(5))))));
            assert!(read_of(7, 1).is_none(), "not asked for Hero's steps");
            assert!(matches!(property(9, "Possession", "controller"), Some(Err(Error::UnknownClass(_)))));
            assert!(matches!(property(9, "Possession", "player-state"), Some(Ok(Some(Value::Integer(5))))));
            assert!(property(7, "Possession", "player-state").is_none(), "asked for Input's steps only");
            // Asked for after the host built the batch: not in it, so the host answers.
            add_read(None, "Possession", "pawn-data");
            assert!(property(7, "Possession", "pawn-data").is_none());
            assert!(property(9, "Possession", "pawn-data").is_none());
            assert!(matches!(property(7, "Possession", "controller"), Some(Ok(Some(Value::Integer(1))))));
            // A step taken is seen by the next decision about the entry's feature.
            assert!(advance(0, 3));
            assert_eq!(feature_state(7, "Hero"), Some(3));
            assert_eq!(feature_state(7, "Input"), Some(0), "the actor's other features stay");
            assert!(!advance(1, 1), "a feature the facts do not know: the host is asked again");
            assert_eq!(feature_state(9, "Input"), None);
            // A change made while deciding drops the facts, and ends the walk.
            forget();
            assert_eq!(feature_state(7, "Input"), None);
            assert!(!advance(0, 4));
        });
        assert_eq!(feature_state(7, "Input"), None, "no facts outside a batch");
    }
}
