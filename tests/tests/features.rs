//! The feature subsystem with real plugins: dependencies, cycles, the compile cache and bad input.

use gamefeature_host::feature::{Destination, FeatureError, PluginState, Transition};
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::NetMode;
use gamefeature_tests::*;
use std::io::Write;

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
            // Dependencies come all the way up first, leaves first (no recursion down a chain).
            ("plugin:base-gameplay", "Registered"),
            ("plugin:base-gameplay", "Active"),
            ("plugin:shooter-core", "Registering"),
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
            "[plugin]\nname = \"{name}\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"base_gameplay.wasm\"\n\
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
    assert_eq!(entries(cache.path()).len(), 1, "one entry per component");

    // A changed component misses the cache instead of running stale code.
    std::fs::copy(SHOOTER_CORE.component, plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm")).unwrap();
    let third = load().await;
    assert!(third[0].starts_with("compiled in"), "{third:?}");

    // A corrupt entry is a miss, not a crash; so is a corrupt key.
    for entry in std::fs::read_dir(cache.path()).unwrap() {
        std::fs::write(entry.unwrap().path(), b"not a compiled component").unwrap();
    }
    let fourth = load().await;
    assert!(fourth[0].starts_with("compiled in"), "{fourth:?}");
    let fifth = load().await;
    assert!(fifth[0].starts_with("loaded from cache in"), "the cache works again with a new key: {fifth:?}");
}

/// The compiled entries of a cache directory.
fn entries(cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    entries.sort();
    entries
}

/// Loads one plugin in a fresh session over `cache` and returns its load line and its log lines in a world.
async fn load_and_activate(plugins: &PluginDir, cache: &std::path::Path, plugin: &str) -> (String, Vec<String>) {
    let session = session_with(plugins, Some(cache), trusted());
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&[plugin]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    manager.end_play().await.unwrap();
    let load = session.timeline().texts(&track::plugin(plugin), EventKind::Load)[0].clone();
    (load, session.timeline().texts(&track::instance(plugin, "w"), EventKind::Log(LogLevel::Info)))
}

/// The cache runs only what it wrote: an entry whose code was overwritten, or another plugin's entry swapped
/// in under this one's name, is compiled again (with a warning), never run.
#[tokio::test]
async fn altered_or_swapped_cache_entries_are_never_run() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let cache = tempfile::TempDir::new().unwrap();
    let (base_load, base_lines) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    assert!(base_load.starts_with("compiled in"), "{base_load}");
    assert!(!base_lines.is_empty(), "base-gameplay says what it runs with");
    let only_base = entries(cache.path());
    load_and_activate(&plugins, cache.path(), "shooter-core").await;
    let shooter_entry = entries(cache.path()).into_iter().find(|e| !only_base.contains(e)).unwrap();
    let base_entry = only_base[0].clone();

    // Another plugin's compiled code under base-gameplay's key.
    std::fs::copy(&shooter_entry, &base_entry).unwrap();
    let (load, lines) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    assert!(load.starts_with("compiled in"), "a swapped entry is compiled again: {load}");
    assert_eq!(lines, base_lines, "base-gameplay ran its own code");

    // Overwritten code: every byte after the header flipped.
    let mut bytes = std::fs::read(&base_entry).unwrap();
    for byte in &mut bytes[4096..] {
        *byte = !*byte;
    }
    std::fs::write(&base_entry, bytes).unwrap();
    let (load, lines) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    assert!(load.starts_with("compiled in"), "an altered entry is compiled again: {load}");
    assert_eq!(lines, base_lines);
    let (load, _) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    assert!(load.starts_with("loaded from cache in"), "the entry was rewritten: {load}");
}

