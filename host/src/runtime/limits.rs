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

/// Times its initial memory a component may grow to by default (see [`fitted_memory`]).
pub const MEMORY_PER_INITIAL: u64 = 16;

/// The most memory a default fitted to a component gives it: more takes a `memory-mib` of the plugin's own.
pub const FITTED_MEMORY_CAP: usize = 256 << 20;

/// The default memory limit of a component that starts with `initial` bytes of linear memory: sixteen times
/// that, at least `floor` (the configured default), at most [`FITTED_MEMORY_CAP`]. A Rust or C plugin (one
/// MiB or less) gets the floor; componentize-js's runtime (9 MiB at start, measured to settle between 64 and
/// 96 MiB under a stream of events) gets 144 MiB, componentize-py's (13 MiB) 208 MiB.
pub fn fitted_memory(initial: u64, floor: usize) -> usize {
    let fitted = usize::try_from(initial.saturating_mul(MEMORY_PER_INITIAL)).unwrap_or(usize::MAX);
    fitted.min(FITTED_MEMORY_CAP).max(floor)
}

/// CPU time a call is given beyond the configured deadline per MiB of memory fitted to its component beyond the
/// configured memory limit (see [`fitted_deadline`]).
pub const DEADLINE_PER_FITTED_MIB: Duration = Duration::from_micros(500);

/// The longest a fitted deadline grows (unless the configured one is longer): a component declares its own
/// initial memory, so a plugin of any language could ask for a bigger heap to get longer calls, and each long
/// call is a frame's hitch.
pub const FITTED_DEADLINE_CAP: Duration = Duration::from_millis(50);

/// The default call deadline of a component whose memory limit was fitted to `memory` bytes: `floor` (the
/// configured deadline), plus [`DEADLINE_PER_FITTED_MIB`] for each MiB over `floor_memory` (the configured memory
/// limit). A garbage collector's pause inside a call grows with the heap it walks, and only language runtimes
/// with a heap of their own get memory fitted beyond the default: measured with the `language_memory` example,
/// componentize-js's longest call in 10,000,000 single-event calls took 28.6 ms of CPU time (35.6 ms in a run of
/// a million) where its median took 17 us, and componentize-py's 2.7 ms. So Rust and C plugins keep 10 ms, and
/// componentize-js (144 MiB) and componentize-py (208 MiB) get [`FITTED_DEADLINE_CAP`], 50 ms.
pub fn fitted_deadline(memory: usize, floor_memory: usize, floor: Duration) -> Duration {
    let extra_mib = memory.saturating_sub(floor_memory) >> 20;
    let fitted =
        floor.saturating_add(DEADLINE_PER_FITTED_MIB.saturating_mul(u32::try_from(extra_mib).unwrap_or(u32::MAX)));
    fitted.min(floor.max(FITTED_DEADLINE_CAP))
}

impl Limits {
    /// The limits of `plugin` under `config`. (The instance pool reserves the largest memory limit of any
    /// plugin per slot, so every plugin's limit fits.)
    pub fn of(plugin: &str, config: &RuntimeConfig) -> Limits {
        Limits::for_component(plugin, config, None)
    }

