//! The components the bridge puts on (or reads from) the game's entities.

use bevy_ecs::prelude::*;
use gamefeature_host::world::ActorId;

/// An entity that is one of the world's actors, of this class (one the game or the experience declared, or a
/// built-in one: `Actor`, `Pawn`, `Character`...).
#[derive(Component, Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The actor's class.
    pub class: String,
}

impl Actor {
    /// An actor of `class`.
    pub fn new(class: impl Into<String>) -> Self {
        Actor { class: class.into() }
    }
}

/// On an [`Actor`]: the entity is a player's pawn. The bridge spawns the player's controller and player state
/// (as entities of their own, in [`PlayerActors`]), the controller possesses the pawn, then the player state
/// arrives, as Unreal's do.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct Player;

/// A player's other actors, each an entity of its own (what plugins add to them appears there). They are the
/// player's, not the pawn's: despawning the pawn leaves them; despawn them too when the player leaves.
#[derive(Component, Debug, Clone, Copy)]
pub struct PlayerActors {
    /// The player's controller.
    pub controller: Entity,
    /// The player's state (where a score keeper keeps scores, say).
    pub player_state: Entity,
}

/// The actor an entity is, once the bridge spawned it in the world.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActorHandle(pub ActorId);

/// On the entity of an actor the game did not spawn: a plugin spawned it (or, on a client, the server sent it).
/// The bridge spawns the entity, with its [`Actor`] and [`ActorHandle`], and despawns it when the actor leaves
/// the world; the game may despawn it to destroy the actor (on a client, the actor is the server's and stays).
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct SpawnedInWorld;

/// The init-state features of an actor (Lyra's `PawnExtension` and `Hero`, say) and the state each is in, in
/// the order they were registered; the bridge keeps it on every actor entity that has any, and takes it away when
/// the last one goes.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct InitStates(pub Vec<(String, String)>);

impl InitStates {
    /// The state `feature` is in, when the actor has it.
    pub fn of(&self, feature: &str) -> Option<&str> {
        self.0.iter().find(|(f, _)| f == feature).map(|(_, state)| state.as_str())
    }

    /// Whether every feature is in `state` (Lyra's `InitState.GameplayReady`, say).
    pub fn all_in(&self, state: &str) -> bool {
        self.0.iter().all(|(_, s)| s == state)
    }
}

/// On an [`Actor`] the world refused (an unknown class, say): why. It is not asked again.
#[derive(Component, Debug, Clone)]
pub struct NotAnActor(pub String);