/// A cache entry is checked once while its file does not change (`runtime::checked_files`): loads after that, in
/// the process and in later ones (through the cache's records), skip the hashing, and an entry changed since —
/// another plugin's code linked in its place with its MAC, or its code altered in place — is checked in full
/// again and refused.
#[tokio::test]
async fn entries_a_process_checked_are_checked_again_once_changed() {
    use gamefeature_host::runtime::checked_files::SETTLE;
    let settle = || std::thread::sleep(SETTLE + std::time::Duration::from_millis(100));
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let cache = tempfile::TempDir::new().unwrap();
    let (_, base_lines) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    let only_base = entries(cache.path());
    load_and_activate(&plugins, cache.path(), "shooter-core").await;
    let shooter_entry = entries(cache.path()).into_iter().find(|e| !only_base.contains(e)).unwrap();
    let base_entry = only_base[0].clone();
    settle();
    for plugin in ["base-gameplay", "base-gameplay", "shooter-core"] {
        let (load, _) = load_and_activate(&plugins, cache.path(), plugin).await;
        assert!(load.starts_with("loaded from cache in"), "{plugin}: {load}");
    }

    // Another plugin's code, checked by this process, linked under base-gameplay's key with its MAC.
    std::fs::remove_file(&base_entry).unwrap();
    std::fs::hard_link(&shooter_entry, &base_entry).unwrap();
    std::fs::copy(shooter_entry.with_extension("mac"), base_entry.with_extension("mac")).unwrap();
    let (load, lines) = load_and_activate(&plugins, cache.path(), "base-gameplay").await;
    assert!(load.starts_with("compiled in"), "a swapped entry is compiled again: {load}");
    assert_eq!(lines, base_lines, "base-gameplay ran its own code");

    // Entries checked once settled, then one overwritten in place with the other's code (valid code, padded to
    // the same length, under the first's name): its change time moved, so it is checked in full again.
    settle();
    let entry_of = |plugin: &str| if plugin == "base-gameplay" { base_entry.clone() } else { shooter_entry.clone() };
    let mut lines_of = std::collections::BTreeMap::new();
    for plugin in ["base-gameplay", "shooter-core"] {
        let (load, lines) = load_and_activate(&plugins, cache.path(), plugin).await;
        assert!(load.starts_with("loaded from cache in"), "{plugin}: {load}");
        lines_of.insert(plugin, lines);
    }
    // Those checks are recorded for the next process (a component's digest and an entry's MAC each, under the
    // cache's key): a new process loads both from the cache, and finds an entry changed since (below) changed.
    let records = std::fs::read_dir(cache.path().join("checked")).expect("checks recorded").count();
    assert_eq!(records, 4, "two components and two entries");
    for plugin in ["base-gameplay", "shooter-core"] {
        gamefeature_host::runtime::forget_checked_files();
        let (load, lines) = load_and_activate(&plugins, cache.path(), plugin).await;
        assert!(load.starts_with("loaded from cache in"), "{plugin}, in a new process: {load}");
        assert_eq!(lines, lines_of[plugin]);
    }
    gamefeature_host::runtime::forget_checked_files();
    let len = |plugin: &str| std::fs::metadata(entry_of(plugin)).unwrap().len();
    let (victim, intruder) = if len("base-gameplay") >= len("shooter-core") {
        ("base-gameplay", "shooter-core")
    } else {
        ("shooter-core", "base-gameplay")
    };
    let mut code = std::fs::read(entry_of(intruder)).unwrap();
    code.resize(len(victim) as usize, 0);
    std::fs::OpenOptions::new().write(true).open(entry_of(victim)).unwrap().write_all(&code).unwrap();
    // Settled, so that only the record's identity (its change time moved) stands between the check and the code.
    settle();
    let (load, lines) = load_and_activate(&plugins, cache.path(), victim).await;
    assert!(load.starts_with("compiled in"), "an overwritten entry is compiled again: {load}");
    assert_eq!(lines, lines_of[victim], "{victim} ran its own code");
}

/// Loads the plugin in `folder` with a new runtime over the compile cache in `cache`, as a new process would
/// (what this process checked forgotten first); what it compiled, read and checked.
fn load_as_a_new_process(
    folder: &std::path::Path,
    cache: &std::path::Path,
) -> gamefeature_host::runtime::CompileCounts {
    use gamefeature_host::feature::PluginManifest;
    use gamefeature_host::runtime::{forget_checked_files, Runtime, RuntimeConfig};
    forget_checked_files();
    let config = RuntimeConfig { cache_dir: Some(cache.into()), max_instances: 4, ..RuntimeConfig::default() };
    let runtime = Runtime::new(config).unwrap();
    runtime.load_plugin(&PluginManifest::read(folder).unwrap()).unwrap();
    runtime.compile_counts()
}

/// A process does not check again what an earlier one checked and recorded: the component's digest and the
/// entry's MAC are vouched for by the cache's records while the files keep their identity.
#[test]
fn checks_an_earlier_process_recorded_are_not_made_again() {
    use gamefeature_host::runtime::checked_files::SETTLE;
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let cache = tempfile::TempDir::new().unwrap();
    let process = || load_as_a_new_process(&plugins.folder(&BASE_GAMEPLAY), cache.path());
    assert_eq!(process().compiled, 1);
    std::thread::sleep(SETTLE + std::time::Duration::from_millis(100));
    let first = process();
    assert_eq!((first.cache_hits, first.checked_in_full), (1, 2), "the component and the entry, checked and recorded");
    let next = process();
    assert_eq!((next.cache_hits, next.checked_in_full), (1, 0), "both vouched for by the records");
}

