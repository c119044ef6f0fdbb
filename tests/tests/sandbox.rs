//! Hostile plugins: each is stopped with a precise cause and quarantined (error state, nothing of it left in
//! the world), while a well-behaved plugin beside it completes Lyra's character flow. Also the sandbox's
//! defaults: output routed to the log, the data directory, permissions.

use std::path::Path;
use std::time::Duration;

use gamefeature_host::config::LimitOverrides;
use gamefeature_host::experience::{ExperienceManager, ManagerOptions};
use gamefeature_host::feature::PluginState;
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::timeline::{track, EventKind, LogLevel};
use gamefeature_host::world::{self, NetMode};
use gamefeature_host::{Session, SessionOptions};
use gamefeature_tests::hostile::*;
use gamefeature_tests::*;

/// Adds `data-probe` under the hostile plugin's name, behaving as `behaviour` says: what it does runs on the
/// fiber path (it imports WASI's file functions), where the hostile plugin's runs directly.
fn hostile_on_a_fiber(plugins: &PluginDir, behaviour: &str) {
    let manifest = hostile_manifest("hostile").replace("hostile.wasm", "data_probe.wasm");
    let folder = plugins.add_custom("hostile", &manifest, Some(&DATA_PROBE));
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
}

/// A session like the tests' default, with changes to its runtime and manager settings.
fn custom_session(
    plugins: &PluginDir,
    runtime: impl FnOnce(&mut RuntimeConfig),
    manager: impl FnOnce(&mut ManagerOptions),
) -> Session {
    let mut options = SessionOptions {
        plugin_dirs: vec![plugins.path().to_path_buf()],
        runtime: runtime_config(None),
        manager: trusted(),
        ..SessionOptions::default()
    };
    runtime(&mut options.runtime);
    manager(&mut options.manager);
    Session::new(options).expect("the runtime starts")
}

/// When the hostile plugin is expected to be stopped.
#[derive(Clone, Copy, PartialEq)]
enum Stopped {
    /// While loading or playing: it is gone before end of play.
    DuringPlay,
    /// At end of play (a misdeed in deactivation).
    AtEndOfPlay,
}

/// Loads `hostile` (behaving as told) beside `lyra-character` in `session`, plays one player through the
/// character flow, ends play, and returns the hostile plugin's failure cause.
async fn quarantine_in(session: &Session, behaviour: &str, stopped: Stopped) -> String {
    let mut manager = play_beside_lyra(session, behaviour).await;
    if stopped == Stopped::DuringPlay {
        assert_eq!(manager.live_features(), ["lyra-character"], "{behaviour}: only the hostile plugin is gone");
        assert!(
            matches!(session.features().state("hostile"), Some(PluginState::Error(_))),
            "{behaviour}: in an error state"
        );
    }
    manager.end_play().await.unwrap();
    let quarantines = session.timeline().texts(&track::instance("hostile", "w"), EventKind::Failure);
    assert_eq!(quarantines.len(), 1, "{behaviour}: quarantined once: {quarantines:#?}");
    let failures = session.timeline().texts(&track::experience("w"), EventKind::Failure);
    assert!(
        failures.iter().any(|f| f.starts_with("hostile failed")),
        "{behaviour}: shown in the timeline: {failures:?}"
    );
    let cause = quarantines[0].clone();
    assert!(!cause.contains('\n'), "{behaviour}: the cause is one line: {cause}");
    let w = world::lock(manager.world());
    assert_eq!(
        (w.live_handlers(), w.live_subscriptions(), w.live_features(), w.requested_component_count()),
        (0, 0, 0, 0),
        "{behaviour}: nothing left behind"
    );
    assert_eq!(w.actors().filter(|a| a.spawned_by.is_some()).count(), 0, "{behaviour}: no actor it spawned");
    cause
}

/// One test per hostile behaviour: the cause must name the export and contain each expected phrase. The
/// hostile plugin is called directly; `on a fiber` runs the behaviour with `data-probe`, which is not.
macro_rules! hostile_test {
    ($name:ident, $behaviour:expr, $stopped:expr, [$($expected:expr),+]) => {
        hostile_test!(@with hostile, $name, $behaviour, $stopped, [$($expected),+]);
    };
    ($name:ident on a fiber, $behaviour:expr, $stopped:expr, [$($expected:expr),+]) => {
        hostile_test!(@with hostile_on_a_fiber, $name, $behaviour, $stopped, [$($expected),+]);
    };
    (@with $add:ident, $name:ident, $behaviour:expr, $stopped:expr, [$($expected:expr),+]) => {
        #[tokio::test]
        async fn $name() {
            let plugins = PluginDir::with(&[LYRA_CHARACTER]);
            $add(&plugins, $behaviour);
            let cause = quarantine_in(&session(&plugins), $behaviour, $stopped).await;
            $(assert!(cause.contains($expected), "{}: {cause}", $behaviour);)+
        }
    };
}

// An endless loop in each kind of callback hits the call deadline; the cause names the export.
macro_rules! loop_tests {
    ($($name:ident: $callback:literal in $export:literal, $stopped:expr;)+) => {
        $(hostile_test!($name, concat!("loop-", $callback), $stopped, [$export, "exceeded its call deadline"]);)+
    };
}

