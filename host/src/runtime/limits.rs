//! The limits one plugin's instances run under: the runtime's defaults with the plugin's overrides applied.

use std::time::Duration;

use super::RuntimeConfig;

/// Resolved limits of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory one instance may grow to, in bytes.
    pub memory: usize,
    /// How long one call may run (batches get a little more per entry).
    pub call_deadline: Duration,
    /// Instructions' worth of fuel per call, when fuel metering is on.
    pub fuel: Option<u64>,
    /// World changes one call may make (batches get more per entry) before it counts as flooding the host.
    pub world_changes: u32,
    /// Handles one instance may hold at once.
    pub handles: u32,
}

impl Limits {
    /// The limits of `plugin` under `config`. Memory is capped by what the instance pool reserves per slot.
    pub fn of(plugin: &str, config: &RuntimeConfig) -> Limits {
        let overrides = config.plugin_limits.get(plugin).cloned().unwrap_or_default();
        Limits {
            memory: overrides.memory_bytes().unwrap_or(config.memory_limit).min(config.largest_memory_limit()),
            call_deadline: overrides.call_deadline().unwrap_or(config.call_deadline),
            fuel: overrides.fuel.or(config.fuel),
            world_changes: overrides.world_changes.unwrap_or(config.world_changes),
            handles: overrides.handles.unwrap_or(config.max_handles),
        }
    }
}

impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "call deadline {:?}, memory {} MiB, {} world changes per call, {} handles, fuel {}",
            self.call_deadline,
            self.memory >> 20,
            self.world_changes,
            self.handles,
            self.fuel.map_or_else(|| "off".to_string(), |fuel| format!("{fuel} per call"))
        )
    }
}