/// A component compiled again after an edit (here: a section added, as a toolchain that is not reproducible
/// changes bytes from one build to the next) does not compile its unchanged functions again, in a later
/// process: they come from the function cache beside the compile cache.
#[test]
fn a_component_compiled_again_after_an_edit_reuses_its_unchanged_functions() {
    use gamefeature_host::feature::PluginManifest;
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let cache = tempfile::TempDir::new().unwrap();
    let manifest = PluginManifest::read(&plugins.folder(&BASE_GAMEPLAY)).unwrap();
    let process = || load_as_a_new_process(&plugins.folder(&BASE_GAMEPLAY), cache.path());
    let first = process();
    assert_eq!((first.compiled, first.functions_reused), (1, 0));
    assert!(first.functions_compiled > 10, "{first:?}");

    // A custom section appended: id 0, its size, its name's length and name, its contents.
    let mut edited = std::fs::read(&manifest.component_path).unwrap();
    edited.extend_from_slice(&[0, 7, 4, b'e', b'd', b'i', b't', 1, 2]);
    std::fs::write(&manifest.component_path, edited).unwrap();
    let second = process();
    assert_eq!(second.compiled, 1, "a new component: not in the compile cache");
    // wasmtime keys a few functions differently from one compile to the next (3-8 % of this plugin's, with
    // parallel compilation on or off): those are compiled again.
    assert!(second.functions_reused >= first.functions_compiled * 3 / 4, "{first:?} {second:?}");
    assert!(second.functions_compiled <= first.functions_compiled / 4, "{first:?} {second:?}");
}

/// The compile cache keeps within its budget: writing an entry removes the entries used least recently (a load
/// counts as a use), and a plugin whose entry went is compiled again.
#[test]
fn the_compile_cache_keeps_within_its_budget_removing_the_entries_used_least_recently() {
    use gamefeature_host::feature::PluginManifest;
    use gamefeature_host::runtime::{Runtime, RuntimeConfig};
    use std::time::{Duration, SystemTime};
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE, EVENT_SINK]);
    let cache = tempfile::TempDir::new().unwrap();
    let runtime = |budget| {
        let config = RuntimeConfig {
            cache_dir: Some(cache.path().into()),
            cache_budget: budget,
            max_instances: 4,
            ..RuntimeConfig::default()
        };
        Runtime::new(config).unwrap()
    };
    let manifests: Vec<PluginManifest> = [&BASE_GAMEPLAY, &SHOOTER_CORE, &EVENT_SINK]
        .iter()
        .map(|plugin| PluginManifest::read(&plugins.folder(plugin)).unwrap())
        .collect();
    let unlimited = runtime(u64::MAX);
    let entry_of: Vec<std::path::PathBuf> = manifests
        .iter()
        .map(|manifest| {
            unlimited.load_plugin(manifest).unwrap();
            let wasm = std::fs::read(&manifest.component_path).unwrap();
            unlimited.cache().unwrap().entry_path(unlimited.engine(), &wasm)
        })
        .collect();
    let [base, shooter, sink] = [0, 1, 2].map(|i| entry_of[i].clone());
    let all: u64 = entry_of.iter().map(|entry| std::fs::metadata(entry).unwrap().len()).sum();
    // The sink never compiled yet; base-gameplay last used three hours ago and shooter-core two.
    std::fs::remove_file(sink.with_extension("mac")).unwrap();
    std::fs::remove_file(&sink).unwrap();
    let used = |entry: &std::path::Path, hours_ago: u64| {
        let file = std::fs::OpenOptions::new().write(true).open(entry.with_extension("mac")).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(hours_ago * 3600)).unwrap();
    };
    used(&base, 3);
    used(&shooter, 2);

    // Room for all three but a byte: loading base-gameplay makes it the most recently used, so compiling the sink
    // removes shooter-core's entry.
    let tight = runtime(all - 1);
    assert_eq!(tight.load_plugin(&manifests[0]).map(|_| tight.compile_counts().cache_hits).unwrap(), 1);
    tight.load_plugin(&manifests[2]).unwrap();
    assert_eq!(entries(cache.path()), {
        let mut kept = vec![base.clone(), sink.clone()];
        kept.sort();
        kept
    });
    assert!(!shooter.with_extension("mac").exists(), "its MAC went with it");

    let after = runtime(all - 1);
    after.load_plugin(&manifests[1]).unwrap();
    let counts = after.compile_counts();
    assert_eq!((counts.compiled, counts.cache_hits), (1, 0), "shooter-core is compiled again");
}

