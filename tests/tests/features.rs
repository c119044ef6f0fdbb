//! The feature subsystem with real plugins: dependencies, cycles, the compile cache and bad input.

use gamefeature_host::feature::{Destination, FeatureError, PluginState, Transition};
use gamefeature_host::timeline::{track, EventKind};
use gamefeature_host::world::NetMode;
use gamefeature_tests::*;

fn positions(events: &[(String, String)], wanted: &[(&str, &str)]) -> Vec<usize> {
    wanted
        .iter()
        .map(|(track, text)| {
            events
                .iter()
                .position(|(t, x)| t == track && x == text)
                .unwrap_or_else(|| panic!("no {text:?} on {track} in {events:#?}"))
        })
        .collect()
}

#[tokio::test]
async fn dependencies_activate_and_run_first() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["shooter-core"]));
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.unwrap().clone();
    assert_eq!(report.active, ["base-gameplay", "shooter-core"], "the dependency gets its instance first");
    let events: Vec<(String, String)> = session.timeline().events().into_iter().map(|e| (e.track, e.text)).collect();
    let order = positions(
        &events,
        &[
            ("plugin:base-gameplay", "Registered"),
            ("plugin:shooter-core", "Registering"),
            ("plugin:base-gameplay", "Active"),
            ("plugin:shooter-core", "Activating"),
            ("plugin:shooter-core", "Active"),
            ("plugin:base-gameplay@w", "on-activated ok"),
            ("plugin:shooter-core@w", "on-registering ok"),
        ],
    );
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_dependency_cycle_is_refused_naming_the_file_and_the_rest_loads() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let manifest = |name: &str, dep: &str| {
        format!(
            "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"0.1.0\"\ncomponent = \"base_gameplay.wasm\"\n\
             [[dependencies]]\nname = \"{dep}\"\n"
        )
    };
    plugins.add_custom("ping", &manifest("ping", "pong"), Some(&BASE_GAMEPLAY));
    plugins.add_custom("pong", &manifest("pong", "ping"), Some(&BASE_GAMEPLAY));
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["ping", "base-gameplay"]));
    let session = session(&plugins);
    let cycle = session.features().dependency_order("ping").unwrap_err();
    let expected_file = plugins.path().join("ping").join("plugin.toml");
    assert_eq!(cycle.to_string(), format!("{}: dependency cycle ping -> pong -> ping", expected_file.display()));

    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.unwrap().clone();
    assert_eq!(report.active, ["base-gameplay"]);
    assert!(report.failures[0].cause.contains("dependency cycle ping -> pong -> ping"), "{}", report.failures[0]);
    assert!(matches!(
        session.features().state("ping"),
        Some(PluginState::Error(e)) if e.during == Transition::WaitingForDependencies
    ));
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn the_second_load_reads_the_compile_cache() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let cache = tempfile::TempDir::new().unwrap();
    let load = || async {
        let session = session_with(&plugins, Some(cache.path()), trusted());
        session.features().load("base-gameplay").await.unwrap();
        session.timeline().texts(&track::plugin("base-gameplay"), EventKind::Load)
    };
    let first = load().await;
    let second = load().await;
    assert!(first[0].starts_with("compiled in"), "{first:?}");
    assert!(second[0].starts_with("loaded from cache in"), "{second:?}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1, "one entry per component");

    // A changed component misses the cache instead of running stale code.
    std::fs::copy(SHOOTER_CORE.component, plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm")).unwrap();
    let third = load().await;
    assert!(third[0].starts_with("compiled in"), "{third:?}");

    // A corrupt entry is a miss, not a crash.
    for entry in std::fs::read_dir(cache.path()).unwrap() {
        std::fs::write(entry.unwrap().path(), b"not a compiled component").unwrap();
    }
    let fourth = load().await;
    assert!(fourth[0].starts_with("compiled in"), "{fourth:?}");
}

#[test]
fn malformed_manifests_are_refused_naming_the_file_and_the_rest_install() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let broken = plugins.add_custom("broken", "[plugin]\nname = \"broken\"\nversion = ", None);
    let future = plugins.add_custom(
        "future",
        "[plugin]\nname = \"future\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"f.wasm\"\n",
        None,
    );
    let escaping = plugins.add_custom(
        "escaping",
        "[plugin]\nname = \"escaping\"\nversion = \"1.0.0\"\napi = \"0.1.0\"\ncomponent = \"../base-gameplay/base_gameplay.wasm\"\n",
        None,
    );
    let session = session(&plugins);
    let errors = &session.discovery().errors;
    assert_eq!(errors.len(), 3, "{errors:#?}");
    let error_for = |dir: &std::path::Path| {
        let file = dir.join("plugin.toml").display().to_string();
        errors
            .iter()
            .find(|e| e.starts_with(&file))
            .unwrap_or_else(|| panic!("no error for {file}: {errors:#?}"))
            .clone()
    };
    assert!(error_for(&broken).contains("malformed TOML"));
    assert!(error_for(&future).contains("plugin API \"0.2.0\" is not supported"));
    assert!(error_for(&escaping).contains("must be relative and stay inside its directory"));
    assert_eq!(
        session.features().state("base-gameplay"),
        Some(PluginState::Stable(Destination::Installed)),
        "the good plugin is still installed"
    );
}

#[tokio::test]
async fn a_missing_component_file_fails_loading_with_its_path() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let component = plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm");
    std::fs::remove_file(&component).unwrap();
    let session = session(&plugins);
    let error = session.features().load("base-gameplay").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("plugin \"base-gameplay\" failed while Loading: component file {} not found", component.display())
    );
    assert!(
        matches!(session.features().state("base-gameplay"), Some(PluginState::Error(e)) if e.during == Transition::Loading)
    );
}

