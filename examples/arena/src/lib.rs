//! The arena: a small top-down game in Bevy whose gameplay comes from game-feature plugins. Heroes (bots the game
//! plays) move and shoot; props take damage and break; scores rise. The game moves, aims and draws; the
//! experience's plugins decide the rest — health from shooter-core, Lyra's initialisation, input bound on each
//! locally controlled pawn, props' health kept lazily, scores, the scoreboard and the announcer, and a mod in
//! each language that changes play where you can see it: a dash (Rust), health packs (Python), a shrinking zone
//! (JavaScript) and respawns (C).
//!
//! ```no_run
//! use gamefeature_arena::{ArenaOptions, arena_app};
//!
//! let mut app = arena_app(ArenaOptions::new("plugins", "experiences/arena.toml")).expect("the arena loads");
//! for _ in 0..300 {
//!     app.update();
//! }
//! println!("{}", gamefeature_arena::summary(app.world_mut()));
//! ```

// A Bevy system's parameters are queries whose types clippy calls complex; Bevy's own crates allow it too.
#![allow(clippy::type_complexity)]

pub mod components;
pub mod picture;
pub mod play;
#[cfg(feature = "window")]
pub mod window;

use std::fmt;
use std::path::PathBuf;

use bevy_app::{App, FixedUpdate, Plugin, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_gamefeature::{Actor, BridgeSet, GameFeatureApp, GameFeaturePlugin, GameFeatures, HostSettings, PlayerActors};
use bevy_time::{Fixed, Time, TimePlugin};

use components::{Bot, Health, Movement, Position, PropHealth, Score, Zone};
use play::{Arena, PlaySet};

/// The rate the arena (and its world) plays at.
pub const TICK_HZ: f64 = 30.0;

/// What the arena plays and how.
#[derive(Debug, Clone)]
pub struct ArenaOptions {
    /// Where the host finds plugins, what it plays, what it grants.
    pub host: HostSettings,
    /// Heroes the game plays.
    pub heroes: usize,
    /// The seed of the game's random numbers: the same seed plays the same match.
    pub seed: u64,
    /// The arena's size: the experience's `arena` asset (`width = 40`, `height = 30`).
    pub arena_file: Option<PathBuf>,
}

impl ArenaOptions {
    /// Four heroes playing `experience` with the plugins of `plugin_dir`, the arena's size from the `arena.txt`
    /// in the experience's `data` folder.
    pub fn new(plugin_dir: impl Into<PathBuf>, experience: impl Into<PathBuf>) -> Self {
        let experience: PathBuf = experience.into();
        let arena_file = experience.parent().map(|dir| dir.join("data/arena.txt"));
        ArenaOptions { host: HostSettings::new(plugin_dir, experience), heroes: 4, seed: 1, arena_file }
    }
}

/// The arena's game: its bridged components, and its systems before the bridge hands each frame to the world.
/// Needs [`GameFeatures`] and an [`Arena`].
pub struct ArenaPlugin;

impl Plugin for ArenaPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(GameFeaturePlugin)
            .bridge_component::<Position>("Position")
            .bridge_component::<Movement>("Movement")
            .bridge_component::<Health>("HealthComponent")
            .bridge_component::<PropHealth>("PropHealth")
            .bridge_component::<Score>("ScoreComponent")
            .bridge_component::<Zone>("ZoneComponent")
            .configure_sets(FixedUpdate, PlaySet.before(BridgeSet::ToWorld))
            .add_systems(
                FixedUpdate,
                (play::place_new_actors, play::steer_heroes, play::shoot, play::fly_shots, play::break_props)
                    .chain()
                    .in_set(PlaySet),
            );
    }
}

/// A headless app playing the arena: the host started, the heroes spawned; `update` plays a frame. Add a runner
/// (Bevy's `ScheduleRunnerPlugin`) to play it in real time.
pub fn arena_app(options: ArenaOptions) -> Result<App, gamefeature_host::Error> {
    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), TimePlugin));
    arena_in(app, options)
}

/// The arena in `app`, which has Bevy's task pools and time already (its headless ones, or a window's default
/// plugins).
pub fn arena_in(mut app: App, options: ArenaOptions) -> Result<App, gamefeature_host::Error> {
    app.insert_resource(Time::<Fixed>::from_hz(TICK_HZ))
        .insert_resource(arena_of(&options))
        .insert_resource(GameFeatures::start(options.host)?)
        .add_plugins(ArenaPlugin);
    play::spawn_heroes(app.world_mut(), options.heroes);
    Ok(app)
}

/// The arena `options` describe: its size from its file, its random numbers from its seed.
pub fn arena_of(options: &ArenaOptions) -> Arena {
    let text = match &options.arena_file {
        Some(file) => std::fs::read_to_string(file).unwrap_or_default(),
        None => String::new(),
    };
    Arena::from_text(&text, options.seed)
}

/// One hero, as the summary shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct HeroSummary {
    /// The hero's number.
    pub number: usize,
    /// Where it is.
    pub at: Position,
    /// Its health, once shooter-core gave it some.
    pub health: Option<i64>,
    /// Its player's score.
    pub score: i64,
}

/// The arena at a glance.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The zone's radius, once there is a zone.
    pub zone_radius: Option<f32>,
    /// Props standing.
    pub props: usize,
    /// Health packs lying about.
    pub pickups: usize,
    /// The heroes, by number.
    pub heroes: Vec<HeroSummary>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.zone_radius {
            Some(radius) => write!(f, "zone {radius:.1}")?,
            None => write!(f, "no zone")?,
        }
        write!(f, " | {} prop(s), {} health pack(s) |", self.props, self.pickups)?;
        for hero in &self.heroes {
            let health = hero.health.map_or("-".to_string(), |h| h.to_string());
            write!(f, " hero {}: {health} hp, {} pt", hero.number, hero.score)?;
        }
        Ok(())
    }
}

/// The arena at a glance: the zone, props and health packs, each hero's health and score.
pub fn summary(world: &mut World) -> Summary {
    let zone_radius = world.query::<&Zone>().iter(world).next().map(|z| z.radius);
    let mut classes = world.query::<&Actor>();
    let mut count = |class: &str| classes.iter(world).filter(|a| a.class == class).count();
    let (props, pickups) = (count("DamageableProp"), count("Pickup"));
    let mut heroes: Vec<HeroSummary> = world
        .query::<(&Bot, &Position, Option<&Health>, Option<&PlayerActors>)>()
        .iter(world)
        .map(|(bot, at, health, actors)| HeroSummary {
            number: bot.number,
            at: *at,
            health: health.map(|h| h.health),
            score: actors.and_then(|a| world.get::<Score>(a.player_state)).map_or(0, |s| s.score),
        })
        .collect();
    heroes.sort_by_key(|h| h.number);
    Summary { zone_radius, props, pickups, heroes }
}

/// The arena's host settings for the repository's own layout: the example plugins, the arena experience, the
/// repository's `gfhost.toml` for grants, and the user's compile cache.
pub fn repository_settings(repository: &std::path::Path) -> ArenaOptions {
    let mut options = ArenaOptions::new(repository.join("plugins"), repository.join("experiences/arena.toml"));
    options.host = options
        .host
        .config(repository.join("gfhost.toml"))
        .cache_dir(gamefeature_host::runtime::RuntimeConfig::user_cache_dir());
    options
}