loop_tests! {
    loop_in_registering: "registering" in "on-registering", Stopped::DuringPlay;
    loop_in_loading: "loading" in "on-loading", Stopped::DuringPlay;
    loop_in_activating: "activating" in "on-activating", Stopped::DuringPlay;
    loop_in_activated: "activated" in "on-activated", Stopped::DuringPlay;
    loop_in_deactivating: "deactivating" in "on-deactivating", Stopped::AtEndOfPlay;
    loop_in_unloading: "unloading" in "on-unloading", Stopped::AtEndOfPlay;
    loop_in_unregistering: "unregistering" in "on-unregistering", Stopped::AtEndOfPlay;
    loop_in_event_handler: "event" in "handle-extension-events", Stopped::DuringPlay;
    loop_in_can_change: "can-change" in "try-change-init-states", Stopped::DuringPlay;
    loop_in_handle_change: "handle-change" in "try-change-init-states", Stopped::DuringPlay;
    loop_in_default_init: "default-init" in "check-default-initializations", Stopped::DuringPlay;
    loop_in_state_changed: "state-changed" in "on-init-states-changed", Stopped::DuringPlay;
    loop_in_property_changed: "property-changed" in "on-properties-changed", Stopped::DuringPlay;
}

// Traps of every kind.
hostile_test!(panic_in_activating, "panic-activating", Stopped::DuringPlay, ["on-activating", "panicked"]);
hostile_test!(
    a_memory_bomb_hits_the_memory_limit,
    "memory-activating",
    Stopped::DuringPlay,
    ["on-activating", "exceeded its memory limit of 64 MiB"]
);
hostile_test!(
    a_stack_overflow_is_a_trap,
    "stack-overflow-activating",
    Stopped::DuringPlay,
    ["on-activating", "stack overflow"]
);
hostile_test!(
    refused_calls_past_the_budget_quarantine,
    "refusals-activating",
    Stopped::DuringPlay,
    [
        "on-activating",
        "made 5000 refused host calls in one call, over its budget of 1000; the first: Error::UnknownActor("
    ]
);
hostile_test!(
    a_sleep_is_cut_off_at_the_deadline,
    "sleep-activating",
    Stopped::DuringPlay,
    ["on-activating", "waited inside a WASI call past its call deadline"]
);
hostile_test!(
    a_plugin_recursing_on_the_wasm_stack_is_stopped,
    "deep-recursion-activating",
    Stopped::DuringPlay,
    ["on-activating", "overflowed its stack"]
);
// One call's waits share its wait budget: six naps, each well within it, are cut off together.
hostile_test!(
    waits_in_one_call_share_its_budget,
    "naps-activating",
    Stopped::DuringPlay,
    ["on-activating", "waited inside a WASI call past its call deadline"]
);
hostile_test!(
    a_sleep_on_a_fiber_is_cut_off_at_the_deadline on a fiber,
    "sleep-activating",
    Stopped::DuringPlay,
    ["on-activating", "waited inside a WASI call past its call deadline"]
);

// Flooding the host with work: past the cap, changes are refused and the plugin is quarantined when the
// call returns. (A cap of 10,000 rather than the default 100,000 keeps the unoptimised test build quick.)
async fn flood(behaviour: &str) -> String {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, behaviour);
    let session = custom_session(&plugins, |runtime| runtime.world_changes = 10_000, |_| {});
    quarantine_in(&session, behaviour, Stopped::DuringPlay).await
}

#[tokio::test]
async fn flooding_with_events() {
    let cause = flood("flood-events").await;
    assert!(cause.contains("on-activating flooded the host: tried 11001 world changes in one call"), "{cause}");
}

#[tokio::test]
async fn flooding_with_actors() {
    let cause = flood("flood-spawns").await;
    assert!(cause.contains("on-activating flooded the host") && cause.contains("over its cap of 10000"), "{cause}");
}

/// A batch longer than the changes a call has left is refused whole (one refusal, however long the lists the
/// plugin sent), and counts as the flood it is.
#[tokio::test]
async fn flooding_with_one_batch() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "flood-batch");
    let session = custom_session(&plugins, |runtime| runtime.world_changes = 10_000, |_| {});
    let cause = quarantine_in(&session, "flood-batch", Stopped::DuringPlay).await;
    // The batch's 20,000 entries count as tried, beside the spawn and the calls before it.
    assert!(cause.contains("on-activating flooded the host: tried 2000") && cause.contains("over its cap of 10000"));
    let warnings = session.timeline().texts(&track::instance("hostile", "w"), EventKind::Log(LogLevel::Warn));
    assert!(warnings.contains(&"flood batch: 1 refused, the first for entry 0".to_string()), "{warnings:#?}");
}

#[tokio::test]
async fn flooding_with_relevancy_changes() {
    let cause = flood("flood-relevancy").await;
    assert!(cause.contains("on-activating flooded the host") && cause.contains("over its cap of 10000"), "{cause}");
}

#[tokio::test]
async fn flooding_with_requests() {
    let cause = flood("flood-requests").await;
    assert!(cause.contains("on-activating flooded the host") && cause.contains("over its cap of 10000"), "{cause}");
}

// Handles it does not hold.
hostile_test!(
    a_forged_handle_is_a_trap,
    "forge-handle",
    Stopped::DuringPlay,
    ["on-activating", "unknown handle index 1"]
);
hostile_test!(
    a_handle_used_after_drop_is_a_trap,
    "use-after-drop",
    Stopped::DuringPlay,
    ["on-activating", "unknown handle index"]
);