    /// The limits of `plugin` under `config`, its component starting with `initial_memory` bytes of linear
    /// memory (when known): without a memory limit of its own, and unless the configuration sets one for
    /// every plugin, the plugin's memory limit is fitted to its component (see [`fitted_memory`]), and so, unless
    /// the configuration sets a deadline for every plugin, is its call deadline (see [`fitted_deadline`]).
    pub fn for_component(plugin: &str, config: &RuntimeConfig, initial_memory: Option<u64>) -> Limits {
        let overrides = config.plugin_limits.get(plugin).cloned().unwrap_or_default();
        // Whatever a library user sets, a deadline stays within what the configuration file accepts.
        let bounded = |deadline: Duration| deadline.clamp(Duration::from_millis(1), MAX_DEADLINE);
        let default_memory = match (config.fit_memory_to_components, initial_memory) {
            (true, Some(initial)) => fitted_memory(initial, config.memory_limit),
            _ => config.memory_limit,
        };
        let memory = overrides.memory_bytes().unwrap_or(default_memory);
        let default_deadline = match config.fit_deadline_to_components {
            true => fitted_deadline(memory, config.memory_limit, config.call_deadline),
            false => config.call_deadline,
        };
        Limits {
            memory,
            call_deadline: bounded(overrides.call_deadline().unwrap_or(default_deadline)),
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

/// The most bytes one host call may copy out of a plugin, however much memory it has: what the host's calls
/// carry (events, names, batches, a file's write) is far less.
pub const MAX_HOSTCALL_BYTES: usize = 64 << 20;

/// Component-model handles a plugin may hold beside its own handles: WASI's streams, pollables and files.
pub const WASI_HANDLES: usize = 1024;

impl Limits {
    /// What one host call may copy out of the plugin (wasmtime's hostcall fuel, 128 MiB by default): no more
    /// than its memory may hold, at most [`MAX_HOSTCALL_BYTES`].
    pub fn hostcall_bytes(&self) -> usize {
        self.memory.min(MAX_HOSTCALL_BYTES)
    }

    /// The component-model handles the plugin's store may hold at once (wasmtime's default: 100,000): its own
    /// handles and WASI's.
    pub fn component_handles(&self) -> usize {
        (self.handles as usize).saturating_add(WASI_HANDLES)
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
    use std::path::Path;

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
    fn a_components_default_memory_fits_what_it_starts_with_unless_configured() {
        let runtime = RuntimeConfig::default();
        let mib = |n: u64| n << 20;
        assert_eq!(Limits::for_component("rust", &runtime, Some(mib(1))).memory, 64 << 20);
        assert_eq!(Limits::for_component("js", &runtime, Some(mib(9))).memory, 144 << 20);
        assert_eq!(Limits::for_component("py", &runtime, Some(mib(13))).memory, 208 << 20);
        assert_eq!(Limits::for_component("huge", &runtime, Some(mib(100))).memory, FITTED_MEMORY_CAP);
        assert_eq!(Limits::for_component("unknown", &runtime, None).memory, 64 << 20);
        // A `memory-mib` for every plugin is the limit of every plugin; one of a plugin's own is its limit.
        let config = HostConfig::parse("[sandbox]\nmemory-mib = 32\n[limits.js]\nmemory-mib = 512\n", Path::new("."));
        let configured = RuntimeConfig::default().with_host_config(&config.unwrap());
        assert_eq!(Limits::for_component("py", &configured, Some(mib(13))).memory, 32 << 20);
        assert_eq!(Limits::for_component("js", &configured, Some(mib(9))).memory, 512 << 20);
    }

    #[test]
    fn a_components_default_deadline_grows_with_the_memory_fitted_to_it_unless_configured() {
        let runtime = RuntimeConfig::default();
        let mib = |n: u64| n << 20;
        let deadline = |config: &RuntimeConfig, plugin: &str, initial: Option<u64>| {
            Limits::for_component(plugin, config, initial).call_deadline
        };
        assert_eq!(deadline(&runtime, "rust", Some(mib(1))), Duration::from_millis(10));
        assert_eq!(deadline(&runtime, "unknown", None), Duration::from_millis(10));
        assert_eq!(deadline(&runtime, "js", Some(mib(9))), Duration::from_millis(50));
        assert_eq!(deadline(&runtime, "py", Some(mib(13))), Duration::from_millis(50), "capped");
        assert_eq!(deadline(&runtime, "rust asking for a big heap", Some(mib(16))), FITTED_DEADLINE_CAP);
        assert_eq!(fitted_deadline(80 << 20, 64 << 20, Duration::from_millis(10)), Duration::from_millis(18));
        assert_eq!(fitted_deadline(256 << 20, 64 << 20, Duration::from_millis(70)), Duration::from_millis(70));
        // A deadline for every plugin is every plugin's; one of a plugin's own is its deadline.
        let config =
            HostConfig::parse("[sandbox]\ncall-deadline-ms = 20\n[limits.py]\ncall-deadline-ms = 5\n", Path::new("."));
        let configured = RuntimeConfig::default().with_host_config(&config.unwrap());
        assert_eq!(deadline(&configured, "js", Some(mib(9))), Duration::from_millis(20));
        assert_eq!(deadline(&configured, "py", Some(mib(13))), Duration::from_millis(5));
        // A memory limit for every plugin fits neither.
        let config = HostConfig::parse("[sandbox]\nmemory-mib = 32\n", Path::new("."));
        let configured = RuntimeConfig::default().with_host_config(&config.unwrap());
        assert_eq!(deadline(&configured, "js", Some(mib(9))), Duration::from_millis(10));
    }

    #[test]
    fn a_memory_override_raises_only_that_plugins_limit() {
        let mut runtime = RuntimeConfig::default();
        runtime.plugin_limits.insert("big".into(), LimitOverrides { memory_mib: Some(256), ..Default::default() });
        assert_eq!(Limits::of("big", &runtime).memory, 256 << 20);
        assert_eq!(Limits::of("small", &runtime).memory, 64 << 20);
    }

    /// wasmtime's own caps follow the plugin's limits: a small plugin copies no more than its memory per host
    /// call, a large one no more than 64 MiB (wasmtime's default is 128 MiB); its handles and WASI's.
    #[test]
    fn wasmtimes_caps_follow_the_plugins_limits() {
        let config = HostConfig::parse("[limits.small]\nmemory-mib = 16\nhandles = 10\n", Path::new(".")).unwrap();
        let runtime = RuntimeConfig::default().with_host_config(&config);
        let small = Limits::of("small", &runtime);
        assert_eq!(small.hostcall_bytes(), 16 << 20);
        assert_eq!(small.component_handles(), 10 + WASI_HANDLES);
        let large = Limits { memory: 1 << 30, ..small };
        assert_eq!(large.hostcall_bytes(), MAX_HOSTCALL_BYTES);
    }
}
