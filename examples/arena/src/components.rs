//! The arena's components. Those bridged to the world (each a component class plugins read and write) name their
//! class; the others are the game's alone.

use bevy_ecs::prelude::*;
use bevy_reflect::Reflect;

/// Where an actor is, in arena units (the world's `Position`, the game's own: respawns move heroes by writing it).
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// Left to right.
    pub x: f32,
    /// Top to bottom.
    pub y: f32,
}

impl Position {
    /// The distance to `other`.
    pub fn distance(&self, other: &Position) -> f32 {
        (self.x - other.x).hypot(self.y - other.y)
    }
}

/// How a pawn moves (the world's `Movement`, the game's own): `boost` multiplies its speed; a dash writes it.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
pub struct Movement {
    /// The factor the pawn's speed is multiplied by.
    pub boost: f32,
}

impl Default for Movement {
    fn default() -> Self {
        Movement { boost: 1.0 }
    }
}

/// A hero's health (shooter-core's `HealthComponent`, on every character): the game's shots lower it; health
/// packs, the zone and respawns change it too. A hero at 0 is down: it neither moves nor shoots.
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// Points left.
    pub health: i64,
}

/// A prop's health (damageable-props' `PropHealth`), there once the prop was first hit. A prop at 0 breaks.
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropHealth {
    /// Points left.
    pub health: i64,
}

/// A player's score (score-keeper's `ScoreComponent`, on the player state).
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    /// Points.
    pub score: i64,
}

/// The zone heroes must stay in (shrinking-zone's `ZoneComponent`, on the zone actor it spawns).
#[derive(Component, Reflect, Default, Debug, Clone, Copy, PartialEq)]
pub struct Zone {
    /// The centre, left to right.
    pub x: f32,
    /// The centre, top to bottom.
    pub y: f32,
    /// How far from the centre is inside.
    pub radius: f32,
}

/// A hero the game plays itself: where it heads, when it may shoot again, and its colour on the picture.
#[derive(Component, Debug, Clone)]
pub struct Bot {
    /// The hero's number (its colour).
    pub number: usize,
    /// Where it heads.
    pub waypoint: Position,
    /// Seconds until it picks another waypoint.
    pub retarget_in: f32,
    /// Seconds until it may shoot again.
    pub reload_in: f32,
}

/// A shot in flight: the game's alone (not an actor).
#[derive(Component, Debug, Clone, Copy)]
pub struct Shot {
    /// Where it is.
    pub at: Position,
    /// Arena units a second, each way.
    pub velocity: (f32, f32),
    /// Seconds it flies on.
    pub ttl: f32,
    /// The hero who fired it (it does not hit its shooter).
    pub shooter: Entity,
}