#[tokio::test]
async fn a_panic_in_an_event_handler_is_a_trap_and_its_message_is_logged() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "panic-event");
    let session = session(&plugins);
    let cause = quarantine_in(&session, "panic-event", Stopped::DuringPlay).await;
    assert!(cause.contains("handle-extension-events") && cause.contains("panicked"), "{cause}");
    let warnings = hostile_lines(&session, LogLevel::Warn);
    assert!(warnings.iter().any(|l| l.contains("hostile plugin panics on purpose in event")), "{warnings:#?}");
}

#[tokio::test]
async fn fuel_gives_a_deterministic_budget() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "loop-activating");
    let session = custom_session(
        &plugins,
        |runtime| {
            runtime.fuel = Some(20_000_000);
            runtime.call_deadline = Duration::from_secs(30);
        },
        |_| {},
    );
    let cause = quarantine_in(&session, "loop-activating", Stopped::DuringPlay).await;
    assert!(cause.contains("on-activating") && cause.contains("exhausted its fuel budget (20000000"), "{cause}");
}

#[tokio::test]
async fn a_plugin_can_be_given_its_own_deadline() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "loop-activating");
    let session = custom_session(
        &plugins,
        |runtime| {
            runtime
                .plugin_limits
                .insert("hostile".into(), LimitOverrides { call_deadline_ms: Some(30), ..LimitOverrides::default() });
        },
        |_| {},
    );
    let cause = quarantine_in(&session, "loop-activating", Stopped::DuringPlay).await;
    assert!(cause.contains("exceeded its call deadline (30ms of CPU time)"), "{cause}");
}

#[tokio::test]
async fn huge_strings_are_refused_or_cut_and_the_plugin_goes_on() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "huge-strings");
    let (infos, warnings) = tolerated(&session(&plugins), "huge-strings").await;
    let long = infos.iter().find(|l| l.starts_with("hhhh")).expect("the long line is logged");
    assert!(long.len() < 5000 && long.ends_with("[cut]"), "cut to the log's limit: {} bytes", long.len());
    for refusal in [
        "huge event name: Some(Err(Error::Invalid(\"event name is 4194304 bytes",
        "huge component class: Some(Err(Error::Invalid(\"component class is 4194304 bytes",
        "huge property: Some(Err(Error::Invalid(\"text value is 4194304 bytes",
    ] {
        assert!(warnings.iter().any(|w| w.starts_with(refusal)), "{refusal}: {warnings:#?}");
    }
}

#[tokio::test]
async fn an_instance_holds_only_so_many_handles() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "hoard-handles");
    let session = custom_session(&plugins, |runtime| runtime.max_handles = 1000, |_| {});
    let (_, warnings) = tolerated(&session, "hoard-handles").await;
    let expected = "hoarded 1000 handles, then: Error::Invalid(\"the plugin holds 1000 live handles, the most one \
                    instance may; drop some first\")";
    assert!(warnings.iter().any(|w| w == expected), "{warnings:#?}");
}

#[tokio::test]
async fn a_call_logs_only_so_many_lines_and_says_how_many_it_dropped() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "log-flood");
    let (infos, warnings) = tolerated(&session(&plugins), "log-flood").await;
    let flood = infos.iter().filter(|l| l.starts_with("log line") || l.starts_with("printed line")).count();
    assert_eq!(flood, 1000, "the per-call limit");
    assert!(warnings.contains(&"dropped 19000 log lines past the limit of 1000 per call".to_string()), "{warnings:#?}");
}

/// A sleep within the deadline completes, even though this test runs on a single-threaded runtime whose own
/// timers cannot advance while the call blocks its thread.
#[tokio::test]
async fn a_short_sleep_within_the_deadline_completes() {
    naps_complete_on_both_paths().await;
}

/// The same, the game's runtime multi-threaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_sleep_within_the_deadline_completes_in_a_multi_threaded_runtime() {
    naps_complete_on_both_paths().await;
}

async fn naps_complete_on_both_paths() {
    for add in [hostile, hostile_on_a_fiber] {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        add(&plugins, "nap-activating");
        let (infos, _) = tolerated(&session(&plugins), "nap-activating").await;
        assert!(infos.iter().any(|l| l.starts_with("napped ")), "{infos:#?}");
    }
}

/// Each call has a wait budget of its own: two calls in a row, each waiting most of its budget, both complete.
#[tokio::test]
async fn each_call_has_its_own_wait_budget() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "long-naps");
    let (infos, _) = tolerated(&session(&plugins), "long-naps").await;
    assert_eq!(infos.iter().filter(|l| l.starts_with("napped ")).count(), 2, "{infos:#?}");
}

#[tokio::test]
async fn standard_output_and_error_become_log_lines_of_the_plugin() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "print");
    let (infos, warnings) = tolerated(&session(&plugins), "print").await;
    assert!(infos.contains(&"hello from stdout".to_string()), "{infos:#?}");
    assert!(warnings.contains(&"complaint on stderr".to_string()), "{warnings:#?}");
    assert!(infos.contains(&"a last line without a newline".to_string()), "flushed when the instance goes: {infos:#?}");
}

