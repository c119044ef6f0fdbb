//! Batches of callbacks for one plugin instance, laid out as the WIT exports take them: parallel flat lists,
//! with every name sent once per batch.

use rustc_hash::FxHashMap as HashMap;

use super::reads::PropertyReads;
use crate::world::component_manager::Name;

/// Builds the `names` list of a batch: each interned name gets an index the first time it is used.
#[derive(Debug, Default)]
pub struct BatchNames {
    /// The interned name of each of `names`, in the same order.
    interned: Vec<Name>,
    /// Each name's index, once a batch has more than [`BatchNames::SCANNED`] of them.
    indices: HashMap<Name, u32>,
    /// The name looked up last: a batch's items mostly share their name (one event sent to many actors).
    last: Option<(Name, u32)>,
    /// The batch's names, each once, in order of first use: the list the batch sends.
    pub names: Vec<String>,
}

impl BatchNames {
    /// How many names are found by a scan: a batch usually names a handful (an event, a feature or two), which
    /// a scan finds sooner than a hash would.
    const SCANNED: usize = 16;

    /// The batch index of a name, adding its text (from `text`) on first use.
    // Always inlined: the common case (the name of the item before) is one comparison, called per entry.
    #[inline(always)]
    pub fn index(&mut self, name: Name, text: impl FnOnce() -> String) -> u32 {
        match self.last {
            Some((last, index)) if last == name => index,
            _ => self.look_up(name, text),
        }
    }

    fn look_up(&mut self, name: Name, text: impl FnOnce() -> String) -> u32 {
        let found = if self.interned.len() <= Self::SCANNED {
            self.interned.iter().position(|known| *known == name).map(|i| i as u32)
        } else {
            self.indices.get(&name).copied()
        };
        let index = match found {
            Some(index) => index,
            None => {
                let index = self.names.len() as u32;
                self.names.push(text());
                self.interned.push(name);
                if self.interned.len() > Self::SCANNED {
                    if self.indices.is_empty() {
                        self.indices.extend(self.interned.iter().enumerate().map(|(i, name)| (*name, i as u32)));
                    } else {
                        self.indices.insert(name, index);
                    }
                }
                index
            }
        };
        self.last = Some((name, index));
        index
    }
}

/// Extension events: handler `handlers[i]` gets event `names[events[i]]` about `actors[i]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExtensionBatch {
    /// For each event, the plugin's own number for the handler that hears it.
    pub handlers: Vec<u32>,
    /// For each event, the raw id of the actor it is about.
    pub actors: Vec<u64>,
    /// For each event, the index of its name in `names`.
    pub events: Vec<u32>,
    /// The event names, each once: `ReceiverAdded`, `ExtensionRemoved` and the other built-in ones, or a custom
    /// event's.
    pub names: Vec<String>,
}

// Batches are built from a run of known length: each list is sized once rather than grown entry by entry.

impl ExtensionBatch {
    /// An empty batch with room for `entries` events.
    pub fn with_capacity(entries: usize) -> Self {
        ExtensionBatch {
            handlers: Vec::with_capacity(entries),
            actors: Vec::with_capacity(entries),
            events: Vec::with_capacity(entries),
            names: Vec::new(),
        }
    }
}

/// What the host knows about the actors of a chain step as it asks whether they may take it (WIT
/// `chain-facts`): entry `i`'s actor's features are `feature_names[j]` (indices into the batch's names) at
/// `feature_states[j]` for `j` in `feature_starts[i]..feature_starts[i + 1]`; read `k` of entry `i` is
/// `reads.get(j)` for `j` in `read_starts[i]..read_starts[i + 1]`, the properties the plugin asked for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ChainFacts {
    /// For each entry, where its actor's features start in `feature_names` and `feature_states`; they end where the
    /// next entry's start (the last entry's at the end).
    pub feature_starts: Vec<u32>,
    /// Each feature registered on an entry's actor, as an index into the batch's names.
    pub feature_names: Vec<u32>,
    /// Each of those features' init state now, as an ordinal (`0`: no state).
    pub feature_states: Vec<u8>,
    /// For each entry, where its property reads start in `reads`; they end where the next entry's start.
    pub read_starts: Vec<u32>,
    /// The properties the plugin asked to have read for each entry's feature, as the world answered them when asked.
    pub reads: PropertyReads,
}

