//! The arena in a window (`--features window`): Bevy's renderer draws what the picture draws, every frame, with
//! gizmos — the zone, props going red as they are hit, health packs, heroes with their health, shots in flight,
//! each hero's score along the top. The game and its plugins are the same as headless; only the drawing is added.

use bevy::prelude::*;
use bevy_gamefeature::{Actor, PlayerActors};

use crate::components::{Bot, Health, Movement, Position, PropHealth, Score, Shot, Zone};
use crate::picture::HERO_COLOURS;
use crate::play::Arena;

/// Pixels per arena unit.
const SCALE: f32 = 20.0;

/// Bevy's default plugins for a window of the arena's size, and the drawing.
pub fn add_window(app: &mut App, width: f32, height: f32) {
    let window = Window {
        title: "gamefeature arena".into(),
        resolution: ((width * SCALE) as u32, (height * SCALE) as u32).into(),
        ..default()
    };
    app.add_plugins(DefaultPlugins.set(WindowPlugin { primary_window: Some(window), ..default() }))
        .insert_resource(ClearColor(Color::srgb_u8(27, 31, 39)))
        .add_systems(Startup, |mut commands: Commands<'_, '_>| {
            commands.spawn(Camera2d);
        })
        .add_systems(Update, draw);
}

fn colour((r, g, b): (u8, u8, u8)) -> Color {
    Color::srgb_u8(r, g, b)
}

fn draw(
    mut gizmos: Gizmos<'_, '_>,
    arena: Res<'_, Arena>,
    zone: Query<'_, '_, &Zone>,
    things: Query<'_, '_, (&Actor, &Position, Option<&PropHealth>), Without<Bot>>,
    heroes: Query<'_, '_, (&Bot, &Position, Option<&Health>, Option<&Movement>, Option<&PlayerActors>)>,
    scores: Query<'_, '_, &Score>,
    shots: Query<'_, '_, &Shot>,
) {
    // Arena units (from the top left, y down) to the camera's (from the centre, y up).
    let at = |x: f32, y: f32| Vec2::new((x - arena.width / 2.0) * SCALE, (arena.height / 2.0 - y) * SCALE);
    gizmos.rect_2d(Isometry2d::IDENTITY, Vec2::new(arena.width, arena.height) * SCALE, colour((45, 51, 62)));
    for zone in &zone {
        gizmos.circle_2d(at(zone.x, zone.y), zone.radius * SCALE, colour((240, 98, 146)));
    }
    for (actor, spot, prop_health) in &things {
        match actor.class.as_str() {
            "DamageableProp" => {
                let hit = prop_health.map_or(0.0, |h| 1.0 - (h.health as f32 / 100.0).clamp(0.0, 1.0));
                let wood = Color::srgb(0.55 + 0.4 * hit, 0.43 - 0.27 * hit, 0.39 - 0.23 * hit);
                for inset in [0.0, 0.2, 0.4] {
                    gizmos.rect_2d(at(spot.x, spot.y), Vec2::splat((1.2 - inset) * SCALE), wood);
                }
            }
            "Pickup" => gizmos.cross_2d(at(spot.x, spot.y), 0.5 * SCALE, colour((102, 187, 106))),
            _ => {}
        }
    }
    for shot in &shots {
        gizmos.circle_2d(at(shot.at.x, shot.at.y), 0.15 * SCALE, colour((255, 235, 59)));
    }
    for (bot, spot, health, movement, actors) in &heroes {
        let centre = at(spot.x, spot.y);
        let down = health.is_some_and(|h| h.health <= 0);
        let body =
            if down { Color::srgb(0.43, 0.43, 0.43) } else { colour(HERO_COLOURS[bot.number % HERO_COLOURS.len()]) };
        for radius in [0.7, 0.55, 0.4, 0.25, 0.1] {
            gizmos.circle_2d(centre, radius * SCALE, body);
        }
        if movement.is_some_and(|m| m.boost > 1.0) {
            gizmos.circle_2d(centre, 0.95 * SCALE, Color::WHITE);
        }
        if let Some(health) = health {
            let full = (health.health as f32 / 200.0).clamp(0.0, 1.0);
            let left = centre + Vec2::new(-0.8 * SCALE, 1.2 * SCALE);
            gizmos.line_2d(left, left + Vec2::new(1.6 * SCALE * full, 0.0), colour((129, 199, 132)));
        }
        let score = actors.and_then(|a| scores.get(a.player_state).ok()).map_or(0, |s| s.score);
        let length = (score as f32 / 60.0).clamp(0.0, 1.0) * (arena.width / 2.0 - 1.0);
        let start = at(0.5, 0.5 + bot.number as f32 * 0.45);
        gizmos.line_2d(start, start + Vec2::new(length.max(0.1) * SCALE, 0.0), body);
    }
}
