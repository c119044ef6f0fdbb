//! Experiences: what a world plays, and the manager that loads it through Lyra's load states.

mod callbacks;
mod chaos;
mod definition;
mod load_state;
mod manager;

pub use callbacks::{LoadedCallback, LoadedExperience, Priority};
pub use chaos::ChaosDelay;
pub use definition::{ActionSet, DefinitionError, ExperienceDefinition, PawnData};
pub use load_state::ExperienceLoadState;
pub use manager::{
    ExperienceError, ExperienceManager, Failure, LoadReport, ManagerOptions, NewVersion, ReloadError, Reloaded,
};
