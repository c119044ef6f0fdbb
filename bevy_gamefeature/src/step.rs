//! The world's frame: the game's feature commands carried out, then the world stepped by the library's loop.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
use bevy_time::Time;
use gamefeature_host::live::Command;

use crate::features::{GameFeatures, Host};
use crate::messages::{FeatureCommand, FeatureOutcome};

/// What the bridge's second step reads and writes.
pub(crate) type StepParams = (
    MessageReader<'static, 'static, FeatureCommand>,
    Res<'static, Time>,
    Res<'static, GameFeatures>,
    MessageWriter<'static, FeatureOutcome>,
);

/// The bridge's second step in a frame: feature commands, then the world's frame. An exclusive system, as
/// `to_world`.
pub(crate) fn step_world(world: &mut World, state: &mut SystemState<StepParams>) {
    let (mut commands, time, features, mut outcomes) = state.get_mut(world).expect(crate::NEEDS_GAME_FEATURES);
    carry_out_commands(&mut commands, &features, &mut outcomes);
    step(&time, &features, &mut outcomes);
}

/// Carries out the game's feature commands between frames (a reload starts compiling; its outcome comes with
/// the frame that swaps it in).
fn carry_out_commands(
    commands: &mut MessageReader<'_, '_, FeatureCommand>,
    features: &GameFeatures,
    outcomes: &mut MessageWriter<'_, FeatureOutcome>,
) {
    for command in commands.read() {
        let mut host = features.lock();
        let Host { game, session, .. } = &mut *host;
        let game = game.as_mut().expect("the loop runs until the app closes");
        let (console, line) = match command {
            FeatureCommand::Reload(plugin) => {
                game.reload(plugin);
                continue;
            }
            FeatureCommand::Activate(plugin) => (Command::Activate(plugin.clone()), format!("activate {plugin}")),
            FeatureCommand::Deactivate(plugin) => (Command::Deactivate(plugin.clone()), format!("deactivate {plugin}")),
            FeatureCommand::Install(dir) => (Command::Install(dir.clone()), format!("install {}", dir.display())),
        };
        let outcome = game.execute(session, &console, &line);
        match &outcome {
            Ok(text) => tracing::info!("{text}"),
            Err(e) => tracing::warn!("{line}: {e}"),
        }
        outcomes.write(FeatureOutcome { command: command.clone(), outcome });
    }
}

/// The world's frame, `FixedUpdate`'s time step after the last; new plugin versions applied before it, and
/// what failed in it (a plugin quarantined, say) in the log.
fn step(time: &Time, features: &GameFeatures, outcomes: &mut MessageWriter<'_, FeatureOutcome>) {
    let mut host = features.lock();
    let game = host.game.as_mut().expect("the loop runs until the app closes");
    let step = game.step(time.delta());
    let failures: Vec<String> = game.manager().report().failures.iter().map(|f| f.to_string()).collect();
    for failure in failures.iter().skip(host.failures_shown) {
        tracing::warn!("{failure}");
    }
    host.failures_shown = failures.len();
    for plugin in &step.compiling {
        tracing::info!("compiling {plugin}'s new version");
    }
    for reload in &step.reloads {
        match &reload.outcome {
            Ok(text) => tracing::info!("{text}"),
            Err(e) => tracing::warn!("{}: {e}", reload.plugin),
        }
        let command = FeatureCommand::Reload(reload.plugin.clone());
        outcomes.write(FeatureOutcome { command, outcome: reload.outcome.clone() });
    }
    host.last_step = Some(step);
}
