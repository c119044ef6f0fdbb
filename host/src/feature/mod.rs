//! Game-feature plugins: their manifests, discovery, the process-wide state machine, and built-in actions.

mod action;
mod batch;
mod discovery;
mod interface;
mod manifest;
mod permissions;
mod plugin;
mod reads;
mod state;
mod subsystem;

#[cfg(test)]
mod subsystem_tests;

pub use action::{ActionDef, ActiveAction, AddComponents};
pub use batch::{
    BatchNames, ChainBatch, ChainFacts, ChainWalk, ExtensionBatch, FeatureBatch, PropertyBatch, ReplicatedBatch,
    StateChangeBatch,
};
pub use discovery::{discover, DiscoveryReport, Vet};
pub use interface::{host_interfaces, plugin_exports, ComponentInterface, Fit, FitLine};
pub use manifest::{
    api_versions_shown, is_valid_plugin_name, same_api, Dependency, ManifestError, ManifestProblem, PluginManifest,
    API_VERSION, API_VERSIONS, MANIFEST_FILE,
};
pub use permissions::{FsPermissions, GrantPolicy, Permissions};
pub use plugin::{
    within_refusal_budget, ActivationContext, CallError, Deactivation, InstanceEnv, LoadError, LoadedPlugin,
    PluginInstance, PluginLoader, Provenance, Refusals, REFUSED_CALLS_BUDGET, WORLD_CHANGES_PER_CALL,
    WORLD_CHANGES_PER_ENTRY,
};
pub use reads::{PropertyReads, ReadKind};
pub use state::{Destination, Phase, PluginError, PluginState, Transition};
pub use subsystem::{FeatureError, FeatureSubsystem, Observer, PluginInfo, StateChange};