#[tokio::test]
async fn a_component_symlinked_from_outside_its_folder_is_refused() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let component = plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm");
    let outside = tempfile::TempDir::new().unwrap();
    std::fs::rename(&component, outside.path().join("real.wasm")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("real.wasm"), &component).unwrap();
    let session = session(&plugins);
    let error = session.features().load("base-gameplay").await.unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "plugin \"base-gameplay\" failed while Loading: component file {}: a path led outside of the filesystem",
            component.display()
        )
    );
}

#[tokio::test]
async fn a_component_lacking_the_lifecycle_export_is_refused() {
    let plugins = PluginDir::with(&[MISSING_EXPORTS]);
    let session = session(&plugins);
    let error = session.features().load("missing-exports").await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("missing_exports.wasm does not fit the gamefeature:plugin world"), "{text}");
    assert!(text.contains("gamefeature:plugin/lifecycle@0.1.0"), "names the missing export: {text}");
}

#[tokio::test]
async fn bytes_that_are_not_a_component_are_refused() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let component = plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm");
    let cases: [(&str, Vec<u8>); 3] = [
        ("truncated", std::fs::read(&component).unwrap()[..100].to_vec()),
        ("garbage", b"definitely not wasm".to_vec()),
        // A core module (the smallest valid one) instead of a component.
        ("core module", b"\0asm\x01\0\0\0".to_vec()),
    ];
    for (case, bytes) in cases {
        std::fs::write(&component, bytes).unwrap();
        let session = session(&plugins);
        let error = session.features().load("base-gameplay").await.unwrap_err().to_string();
        assert!(error.contains("is not a valid WebAssembly component"), "{case}: {error}");
        assert!(error.contains("base_gameplay.wasm"), "{case}: names the file: {error}");
    }
}

#[tokio::test]
async fn unknown_features_and_experience_problems_are_clear() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let experiences = ExperienceDir::new();
    let session = session(&plugins);

    let unknown = experiences.write("unknown.toml", &experience_with_features(&["base-gameplay", "no-such-feature"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&unknown).await.unwrap().clone();
    assert_eq!(report.active, ["base-gameplay"]);
    assert_eq!(report.failures[0].source, "no-such-feature");
    assert!(report.failures[0].cause.contains("no plugin named \"no-such-feature\" is installed"));
    manager.end_play().await.unwrap();

    // A file inside the experience folder that is a symlink to one outside it.
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::os::unix::fs::symlink(outside.path(), experiences.path().join("leak.txt")).unwrap();
    let cases = [
        ("malformed.toml", "[experience\nname = 1".to_string(), "malformed TOML"),
        (
            "bad-bundle.toml",
            "[experience]\nname = \"x\"\n[bundles.Client]\nsecret = \"../../etc/passwd\"\n".into(),
            "must be relative",
        ),
        (
            "missing-data.toml",
            "[experience]\nname = \"x\"\n[bundles.Equipped]\ntuning = \"nope.txt\"\n".into(),
            "nope.txt",
        ),
        (
            "missing-set.toml",
            "[experience]\nname = \"x\"\naction-sets = [\"sets/none.toml\"]\n".into(),
            "cannot read it",
        ),
        (
            "symlinked-data.toml",
            "[experience]\nname = \"x\"\n[bundles.Equipped]\nleak = \"leak.txt\"\n".into(),
            "leak.txt): a path led outside of the filesystem",
        ),
        (
            "symlinked-set.toml",
            "[experience]\nname = \"x\"\naction-sets = [\"leak.txt\"]\n".into(),
            "cannot read it: a path led outside of the filesystem",
        ),
        ("bad-class.toml", "[experience]\nname = \"x\"\n[classes]\nHero = \"NoSuchParent\"\n".into(), "unknown parent"),
    ];
    for (file, text, expected) in cases {
        let path = experiences.write(file, &text);
        let mut manager = session.create_world(file, NetMode::Standalone);
        let error = manager.load(&path).await.unwrap_err().to_string();
        assert!(error.contains(expected), "{file}: {error}");
        assert!(error.contains(file), "{file}: names the file: {error}");
        assert_eq!(manager.state(), gamefeature_host::ExperienceLoadState::Unloaded, "{file}");
    }
    let missing = experiences.path().join("absent.toml");
    let mut manager = session.create_world("absent", NetMode::Standalone);
    let error = manager.load(&missing).await.unwrap_err().to_string();
    assert!(error.contains("absent.toml") && error.contains("cannot read experience"), "{error}");
}

#[tokio::test]
async fn unknown_plugin_names_are_errors_not_panics() {
    let plugins = PluginDir::with(&[]);
    let session = session(&plugins);
    assert_eq!(session.features().activate("ghost").await, Err(FeatureError::UnknownPlugin("ghost".into())));
    assert_eq!(session.features().deactivate("ghost").await, Err(FeatureError::UnknownPlugin("ghost".into())));
}

#[tokio::test]
async fn a_plugin_folder_that_vanishes_before_loading_fails_that_plugin_only() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE, SLOW_TEARDOWN]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["shooter-core", "slow-teardown"]));
    let session = session(&plugins);
    // Discovered, then deleted from disk before the experience loads it.
    std::fs::remove_dir_all(plugins.folder(&SLOW_TEARDOWN)).unwrap();
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.unwrap().clone();
    assert_eq!(report.active, ["base-gameplay", "shooter-core"], "what was there still loads");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    let cause = &report.failures[0].cause;
    assert!(cause.contains("slow_teardown.wasm not found"), "names the file: {cause}");
    manager.end_play().await.unwrap();
}
