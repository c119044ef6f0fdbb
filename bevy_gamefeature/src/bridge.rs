//! Bevy components bridged to the world's component classes, their fields its properties (through
//! `bevy_reflect`): what the game writes goes to the world before the step, what plugins wrote comes back after.

use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use bevy_reflect::structs::Struct;
use bevy_reflect::PartialReflect;
use gamefeature_host::world::{self, ComponentOrigin, Value};

use crate::components::ActorHandle;
use crate::features::GameFeatures;

/// The component classes bridged, for the actors spawned after: each gets the game's component of the class,
/// with its values (the fields of the entity's component, when it has one).
#[derive(Resource, Default)]
pub(crate) struct Bridged {
    pub(crate) classes: Vec<(&'static str, ValuesOf)>,
}

/// The values of an entity's bridged component, when it has one.
pub(crate) type ValuesOf = fn(&EntityRef<'_>) -> Option<Vec<(&'static str, Value)>>;

/// Each bridged class's way across, run by the bridge's own steps (in `to_world` and `from_world`): the classes
/// take no system of their own in the schedule.
#[derive(Resource, Default)]
pub(crate) struct ClassBridges(pub(crate) Vec<Box<dyn ClassBridge>>);

/// One bridged class, its Bevy component type erased.
pub(crate) trait ClassBridge: Send + Sync + 'static {
    /// What the game wrote to the component since the last frame, into the world.
    fn write(&mut self, world: &mut World);
    /// What changed in the world on the actors of `changed`, into the component.
    fn read(&mut self, world: &mut World, changed: &[Entity]);
}

type Written<T> = SystemState<(
    Query<'static, 'static, (&'static ActorHandle, Ref<'static, T>), Changed<T>>,
    Res<'static, GameFeatures>,
)>;
type Read<T> = SystemState<(
    Commands<'static, 'static>,
    Query<'static, 'static, (&'static ActorHandle, Option<&'static mut T>)>,
    Res<'static, GameFeatures>,
)>;

/// The bridge of `T`, with the state of its queries (what changed is what changed since this bridge last looked).
struct BridgeOf<T: Component<Mutability = bevy_ecs::component::Mutable>> {
    class: &'static str,
    written: Option<Written<T>>,
    read: Option<Read<T>>,
}

impl<T> ClassBridge for BridgeOf<T>
where
    T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default,
{
    fn write(&mut self, world: &mut World) {
        let state = self.written.get_or_insert_with(|| SystemState::new(world));
        let (changed, features) = state.get_mut(world).expect(crate::NEEDS_GAME_FEATURES);
        write_bridged(self.class, &changed, &features);
    }

    fn read(&mut self, world: &mut World, changed: &[Entity]) {
        if changed.is_empty() {
            return;
        }
        let state = self.read.get_or_insert_with(|| SystemState::new(world));
        let (mut commands, mut actors, features) = state.get_mut(world).expect(crate::NEEDS_GAME_FEATURES);
        read_bridged(self.class, &mut commands, &mut actors, changed, &features);
        state.apply(world);
    }
}

