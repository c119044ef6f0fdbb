//! The state machine driven with an in-memory loader: no Wasm involved.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::delivery::{CallError, PluginInstance};

/// Loads every plugin except those named in `broken`, recording the order of loads.
#[derive(Default)]
struct FakeLoader {
    broken: Vec<String>,
    loads: Mutex<Vec<String>>,
}

struct FakeCode;

impl LoadedPlugin for FakeCode {
    fn instantiate(&self, _env: InstanceEnv) -> Result<Box<dyn PluginInstance>, CallError> {
        Err(CallError::Refused("not used here".into()))
    }
    fn provenance(&self) -> Provenance {
        Provenance::Compiled { took: Duration::ZERO }
    }
    fn interface(&self) -> ComponentInterface {
        ComponentInterface::default()
    }
}

impl PluginLoader for FakeLoader {
    fn load(&self, manifest: &PluginManifest) -> Result<Arc<dyn LoadedPlugin>, LoadError> {
        self.loads.lock().unwrap().push(manifest.name.clone());
        if self.broken.contains(&manifest.name) {
            return Err(LoadError::Invalid {
                path: manifest.component_path.display().to_string(),
                cause: "broken".into(),
            });
        }
        Ok(Arc::new(FakeCode))
    }
}

fn manifest(name: &str, deps: &[(&str, bool)]) -> PluginManifest {
    let mut text = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"{API_VERSION}\"\ncomponent = \"{name}.wasm\"\n"
    );
    for (dep, activate) in deps {
        text += &format!("[[dependencies]]\nname = \"{dep}\"\nactivate = {activate}\n");
    }
    PluginManifest::parse(&Path::new("/plugins").join(name), &text).unwrap()
}

/// A manifest through the default gate (the operator's own folder).
fn admitted(manifest: &PluginManifest) -> crate::feature::Admitted {
    Arc::new(crate::feature::Gate::unchecked()).admit(manifest.clone()).unwrap()
}

fn subsystem(
    plugins: &[PluginManifest],
    broken: &[&str],
) -> (Arc<FeatureSubsystem>, Arc<FakeLoader>, Arc<Mutex<Vec<String>>>) {
    let loader = Arc::new(FakeLoader { broken: broken.iter().map(|s| s.to_string()).collect(), ..Default::default() });
    let subsystem = FeatureSubsystem::new(loader.clone(), crate::feature::Gate::unchecked());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    subsystem
        .add_observer(Arc::new(move |c: &StateChange| sink.lock().unwrap().push(format!("{} {}", c.plugin, c.state))));
    for m in plugins {
        subsystem.install(admitted(m)).unwrap();
    }
    seen.lock().unwrap().clear();
    (subsystem, loader, seen)
}

fn active() -> PluginState {
    PluginState::Stable(Destination::Active)
}

#[tokio::test]
async fn activation_walks_every_state_and_back() {
    let (s, _, seen) = subsystem(&[manifest("a", &[])], &[]);
    s.activate("a").await.unwrap();
    s.deactivate("a").await.unwrap();
    s.unregister("a").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "a WaitingForDependencies",
            "a Registering",
            "a Registered",
            "a Loading",
            "a Loaded",
            "a ActivatingDependencies",
            "a Activating",
            "a Active",
            "a Deactivating",
            "a Loaded",
            "a Unloading",
            "a Registered",
            "a Unregistering",
            "a Installed",
        ]
    );
}

#[tokio::test]
async fn dependencies_come_up_first() {
    let (s, loader, seen) = subsystem(
        &[manifest("app", &[("lib", true), ("data", false)]), manifest("lib", &[]), manifest("data", &[])],
        &[],
    );
    s.activate("app").await.unwrap();
    assert_eq!(s.state("lib"), Some(active()));
    assert_eq!(s.state("data"), Some(PluginState::Stable(Destination::Registered)));
    let seen = seen.lock().unwrap().clone();
    let position = |entry: &str| seen.iter().position(|s| s == entry).unwrap_or_else(|| panic!("{entry} in {seen:?}"));
    assert!(position("lib Registered") < position("app Registering"));
    assert!(position("data Registered") < position("app Registering"));
    assert!(position("lib Active") < position("app Activating"));
    assert_eq!(*loader.loads.lock().unwrap(), ["lib", "app"], "dependencies load first");
    s.deactivate("app").await.unwrap();
    assert_eq!(s.activations("lib"), 0, "the dependency's activation is released with its dependent's");
    assert_eq!(s.state("lib"), Some(PluginState::Stable(Destination::Loaded)));
}

#[tokio::test]
async fn cycles_are_refused_naming_the_manifest() {
    let (s, _, _) = subsystem(
        &[manifest("a", &[("b", false)]), manifest("b", &[("c", false)]), manifest("c", &[("a", false)])],
        &[],
    );
    let err = s.dependency_order("a").unwrap_err();
    assert_eq!(err.to_string(), "/plugins/a/plugin.toml: dependency cycle a -> b -> c -> a");
    let err = s.activate("a").await.unwrap_err();
    assert!(err.to_string().contains("dependency cycle a -> b -> c -> a"), "{err}");
    assert!(matches!(
        s.state("a"),
        Some(PluginState::Error(PluginError { during: Phase::Transition(Transition::WaitingForDependencies), .. }))
    ));
}