/// One step of several features' init-state chains: feature `names[features[i]]` of `actors[i]` from state
/// ordinal `currents[i]` to `desireds[i]`; when asking, with the `facts` the answers need.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ChainBatch {
    /// For each entry, the raw id of its actor; no actor appears twice in a batch.
    pub actors: Vec<u64>,
    /// For each entry, the index in `names` of the feature that walks its chain.
    pub features: Vec<u32>,
    /// For each entry, the feature's init state now, as an ordinal into the world's init states (`0`: no state).
    pub currents: Vec<u8>,
    /// For each entry, the state of the walk's first step, as an ordinal.
    pub desireds: Vec<u8>,
    /// The feature names the batch uses, each once.
    pub names: Vec<String>,
    /// What the plugin's decisions need to know without calling the host; empty in the second call of an API version
    /// that asks and prepares a step apart.
    pub facts: ChainFacts,
}

impl ChainBatch {
    /// An empty batch with room for `entries` entries.
    pub fn with_capacity(entries: usize) -> Self {
        ChainBatch {
            actors: Vec::with_capacity(entries),
            features: Vec::with_capacity(entries),
            currents: Vec::with_capacity(entries),
            desireds: Vec::with_capacity(entries),
            ..ChainBatch::default()
        }
    }

    /// The entries whose `keep` is true, without the facts: for an API version that asks and prepares a step in
    /// two calls, the second call's batch.
    pub fn only(&self, keep: &[bool]) -> ChainBatch {
        let kept = |i: &usize| keep.get(*i).copied().unwrap_or(false);
        let entries = (0..self.actors.len()).filter(kept);
        ChainBatch {
            actors: entries.clone().map(|i| self.actors[i]).collect(),
            features: entries.clone().map(|i| self.features[i]).collect(),
            currents: entries.clone().map(|i| self.currents[i]).collect(),
            desireds: entries.map(|i| self.desireds[i]).collect(),
            names: self.names.clone(),
            facts: ChainFacts::default(),
        }
    }
}

/// How far one entry of a [`ChainBatch`] went: `steps` states forward from its current one, and whether its walk
/// ended at a refused step. An entry that went forward and was not refused is asked about again.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ChainWalk {
    /// How many states forward the entry's feature went.
    pub steps: u8,
    /// Whether the walk ended because a step was refused, rather than stopping on its own or reaching the end.
    pub refused: bool,
}

impl ChainWalk {
    /// The answer of an API version that decides one step at a time: the step taken, or refused.
    pub fn one_step(allowed: bool) -> Self {
        ChainWalk { steps: u8::from(allowed), refused: !allowed }
    }

    /// Whether the host asks about the entry again: it went forward, and nothing refused it.
    pub fn goes_on(self) -> bool {
        self.steps > 0 && !self.refused
    }

    /// The walks of a batch as a plugin answers them (WIT `chain-walks`): each entry's steps, and the entries
    /// whose walk was refused, by index. A refused index past the batch is the plugin's fault, named in the error.
    pub fn from_lists(steps: &[u8], refused: &[u32]) -> Result<Vec<ChainWalk>, String> {
        let mut walks: Vec<ChainWalk> = steps.iter().map(|steps| ChainWalk { steps: *steps, refused: false }).collect();
        for index in refused {
            let entries = walks.len();
            let walk = walks
                .get_mut(*index as usize)
                .ok_or_else(|| format!("refused entry {index} of a batch of {entries} entries"))?;
            walk.refused = true;
        }
        Ok(walks)
    }
}

/// Features to check: feature `names[features[i]]` of `actors[i]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FeatureBatch {
    /// For each entry, the raw id of its actor; an actor appears once per feature of it the plugin implements.
    pub actors: Vec<u64>,
    /// For each entry, the index in `names` of the feature asked to move forward.
    pub features: Vec<u32>,
    /// The feature names the batch uses, each once.
    pub names: Vec<String>,
}

impl FeatureBatch {
    /// An empty batch with room for `entries` entries.
    pub fn with_capacity(entries: usize) -> Self {
        FeatureBatch { actors: Vec::with_capacity(entries), features: Vec::with_capacity(entries), names: Vec::new() }
    }
}

/// Init-state notifications: subscription `ids[i]` saw feature `names[features[i]]` of `actors[i]` reach
/// state ordinal `states[i]`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StateChangeBatch {
    /// For each change, the plugin's own number for the subscription that saw it.
    pub ids: Vec<u32>,
    /// For each change, the raw id of the actor whose feature changed state.
    pub actors: Vec<u64>,
    /// For each change, the index in `names` of the feature that changed state.
    pub features: Vec<u32>,
    /// For each change, the state reached, as an ordinal into the world's init states (as it was then, even if it has
    /// moved on).
    pub states: Vec<u8>,
    /// The feature names the batch uses, each once.
    pub names: Vec<String>,
}

impl StateChangeBatch {
    /// An empty batch with room for `entries` changes.
    pub fn with_capacity(entries: usize) -> Self {
        StateChangeBatch {
            ids: Vec::with_capacity(entries),
            actors: Vec::with_capacity(entries),
            features: Vec::with_capacity(entries),
            states: Vec::with_capacity(entries),
            names: Vec::new(),
        }
    }
}

