//! Game-feature plugins — sandboxed WebAssembly components, in any language — in a Bevy app.
//!
//! The host's world lives beside Bevy's: the app's entities marked [`Actor`] are the world's actors (a [`Player`]
//! is a pawn with its controller and player state, as Unreal's game mode spawns them), despawning one ends its
//! actor, and the world steps in `FixedUpdate` through the library's [`GameLoop`](gamefeature_host::game_loop::GameLoop). Bevy components bridged with
//! [`GameFeatureApp::bridge_component`] are the world's component classes, their fields its properties (through
//! `bevy_reflect`): what a Bevy system writes, plugins read and hear; what plugins write (or add) appears on the
//! entity. Events go both ways as messages: [`ToActor`] sends one to an actor's plugins, [`FromPlugins`] carries
//! what plugins sent to actors. [`FeatureCommand`] messages reload, activate, deactivate and install features
//! while the app runs, each answered by a [`FeatureOutcome`]; [`HostSettings::watch`] reloads a plugin rebuilt
//! on disk. What fails (a plugin quarantined) is in the log.
//!
//! ```no_run
//! use bevy_app::App;
//! use bevy_gamefeature::{Actor, GameFeatureApp, GameFeaturePlugin, GameFeatures, HostSettings, Player};
//!
//! #[derive(bevy_ecs::component::Component, bevy_reflect::Reflect, Default)]
//! struct Score {
//!     score: i64,
//! }
//!
//! let settings = HostSettings::new("plugins", "experiences/arena.toml").class("Hero", "Character");
//! let mut app = App::new();
//! app.insert_resource(GameFeatures::start(settings).expect("the experience loads"))
//!     .add_plugins(GameFeaturePlugin)
//!     .bridge_component::<Score>("ScoreComponent");
//! app.world_mut().spawn((Actor::new("Hero"), Player));
//! ```

// A Bevy system's parameters are queries whose types clippy calls complex; Bevy's own crates allow it too.
#![allow(clippy::type_complexity)]

mod bridge;
mod components;
#[cfg(feature = "console")]
pub mod console;
pub mod diagnostics;
mod features;
mod from_world;
mod messages;
mod settings;
mod step;
mod to_world;

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_ecs::prelude::*;

pub use bridge::GameFeatureApp;
pub use components::{Actor, ActorHandle, InitStates, NotAnActor, Player, PlayerActors, SpawnedInWorld};
#[cfg(feature = "console")]
pub use console::{ConsoleAddress, GameFeatureConsolePlugin};
pub use diagnostics::GameFeatureDiagnosticsPlugin;
pub use features::GameFeatures;
pub use messages::{FeatureCommand, FeatureOutcome, FromPlugins, ToActor};
pub use settings::{HostSettings, Join};

/// What the bridge says when the app has no host: a programming error, as a missing resource is to Bevy.
const NEEDS_GAME_FEATURES: &str =
    "GameFeaturePlugin needs the GameFeatures resource: insert GameFeatures::start(...) first";

/// Adds the bridge's systems: actors spawned and despawned, events both ways, and the world stepped in
/// `FixedUpdate` (set its rate with `Time::<Fixed>::from_hz`). Insert a [`GameFeatures`] first.
pub struct GameFeaturePlugin;

/// The bridge's steps in `FixedUpdate`, in this order: the game's changes reach the world, the world steps, the
/// plugins' changes reach the game. Put the game's own `FixedUpdate` systems `.before(BridgeSet::ToWorld)` (what
/// they write reaches the plugins in the same frame) or `.after(BridgeSet::FromWorld)` (they see what the plugins
/// wrote in it): a write between the two may be overwritten by what the plugins wrote to the same actor.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum BridgeSet {
    /// Actors spawned and despawned, bridged components written, events sent to actors.
    ToWorld,
    /// The world's frame.
    Step,
    /// What plugins wrote, added and sent, onto the entities.
    FromWorld,
}

impl Plugin for GameFeaturePlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<ToActor>()
            .add_message::<FromPlugins>()
            .add_message::<FeatureCommand>()
            .add_message::<FeatureOutcome>()
            .init_resource::<bridge::Bridged>()
            .init_resource::<to_world::Despawned>()
            .add_observer(to_world::note_despawned)
            .init_resource::<bridge::ClassBridges>()
            .init_resource::<from_world::ChangedActors>()
            .configure_sets(FixedUpdate, (BridgeSet::ToWorld, BridgeSet::Step, BridgeSet::FromWorld).chain())
            // One exclusive system a step, the bridged classes' work inside them: each system the executor hands
            // to a thread costs a frame more than the work it does.
            .add_systems(FixedUpdate, to_world::to_world.in_set(BridgeSet::ToWorld))
            .add_systems(FixedUpdate, step::step_world.in_set(BridgeSet::Step))
            .add_systems(FixedUpdate, from_world::from_world.in_set(BridgeSet::FromWorld));
    }
}
