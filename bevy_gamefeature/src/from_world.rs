//! The plugins' side of a frame, after the world stepped: actors the game did not spawn get entities (and lose
//! them when they go), the events plugins sent reach the game, init states reach the entities, and the bridge
//! notes which actors changed, for the bridged components to read back.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use gamefeature_host::world::{self, ActorId, Coming};

use crate::bridge::ClassBridges;
use crate::components::{Actor, ActorHandle, InitStates, SpawnedInWorld};
use crate::features::{GameFeatures, Host};
use crate::messages::FromPlugins;

/// What the bridge's third step reads and writes.
pub(crate) type FromWorldParams = (
    Commands<'static, 'static>,
    Res<'static, GameFeatures>,
    ResMut<'static, ChangedActors>,
    Query<'static, 'static, (&'static ActorHandle, Option<&'static mut InitStates>)>,
    MessageWriter<'static, FromPlugins>,
);

/// The bridge's third step in a frame: the world's new and departed actors mirrored, plugins' events handed
/// over, init states and bridged components read back from the actors that changed. An exclusive system, as
/// `to_world`.
pub(crate) fn from_world(world: &mut World, state: &mut SystemState<FromWorldParams>) {
    let (mut commands, features, mut changed, mut init_states, mut heard) =
        state.get_mut(world).expect(crate::NEEDS_GAME_FEATURES);
    mirror_world_actors(&mut commands, &features, &mut changed);
    hear_plugins(&features, &mut heard);
    read_init_states(&mut commands, &mut init_states, &changed, &features);
    state.apply(world);
    let changed = std::mem::take(&mut world.resource_mut::<ChangedActors>().0);
    world.resource_scope(|world, mut bridges: Mut<'_, ClassBridges>| {
        for bridge in &mut bridges.0 {
            bridge.read(world, &changed);
        }
    });
    world.resource_mut::<ChangedActors>().0 = changed;
}

/// The entities of the actors whose components or properties changed in the last frame: the ones the bridge reads
/// back into their Bevy components.
#[derive(Resource, Default)]
pub(crate) struct ChangedActors(pub(crate) Vec<Entity>);

/// Gives each actor the game did not spawn (a plugin's, a server's replica) an entity of its own, and despawns
/// the entities of actors that left the world; notes which entities' actors changed.
fn mirror_world_actors(commands: &mut Commands<'_, '_>, features: &GameFeatures, changed: &mut ChangedActors) {
    let mut host = features.lock();
    let Host { game, actors, entities, .. } = &mut *host;
    let game = game.as_mut().expect("the loop runs until the app closes");
    let mut w = world::lock(game.manager().world());
    changed.0.clear();
    for coming in w.take_actor_comings() {
        match coming {
            Coming::Spawned(actor) if !entities.contains_key(&actor) => {
                let Ok(found) = w.actor(actor) else { continue };
                let mut entity = commands.spawn((Actor::new(found.class()), ActorHandle(actor), SpawnedInWorld));
                // Its init states now: the entity is not there for the query below until the frame's commands
                // are applied.
                let states = states_of(&w, actor);
                if !states.is_empty() {
                    entity.insert(InitStates(states));
                }
                let entity = entity.id();
                actors.insert(entity, actor);
                entities.insert(actor, entity);
            }
            Coming::Spawned(_) => {}
            Coming::Destroyed(actor) => {
                if let Some(entity) = entities.remove(&actor) {
                    actors.remove(&entity);
                    commands.entity(entity).despawn();
                }
            }
        }
    }
    changed.0.extend(w.take_changed_actors().into_iter().filter_map(|actor| entities.get(&actor).copied()));
}

/// An actor's init-state features and their states, by name.
fn states_of(w: &gamefeature_host::world::World, actor: ActorId) -> Vec<(String, String)> {
    w.feature_states(actor)
        .map(|(feature, state)| (w.name_text(feature).to_string(), w.state_text(state).unwrap_or("").to_string()))
        .collect()
}

/// The init states of the actors that changed, onto their entities.
fn read_init_states(
    commands: &mut Commands<'_, '_>,
    entities: &mut Query<'_, '_, (&ActorHandle, Option<&mut InitStates>)>,
    changed: &ChangedActors,
    features: &GameFeatures,
) {
    if changed.0.is_empty() {
        return;
    }
    features.with_loop(|game| {
        let w = world::lock(game.manager().world());
        for &entity in &changed.0 {
            let Ok((ActorHandle(actor), existing)) = entities.get_mut(entity) else { continue };
            let states = states_of(&w, *actor);
            match (states.is_empty(), existing) {
                (true, Some(_)) => {
                    commands.entity(entity).remove::<InitStates>();
                }
                (true, None) => {}
                (false, Some(mut existing)) => {
                    if existing.0 != states {
                        existing.0 = states;
                    }
                }
                (false, None) => {
                    commands.entity(entity).insert(InitStates(states));
                }
            }
        }
    });
}

/// Hands the game what plugins sent to actors.
fn hear_plugins(features: &GameFeatures, heard: &mut MessageWriter<'_, FromPlugins>) {
    let (events, dropped) = features.with_loop(|game| world::lock(game.manager().world()).take_heard_events());
    if dropped > 0 {
        tracing::warn!("{dropped} event(s) plugins sent were dropped before the game took them");
    }
    let host = features.lock();
    for event in events {
        let entity = host.entities.get(&event.actor).copied();
        heard.write(FromPlugins { entity, actor: event.actor, event: event.event });
    }
}