#[tokio::test]
async fn a_failed_dependency_fails_its_dependents() {
    let (s, _, _) =
        subsystem(&[manifest("app", &[("lib", true)]), manifest("lib", &[]), manifest("other", &[])], &["lib"]);
    let err = s.activate("app").await.unwrap_err();
    assert!(err.to_string().contains("dependency \"lib\" failed"), "{err}");
    assert!(matches!(
        s.state("lib"),
        Some(PluginState::Error(PluginError { during: Phase::Transition(Transition::Loading), .. }))
    ));
    assert!(matches!(
        s.state("app"),
        Some(PluginState::Error(PluginError { during: Phase::Transition(Transition::ActivatingDependencies), .. }))
    ));
    assert_eq!(s.activations("app"), 0);
    s.activate("other").await.unwrap();
    assert_eq!(s.state("other"), Some(active()));
}

#[tokio::test]
async fn activation_is_ref_counted() {
    let (s, _, _) = subsystem(&[manifest("a", &[])], &[]);
    s.activate("a").await.unwrap();
    s.activate("a").await.unwrap();
    assert_eq!(s.activations("a"), 2);
    assert!(matches!(s.unload("a").await, Err(FeatureError::StillActive { activations: 2, .. })));
    s.deactivate("a").await.unwrap();
    assert_eq!(s.state("a"), Some(active()));
    s.deactivate("a").await.unwrap();
    assert_eq!(s.state("a"), Some(PluginState::Stable(Destination::Loaded)));
    assert_eq!(s.deactivate("a").await, Err(FeatureError::NotActive("a".into())));
}

#[tokio::test]
async fn a_shared_dependency_loads_once_under_concurrent_activation() {
    let (s, loader, _) =
        subsystem(&[manifest("x", &[("base", true)]), manifest("y", &[("base", true)]), manifest("base", &[])], &[]);
    let (x, y) = tokio::join!(s.activate("x"), s.activate("y"));
    x.unwrap();
    y.unwrap();
    let loads = loader.loads.lock().unwrap().clone();
    assert_eq!(loads.iter().filter(|n| *n == "base").count(), 1, "{loads:?}");
    assert_eq!(s.activations("base"), 2);
}

#[tokio::test]
async fn errors_rest_until_retried() {
    let (s, _, _) = subsystem(&[manifest("a", &[])], &[]);
    s.activate("a").await.unwrap();
    let error = PluginError::new(Transition::Activating, "refused");
    s.deactivate_with_error("a", error.clone()).await.unwrap();
    assert_eq!(s.state("a"), Some(PluginState::Error(error)));
    s.activate("a").await.unwrap();
    assert_eq!(s.state("a"), Some(active()));
}

#[test]
fn duplicates_and_unknown_names_are_refused() {
    let (s, _, _) = subsystem(&[manifest("a", &[("ghost", false)])], &[]);
    let mut twin = manifest("a", &[]);
    twin.manifest_path = "/elsewhere/a/plugin.toml".into();
    assert!(matches!(s.install(admitted(&twin)), Err(FeatureError::DuplicatePlugin { .. })));
    assert!(matches!(s.dependency_order("a"), Err(FeatureError::UnknownDependency { .. })));
}

/// A dependency installed at a version outside the range its dependent names is refused, naming both.
#[test]
fn a_dependency_outside_the_range_its_dependent_names_is_refused() {
    let mut needs_two = manifest("a", &[("b", false)]);
    needs_two.dependencies[0].version = Some(semver::VersionReq::parse("^2").unwrap());
    let (s, _, _) = subsystem(&[needs_two, manifest("b", &[])], &[]);
    let refused = s.dependency_order("a").unwrap_err();
    assert!(matches!(refused, FeatureError::DependencyVersion { .. }), "{refused:?}");
    assert!(refused.to_string().contains("plugin \"a\" needs b ^2, but b 1.0.0 is installed"), "{refused}");
    assert_eq!(s.dependency_order("zzz"), Err(FeatureError::UnknownPlugin("zzz".into())));
}

/// A long chain of dependencies is walked without recursion as deep as the chain: activating and
/// deactivating the top of 500 plugins, each activating the next, neither overflows the stack nor loses order.
#[tokio::test]
async fn a_long_dependency_chain_does_not_overflow_the_stack() {
    const LENGTH: usize = 500;
    let names: Vec<String> = (0..LENGTH).map(|i| format!("p{i}")).collect();
    let manifests: Vec<PluginManifest> = (0..LENGTH)
        .map(|i| {
            let deps: Vec<(&str, bool)> = if i + 1 < LENGTH { vec![(names[i + 1].as_str(), true)] } else { vec![] };
            manifest(&names[i], &deps)
        })
        .collect();
    let (s, loader, _) = subsystem(&manifests, &[]);
    assert_eq!(s.dependency_order("p0").unwrap().len(), LENGTH);
    assert_eq!(s.activation_order("p0").unwrap().first().map(String::as_str), Some(names[LENGTH - 1].as_str()));
    s.activate("p0").await.unwrap();
    assert!(names.iter().all(|n| s.state(n) == Some(active())));
    assert_eq!(loader.loads.lock().unwrap().first().map(String::as_str), Some(names[LENGTH - 1].as_str()));
    s.deactivate("p0").await.unwrap();
    assert!(names.iter().all(|n| s.activations(n) == 0));
}
