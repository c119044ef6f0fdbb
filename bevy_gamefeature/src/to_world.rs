//! The game's side of a frame, before the world steps: new actor entities spawned in the world (players as
//! Unreal's game mode brings them in), despawned ones ended, the game's events sent to the plugins.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use gamefeature_host::game;
use gamefeature_host::world::{self, ActorId, World};

use crate::bridge::{Bridged, ClassBridges};
use crate::components::{Actor, ActorHandle, NotAnActor, Player, PlayerActors};
use crate::features::GameFeatures;
use crate::messages::ToActor;

/// The new actor entities, as [`spawn_actors`] takes them.
pub(crate) type NewActors<'w, 's> =
    Query<'w, 's, (EntityRef<'static>, &'static Actor, Has<Player>), (Without<ActorHandle>, Without<NotAnActor>)>;

/// The entities that lost their [`ActorHandle`] (despawned, most often) since the bridge last looked. Noted by
/// an observer as it happens, not read from Bevy's removal buffer: that keeps removals for two app updates only,
/// and `FixedUpdate` may not run in either (a 144 Hz window over a 30 Hz world).
#[derive(Resource, Default)]
pub(crate) struct Despawned(Vec<Entity>);

/// Notes an entity that lost its [`ActorHandle`].
pub(crate) fn note_despawned(removed: On<'_, '_, Remove, ActorHandle>, mut despawned: ResMut<'_, Despawned>) {
    despawned.0.push(removed.entity);
}

/// What the bridge's first step reads and writes.
pub(crate) type ToWorldParams = (
    Commands<'static, 'static>,
    NewActors<'static, 'static>,
    MessageReader<'static, 'static, ToActor>,
    Res<'static, GameFeatures>,
    Res<'static, Bridged>,
);

/// The bridge's first step in a frame: new entities become actors, despawned entities' actors end, the game's
/// events go to the plugins, and what the game wrote to bridged components goes to the world. An exclusive
/// system: one step the executor runs in place rather than as tasks to wake.
pub(crate) fn to_world(world: &mut bevy_ecs::world::World, state: &mut SystemState<ToWorldParams>) {
    // Taken before the parameters: the new actors' query reads every component, resources' too.
    let gone = std::mem::take(&mut world.resource_mut::<Despawned>().0);
    let (mut commands, new, mut sent, features, bridged) = state.get_mut(world).expect(crate::NEEDS_GAME_FEATURES);
    spawn_actors(&mut commands, &new, &features, &bridged);
    end_despawned(gone, &features);
    send_to_actors(&mut sent, &features);
    state.apply(world);
    world.resource_scope(|world, mut bridges: Mut<'_, ClassBridges>| {
        for bridge in &mut bridges.0 {
            bridge.write(world);
        }
    });
}

/// Spawns the world's actor of each new [`Actor`] entity, with the bridged components it has. The players among
/// them arrive as `gfhost run`'s (and Unreal's) do: every new pawn first, then each controller possesses its pawn,
/// then each player state replicates, the plugins hearing each step before the next.
fn spawn_actors(commands: &mut Commands<'_, '_>, new: &NewActors<'_, '_>, features: &GameFeatures, bridged: &Bridged) {
    if new.is_empty() {
        return;
    }
    let mut players = Vec::new();
    // Every new actor in one go (the plugins then hear of them together), each with its own outcome.
    let outcomes: Option<Vec<(Entity, Result<(ActorId, Option<game::Player>), world::WorldError>)>> = features
        .with_world(|w| {
            let spawn = |w: &mut World, entity_ref: &EntityRef<'_>, actor: &Actor, is_player: bool| {
                // Checked first: a player's controller and state are spawned before its pawn.
                if !w.classes().contains(&actor.class) {
                    return Err(world::WorldError::UnknownClass(actor.class.clone()));
                }
                let (id, player) = match is_player {
                    true => {
                        let player = game::spawn_player(w, &actor.class)?;
                        (player.pawn, Some(player))
                    }
                    false => (w.spawn(&actor.class)?, None),
                };
                // The game's components with their values, before the plugins first hear of the actor.
                for (class, values_of) in &bridged.classes {
                    if let Some(values) = values_of(entity_ref) {
                        w.attach_native_component(id, class)?;
                        for (property, value) in values {
                            w.set_property(id, class, property, value)?;
                        }
                    }
                }
                Ok((id, player))
            };
            new.iter()
                .map(|(entity_ref, actor, is_player)| (entity_ref.id(), spawn(w, &entity_ref, actor, is_player)))
                .collect()
        });
    let Some(outcomes) = outcomes else {
        for (entity_ref, ..) in new {
            let why = "a client's world is its server's copy: the game spawns no actor in it";
            commands.entity(entity_ref.id()).insert(NotAnActor(why.to_string()));
        }
        return;
    };
    for (entity, spawned) in outcomes {
        let (id, player) = match spawned {
            Ok(spawned) => spawned,
            Err(e) => {
                tracing::warn!("entity {entity} is not an actor: {e}");
                commands.entity(entity).insert(NotAnActor(e.to_string()));
                continue;
            }
        };
        commands.entity(entity).insert(ActorHandle(id));
        let mut host = features.lock();
        host.actors.insert(entity, id);
        host.entities.insert(id, entity);
        if let Some(player) = player {
            let controller = commands.spawn((Actor::new("PlayerController"), ActorHandle(player.controller))).id();
            let state = commands.spawn((Actor::new("PlayerState"), ActorHandle(player.player_state))).id();
            for (id, spawned) in [(player.controller, controller), (player.player_state, state)] {
                host.actors.insert(spawned, id);
                host.entities.insert(id, spawned);
            }
            commands.entity(entity).insert(PlayerActors { controller, player_state: state });
            players.push(player);
        }
    }
    let steps: [fn(&mut World, &game::Player) -> Result<(), world::WorldError>; 2] =
        [game::possess, game::replicate_player_state];
    for arrive in steps.into_iter().filter(|_| !players.is_empty()) {
        features.with_world(|w| {
            for player in &players {
                if let Err(e) = arrive(w, player) {
                    tracing::warn!("player of pawn {}: {e}", player.pawn);
                }
            }
        });
    }
}

/// Ends the actors whose entities were despawned (or lost their [`ActorHandle`]). On a client the world is the
/// server's: its actor stays there, without an entity, until the server removes it.
fn end_despawned(gone: Vec<Entity>, features: &GameFeatures) {
    for entity in gone {
        let Some(actor) = ({
            let mut host = features.lock();
            let actor = host.actors.remove(&entity);
            if let Some(actor) = actor {
                host.entities.remove(&actor);
            }
            actor
        }) else {
            continue;
        };
        match features.with_world(|w| w.destroy(actor)) {
            Some(Ok(())) => {}
            Some(Err(e)) => tracing::debug!("actor {actor} of entity {entity} was gone already: {e}"),
            None => tracing::debug!("entity {entity} despawned: its actor {actor} is the server's, and stays"),
        }
    }
}

/// Sends the game's events to the actors' plugins.
fn send_to_actors(sent: &mut MessageReader<'_, '_, ToActor>, features: &GameFeatures) {
    for ToActor { entity, event } in sent.read() {
        let Some(actor) = features.actor_of(*entity) else {
            tracing::warn!("event {event:?} for entity {entity}, which is no actor");
            continue;
        };
        match features.with_world(|w| w.send_extension_event(actor, event)) {
            Some(Ok(())) => {}
            Some(Err(e)) => tracing::warn!("event {event:?} for entity {entity}: {e}"),
            None => tracing::warn!("event {event:?} for entity {entity}: a client's world is its server's copy"),
        }
    }
}