/// Runs `data-probe`'s filesystem probe (as the hostile plugin) with `data_dir` as the host's data directory
/// (if any) and returns its `fs …` log lines and its warnings.
async fn fs_probe(data_dir: Option<&Path>) -> (Vec<String>, Vec<String>) {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_on_a_fiber(&plugins, "fs-probe");
    let session = custom_session(&plugins, |_| {}, |manager| manager.data_dir = data_dir.map(Path::to_path_buf));
    let (infos, warnings) = tolerated(&session, "fs-probe").await;
    (infos.into_iter().filter(|l| l.starts_with("fs ")).collect(), warnings)
}

#[tokio::test]
async fn a_granted_data_directory_is_the_only_file_access_and_escapes_are_refused() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("outside.txt"), "secret").unwrap();
    // A symlink planted inside the plugin's directory, pointing out of it.
    std::fs::create_dir_all(root.path().join("hostile")).unwrap();
    std::os::unix::fs::symlink(root.path(), root.path().join("hostile/link")).unwrap();
    let (lines, _) = fs_probe(Some(root.path())).await;
    assert_eq!(lines.len(), 7, "{lines:#?}");
    assert_eq!(lines[0], "fs own /data/own.txt: READ 4 bytes");
    for line in &lines[1..] {
        assert!(line.contains(": refused ("), "{line}");
    }
    assert_eq!(std::fs::read_to_string(root.path().join("hostile/own.txt")).unwrap(), "mine");
    assert!(!root.path().join("written-outside.txt").exists());
}

/// A plugin's data directory holds at most its quota: one call's writes past it quarantine the plugin, and it
/// cannot start again until the directory is cleared.
#[tokio::test]
async fn a_data_directory_past_its_quota_stops_its_plugin() {
    let root = tempfile::tempdir().unwrap();
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_on_a_fiber(&plugins, "fill-data");
    let quota = LimitOverrides { data_quota_mib: Some(1), ..Default::default() };
    let session = custom_session(
        &plugins,
        |runtime| {
            runtime.plugin_limits.insert("hostile".into(), quota);
        },
        |manager| manager.data_dir = Some(root.path().to_path_buf()),
    );
    let cause = quarantine_in(&session, "fill-data", Stopped::DuringPlay).await;
    assert!(cause.contains("on-activating") && cause.contains("holds 2.0 MiB, over its quota of 1 MiB"), "{cause}");
    let mut manager = play_beside_lyra(&session, "over quota, again").await;
    let failures: Vec<String> = manager.report().failures.iter().map(ToString::to_string).collect();
    assert!(failures.iter().any(|f| f.contains("cannot start: its data directory")), "{failures:#?}");
    assert_eq!(manager.live_features(), ["lyra-character"]);
    manager.end_play().await.unwrap();
}

/// A plugin's data directory is one process's at a time: while another process holds it (a second server or
/// client configured with the same data-dir), the plugin does not start here and says why, naming the folder;
/// the other plugins play on. Two worlds of one process share it, and once its holder lets go it is free.
#[tokio::test]
async fn a_data_directory_another_process_holds_is_refused_with_the_folder_named() {
    let root = tempfile::tempdir().unwrap();
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_on_a_fiber(&plugins, "fs-probe");
    let session = custom_session(&plugins, |_| {}, |manager| manager.data_dir = Some(root.path().to_path_buf()));
    // Another open of the lock file stands for another process: its lock is not this process's lease.
    let other_process = gamefeature_host::file_lock::FileLock::try_exclusive(&root.path().join(".hostile.lock"));
    let other_process = other_process.unwrap();
    let mut manager = play_beside_lyra(&session, "data folder held").await;
    assert_eq!(manager.live_features(), ["lyra-character"]);
    let failures: Vec<String> = manager.report().failures.iter().map(ToString::to_string).collect();
    let said = format!("its data directory {} is in use by another process", root.path().join("hostile").display());
    assert!(failures.iter().any(|f| f.contains(&said) && f.contains("[sandbox] data-dir")), "{failures:#?}");
    manager.end_play().await.unwrap();
    drop(other_process);

    let mut first = play_beside_lyra(&session, "first world").await;
    let mut second = play_beside_lyra(&session, "second world").await;
    assert_eq!(first.live_features(), ["hostile", "lyra-character"]);
    assert_eq!(second.live_features(), ["hostile", "lyra-character"], "one process's worlds share the folder");
    let lock_file = root.path().join(".hostile.lock");
    assert!(gamefeature_host::file_lock::FileLock::try_exclusive(&lock_file).is_err(), "held while it plays");
    first.end_play().await.unwrap();
    second.end_play().await.unwrap();
    drop((first, second));
    gamefeature_host::file_lock::FileLock::try_exclusive(&lock_file).expect("free once play ended");
}

#[tokio::test]
async fn without_a_data_directory_a_plugin_has_no_filesystem() {
    let (lines, warnings) = fs_probe(None).await;
    assert!(lines.iter().all(|l| l.contains(": refused (")), "{lines:#?}");
    assert!(
        warnings.iter().any(|w| w.contains("declared fs.data but the host has no data directory configured")),
        "{warnings:#?}"
    );
}

