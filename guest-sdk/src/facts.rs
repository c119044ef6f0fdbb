//! The facts a `can-change-init-states` batch brings (WIT `chain-facts`): while the plugin answers it, questions
//! about the batch's actors that the facts cover — a feature's state, whether features reached a state, a
//! property asked for with [`add_chain_read`](crate::init_state::add_chain_read) — are answered from them,
//! without a host call. Like Unreal's `CanChangeInitState`, a decision is a question, not a change: it sees the
//! world as it was when the host asked.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::bindings::exports::gamefeature::plugin::init_state_callbacks::ChainFacts;
use crate::{Error, Value};

/// One batch's facts, by actor.
pub(crate) struct Facts {
    entries: HashMap<u64, usize>,
    names: Rc<Vec<String>>,
    facts: ChainFacts,
}

thread_local! {
    static CURRENT: RefCell<Option<Facts>> = const { RefCell::new(None) };
    /// The (component, property) pairs asked for, in the order the host numbers them.
    static READS: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

impl Facts {
    pub(crate) fn new(actors: &[u64], names: Rc<Vec<String>>, facts: ChainFacts) -> Self {
        let entries = actors.iter().enumerate().map(|(i, actor)| (*actor, i)).collect();
        Facts { entries, names, facts }
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
}

/// Runs `answer` with `facts` as the current batch's.
pub(crate) fn answering<R>(facts: Facts, answer: impl FnOnce() -> R) -> R {
    CURRENT.set(Some(facts));
    let result = answer();
    CURRENT.set(None);
    result
}

/// What the current batch's facts say about `actor`, when they cover it.
fn about<R>(actor: u64, read: impl FnOnce(&Facts, usize) -> Option<R>) -> Option<R> {
    CURRENT.with_borrow(|current| {
        let facts = current.as_ref()?;
        read(facts, *facts.entries.get(&actor)?)
    })
}

/// The state ordinal (0: none yet) of `feature` of `actor`, when the facts know the feature.
pub(crate) fn feature_state(actor: u64, feature: &str) -> Option<u8> {
    about(actor, |facts, i| facts.features(i)?.find(|(name, _)| *name == feature).map(|(_, state)| state))
}

/// Whether every feature of `actor` but `excluding` is at state ordinal `state` or later.
pub(crate) fn all_reached(actor: u64, state: u8, excluding: Option<&str>) -> Option<bool> {
    about(actor, |facts, i| {
        Some(facts.features(i)?.filter(|(name, _)| Some(*name) != excluding).all(|(_, s)| s >= state))
    })
}

/// Property `property` of `actor`'s `component`, when it was asked for.
pub(crate) fn property(actor: u64, component: &str, property: &str) -> Option<Result<Option<Value>, Error>> {
    let k = READS.with_borrow(|reads| reads.iter().position(|(c, p)| c == component && p == property))?;
    let n = READS.with_borrow(Vec::len);
    about(actor, |facts, i| facts.facts.reads.get(i * n + k).cloned())
}

/// Records a (component, property) pair the host accepted to send with every batch; `false` if it was already.
pub(crate) fn add_read(component: &str, property: &str) -> bool {
    READS.with_borrow_mut(|reads| {
        if reads.iter().any(|(c, p)| c == component && p == property) {
            return false;
        }
        reads.push((component.to_string(), property.to_string()));
        true
    })
}

/// Whether the pair was already asked for.
pub(crate) fn has_read(component: &str, property: &str) -> bool {
    READS.with_borrow(|reads| reads.iter().any(|(c, p)| c == component && p == property))
}
