//! Game-feature plugins: their manifests, discovery, the process-wide state machine, built-in actions, and the
//! seam to the code that loads them.

mod action;
mod admission;
mod discovery;
mod interface;
mod manifest;
mod permissions;
mod plugin;
mod state;
mod subsystem;

#[cfg(test)]
mod subsystem_tests;

pub use action::{ActionDef, ActiveAction, AddComponents};
pub use admission::{AdmissionError, Admitted, Checks, Gate, Recheck};
pub use discovery::{discover, DiscoveryReport, Vet};
pub use interface::{host_interfaces, plugin_exports, ComponentInterface, Fit, FitLine};
pub use manifest::{
    api_compatible, api_versions_shown, host_compatible, is_valid_plugin_name, same_api, Dependency, ManifestError,
    ManifestProblem, PluginManifest, API_VERSION, API_VERSIONS, HOST_VERSION, MANIFEST_FILE,
};
pub use permissions::{FsPermissions, GrantPolicy, Permissions};
pub use plugin::{InstanceEnv, LoadError, LoadedPlugin, PluginLoader, Provenance};
pub use state::{Destination, Phase, PluginError, PluginState, Transition};
pub use subsystem::{FeatureError, FeatureSubsystem, Observer, PluginInfo, StateChange};
