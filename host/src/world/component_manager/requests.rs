//! Component requests: "every actor of class R (or a subclass) gets a component of class C while I hold this".
//!
//! Requests are ref-counted per (receiver class, component class) pair, as in Unreal: only the first request
//! for a pair creates components on existing actors, and only releasing the last one removes them.

use rustc_hash::FxHashMap as HashMap;

use super::OwnerId;
use crate::world::{same_name, ClassKey, ClassName};

/// The (receiver class, component class) pair a request is about. Components created for a request remember
/// their key, so releasing the last handle removes exactly those.
#[derive(Debug, Clone, Eq, PartialOrd, Ord)]
pub struct RequestKey {
    /// The class whose actors, and those of its subclasses, get the component.
    pub receiver_class: ClassName,
    /// The class of the component they get.
    pub component_class: ClassName,
}

impl PartialEq for RequestKey {
    /// The same pair, found by pointer when both keys hold the world's shared names (as every key the world
    /// makes does), else by text.
    fn eq(&self, other: &Self) -> bool {
        same_name(&self.receiver_class, &other.receiver_class)
            && same_name(&self.component_class, &other.component_class)
    }
}

impl std::hash::Hash for RequestKey {
    /// By text, as equality ends.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.receiver_class.hash(state);
        self.component_class.hash(state);
    }
}

/// How a request adds components.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestFlags {
    /// Skip actors that already have a component of the class (from any source).
    pub add_unique: bool,
}

/// Proof of one request. Not `Clone`: each handle is released exactly once, through the manager that made it.
#[derive(Debug, PartialEq, Eq, Hash)]
#[must_use = "dropping the handle without releasing it keeps the request alive for the world's lifetime"]
pub struct RequestHandle {
    id: u64,
}

impl RequestHandle {
    /// A number unique among this manager's handles, for logs.
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// The live component requests of one world.
#[derive(Debug, Default)]
pub struct ComponentRequests {
    counts: HashMap<RequestKey, (u32, RequestFlags)>,
    handles: HashMap<u64, (RequestKey, OwnerId)>,
    // Pairs in the order they were first requested: components are added to new receivers in this order.
    order: Vec<RequestKey>,
    next_id: u64,
}

impl ComponentRequests {
    /// Records a request. Returns its handle and whether it is the first live request for its pair (only then
    /// must components be added to existing receivers).
    /// The flags of the first live request for a pair apply to the pair.
    pub fn add(&mut self, key: RequestKey, owner: OwnerId, flags: RequestFlags) -> (RequestHandle, bool) {
        self.next_id += 1;
        let id = self.next_id;
        let (count, _) = self.counts.entry(key.clone()).or_insert((0, flags));
        *count += 1;
        let first = *count == 1;
        if first {
            self.order.push(key.clone());
        }
        self.handles.insert(id, (key, owner));
        (RequestHandle { id }, first)
    }

    /// Whether `owner` holds a request for `key`: the components that pair added are (also) its own.
    pub fn held_by(&self, owner: OwnerId, key: &RequestKey) -> bool {
        self.handles.values().any(|(k, o)| *o == owner && k == key)
    }

    /// Releases a handle. Returns the pair when this was its last live request: its components must go.
    /// A handle this manager did not make (or already released) returns `None` and changes nothing.
    pub fn release(&mut self, handle: RequestHandle) -> Option<RequestKey> {
        let (key, _) = self.handles.remove(&handle.id)?;
        let (count, _) = self.counts.get_mut(&key).expect("a live handle has a count");
        *count -= 1;
        if *count > 0 {
            return None;
        }
        self.counts.remove(&key);
        self.order.retain(|k| k != &key);
        Some(key)
    }