/// Replicated properties that changed on a client (rep-notify): property `names[properties[i]]` of the
/// `names[components[i]]` component of `actors[i]` went from `olds[i]` to `news[i]`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ReplicatedBatch {
    /// For each change, the raw id of the actor whose component changed.
    pub actors: Vec<u64>,
    /// For each change, the index in `names` of the component class.
    pub components: Vec<u32>,
    /// For each change, the index in `names` of the property.
    pub properties: Vec<u32>,
    /// For each change, the value before it; `None` when the property had no value on this client yet.
    pub olds: Vec<Option<crate::world::Value>>,
    /// For each change, the value received from the server.
    pub news: Vec<crate::world::Value>,
    /// The component class and property names the batch uses, each once.
    pub names: Vec<String>,
}

impl ReplicatedBatch {
    /// The batch as batches of at most `max` entries each, in order (each with every name: entries name them
    /// by index).
    pub fn chunks(&self, max: usize) -> Vec<ReplicatedBatch> {
        let max = max.max(1);
        (0..self.actors.len())
            .step_by(max)
            .map(|start| {
                let end = (start + max).min(self.actors.len());
                ReplicatedBatch {
                    actors: self.actors[start..end].to_vec(),
                    components: self.components[start..end].to_vec(),
                    properties: self.properties[start..end].to_vec(),
                    olds: self.olds[start..end].to_vec(),
                    news: self.news[start..end].to_vec(),
                    names: self.names.clone(),
                }
            })
            .collect()
    }
}

/// Watched properties that changed: watch `ids[i]` saw its property of `actors[i]` go from `olds[i]` to
/// `news[i]` (`None`: no value).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PropertyBatch {
    /// For each change, the plugin's own number for the watch that saw it.
    pub ids: Vec<u32>,
    /// For each change, the raw id of the actor whose property changed.
    pub actors: Vec<u64>,
    /// For each change, the value before it; `None` when the property had none.
    pub olds: Vec<Option<crate::world::Value>>,
    /// For each change, the value after it; `None` when the property has none now.
    pub news: Vec<Option<crate::world::Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::component_manager::Names;

    /// A batch's walks come back as steps and refused indices; an index past the batch is refused whole.
    #[test]
    fn walks_are_read_from_their_lists_and_a_refused_index_must_name_an_entry() {
        let walks = ChainWalk::from_lists(&[2, 0, 1], &[1, 2]).unwrap();
        let expected =
            [ChainWalk { steps: 2, refused: false }, ChainWalk { steps: 0, refused: true }, ChainWalk::one_step(true)];
        assert_eq!(walks, [expected[0], expected[1], ChainWalk { steps: 1, refused: true }]);
        assert_eq!(walks.iter().map(|w| w.goes_on()).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(ChainWalk::from_lists(&[], &[]).unwrap(), []);
        let error = ChainWalk::from_lists(&[1, 1], &[2]).unwrap_err();
        assert!(error.contains("refused entry 2 of a batch of 2"), "{error}");
    }

    /// However many names a batch holds (past the few found by a scan), each is listed once and keeps its index.
    #[test]
    fn each_name_is_listed_once_at_the_index_of_its_first_use() {
        let mut interner = Names::default();
        let interned: Vec<Name> = (0..40).map(|i| interner.intern(&format!("Name{i}"))).collect();
        let mut names = BatchNames::default();
        for round in 0..3 {
            for (i, name) in interned.iter().enumerate().rev().step_by(round + 1) {
                let text = || format!("Name{i}");
                let index = names.index(*name, text) as usize;
                assert_eq!(names.names[index], format!("Name{i}"), "round {round}");
                assert_eq!(names.index(*name, text) as usize, index, "the same name again");
            }
        }
        assert_eq!(names.names.len(), interned.len());
        let mut sorted = names.names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), interned.len(), "no name twice");
    }

    #[test]
    fn a_replicated_batch_splits_into_batches_of_at_most_the_limit_in_order() {
        let batch = ReplicatedBatch {
            actors: (0..600).collect(),
            components: vec![0; 600],
            properties: vec![1; 600],
            olds: vec![None; 600],
            news: (0..600).map(crate::world::Value::Integer).collect(),
            names: vec!["Stats".into(), "hp".into()],
        };
        let chunks = batch.chunks(256);
        assert_eq!(chunks.iter().map(|c| c.actors.len()).collect::<Vec<_>>(), [256, 256, 88]);
        assert_eq!(chunks[2].actors[0], 512);
        assert!(chunks.iter().all(|c| c.names == batch.names && c.news.len() == c.actors.len()));
    }
}