/// A component or an asset that is not a regular file (a FIFO would block a read for ever) or is larger than
/// allowed (a sparse file of gigabytes) is refused before it is read.
#[cfg(unix)]
#[tokio::test]
async fn special_and_oversized_files_are_refused_before_reading() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE]);
    let component = plugins.folder(&BASE_GAMEPLAY).join("base_gameplay.wasm");
    std::fs::remove_file(&component).unwrap();
    let status = std::process::Command::new("mkfifo").arg(&component).status().unwrap();
    assert!(status.success());
    std::fs::File::create(plugins.folder(&SHOOTER_CORE).join("shooter_core.wasm")).unwrap().set_len(3 << 30).unwrap();
    let session = session(&plugins);
    let fifo = session.features().load("base-gameplay").await.unwrap_err().to_string();
    assert!(fifo.contains("not a regular file"), "{fifo}");
    let giant = session.features().load("shooter-core").await.unwrap_err().to_string();
    assert!(giant.contains("more than the"), "{giant}");

    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", "[experience]\nname = \"e\"\n[bundles.Equipped]\npipe = \"pipe\"\n");
    let status = std::process::Command::new("mkfifo").arg(experiences.path().join("pipe")).status().unwrap();
    assert!(status.success());
    let mut manager = session.create_world("w", NetMode::Standalone);
    let error = manager.load(&path).await.unwrap_err().to_string();
    assert!(error.contains("not a regular file"), "{error}");
}

/// Plugins sharing one component compile it once, and parallel loads leave one entry and no temporary files.
#[tokio::test]
async fn a_component_shared_by_many_plugins_is_compiled_once() {
    let plugins = PluginDir::with(&[]);
    let names: Vec<String> = (0..40).map(|i| format!("copy-{i}")).collect();
    for name in &names {
        plugins.add_custom(
            name,
            &format!("[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"base_gameplay.wasm\"\n"),
            Some(&BASE_GAMEPLAY),
        );
    }
    let cache = tempfile::TempDir::new().unwrap();
    let session = session_with(&plugins, Some(cache.path()), trusted());
    let loads = names.iter().map(|name| {
        let features = session.features().clone();
        let name = name.clone();
        tokio::spawn(async move { features.load(&name).await })
    });
    for load in loads.collect::<Vec<_>>() {
        load.await.unwrap().unwrap();
    }
    let compiled = names
        .iter()
        .filter(|name| session.timeline().texts(&track::plugin(name), EventKind::Load)[0].starts_with("compiled in"))
        .count();
    assert_eq!(compiled, 1);
    // The folder of check records appears when a load finds the files settled (see `checked_files`).
    let files: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name != "checked")
        .collect();
    assert_eq!(entries(cache.path()).len(), 1, "{files:?}");
    assert_eq!(files.len(), 4, "the entry, its MAC, the function cache and the key, nothing temporary: {files:?}");
}

#[test]
fn malformed_manifests_are_refused_naming_the_file_and_the_rest_install() {
    let plugins = PluginDir::with(&[BASE_GAMEPLAY]);
    let broken = plugins.add_custom("broken", "[plugin]\nname = \"broken\"\nversion = ", None);
    let future = plugins.add_custom(
        "future",
        "[plugin]\nname = \"future\"\nversion = \"1.0.0\"\napi = \"0.9.0\"\ncomponent = \"f.wasm\"\n",
        None,
    );
    let escaping = plugins.add_custom(
        "escaping",
        "[plugin]\nname = \"escaping\"\nversion = \"1.0.0\"\napi = \"0.2.0\"\ncomponent = \"../base-gameplay/base_gameplay.wasm\"\n",
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
    assert!(error_for(&future).contains("plugin API \"0.9.0\" is not supported"));
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
        format!(
            "plugin \"base-gameplay\" failed while Loading: component file {} not found: build the plugin first \
             (`gfhost build`)",
            component.display()
        )
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
        assert!(!error.contains('\n'), "{case}: one line, for terminals and listings: {error}");
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
    let plugins = PluginDir::with(&[BASE_GAMEPLAY, SHOOTER_CORE, PROGRESS_SAVE]);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["shooter-core", "progress-save"]));
    let session = session(&plugins);
    // Discovered, then deleted from disk before the experience loads it.
    std::fs::remove_dir_all(plugins.folder(&PROGRESS_SAVE)).unwrap();
    let mut manager = session.create_world("w", NetMode::Standalone);
    let report = manager.load(&path).await.unwrap().clone();
    assert_eq!(report.active, ["base-gameplay", "shooter-core"], "what was there still loads");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    let cause = &report.failures[0].cause;
    assert!(cause.contains("progress_save.wasm not found"), "names the file: {cause}");
    manager.end_play().await.unwrap();
}