    /// The component classes a new receiver gets, given its class chain (most derived first): for each level of
    /// the chain, the live requests on that class in the order they were made. This is Unreal's walk from the
    /// most derived class to the base.
    pub fn components_for<'a>(&'a self, class_chain: &'a [&'a str]) -> impl Iterator<Item = &'a RequestKey> + 'a {
        class_chain.iter().flat_map(move |class| self.order.iter().filter(move |key| &*key.receiver_class == *class))
    }

    /// The live requests on exactly `class`, in the order they were made: one level of
    /// [`components_for`](Self::components_for), the class matched by pointer.
    pub fn components_on<'a>(&'a self, class: &'a ClassKey) -> impl Iterator<Item = &'a RequestKey> + 'a {
        self.order.iter().filter(move |key| same_name(&key.receiver_class, class.name()))
    }

    /// How many handles are live for a pair.
    pub fn count(&self, key: &RequestKey) -> u32 {
        self.counts.get(key).map_or(0, |(count, _)| *count)
    }

    /// The flags that apply to a live pair.
    pub fn flags(&self, key: &RequestKey) -> RequestFlags {
        self.counts.get(key).map_or_else(RequestFlags::default, |(_, flags)| *flags)
    }

    /// The handles one owner holds, for releasing them all when it goes.
    pub fn handles_of(&self, owner: OwnerId) -> Vec<RequestHandle> {
        let mut ids: Vec<u64> = self.handles.iter().filter(|(_, (_, o))| *o == owner).map(|(id, _)| *id).collect();
        ids.sort_unstable();
        ids.into_iter().map(|id| RequestHandle { id }).collect()
    }

    /// How many handles are live in total.
    pub fn live_handles(&self) -> usize {
        self.handles.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(r: &str, c: &str) -> RequestKey {
        RequestKey { receiver_class: r.into(), component_class: c.into() }
    }

    #[test]
    fn ref_counted_per_pair() {
        let mut requests = ComponentRequests::default();
        let (a, first_a) = requests.add(key("Pawn", "Health"), OwnerId::HOST, RequestFlags::default());
        let (b, first_b) = requests.add(key("Pawn", "Health"), OwnerId::HOST, RequestFlags::default());
        assert!(first_a && !first_b);
        assert_eq!(requests.count(&key("Pawn", "Health")), 2);
        assert_eq!(requests.release(a), None);
        assert_eq!(requests.release(b), Some(key("Pawn", "Health")));
        assert_eq!(requests.live_handles(), 0);
    }

    #[test]
    fn unknown_handles_change_nothing() {
        let mut requests = ComponentRequests::default();
        let (a, _) = requests.add(key("Pawn", "Health"), OwnerId::HOST, RequestFlags::default());
        assert_eq!(requests.release(RequestHandle { id: 999 }), None);
        assert_eq!(requests.count(&key("Pawn", "Health")), 1);
        assert!(requests.release(a).is_some());
    }

    #[test]
    fn new_receivers_walk_most_derived_first() {
        let mut requests = ComponentRequests::default();
        let _base = requests.add(key("Pawn", "Movement"), OwnerId::HOST, RequestFlags::default());
        let _derived = requests.add(key("Character", "Health"), OwnerId::HOST, RequestFlags::default());
        let chain = ["Character", "Pawn", "Actor"];
        let classes: Vec<_> = requests.components_for(&chain).map(|k| &*k.component_class).collect();
        assert_eq!(classes, ["Health", "Movement"]);
    }

    /// One level of the chain finds the requests on that class, whether the key holds the registry's shared
    /// name (matched by pointer) or a copy of its text.
    #[test]
    fn a_chain_level_finds_the_requests_on_its_class_by_its_key() {
        let classes = crate::world::ClassRegistry::default();
        let pawn = classes.key("Pawn").unwrap();
        let mut requests = ComponentRequests::default();
        let shared = RequestKey { receiver_class: pawn.name().clone(), component_class: "Movement".into() };
        let _shared = requests.add(shared, OwnerId::HOST, RequestFlags::default());
        let _copied = requests.add(key("Pawn", "Health"), OwnerId::HOST, RequestFlags::default());
        let _other = requests.add(key("Character", "Input"), OwnerId::HOST, RequestFlags::default());
        let on_pawn: Vec<_> = requests.components_on(&pawn).map(|k| &*k.component_class).collect();
        assert_eq!(on_pawn, ["Movement", "Health"]);
        assert_eq!(key("Pawn", "Health"), key("Pawn", "Health"), "keys of copied names are equal by text");
    }
}
