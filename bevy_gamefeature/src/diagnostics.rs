//! The host in Bevy's diagnostics, beside its frame time and entity count: the world's frame, each plugin's CPU
//! time in it, the actors, and the plugins quarantined. `LogDiagnosticsPlugin` prints them; a game's debug overlay
//! reads them from `DiagnosticsStore`.

use std::time::Instant;

use bevy_app::{App, FixedUpdate, Plugin};
use bevy_diagnostic::{Diagnostic, DiagnosticMeasurement, DiagnosticPath, DiagnosticsStore, RegisterDiagnostic};
use bevy_ecs::prelude::*;
use gamefeature_host::world;

use crate::features::GameFeatures;
use crate::BridgeSet;

/// The world's last frame (the library loop's step), in milliseconds.
pub const WORLD_FRAME: DiagnosticPath = DiagnosticPath::const_new("gamefeature/world_frame_ms");
/// The world's actors.
pub const ACTORS: DiagnosticPath = DiagnosticPath::const_new("gamefeature/actors");
/// Plugins quarantined since the world was created.
pub const QUARANTINED: DiagnosticPath = DiagnosticPath::const_new("gamefeature/quarantined");

/// A plugin's CPU time in the world's last frame, in milliseconds: `gamefeature/plugin/<name>/cpu_ms`.
pub fn plugin_cpu(plugin: &str) -> DiagnosticPath {
    DiagnosticPath::from_components(["gamefeature", "plugin", plugin, "cpu_ms"])
}

/// Adds the host's diagnostics (add Bevy's `DiagnosticsPlugin` too, as for any diagnostics plugin).
pub struct GameFeatureDiagnosticsPlugin;

impl Plugin for GameFeatureDiagnosticsPlugin {
    fn build(&self, app: &mut App) {
        app.register_diagnostic(Diagnostic::new(WORLD_FRAME).with_suffix("ms"))
            .register_diagnostic(Diagnostic::new(ACTORS))
            .register_diagnostic(Diagnostic::new(QUARANTINED))
            .add_systems(FixedUpdate, measure.after(BridgeSet::Step).before(BridgeSet::FromWorld));
    }
}

fn measure(features: Res<'_, GameFeatures>, mut store: ResMut<'_, DiagnosticsStore>) {
    let now = Instant::now();
    let took = features.lock().last_step.as_ref().map(|step| step.took);
    let (actors, quarantined, plugins) = features.with_loop(|game| {
        let manager = game.manager();
        let actors = world::lock(manager.world()).actors().count();
        let plugins: Vec<(String, f64)> = manager
            .last_frame_spend()
            .map(|(plugin, spent)| (plugin.to_string(), spent.cpu.as_secs_f64() * 1000.0))
            .collect();
        (actors, manager.quarantine_count(), plugins)
    });
    let mut record = |path: &DiagnosticPath, value: f64| {
        if store.get(path).is_none() {
            // A plugin seen for the first time (activated, or installed, since the last frame).
            store.add(Diagnostic::new(path.clone()).with_suffix("ms"));
        }
        if let Some(diagnostic) = store.get_mut(path) {
            diagnostic.add_measurement(DiagnosticMeasurement { time: now, value });
        }
    };
    if let Some(took) = took {
        record(&WORLD_FRAME, took.as_secs_f64() * 1000.0);
    }
    record(&ACTORS, actors as f64);
    record(&QUARANTINED, quarantined as f64);
    for (plugin, cpu_ms) in plugins {
        record(&plugin_cpu(&plugin), cpu_ms);
    }
}
