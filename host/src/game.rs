//! The game's side of Lyra's character flow: a minimal game mode and player controller.
//!
//! A player's pawn begins play before it is possessed; its controller and player state arrive later, each
//! announced to the pawn with an extension event, as Lyra's character does from `PossessedBy` and
//! `OnRep_PlayerState`. Features read them from the pawn's native `Possession` component.

use std::collections::BTreeMap;

use crate::world::ComponentOrigin;
use crate::world::{ActorId, Component, Value, World, WorldError};

/// The native pawn component holding `controller` and `player-state` (actor ids) once they arrive.
pub const POSSESSION: &str = "Possession";
/// Sent to a pawn when its controller arrives.
pub const CONTROLLER_CHANGED: &str = "ControllerChanged";
/// Sent to a pawn when its player state arrives.
pub const PLAYER_STATE_REPLICATED: &str = "PlayerStateReplicated";

/// One player's actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Player {
    pub controller: ActorId,
    pub player_state: ActorId,
    pub pawn: ActorId,
}

/// Spawns a player's controller, player state and pawn. The pawn begins play unpossessed.
pub fn spawn_player(world: &mut World, pawn_class: &str) -> Result<Player, WorldError> {
    let controller = world.spawn("PlayerController")?;
    let player_state = world.spawn("PlayerState")?;
    let pawn = world.spawn_actor(pawn_class, None, false)?;
    world.actor_mut(pawn)?.components.push(Component {
        class: POSSESSION.to_string(),
        origin: ComponentOrigin::Native,
        replicated: true,
        properties: BTreeMap::new(),
        writers: BTreeMap::new(),
    });
    world.add_receiver(pawn)?;
    world.begin_play(pawn)?;
    Ok(Player { controller, player_state, pawn })
}

/// The controller possesses the pawn.
pub fn possess(world: &mut World, player: &Player) -> Result<(), WorldError> {
    world.set_property(player.pawn, POSSESSION, "controller", Value::Integer(player.controller.to_raw() as i64))?;
    world.send_extension_event(player.pawn, CONTROLLER_CHANGED)
}

/// The player state reaches the pawn (on a client, by replication).
pub fn replicate_player_state(world: &mut World, player: &Player) -> Result<(), WorldError> {
    world.set_property(player.pawn, POSSESSION, "player-state", Value::Integer(player.player_state.to_raw() as i64))?;
    world.send_extension_event(player.pawn, PLAYER_STATE_REPLICATED)
}