#[tokio::test]
async fn a_handle_dropped_after_deactivation_releases_nothing_of_anybody_else() {
    let plugins = PluginDir::with(&[]);
    hostile_named(&plugins, "hostile", "hold-request");
    hostile_named(&plugins, "hostile-too", "hold-request");
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "hostile-too"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    let pawn = manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.load(&path).await.unwrap();
    let has_shared =
        |manager: &mut ExperienceManager| manager.with_world(|w| w.actor(pawn).unwrap().component("Shared").is_some());
    assert!(has_shared(&mut manager));
    assert!(manager.deactivate_feature("hostile").await);
    let infos = session.timeline().texts(&track::instance("hostile", "w"), EventKind::Log(LogLevel::Info));
    assert!(infos.contains(&"dropped the held request after deactivation".to_string()), "{infos:#?}");
    assert!(has_shared(&mut manager), "the other plugin's request still holds the component");
    assert_eq!(manager.live_features(), ["hostile-too"]);
    manager.end_play().await.unwrap();
    assert!(!has_shared(&mut manager));
}

#[tokio::test]
async fn oversized_names_are_refused_as_recoverable_errors() {
    let plugins = PluginDir::with(&[MANAGER_PROBE]);
    let long = "x".repeat(300);
    let experiences = ExperienceDir::new();
    experiences.write("script.txt", &format!("handler 1 Pawn\nsend Pawn {long}\nsend Pawn Fine\n"));
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\nscript = \"script.txt\"\n", experience_with_features(&["manager-probe"])),
    );
    let session = session(&plugins);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.load(&path).await.unwrap();
    let warnings = session
        .timeline()
        .texts(&track::instance("manager-probe", "w"), EventKind::Log(gamefeature_host::timeline::LogLevel::Warn));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("event name is 300 bytes, longer than 256"), "{warnings:?}");
    // The refusal is recoverable: the plugin carries on and its next event goes out.
    let infos = session
        .timeline()
        .texts(&track::instance("manager-probe", "w"), EventKind::Log(gamefeature_host::timeline::LogLevel::Info));
    assert!(infos.iter().any(|l| l.ends_with(" Fine")), "{infos:?}");
    assert_eq!(manager.live_features(), ["manager-probe"]);
    manager.end_play().await.unwrap();
}

/// Loads the probe plugin with `script` under `grants`, beside one existing pawn; returns its warnings.
async fn probe_under(
    grants: gamefeature_host::feature::GrantPolicy,
    script: &str,
) -> (Vec<String>, Vec<String>, usize) {
    let plugins = PluginDir::with(&[MANAGER_PROBE]);
    let experiences = ExperienceDir::new();
    experiences.write("script.txt", script);
    let path = experiences.write(
        "e.toml",
        &format!("{}[bundles.Equipped]\nscript = \"script.txt\"\n", experience_with_features(&["manager-probe"])),
    );
    let options = gamefeature_host::experience::ManagerOptions { grants, ..Default::default() };
    let session = session_with(&plugins, None, options);
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.with_world(|w| w.spawn("Pawn").unwrap());
    manager.load(&path).await.unwrap();
    let instance = track::instance("manager-probe", "w");
    let warnings = session.timeline().texts(&instance, EventKind::Log(gamefeature_host::timeline::LogLevel::Warn));
    let infos = session.timeline().texts(&instance, EventKind::Log(gamefeature_host::timeline::LogLevel::Info));
    let (pawns, shields) = {
        let w = world::lock(manager.world());
        let pawns = w.actors_of_class("Pawn").unwrap();
        let shields = pawns.iter().filter(|p| w.actor(**p).unwrap().component("Shield").is_some()).count();
        (pawns.len(), shields)
    };
    assert_eq!(manager.live_features(), ["manager-probe"], "a refused call is recoverable");
    manager.end_play().await.unwrap();
    (warnings, infos, pawns * 10 + shields)
}

#[tokio::test]
async fn ungranted_calls_are_denied_logged_and_without_effect() {
    let script = "handler 1 Pawn\nspawn Pawn\nsend Pawn Hello\ndefer-send Pawn Hola\nrequest Pawn Shield\n";
    let (warnings, infos, pawns_and_shields) =
        probe_under(gamefeature_host::feature::GrantPolicy::default(), script).await;
    // The deferred event went in a batch when the activation returned, refused as a whole.
    let deferred = warnings.iter().find(|w| w.starts_with("could not send Hola about actor "));
    assert!(deferred.is_some_and(|w| w.contains("denied: ") && w.contains("send-events")), "{warnings:#?}");
    assert!(!infos.iter().any(|l| l.ends_with("Hola")), "no deferred event was sent: {infos:?}");
    for permission in ["spawn-actors", "send-events", "component-requests on Pawn"] {
        let host_line = format!("denied: plugin \"manager-probe\" lacks the {permission} permission");
        assert!(warnings.iter().any(|w| w.starts_with(&host_line)), "{permission}: {warnings:#?}");
    }
    // The plugin saw each refusal as a `denied` error (it logs the errors it gets).
    assert_eq!(warnings.iter().filter(|w| w.contains("Denied(")).count(), 3, "{warnings:#?}");
    assert_eq!(pawns_and_shields, 10, "one pawn (the game's), no shield");
    assert!(!infos.iter().any(|l| l.ends_with("Hello")), "no event was sent: {infos:?}");
}

