//! The experience's load state, exactly as Lyra's `ELyraExperienceLoadState`.

use std::fmt;

/// Where one world's experience is in its lifecycle:
/// `Unloaded -> Loading -> LoadingGameFeatures -> LoadingChaosTestingDelay -> ExecutingActions -> Loaded ->
/// Deactivating -> Unloaded`. `LoadingGameFeatures` is skipped when the experience names no features, and
/// `LoadingChaosTestingDelay` unless a chaos delay is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExperienceLoadState {
    /// No experience: the state before loading and after end of play, and after a load that failed.
    Unloaded,
    /// Reading the definition, its action sets and the bundles for this net mode.
    Loading,
    /// Bringing the features (and their dependencies) to Active in the feature subsystem.
    LoadingGameFeatures,
    /// Waiting a seeded random delay, to shake out code that assumes loading is instant.
    LoadingChaosTestingDelay,
    /// Running every feature's actions in this world.
    ExecutingActions,
    /// Every action has run: the game plays, and loaded callbacks have been called.
    Loaded,
    /// End of play: undoing every action, waiting for plugins that hold deactivation open.
    Deactivating,
}

impl fmt::Display for ExperienceLoadState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
