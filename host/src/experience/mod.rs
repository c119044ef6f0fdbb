//! Experiences: what a world plays, and the manager that loads it through Lyra's load states.

mod callbacks;
mod chaos;
mod definition;
mod dispatch;
mod frame_budget;
mod load_state;
mod manager;
mod rounds;

pub use callbacks::{LoadedCallback, LoadedExperience, Priority};
pub use chaos::ChaosDelay;
pub use definition::{ActionSet, DefinitionError, ExperienceDefinition, PawnData};
pub use dispatch::{DeliveryFailure, DispatchLimits, Instances, LiveInstance, PumpOverflow, MAX_BATCH, MAX_ROUNDS};
pub use frame_budget::{FrameCost, FrameSpend, Overrun, FRAMES_OVER_BUDGET};
pub use load_state::ExperienceLoadState;
pub use manager::{
    ExperienceError, ExperienceManager, Failure, LoadReport, ManagerOptions, NewVersion, ReloadError, Reloaded,
};
