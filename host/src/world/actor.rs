//! Actors, their components, and the generational ids that name them.

use std::fmt;

use super::net::{ClientId, NetRole};
use crate::world::component_manager::{OwnerId, RequestKey};

/// Names an actor in one world. The low 32 bits index a slot, the high 32 bits count the slot's reuses, so an
/// id kept after its actor was destroyed never names a later actor in the same slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ActorId(u64);

impl ActorId {
    pub(crate) fn new(slot: u32, generation: u32) -> Self {
        ActorId(((generation as u64) << 32) | slot as u64)
    }

    /// Rebuilds an id from its raw form, as plugins pass it.
    pub fn from_raw(raw: u64) -> Self {
        ActorId(raw)
    }

    /// The raw form plugins see.
    pub fn to_raw(self) -> u64 {
        self.0
    }

    pub(crate) fn slot(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }

    pub(crate) fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}.{}", self.slot(), self.generation())
    }
}

/// A property value stored on a component.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// A true or false value.
    Boolean(bool),
    /// A signed 64-bit integer.
    Integer(i64),
    /// A 64-bit floating-point number.
    Float(f64),
    /// A UTF-8 string.
    Text(String),
}

impl Value {
    /// Whether two values are the same bit for bit: unlike `==`, a NaN is identical to itself, so writing (or
    /// receiving again) the NaN a property holds is no change.
    pub fn is_identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }

    /// [`is_identical`](Self::is_identical) for values that may be missing.
    pub fn identical(a: Option<&Value>, b: Option<&Value>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => a.is_identical(b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// Who put a component on an actor; decides who may take it away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentOrigin {
    /// Part of the actor from the start (spawned by the game, not by a feature).
    Native,
    /// Created by a component request; removed when the last handle of that request is released.
    Request(RequestKey),
    /// Received from the server (on a client); removed when the server removes it.
    Replicated,
}

/// A component on an actor: a class and the properties features read and write.
///
/// Laid out in this order (`repr(C)`): finding a component by class and reading one of its first properties —
/// what every chain read and property write does, for every pawn of a round — then touches its first cache
/// lines only, where the compiler's own order put the class, the property count and the first entry on three.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Component {
    /// The component's class, its name shared by every component of the class.
    pub class: super::ClassName,
    /// Its property values, by name.
    pub properties: super::PropertyMap<Value>,
    /// The plugin that wrote each property a plugin wrote (the host's own writes are not listed).
    pub writers: super::PropertyMap<OwnerId>,
    /// Numbers every component a world creates, never reused: a component removed and added again is another
    /// component (replication tells them apart by it).
    pub serial: u64,
    /// Who put it on the actor, which decides when it is taken off.
    pub origin: ComponentOrigin,
    /// Replicated components are created only on the authority and reach clients through replication.
    pub replicated: bool,
}

/// An actor in a world.
#[derive(Debug, Clone)]
pub struct Actor {
    /// The actor's id, which names it in this world (and, for a replica, on its server).
    pub id: ActorId,
    /// Its class, then the class's ancestors (never empty for an actor the world spawned): fixed when it spawns
    /// (a class's parent never changes), so events and notifications about it walk the chain without looking the
    /// class up.
    pub classes: std::sync::Arc<[super::ClassKey]>,
    /// Whether this world owns the actor or holds a replica of a server's: only the authority writes replicated
    /// state.
    pub role: NetRole,
    /// Its components, in the order they were added.
    pub components: Vec<Component>,
    /// Whether the component manager extends it (Unreal's AddReceiver): modular actors are receivers.
    pub receiver: bool,
    /// The plugin instance that spawned it, if one did; only that instance may destroy it.
    pub spawned_by: Option<OwnerId>,
    /// Destroyed, and waiting for its handlers to hear `ReceiverRemoved` (Unreal's pending kill): it still
    /// answers queries about itself, but no longer appears in the world's lists.
    pub ending: bool,
    /// The player it belongs to (its pawn, controller and player state), if any.
    pub player: Option<PlayerOwner>,
    /// Which clients it is replicated to, besides its own player's (on a server).
    pub relevancy: super::Relevancy,
}

/// Whose player an actor belongs to, on the server or in a standalone game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlayerOwner {
    /// A player playing on this machine.
    Local,
    /// The player of a connected client.
    Remote(ClientId),
}

impl Actor {
    /// The actor's class.
    pub fn class(&self) -> &str {
        self.classes.first().map_or("", |class| class)
    }

    /// Whether the actor is of `class` or a subclass of it.
    pub fn is_a(&self, class: &str) -> bool {
        self.classes.iter().any(|c| &**c == class)
    }

    /// The actor's name, as Unreal names spawned actors: its class and a number.
    pub fn name(&self) -> String {
        format!("{}_{}", self.class(), self.id.slot())
    }

    /// The first component of the given class, if the actor has one.
    pub fn component(&self, class: &str) -> Option<&Component> {
        self.components.iter().find(|c| &*c.class == class)
    }

    pub(crate) fn component_mut(&mut self, class: &str) -> Option<&mut Component> {
        self.components.iter_mut().find(|c| &*c.class == class)
    }
}
