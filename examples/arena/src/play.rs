//! How the arena plays, the game's side of it: heroes head for waypoints (into the zone when it closes on them),
//! dash now and then, and shoot the nearest prop or hero in range; shots fly, hit props (telling damageable-props,
//! which keeps their health) and hurt heroes; broken props go. Which actors exist, how fast a dash is, what a
//! health pack or the zone does and who comes back: all of that is the plugins'.

use std::time::Duration;

use bevy_ecs::prelude::*;
use bevy_gamefeature::{Actor, Player, SpawnedInWorld, ToActor};
use bevy_time::Time;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::components::{Bot, Health, Movement, Position, PropHealth, Shot, Zone};

/// Arena units a second at a boost of 1.
pub const SPEED: f32 = 6.0;
/// How far a hero shoots.
pub const RANGE: f32 = 10.0;
const SHOT_SPEED: f32 = 24.0;
const RELOAD: f32 = 0.6;
const SHOT_DAMAGE: i64 = 10;
const HERO_RADIUS: f32 = 0.7;
const PROP_RADIUS: f32 = 0.8;
/// On average, seconds between a hero's dashes.
const DASH_EVERY: f64 = 3.0;
/// Below this, a hero goes for health packs.
const LOW_HEALTH: i64 = 80;
/// How far from the walls things are placed.
const MARGIN: f32 = 2.0;

/// The arena: its size, the random numbers the game draws (seeded: a run plays the same every time), the frame.
#[derive(Resource)]
pub struct Arena {
    /// Left to right, in arena units.
    pub width: f32,
    /// Top to bottom.
    pub height: f32,
    /// On average, seconds between a hero's dashes; `None`, heroes never dash.
    pub dash_every: Option<f64>,
    rng: ChaCha8Rng,
}

impl Arena {
    /// An arena of this size, its random numbers drawn from `seed`.
    pub fn new(width: f32, height: f32, seed: u64) -> Self {
        Arena { width, height, dash_every: Some(DASH_EVERY), rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// An arena of the size an `arena` asset gives (`width = 40`, `height = 30` lines), 40 by 30 where it says
    /// nothing.
    pub fn from_text(text: &str, seed: u64) -> Self {
        let value = |key: &str| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once('=')?;
                (k.trim() == key).then(|| v.trim().parse::<f32>().ok()).flatten()
            })
        };
        Arena::new(value("width").unwrap_or(40.0), value("height").unwrap_or(30.0), seed)
    }

    /// A random place, away from the walls.
    pub fn random_spot(&mut self) -> Position {
        Position {
            x: self.rng.random_range(MARGIN..self.width - MARGIN),
            y: self.rng.random_range(MARGIN..self.height - MARGIN),
        }
    }

    fn clamp(&self, at: &mut Position) {
        at.x = at.x.clamp(0.5, self.width - 0.5);
        at.y = at.y.clamp(0.5, self.height - 0.5);
    }
}

/// The game's steps in `FixedUpdate`, all before the bridge hands the frame's changes to the world.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlaySet;

/// Spawns `count` heroes the game plays, in a ring round the centre.
pub fn spawn_heroes(world: &mut World, count: usize) {
    let (width, height) = {
        let arena = world.resource::<Arena>();
        (arena.width, arena.height)
    };
    for number in 0..count {
        let angle = number as f32 / count.max(1) as f32 * std::f32::consts::TAU;
        let at = Position { x: width / 2.0 + angle.cos() * width / 3.0, y: height / 2.0 + angle.sin() * height / 3.0 };
        let bot = Bot { number, waypoint: at, retarget_in: 0.0, reload_in: RELOAD };
        world.spawn((Actor::new("HeroCharacter"), Player, at, Movement::default(), bot));
    }
}

/// Places the actors plugins spawn that have a place in the arena (props, health packs) where the game likes.
pub fn place_new_actors(
    mut commands: Commands<'_, '_>,
    new: Query<'_, '_, (Entity, &Actor), (With<SpawnedInWorld>, Without<Position>)>,
    mut arena: ResMut<'_, Arena>,
) {
    for (entity, actor) in &new {
        if matches!(actor.class.as_str(), "DamageableProp" | "Pickup") {
            commands.entity(entity).insert(arena.random_spot());
        }
    }
}

fn alive(health: Option<&Health>) -> bool {
    health.is_none_or(|h| h.health > 0)
}