#[tokio::test]
async fn a_plugin_gets_only_what_it_declared_and_was_granted() {
    use gamefeature_host::feature::{GrantPolicy, Permissions};
    // Granted more than it declares (manager-probe declares requests on "*"): requests only on Pawn.
    let grants = GrantPolicy::Explicit(
        [(
            "manager-probe".to_string(),
            Permissions { send_events: true, component_requests: vec!["Pawn".into()], ..Permissions::default() },
        )]
        .into(),
    );
    let script = "handler 1 Pawn\nsend Pawn Hello\ndefer-send Pawn Hola\nrequest Pawn Shield\n\
                  request Character Armor\nspawn Pawn\n";
    let (warnings, infos, pawns_and_shields) = probe_under(grants, script).await;
    assert!(infos.iter().any(|l| l.ends_with("Hello")), "granted: {infos:?}");
    // Sent when the activation returned, after the event sent at once.
    let heard = |event: &str| infos.iter().position(|l| l.ends_with(event));
    assert!(heard("Hello") < heard("Hola") && heard("Hola").is_some(), "granted, deferred: {infos:?}");
    assert_eq!(pawns_and_shields, 11, "the requested shield, and no spawned pawn");
    let denied: Vec<&String> = warnings.iter().filter(|w| w.starts_with("denied:")).collect();
    assert_eq!(denied.len(), 2, "{denied:#?}");
    assert!(denied[0].contains("component-requests on Character") && denied[1].contains("spawn-actors"), "{denied:#?}");
}

/// Games do not have to run the host inside an async runtime: a plugin called from a plain thread (here, the
/// event dispatch after play starts) still has its output routed and its trap quarantined.
#[test]
fn a_plugin_called_outside_any_async_runtime_is_sandboxed_the_same() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "panic-event");
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(manager.load(&path)).unwrap();
    assert_eq!(manager.live_features(), ["hostile", "lyra-character"]);
    // Outside `block_on`: no tokio context on this thread while the plugins run.
    assert!(tokio::runtime::Handle::try_current().is_err());
    play_one_player(&mut manager, "panic-event");
    assert_eq!(manager.live_features(), ["lyra-character"]);
    let instance = track::instance("hostile", "w");
    let warnings = session.timeline().texts(&instance, EventKind::Log(LogLevel::Warn));
    assert!(warnings.iter().any(|l| l.contains("hostile plugin panics on purpose in event")), "{warnings:#?}");
    let quarantines = session.timeline().texts(&instance, EventKind::Failure);
    assert!(quarantines[0].contains("handle-extension-events panicked"), "{quarantines:#?}");
    runtime.block_on(manager.end_play()).unwrap();
}

/// Sleeps on every plugin log line it sees: the thread running the plugin is held up as a busy machine would
/// preempt it, while the plugin itself uses almost no CPU.
struct PreemptOnPluginLog(Duration);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for PreemptOnPluginLog {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().fields().field("plugin").is_some() {
            std::thread::sleep(self.0);
        }
    }
}

/// Deadlines are CPU time of the thread running the plugin: a healthy plugin whose thread is held up for ten
/// times its deadline in the middle of its calls (as a busy machine does) is not quarantined.
#[test]
fn a_plugin_held_up_by_the_host_is_not_punished_for_it() {
    use tracing_subscriber::layer::SubscriberExt;
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = custom_session(
        &plugins,
        |runtime| runtime.call_deadline = Duration::from_millis(10),
        |manager| manager.plugin_log_level = LogLevel::Debug,
    );
    let preempting = tracing_subscriber::registry().with(PreemptOnPluginLog(Duration::from_millis(100)));
    tracing::subscriber::with_default(preempting, || {
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let experiences = ExperienceDir::new();
        let path = experiences.write("e.toml", &experience_with_features(&["lyra-character"]));
        let mut manager = session.create_world("w", NetMode::Standalone);
        tokio.block_on(manager.load(&path)).unwrap();
        play_one_player(&mut manager, "held up");
        let logged = session.timeline().texts(&track::instance("lyra-character", "w"), EventKind::Log(LogLevel::Debug));
        assert!(!logged.is_empty(), "the plugin logged, so its thread was held up");
        assert_eq!(manager.live_features(), ["lyra-character"]);
        tokio.block_on(manager.end_play()).unwrap();
        assert_eq!(manager.report().failures, []);
    });
}

/// A quarantine names the phase the plugin was in — playing, deactivating, unloading — and the call.
/// A host out of instance slots refuses the plugin it cannot start, saying why — not a trap of the plugin's.
#[tokio::test]
async fn a_full_instance_pool_refuses_a_plugin_without_blaming_it() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "none");
    let session = custom_session(&plugins, |runtime| runtime.max_instances = 1, |_| {});
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    assert_eq!(manager.live_features(), ["hostile"]);
    let failures: Vec<String> = manager.report().failures.iter().map(ToString::to_string).collect();
    let full = failures.iter().find(|f| f.starts_with("lyra-character")).expect("lyra-character could not start");
    assert!(full.contains("cannot start: the host's instance pool is full"), "{full}");
    assert!(!full.contains("trapped"), "{full}");
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_quarantine_names_the_phase_and_the_call() {
    use gamefeature_host::feature::{Phase, Transition};
    for (behaviour, phase, call) in [
        ("loop-event", Phase::Playing, "handle-extension-events"),
        ("loop-activating", Phase::Transition(Transition::Activating), "on-activating"),
        ("loop-deactivating", Phase::Transition(Transition::Deactivating), "on-deactivating"),
        ("loop-unloading", Phase::Transition(Transition::Unloading), "on-unloading"),
    ] {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        hostile(&plugins, behaviour);
        let session = custom_session(&plugins, |r| r.call_deadline = Duration::from_millis(50), |_| {});
        let mut manager = play_beside_lyra(&session, behaviour).await;
        manager.end_play().await.unwrap();
        let failures = &manager.report().failures;
        assert_eq!(failures.len(), 1, "{behaviour}: {failures:?}");
        assert_eq!(failures[0].during, phase.to_string(), "{behaviour}");
        assert!(failures[0].cause.starts_with(call), "{behaviour}: {}", failures[0].cause);
        let states = session.timeline().texts(&track::plugin("hostile"), EventKind::Failure);
        assert!(states.iter().any(|s| s.starts_with(&format!("Error{phase}: {call}"))), "{behaviour}: {states:?}");
    }
}

