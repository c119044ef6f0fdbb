//! A picture of the arena as it is, drawn in software (tiny-skia): the same on a machine with no GPU and no
//! display, so the README's picture is made by a command anyone can run. Outside the zone is red; props are
//! squares going from wood to red as they are hit; health packs are green crosses; heroes are discs in their
//! colour with their health above them (grey when down, ringed white while dashing); shots are yellow; each
//! hero's score is a bar along the top.

use bevy_ecs::prelude::*;
use bevy_gamefeature::{Actor, PlayerActors};
use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, Rect, Stroke, Transform};

use crate::components::{Bot, Health, Movement, Position, PropHealth, Score, Shot, Zone};
use crate::play::Arena;

/// Pixels per arena unit.
const SCALE: f32 = 20.0;
/// Each hero's colour, by its number (the window draws them the same).
pub(crate) const HERO_COLOURS: [(u8, u8, u8); 8] = [
    (66, 165, 245),
    (239, 83, 80),
    (255, 202, 40),
    (171, 71, 188),
    (38, 198, 218),
    (255, 112, 67),
    (156, 204, 101),
    (236, 64, 122),
];

fn paint(r: u8, g: u8, b: u8, a: u8) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color(Color::from_rgba8(r, g, b, a));
    paint.anti_alias = true;
    paint
}

fn circle(pixmap: &mut Pixmap, x: f32, y: f32, radius: f32, paint: &Paint<'_>) {
    if let Some(path) = PathBuilder::from_circle(x * SCALE, y * SCALE, radius * SCALE) {
        pixmap.fill_path(&path, paint, FillRule::Winding, Transform::identity(), None);
    }
}

fn rect(pixmap: &mut Pixmap, x: f32, y: f32, w: f32, h: f32, paint: &Paint<'_>) {
    if let Some(rect) = Rect::from_xywh(x * SCALE, y * SCALE, w * SCALE, h * SCALE) {
        pixmap.fill_rect(rect, paint, Transform::identity(), None);
    }
}

/// The arena as it is now. `None` only for an arena too large to draw.
pub fn draw(world: &mut World) -> Option<Pixmap> {
    let (width, height) = {
        let arena = world.resource::<Arena>();
        (arena.width, arena.height)
    };
    let mut pixmap = Pixmap::new((width * SCALE) as u32, (height * SCALE) as u32)?;
    pixmap.fill(Color::from_rgba8(58, 24, 28, 255));

    // The zone: the arena's floor inside it, red outside.
    let zone = world.query::<&Zone>().iter(world).next().copied();
    let floor = paint(27, 31, 39, 255);
    match zone {
        Some(zone) => circle(&mut pixmap, zone.x, zone.y, zone.radius, &floor),
        None => rect(&mut pixmap, 0.0, 0.0, width, height, &floor),
    }
    let grid = paint(45, 51, 62, 255);
    for x in (0..=width as u32).step_by(5) {
        rect(&mut pixmap, x as f32 - 0.025, 0.0, 0.05, height, &grid);
    }
    for y in (0..=height as u32).step_by(5) {
        rect(&mut pixmap, 0.0, y as f32 - 0.025, width, 0.05, &grid);
    }
    if let Some(zone) = zone {
        if let Some(path) = PathBuilder::from_circle(zone.x * SCALE, zone.y * SCALE, zone.radius * SCALE) {
            let stroke = Stroke { width: 3.0, ..Stroke::default() };
            pixmap.stroke_path(&path, &paint(240, 98, 146, 220), &stroke, Transform::identity(), None);
        }
    }

    let mut things = world.query::<(&Actor, &Position, Option<&PropHealth>)>();
    for (actor, at, prop_health) in things.iter(world) {
        match actor.class.as_str() {
            "DamageableProp" => {
                // Wood when untouched, redder the more it was hit.
                let hit = prop_health.map_or(0.0, |h| 1.0 - (h.health as f32 / 100.0).clamp(0.0, 1.0));
                let colour = paint(141 + (100.0 * hit) as u8, 110 - (70.0 * hit) as u8, 99 - (60.0 * hit) as u8, 255);
                rect(&mut pixmap, at.x - 0.6, at.y - 0.6, 1.2, 1.2, &colour);
            }
            "Pickup" => {
                let green = paint(102, 187, 106, 255);
                rect(&mut pixmap, at.x - 0.5, at.y - 0.15, 1.0, 0.3, &green);
                rect(&mut pixmap, at.x - 0.15, at.y - 0.5, 0.3, 1.0, &green);
            }
            _ => {}
        }
    }

    let shot_paint = paint(255, 235, 59, 255);
    for shot in world.query::<&Shot>().iter(world) {
        circle(&mut pixmap, shot.at.x, shot.at.y, 0.15, &shot_paint);
    }

    let mut heroes = world.query::<(&Bot, &Position, Option<&Health>, Option<&Movement>, Option<&PlayerActors>)>();
    let heroes: Vec<_> = heroes
        .iter(world)
        .map(|(bot, at, health, movement, actors)| {
            (bot.number, *at, health.copied(), movement.copied(), actors.copied())
        })
        .collect();
    for (number, at, health, movement, actors) in heroes {
        let (r, g, b) = HERO_COLOURS[number % HERO_COLOURS.len()];
        let down = health.is_some_and(|h| h.health <= 0);
        if movement.is_some_and(|m| m.boost > 1.0) {
            circle(&mut pixmap, at.x, at.y, 0.95, &paint(255, 255, 255, 200));
        }
        let body = if down { paint(110, 110, 110, 255) } else { paint(r, g, b, 255) };
        circle(&mut pixmap, at.x, at.y, 0.7, &body);
        if let Some(health) = health {
            let full = (health.health as f32 / 200.0).clamp(0.0, 1.0);
            rect(&mut pixmap, at.x - 0.8, at.y - 1.3, 1.6, 0.22, &paint(20, 20, 20, 255));
            rect(&mut pixmap, at.x - 0.8, at.y - 1.3, 1.6 * full, 0.22, &paint(129, 199, 132, 255));
        }
        // The hero's score, a bar along the top (a point a second fills it in a minute).
        let score = actors.and_then(|a| world.get::<Score>(a.player_state)).map_or(0, |s| s.score);
        let length = (score as f32 / 60.0).clamp(0.0, 1.0) * (width / 2.0 - 1.0);
        rect(&mut pixmap, 0.5, 0.4 + number as f32 * 0.45, length.max(0.1), 0.3, &paint(r, g, b, 255));
    }
    Some(pixmap)
}