/// Heroes head for a waypoint (a new one now and then, into the zone when it closes in on them, the nearest
/// health pack when hurt) and move there at their speed, times the boost a dash gives; now and then one dashes.
pub fn steer_heroes(
    mut heroes: Query<'_, '_, (Entity, &mut Bot, &mut Position, &Movement, Option<&Health>)>,
    things: Query<'_, '_, (&Actor, &Position), Without<Bot>>,
    zone: Query<'_, '_, &Zone>,
    mut arena: ResMut<'_, Arena>,
    time: Res<'_, Time>,
    mut to_actors: MessageWriter<'_, ToActor>,
) {
    let dt = time.delta_secs();
    let zone = zone.iter().next().copied();
    for (entity, mut bot, mut at, movement, health) in &mut heroes {
        if !alive(health) {
            continue;
        }
        bot.retarget_in -= dt;
        if bot.retarget_in <= 0.0 || bot.waypoint.distance(&at) < 0.5 {
            bot.waypoint = arena.random_spot();
            if let Some(zone) = zone {
                // Heading for a place inside the zone, when the zone has closed in.
                let centre = Position { x: zone.x, y: zone.y };
                let reach = (zone.radius * 0.7).max(1.0);
                if bot.waypoint.distance(&centre) > reach {
                    let angle = arena.rng.random_range(0.0..std::f32::consts::TAU);
                    let r = arena.rng.random_range(0.0..reach);
                    bot.waypoint = Position { x: centre.x + angle.cos() * r, y: centre.y + angle.sin() * r };
                }
            }
            bot.retarget_in = arena.rng.random_range(2.0..4.0);
        }
        if health.is_some_and(|h| h.health < LOW_HEALTH) {
            // A hurt hero heads for the nearest health pack, if there is one.
            let nearest = things
                .iter()
                .filter(|(actor, _)| actor.class == "Pickup")
                .min_by(|(_, a), (_, b)| at.distance(a).total_cmp(&at.distance(b)));
            if let Some((_, pack)) = nearest {
                bot.waypoint = *pack;
            }
        }
        let (dx, dy) = (bot.waypoint.x - at.x, bot.waypoint.y - at.y);
        let distance = dx.hypot(dy);
        if distance > 0.01 {
            let step = (SPEED * movement.boost * dt).min(distance);
            let mut next = Position { x: at.x + dx / distance * step, y: at.y + dy / distance * step };
            arena.clamp(&mut next);
            *at = next;
        }
        let dash = arena.dash_every.is_some_and(|every| arena.rng.random_bool((f64::from(dt) / every).min(1.0)));
        if dash {
            to_actors.write(ToActor { entity, event: "Dash".into() });
        }
    }
}

/// Each hero that may shoot fires at the nearest prop or other hero in range.
pub fn shoot(
    mut commands: Commands<'_, '_>,
    mut heroes: Query<'_, '_, (Entity, &mut Bot, &Position, Option<&Health>)>,
    targets: Query<'_, '_, (Entity, &Actor, &Position, Option<&Health>)>,
    time: Res<'_, Time>,
) {
    let dt = time.delta_secs();
    for (shooter, mut bot, at, health) in &mut heroes {
        bot.reload_in -= dt;
        if bot.reload_in > 0.0 || !alive(health) {
            continue;
        }
        let nearest = targets
            .iter()
            .filter(|(target, actor, _, health)| {
                *target != shooter
                    && match actor.class.as_str() {
                        "DamageableProp" => true,
                        "HeroCharacter" => alive(*health),
                        _ => false,
                    }
            })
            .map(|(_, _, target, _)| (at.distance(target), *target))
            .filter(|(distance, _)| *distance <= RANGE)
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((distance, target)) = nearest else { continue };
        let velocity = ((target.x - at.x) / distance * SHOT_SPEED, (target.y - at.y) / distance * SHOT_SPEED);
        commands.spawn(Shot { at: *at, velocity, ttl: RANGE / SHOT_SPEED + 0.1, shooter });
        bot.reload_in = RELOAD;
    }
}

/// Shots fly; one that reaches a prop tells the prop it was hit (damageable-props lowers its health), one that
/// reaches a hero takes health off it.
pub fn fly_shots(
    mut commands: Commands<'_, '_>,
    mut shots: Query<'_, '_, (Entity, &mut Shot)>,
    props: Query<'_, '_, (Entity, &Actor, &Position), Without<Bot>>,
    mut heroes: Query<'_, '_, (Entity, &Position, &mut Health), With<Bot>>,
    time: Res<'_, Time>,
    mut to_actors: MessageWriter<'_, ToActor>,
) {
    let dt = time.delta_secs();
    for (entity, mut shot) in &mut shots {
        shot.at.x += shot.velocity.0 * dt;
        shot.at.y += shot.velocity.1 * dt;
        shot.ttl -= dt;
        let prop =
            props.iter().find(|(_, actor, at)| actor.class == "DamageableProp" && at.distance(&shot.at) < PROP_RADIUS);
        if let Some((prop, _, _)) = prop {
            to_actors.write(ToActor { entity: prop, event: "Hit".into() });
            commands.entity(entity).despawn();
            continue;
        }
        let hero = heroes.iter_mut().find(|(hero, at, health)| {
            *hero != shot.shooter && health.health > 0 && at.distance(&shot.at) < HERO_RADIUS
        });
        if let Some((_, _, mut health)) = hero {
            health.health = (health.health - SHOT_DAMAGE).max(0);
            commands.entity(entity).despawn();
            continue;
        }
        if shot.ttl <= 0.0 {
            commands.entity(entity).despawn();
        }
    }
}

/// A prop whose health is gone breaks: its entity goes, and with it its actor.
pub fn break_props(mut commands: Commands<'_, '_>, props: Query<'_, '_, (Entity, &PropHealth)>) {
    for (entity, health) in &props {
        if health.health <= 0 {
            commands.entity(entity).despawn();
        }
    }
}

/// The length of one of the arena's frames at `hz`.
pub fn frame_at(hz: f64) -> Duration {
    Duration::from_secs_f64(1.0 / hz)
}