// ----- one plugin against another, and against the host -----

/// A plugin changes only what it owns: another plugin's init-state features, the properties of components its
/// requests did not add, and actors it did not spawn are refused, naming why — and the victim's chain completes.
#[tokio::test]
async fn a_plugin_cannot_take_over_another_plugins_features_components_or_actors() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "trespass");
    let (_, warnings) = tolerated(&session(&plugins), "trespass").await;
    let attempts: Vec<&String> = warnings.iter().filter(|l| l.starts_with("trespass")).collect();
    for feature in ["PawnExtension", "Hero"] {
        let line = attempts.iter().find(|l| l.contains(&format!("change-feature-state {feature}:")));
        let line = line.unwrap_or_else(|| panic!("tried {feature}: {attempts:#?}"));
        assert!(line.contains("Err(Error::Denied(") && line.contains("implemented by lyra-character"), "{line}");
    }
    let written = attempts.iter().find(|l| l.contains("set-property")).expect("tried a property");
    assert!(written.contains("Denied") && written.contains("write-properties"), "{written}");
    let removed = attempts.iter().find(|l| l.contains("remove-receiver")).expect("tried remove-receiver");
    assert!(removed.contains("Denied") && removed.contains("not spawned by this plugin"), "{removed}");
}

/// What a plugin writes cannot forge host lines or drive a terminal, and its error texts are cut.
#[tokio::test]
async fn plugin_text_cannot_forge_lines_or_flood_the_report() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "forge-log");
    let session = session(&plugins);
    let (info, _) = tolerated(&session, "forge-log").await;
    assert!(info.iter().any(|l| l.contains("all fine\\nlyra-character@w quarantined")), "{info:?}");
    assert!(info.iter().any(|l| l.starts_with("\\u{1b}[2J")), "{info:?}");
    let printed = session.timeline().render_text();
    assert!(!printed.contains('\x1b'));
    assert!(!printed.lines().any(|l| l.starts_with("lyra-character@w quarantined")), "{printed}");

    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "huge-error-activating");
    let session = gamefeature_tests::session(&plugins);
    let mut manager = play_beside_lyra(&session, "huge-error-activating").await;
    manager.end_play().await.unwrap();
    let failure = &manager.report().failures[0];
    assert!(
        failure.cause.len() < 1200 && failure.cause.ends_with("[cut]"),
        "{} bytes: {}",
        failure.cause.len(),
        failure.cause
    );
    assert!(!failure.cause.contains('\n'));
}

/// Events answering events for ever: the dispatch stops the plugins keeping the loop going, and only them.
#[tokio::test]
async fn a_plugin_pinging_itself_is_stopped() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "ping-self");
    let cause = quarantine_in(&session(&plugins), "ping-self", Stopped::DuringPlay).await;
    assert!(cause.contains("kept plugins busy for 256 rounds"), "{cause}");
}

#[tokio::test]
async fn two_plugins_pinging_each_other_are_both_stopped() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile_named(&plugins, "hostile", "ping");
    hostile_named(&plugins, "ponger", "pong");
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["hostile", "ponger", "lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    play_one_player(&mut manager, "ping-pong");
    assert_eq!(manager.live_features(), ["lyra-character"]);
    manager.end_play().await.unwrap();
    for plugin in ["hostile", "ponger"] {
        let quarantines = session.timeline().texts(&track::instance(plugin, "w"), EventKind::Failure);
        assert!(quarantines.iter().any(|q| q.contains("kept plugins busy")), "{plugin}: {quarantines:?}");
    }
}

/// A plugin spawning receivers a few hundred per call pays for everything other plugins are told about them:
/// it is quarantined for flooding, and the plugin it flooded carries on.
#[tokio::test]
async fn the_flooder_not_the_flooded_is_quarantined() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "spawn-storm");
    let session = custom_session(&plugins, |_| {}, |manager| manager.dispatch.work = 20_000);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character", "hostile"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    assert_eq!(manager.live_features(), ["lyra-character"]);
    let quarantines = session.timeline().texts(&track::instance("hostile", "w"), EventKind::Failure);
    assert!(quarantines.iter().any(|q| q.contains("flooded the world")), "{quarantines:?}");
    play_one_player(&mut manager, "spawn-storm");
    let w = world::lock(manager.world());
    assert_eq!(w.actors().filter(|a| a.spawned_by.is_some()).count(), 0, "its actors went with it");
}

