//! The messages between the game and the plugins: events both ways, and commands to the world's features.

use std::path::PathBuf;

use bevy_ecs::prelude::*;
use gamefeature_host::world::ActorId;

/// A custom event for an actor's plugins (their extension handlers hear it, as Unreal's
/// `SendGameFrameworkComponentExtensionEvent`).
#[derive(Message, Debug, Clone)]
pub struct ToActor {
    /// The actor's entity.
    pub entity: Entity,
    /// The event's name.
    pub event: String,
}

/// A custom event plugins sent to an actor, heard by the game.
#[derive(Message, Debug, Clone)]
pub struct FromPlugins {
    /// The actor's entity, when it is one (plugins may send events to actors the game has no entity for).
    pub entity: Option<Entity>,
    /// The actor.
    pub actor: ActorId,
    /// The event's name.
    pub event: String,
}

/// Something to do to the world's features while the game runs, carried out between two frames.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub enum FeatureCommand {
    /// Compiles the plugin's new version off the frame, then swaps it in between frames, keeping its state.
    Reload(String),
    /// Activates an installed plugin in the world.
    Activate(String),
    /// Deactivates a plugin: it leaves nothing behind.
    Deactivate(String),
    /// Installs the plugin folder at this path (activate it to play it).
    Install(PathBuf),
}

/// What became of a [`FeatureCommand`] (a reload's comes once its new version compiled and was swapped in, or
/// was refused).
#[derive(Message, Debug, Clone)]
pub struct FeatureOutcome {
    /// The command.
    pub command: FeatureCommand,
    /// What a console would show, or why it was refused (the world is unchanged then).
    pub outcome: Result<String, gamefeature_host::Error>,
}
