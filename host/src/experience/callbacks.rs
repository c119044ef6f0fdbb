//! "Experience loaded" callbacks at three priorities, as Lyra's `CallOrRegister_OnExperienceLoaded*`.

use std::sync::Arc;

use super::definition::ExperienceDefinition;
use crate::world::SharedWorld;

/// The order in which loaded callbacks run: every high one, then normal, then low.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Runs first, before every normal and low callback.
    High,
    /// Runs after every high-priority callback.
    Normal,
    /// Runs last, after every high and normal callback.
    Low,
}

/// What a loaded callback is given.
#[derive(Clone)]
pub struct LoadedExperience {
    /// The experience that loaded.
    pub definition: Arc<ExperienceDefinition>,
    /// The world it loaded into.
    pub world: SharedWorld,
}

/// A callback run once when the experience has loaded.
pub type LoadedCallback = Box<dyn FnOnce(&LoadedExperience) + Send>;

/// Callbacks waiting for the experience to load.
#[derive(Default)]
pub struct LoadedCallbacks {
    waiting: [Vec<LoadedCallback>; 3],
}

impl LoadedCallbacks {
    /// Keeps a callback for [`fire`](Self::fire).
    pub fn register(&mut self, priority: Priority, callback: LoadedCallback) {
        self.waiting[priority as usize].push(callback);
    }

    /// Runs and forgets every waiting callback: high, then normal, then low; each priority in registration order.
    pub fn fire(&mut self, loaded: &LoadedExperience) {
        for bucket in &mut self.waiting {
            for callback in std::mem::take(bucket) {
                callback(loaded);
            }
        }
    }
}
