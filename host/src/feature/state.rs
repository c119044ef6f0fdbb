//! The plugin state machine's states.

use std::fmt;

/// The stable states a plugin can be asked to reach, in order. A plugin at `Loaded` has passed `Registered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Destination {
    /// Found on disk, manifest read.
    Installed,
    /// Manifest validated against the registry; dependencies registered.
    Registered,
    /// Component compiled (or read from the cache) and pre-instantiated: ready to instantiate in worlds.
    Loaded,
    /// At least one world holds an activation.
    Active,
}

impl Destination {
    /// The next stable state up, if any.
    pub fn above(self) -> Option<Destination> {
        match self {
            Destination::Installed => Some(Destination::Registered),
            Destination::Registered => Some(Destination::Loaded),
            Destination::Loaded => Some(Destination::Active),
            Destination::Active => None,
        }
    }

    /// The next stable state down, if any.
    pub fn below(self) -> Option<Destination> {
        match self {
            Destination::Installed => None,
            Destination::Registered => Some(Destination::Installed),
            Destination::Loaded => Some(Destination::Registered),
            Destination::Active => Some(Destination::Loaded),
        }
    }
}

/// The work between two stable states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// Installed to Registered: the dependencies are checked for cycles and brought to at least `Registered`.
    WaitingForDependencies,
    /// The last step to Registered, once its dependencies are; in a world, its `on-registering` call.
    Registering,
    /// Registered to Loaded: its component is compiled or read from the cache; in a world, its instance is created
    /// and `on-loading` (and a reload's `restore`) called.
    Loading,
    /// Loaded to Active: the dependencies its manifest marks `activate = true` are activated first.
    ActivatingDependencies,
    /// The last step to Active; in a world, its manifest's built-in actions, then `on-activating` and
    /// `on-activated`.
    Activating,
    /// Active to Loaded: the dependencies it activated are released; in a world, `on-deactivating` until done.
    Deactivating,
    /// Loaded to Registered: its compiled code is let go; in a world, `on-unloading`.
    Unloading,
    /// Registered to Installed; in a world, `on-unregistering`, its instance's last call.
    Unregistering,
}

/// When a plugin failed: during a transition of the state machine, or while playing in a world (a call
/// delivering events or init-state callbacks between its activation and its deactivation there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// During this transition of the state machine, or of the plugin's activation or deactivation in a world.
    Transition(Transition),
    /// While playing in a world: a call delivering events, callbacks or timers after its activation there finished.
    Playing,
}

impl From<Transition> for Phase {
    fn from(transition: Transition) -> Self {
        Phase::Transition(transition)
    }
}

/// A phase is a transition when it is that transition: `error.during == Transition::Loading`.
impl PartialEq<Transition> for Phase {
    fn eq(&self, transition: &Transition) -> bool {
        *self == Phase::Transition(*transition)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Transition(t) => write!(f, "{t:?}"),
            Phase::Playing => f.write_str("Playing"),
        }
    }
}

/// Why a plugin is in an error state: the phase it failed in and what went wrong (the call, when a call into
/// the plugin failed, leads the cause).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// When the plugin failed: the transition it was in, or while playing.
    pub during: Phase,
    /// What went wrong, led by the failed call (such as `on-activating: ...`) when a call into the plugin failed.
    pub cause: String,
}

impl PluginError {
    /// An error in `during` (a [`Transition`] or a [`Phase`]) with its cause.
    pub fn new(during: impl Into<Phase>, cause: impl Into<String>) -> Self {
        PluginError { during: during.into(), cause: cause.into() }
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed while {}: {}", self.during, self.cause)
    }
}

/// Where a plugin is: at a stable state, between two, or stopped by an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginState {
    /// Resting at a stable state.
    Stable(Destination),
    /// Moving between two stable states, doing this work.
    Transition(Transition),
    /// Stopped by an error. The plugin stays at the last stable state it reached; asking for a destination again
    /// retries from there.
    Error(PluginError),
}

impl PluginState {
    /// Whether the plugin was stopped by an error.
    pub fn is_error(&self) -> bool {
        matches!(self, PluginState::Error(_))
    }
}

impl fmt::Display for PluginState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginState::Stable(d) => write!(f, "{d:?}"),
            PluginState::Transition(t) => write!(f, "{t:?}"),
            PluginState::Error(e) => write!(f, "Error{}: {}", e.during, e.cause),
        }
    }
}
