//! The limits one plugin's instances run under: the runtime's defaults with the plugin's overrides applied.

use std::time::Duration;

use super::RuntimeConfig;

/// The longest deadline a plugin gets, however it was configured (`config::MAX_CALL_DEADLINE_MS`).
const MAX_DEADLINE: Duration = Duration::from_millis(crate::config::MAX_CALL_DEADLINE_MS);

/// Resolved limits of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory one instance may grow to, in bytes.
    pub memory: usize,
    /// How much CPU time one call may use (batches get a little more per entry).
    pub call_deadline: Duration,
    /// How much CPU time instantiation may use.
    pub instantiate_deadline: Duration,
    /// Instructions' worth of fuel per call, when fuel metering is on.
    pub fuel: Option<u64>,
    /// World changes one call may make (batches get more per entry) before it counts as flooding the host.
    pub world_changes: u32,
    /// Handles one instance may hold at once.
    pub handles: u32,
    /// Bytes of host memory the properties the plugin writes may hold.
    pub host_memory: usize,
    /// CPU time all the plugin's calls in one frame may use (see `delivery::FrameCost`).
    pub frame_budget: Duration,
    /// Bytes its data directory may hold.
    pub data_quota: u64,
}

impl Limits {
    /// The limits of `plugin` under `config`. (The instance pool reserves the largest memory limit of any
    /// plugin per slot, so every plugin's limit fits.)
    pub fn of(plugin: &str, config: &RuntimeConfig) -> Limits {
        let overrides = config.plugin_limits.get(plugin).cloned().unwrap_or_default();
        // Whatever a library user sets, a deadline stays within what the configuration file accepts.
        let bounded = |deadline: Duration| deadline.clamp(Duration::from_millis(1), MAX_DEADLINE);
        Limits {
            memory: overrides.memory_bytes().unwrap_or(config.memory_limit),
            call_deadline: bounded(overrides.call_deadline().unwrap_or(config.call_deadline)),
            instantiate_deadline: bounded(overrides.instantiate_deadline().unwrap_or(config.instantiate_deadline)),
            fuel: overrides.fuel.or(config.fuel),
            world_changes: overrides.world_changes.unwrap_or(config.world_changes),
            handles: overrides.handles.unwrap_or(config.max_handles),
            host_memory: overrides.host_memory_bytes().unwrap_or(config.host_memory),
            frame_budget: overrides.frame_budget().unwrap_or(config.frame_budget),
            data_quota: overrides.data_quota_bytes().unwrap_or(config.data_quota),
        }
    }
}

impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "call deadline {:?}, instantiation {:?}, memory {} MiB, {} world changes per call, {} handles, \
             {} MiB of properties, frame budget {:?}, fuel {}",
            self.call_deadline,
            self.instantiate_deadline,
            self.memory >> 20,
            self.world_changes,
            self.handles,
            self.host_memory >> 20,
            self.frame_budget,
            self.fuel.map_or_else(|| "off".to_string(), |fuel| format!("{fuel} per call"))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{HostConfig, LimitOverrides};

    #[test]
    fn a_plugin_gets_the_defaults_with_its_own_overrides() {
        let config = HostConfig::parse(
            "[sandbox]\ncall-deadline-ms = 20\nfuel = 1000\n[limits.sim]\nmemory-mib = 128\nhandles = 10\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let runtime = RuntimeConfig::default().with_host_config(&config);
        let sim = Limits::of("sim", &runtime);
        assert_eq!(sim.call_deadline, Duration::from_millis(20));
        assert_eq!((sim.memory, sim.handles, sim.fuel), (128 << 20, 10, Some(1000)));
        let other = Limits::of("other", &runtime);
        assert_eq!((other.memory, other.handles), (64 << 20, runtime.max_handles));
        assert_eq!(
            other.to_string(),
            "call deadline 20ms, instantiation 1s, memory 64 MiB, 100000 world changes per call, 100000 handles, 16 MiB \
             of properties, frame budget 20ms, fuel 1000 per call"
        );
    }

    #[test]
    fn deadlines_set_by_hand_stay_within_what_the_runtime_can_honour() {
        let runtime =
            RuntimeConfig { call_deadline: Duration::MAX, instantiate_deadline: Duration::ZERO, ..Default::default() };
        let limits = Limits::of("any", &runtime);
        assert_eq!(limits.call_deadline, Duration::from_secs(60));
        assert_eq!(limits.instantiate_deadline, Duration::from_millis(1));
    }

    #[test]
    fn a_memory_override_raises_only_that_plugins_limit() {
        let mut runtime = RuntimeConfig::default();
        runtime.plugin_limits.insert("big".into(), LimitOverrides { memory_mib: Some(256), ..Default::default() });
        assert_eq!(Limits::of("big", &runtime).memory, 256 << 20);
        assert_eq!(Limits::of("small", &runtime).memory, 64 << 20);
    }
}