/// A plugin quarantined while it held deactivation open is never called again.
#[tokio::test]
async fn a_plugin_quarantined_in_poll_deactivation_is_not_called_again() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "loop-poll");
    let session = custom_session(&plugins, |r| r.call_deadline = Duration::from_millis(50), |_| {});
    let cause = quarantine_in(&session, "loop-poll", Stopped::AtEndOfPlay).await;
    assert!(cause.contains("poll-deactivation exceeded its call deadline"), "{cause}");
    let calls = session.timeline().texts(&track::instance("hostile", "w"), EventKind::Call);
    let after: Vec<&String> = calls.iter().skip_while(|c| !c.starts_with("poll-deactivation failed")).skip(1).collect();
    assert!(after.is_empty(), "called after its quarantine: {after:?}");
}

/// A fuel budget given to one plugin meters that plugin only.
#[tokio::test]
async fn a_fuel_budget_applies_to_its_plugin_only() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    hostile(&plugins, "loop-activating");
    let session = custom_session(
        &plugins,
        |runtime| {
            let fuel = LimitOverrides { fuel: Some(5_000_000), ..LimitOverrides::default() };
            runtime.plugin_limits.insert("hostile".into(), fuel);
        },
        |_| {},
    );
    let cause = quarantine_in(&session, "loop-activating", Stopped::DuringPlay).await;
    assert!(cause.contains("exhausted its fuel budget (5000000 units per call)"), "{cause}");
}

/// The properties a plugin writes are host memory it holds: bounded per plugin, and gone with the plugin —
/// also those it wrote on components that stay.
#[tokio::test]
async fn properties_a_plugin_writes_are_bounded_and_leave_with_it() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let folder = hostile_named(&plugins, "hostile", "hoard-properties");
    let manifest = std::fs::read_to_string(folder.join("plugin.toml")).unwrap();
    let manifest = manifest.replace("fs.data = true\n", "fs.data = true\nwrite-properties = [\"Possession\"]\n");
    std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
    let session = custom_session(&plugins, |runtime| runtime.host_memory = 1 << 20, |_| {});
    let mut manager = play_beside_lyra(&session, "hoard-properties").await;
    assert_eq!(manager.live_features(), ["hostile", "lyra-character"], "refusals are recoverable");
    let warnings = hostile_lines(&session, LogLevel::Warn);
    assert!(warnings.iter().any(|l| l == "hoard note on the game's component: Ok(())"), "{warnings:?}");
    let hoarded = warnings.iter().find(|l| l.starts_with("hoarded")).expect("it was stopped");
    assert!(
        hoarded.starts_with("hoarded 14 properties") && hoarded.contains("over its budget of 1048576"),
        "{hoarded}"
    );
    let pawn = world::lock(manager.world()).actors_of_class("Character").unwrap()[0];
    manager.end_play().await.unwrap();
    let w = world::lock(manager.world());
    assert_eq!(w.property(pawn, "Possession", "hoarded-note").unwrap(), None, "its write left with it");
    assert!(w.property(pawn, "Possession", "controller").unwrap().is_some(), "the game's own stays");
}

/// Limits a library user sets beyond what the configuration file accepts are held within range, never a panic.
#[tokio::test]
async fn out_of_range_limits_set_by_hand_do_not_panic() {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let session = custom_session(
        &plugins,
        |runtime| {
            runtime.call_deadline = Duration::MAX;
            runtime.instantiate_deadline = Duration::MAX;
            runtime.fuel = Some(u64::MAX);
        },
        |_| {},
    );
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&["lyra-character"]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    play_one_player(&mut manager, "out-of-range limits");
    manager.end_play().await.unwrap();
    assert_eq!(manager.report().failures, []);
}

/// A pooled slot never shows one plugin another's bytes: a plugin that filled 64 grown pages with a mark goes,
/// and another instance of the same component (which the pool puts in the slot the first left) grows as many
/// and finds no mark anywhere in its memory, ten times over. (The pool resets a slot by zeroing and decommitting
/// its pages; wasmtime's PAGEMAP_SCAN reset, which missed dirty pages that were swapped out, is off.)
#[tokio::test]
async fn a_pooled_slot_never_shows_a_plugin_the_previous_ones_bytes() {
    use gamefeature_host::live::{Command, LiveWorld};
    let plugins = PluginDir::with(&[]);
    hostile_named(&plugins, "marker", "mark-memory");
    hostile_named(&plugins, "reader", "read-memory");
    let session = session(&plugins);
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&[]));
    let mut manager = session.create_world("w", NetMode::Standalone);
    manager.load(&path).await.unwrap();
    let mut live = LiveWorld::new(manager, &session);
    for _ in 0..10 {
        for (plugin, command) in [("marker", "activate"), ("marker", "deactivate"), ("reader", "activate")] {
            live.execute(&format!("{command} {plugin}").parse::<Command>().unwrap()).await.unwrap();
        }
        live.execute(&Command::Deactivate("reader".into())).await.unwrap();
    }
    let marked = session.timeline().texts(&track::instance("marker", "w"), EventKind::Log(LogLevel::Info));
    assert_eq!(marked.iter().filter(|l| *l == "marked 64 pages").count(), 10, "{marked:?}");
    let read = session.timeline().texts(&track::instance("reader", "w"), EventKind::Log(LogLevel::Info));
    let found: Vec<&String> = read.iter().filter(|l| l.starts_with("found the previous tenant's mark")).collect();
    assert_eq!(found.len(), 10, "{read:?}");
    assert!(found.iter().all(|l| l.starts_with("found the previous tenant's mark 0 times")), "{found:?}");
    live.into_manager().end_play().await.unwrap();
}