/// Bridging Bevy components to the world's component classes.
pub trait GameFeatureApp {
    /// Bridges `T` to the component class `class`: its fields of the kinds the world holds (`i64`, `i32`, `u32`,
    /// `f64`, `f32`, `bool`, `String`; others are left out) are the component's properties. An actor spawned with `T` has the component, and what a system writes to `T`
    /// reaches the world (and the plugins watching); what plugins write appears in `T`, and a component of the
    /// class a plugin adds to an actor appears on its entity as `T`. Removing `T` from an entity is not passed on:
    /// the world's actor keeps its component, and the next change of it puts `T` back.
    fn bridge_component<T>(&mut self, class: &'static str) -> &mut Self
    where
        T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default;
}

impl GameFeatureApp for App {
    fn bridge_component<T>(&mut self, class: &'static str) -> &mut Self
    where
        T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default,
    {
        let values_of: ValuesOf = |entity| entity.get::<T>().map(|component| owned_fields(component));
        self.world_mut().resource_mut::<Bridged>().classes.push((class, values_of));
        let bridge = BridgeOf::<T> { class, written: None, read: None };
        self.world_mut().resource_mut::<ClassBridges>().0.push(Box::new(bridge));
        self
    }
}

/// What the game wrote to `T` since the last frame, into the world's component `class`.
fn write_bridged<T>(
    class: &'static str,
    changed: &Query<'_, '_, (&ActorHandle, Ref<'_, T>), Changed<T>>,
    features: &GameFeatures,
) where
    T: Component + Struct,
{
    if changed.is_empty() {
        return;
    }
    // Every change in one go: the plugins hear of them together, after.
    features.with_world(|w| {
        for (ActorHandle(actor), component) in changed {
            let native =
                w.actor(*actor).ok().and_then(|a| a.component(class)).map(|c| c.origin == ComponentOrigin::Native);
            match native {
                // A component the bridge just put on the entity came from the world (a plugin added it): there
                // is nothing of the game's to write back.
                Some(false) if component.is_added() => continue,
                // The game gave an actor the component after it spawned: the world's actor gets it too.
                None if component.is_added() => {
                    if let Err(e) = w.attach_native_component(*actor, class) {
                        tracing::warn!("{class} of actor {actor}: {e}");
                        continue;
                    }
                }
                _ => {}
            }
            for (property, value) in fields(&*component) {
                let field = component.field(property).expect("a field just listed");
                let unchanged = matches!(w.property(*actor, class, property), Ok(Some(old)) if holds(field, old));
                if unchanged {
                    continue;
                }
                if let Err(e) = w.set_property(*actor, class, property, value) {
                    tracing::warn!("{class}.{property} of actor {actor}: {e}");
                }
            }
        }
    });
}

/// What plugins wrote to the world's component `class`, into `T` on the entities of the actors that changed in
/// the frame: added where a plugin added the component, removed where it was taken away.
fn read_bridged<T>(
    class: &'static str,
    commands: &mut Commands<'_, '_>,
    actors: &mut Query<'_, '_, (&ActorHandle, Option<&mut T>)>,
    changed: &[Entity],
    features: &GameFeatures,
) where
    T: Component<Mutability = bevy_ecs::component::Mutable> + Struct + Default,
{
    let defaults = T::default();
    features.with_loop(|game| {
        let w = world::lock(game.manager().world());
        for &entity in changed {
            let Ok((ActorHandle(actor), existing)) = actors.get_mut(entity) else { continue };
            let Ok(actor) = w.actor(*actor) else { continue };
            match (actor.component(class), existing) {
                (Some(component), Some(mut bevy)) => {
                    // Written without marking it changed: what plugins wrote is not written back to them.
                    let bevy = bevy.bypass_change_detection();
                    for (property, value) in component.properties.iter() {
                        set_field(bevy, property, value);
                    }
                    // A property the world no longer holds (what a deactivated plugin wrote goes with it) is the
                    // component's default again.
                    reset_missing_fields(bevy, &defaults, |name| component.properties.contains_key(name));
                }
                (Some(component), None) => {
                    let mut bevy = T::default();
                    for (property, value) in component.properties.iter() {
                        set_field(&mut bevy, property, value);
                    }
                    commands.entity(entity).insert(bevy);
                }
                (None, Some(_)) => {
                    commands.entity(entity).remove::<T>();
                }
                (None, None) => {}
            }
        }
    });
}

/// Sets each field of `component` the world holds no property for back to its value in `defaults`.
fn reset_missing_fields(component: &mut dyn Struct, defaults: &dyn Struct, held: impl Fn(&str) -> bool) {
    for at in 0..defaults.field_len() {
        let (Some(name), Some(default)) = (defaults.name_at(at), defaults.field_at(at)) else { continue };
        if held(name) {
            continue;
        }
        if let Some(value) = value_of(default) {
            set_field(component, name, &value);
        }
    }
}

/// Whether `field` holds what the world's `value` is, as far as the field's type can say: an `f32` field holds
/// a plugin's `0.1` as `0.1f32`, which is not a change to send back.
fn holds(field: &dyn PartialReflect, value: &Value) -> bool {
    match (field.try_downcast_ref::<f32>(), value) {
        (Some(field), Value::Float(value)) => *field == *value as f32,
        _ => value_of(field).is_some_and(|held| held.is_identical(value)),
    }
}

/// [`fields`], with names that live as long as the type (a reflected struct's field names are `'static`).
fn owned_fields<T: Struct>(component: &T) -> Vec<(&'static str, Value)> {
    (0..component.field_len())
        .filter_map(|at| {
            let name = component.get_represented_struct_info()?.field_at(at)?.name();
            Some((name, value_of(component.field_at(at)?)?))
        })
        .collect()
}

/// The fields of a bridged component the world can hold, as property values.
fn fields(component: &dyn Struct) -> Vec<(&str, Value)> {
    (0..component.field_len())
        .filter_map(|at| Some((component.name_at(at)?, value_of(component.field_at(at)?)?)))
        .collect()
}

/// A field's value, when the world can hold it.
fn value_of(field: &dyn PartialReflect) -> Option<Value> {
    if let Some(v) = field.try_downcast_ref::<i64>() {
        return Some(Value::Integer(*v));
    }
    if let Some(v) = field.try_downcast_ref::<i32>() {
        return Some(Value::Integer(i64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<u32>() {
        return Some(Value::Integer(i64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<f64>() {
        return Some(Value::Float(*v));
    }
    if let Some(v) = field.try_downcast_ref::<f32>() {
        return Some(Value::Float(f64::from(*v)));
    }
    if let Some(v) = field.try_downcast_ref::<bool>() {
        return Some(Value::Boolean(*v));
    }
    field.try_downcast_ref::<String>().map(|v| Value::Text(v.clone()))
}

/// Writes `value` into the field `name` of `component` when the field is of a kind that holds it (a float into
/// an `f32` rounds; an integer out of an `i32`'s range is not written).
fn set_field(component: &mut dyn Struct, name: &str, value: &Value) {
    let Some(field) = component.field_mut(name) else { return };
    match value {
        Value::Integer(v) => {
            if let Some(f) = field.try_downcast_mut::<i64>() {
                *f = *v;
            } else if let (Some(f), Ok(v)) = (field.try_downcast_mut::<i32>(), i32::try_from(*v)) {
                *f = v;
            } else if let (Some(f), Ok(v)) = (field.try_downcast_mut::<u32>(), u32::try_from(*v)) {
                *f = v;
            }
        }
        Value::Float(v) => {
            if let Some(f) = field.try_downcast_mut::<f64>() {
                *f = *v;
            } else if let Some(f) = field.try_downcast_mut::<f32>() {
                *f = *v as f32;
            }
        }
        Value::Boolean(v) => {
            if let Some(f) = field.try_downcast_mut::<bool>() {
                *f = *v;
            }
        }
        Value::Text(v) => {
            if let Some(f) = field.try_downcast_mut::<String>() {
                f.clone_from(v);
            }
        }
    }
}
