//! The game's side of Lyra's character flow: a minimal game mode and player controller.
//!
//! A player's pawn begins play before it is possessed; its controller and player state arrive later, each
//! announced to the pawn with an extension event, as Lyra's character does from `PossessedBy` and
//! `OnRep_PlayerState`. Features read them from the pawn's native `Possession` component.

use crate::world::{ActorId, PlayerOwner, Relevancy, Value, World, WorldError};

/// The native pawn component holding `controller` and `player-state` (actor ids) once they arrive.
pub const POSSESSION: &str = "Possession";
/// Sent to a pawn when its controller arrives.
pub const CONTROLLER_CHANGED: &str = "ControllerChanged";
/// Sent to a pawn when its player state arrives.
pub const PLAYER_STATE_REPLICATED: &str = "PlayerStateReplicated";

/// One player's actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Player {
    /// The player's controller (Unreal's `AController`).
    pub controller: ActorId,
    /// The player's state (Unreal's `APlayerState`).
    pub player_state: ActorId,
    /// The pawn the controller possesses.
    pub pawn: ActorId,
}

/// Spawns a local player's controller, player state and pawn. The pawn begins play unpossessed.
pub fn spawn_player(world: &mut World, pawn_class: &str) -> Result<Player, WorldError> {
    spawn_player_for(world, pawn_class, PlayerOwner::Local)
}

/// Spawns the controller, player state and pawn of a player playing here or on a connected client.
/// Hands a player's actors (controller, player state, pawn) to another owner: a player who reconnects on a new
/// connection takes back its own.
pub fn hand_player_to(world: &mut World, player: &Player, owner: PlayerOwner) -> Result<(), WorldError> {
    for actor in [player.controller, player.player_state, player.pawn] {
        world.actor_mut(actor)?.player = Some(owner);
    }
    Ok(())
}

/// Spawns a player for `owner`: its controller, its player state, then its pawn (of `pawn_class`), each a
/// receiver that begins play. [`possess`] then makes the controller possess the pawn.
pub fn spawn_player_for(world: &mut World, pawn_class: &str, owner: PlayerOwner) -> Result<Player, WorldError> {
    let controller = world.spawn_actor("PlayerController", None, false)?;
    world.actor_mut(controller)?.player = Some(owner);
    // A player's controller is its own client's business, as Unreal's `APlayerController` is only relevant to
    // its owner: no other client is sent it.
    world.set_relevancy(controller, Relevancy::OwnerOnly)?;
    world.add_receiver(controller)?;
    world.begin_play(controller)?;
    let player_state = world.spawn_actor("PlayerState", None, false)?;
    world.actor_mut(player_state)?.player = Some(owner);
    world.add_receiver(player_state)?;
    world.begin_play(player_state)?;
    let pawn = world.spawn_actor(pawn_class, None, false)?;
    world.actor_mut(pawn)?.player = Some(owner);
    declare_replicated_natives(world);
    world.attach_native_component(pawn, POSSESSION)?;
    world.add_receiver(pawn)?;
    world.begin_play(pawn)?;
    Ok(Player { controller, player_state, pawn })
}

/// Declares the game's own replicated components (a pawn's `Possession`), so servers send them and clients
/// know what they receive.
pub fn declare_replicated_natives(world: &mut World) {
    world.declare_replicated(POSSESSION, ["controller", "player-state"]);
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

/// On a client, a pawn's replicated `Possession` changed: its pawn hears the controller or player state arrive,
/// as Lyra's `OnRep_Controller` and `OnRep_PlayerState` tell the pawn extension.
pub fn possession_replicated(world: &mut World, pawn: ActorId, property: &str) -> Result<(), WorldError> {
    match property {
        "controller" => world.send_extension_event(pawn, CONTROLLER_CHANGED),
        "player-state" => world.send_extension_event(pawn, PLAYER_STATE_REPLICATED),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::{ClientId, NetMode, NetRole};

    #[test]
    fn local_players_are_locally_controlled_remote_ones_and_dedicated_servers_never() {
        for (mode, local) in
            [(NetMode::Standalone, true), (NetMode::ListenServer, true), (NetMode::DedicatedServer, false)]
        {
            let mut world = World::new("w", mode);
            let here = spawn_player(&mut world, "Pawn").unwrap();
            let remote = spawn_player_for(&mut world, "Pawn", PlayerOwner::Remote(ClientId(1))).unwrap();
            for actor in [here.pawn, here.controller, here.player_state] {
                assert_eq!(world.is_locally_controlled(actor), Ok(local), "{mode:?}");
            }
            for actor in [remote.pawn, remote.controller, remote.player_state] {
                assert_eq!(world.is_locally_controlled(actor), Ok(false), "{mode:?}");
            }
            let npc = world.spawn("Pawn").unwrap();
            assert_eq!(world.is_locally_controlled(npc), Ok(false));
        }
    }

    #[test]
    fn on_a_client_its_autonomous_proxies_are_locally_controlled() {
        let mut world = World::new("w", NetMode::Client);
        let mine = world.spawn("Pawn").unwrap();
        let theirs = world.spawn("Pawn").unwrap();
        world.actor_mut(mine).unwrap().role = NetRole::AutonomousProxy;
        world.actor_mut(theirs).unwrap().role = NetRole::SimulatedProxy;
        assert_eq!(world.is_locally_controlled(mine), Ok(true));
        assert_eq!(world.is_locally_controlled(theirs), Ok(false));
        assert_eq!(world.has_authority(mine), Ok(false));
    }
}
