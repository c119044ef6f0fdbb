//! `gfhost` as a user runs it: the default experience from a plugin folder, its timeline and trace, the compile
//! cache on the second run, and the listing commands.

use std::path::Path;
use std::process::{Command, Output};

use gamefeature_plugin_artifacts::*;

fn gfhost(args: &[&str], plugins: &Path, cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .arg("--plugins")
        .arg(plugins)
        .arg("--cache-dir")
        .arg(cache)
        // Wall-clock deadlines must not trip when the machine running the tests is busy.
        .args(["--call-deadline-ms", "1000"])
        .arg("--config")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml"))
        // The options go before the command: they apply to every command that takes them.
        .args(args)
        .env_remove("GFHOST_LOG")
        .output()
        .expect("running gfhost")
}

/// A folder of a modder's own with an empty `plugins/` in it, as `gfhost new` starts from.
fn modder_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::TempDir::new().unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    (root, plugins)
}

/// `gfhost` run from a modder's folder on its `plugins`.
fn gfhost_as_modder(root: &Path, plugins: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .arg("--plugins")
        .arg(plugins)
        .arg("--cache-dir")
        .arg(shared_cache())
        // The options go before the command: they apply to every command that takes them.
        .args(args)
        .current_dir(root)
        // Rust plugins build in the examples' target directory, which holds the SDK built for wasm32-wasip2.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("GFHOST_LOG")
        .output()
        .expect("running gfhost")
}

/// The compile cache the tests share (see `shared_cache`), for tests that are not about the cache.
struct SharedCache(std::path::PathBuf);

impl SharedCache {
    fn new() -> Self {
        SharedCache(shared_cache())
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The repository's default experience, with its data, copied beside a plugin folder of the plugins it uses.
fn default_setup() -> (PluginDir, ExperienceDir) {
    (PluginDir::with(&DEFAULT_PLUGINS), default_experience())
}

#[test]
fn run_prints_the_timeline_writes_a_trace_and_uses_the_cache_the_second_time() {
    let (plugins, experiences) = default_setup();
    let cache = tempfile::TempDir::new().unwrap();
    let experience = experiences.path().join("default.toml");
    let trace = experiences.path().join("t.json");
    let args = ["run", experience.to_str().unwrap(), "--trace", trace.to_str().unwrap()];

    let first = gfhost(&args, plugins.path(), cache.path());
    let text = stdout(&first);
    assert!(first.status.success(), "{text}\n{}", String::from_utf8_lossy(&first.stderr));
    let states: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("experience@main") && l.contains("=>"))
        .map(|l| l.rsplit("=> ").next().unwrap())
        .collect();
    assert_eq!(
        states,
        ["Unloaded", "Loading", "LoadingGameFeatures", "ExecutingActions", "Loaded", "Deactivating", "Unloaded"]
    );
    assert!(text.contains("components: 0 loaded from cache, 10 compiled"), "{text}");
    assert!(text.contains("after end of play: nothing left"), "{text}");
    // Each pawn goes through the seed's flow: stalled until its data arrives, then all the way.
    for line in [
        "lazy components: 0 created, 200 avoided (never needed)",
        "#202.0 Hero -> InitState.GameplayReady",
        "#205.0 PawnExtension -> InitState.GameplayReady",
        "pawn 202: Hero waits for its player state",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }

    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    for state in &states {
        assert!(
            events.iter().any(|e| e["ph"] == "X" && e["name"] == *state && e["ts"].is_number() && e["dur"].is_number()),
            "trace has {state}"
        );
    }
    for plugin_state in ["Registering", "Loading", "Activating", "Active", "Deactivating", "Installed"] {
        assert!(events.iter().any(|e| e["ph"] == "X" && e["name"] == plugin_state), "trace has {plugin_state}");
    }

    let second = gfhost(&args, plugins.path(), cache.path());
    let text = stdout(&second);
    assert!(second.status.success(), "{text}\n{}", String::from_utf8_lossy(&second.stderr));
    assert!(text.contains("components: 10 loaded from cache, 0 compiled"), "{text}");
    assert!(text.lines().any(|l| l.contains("plugin:shooter-core ") && l.contains("~ loaded from cache in")), "{text}");
}

#[test]
fn run_reports_failures_and_exits_non_zero() {
    let plugins = PluginDir::with(&[FAILING_ACTIVATION]);
    let experiences = ExperienceDir::new();
    let experience = experiences.write("e.toml", "[experience]\nname = \"e\"\nfeatures = [\"failing-activation\"]\n");
    let cache = tempfile::TempDir::new().unwrap();
    let output = gfhost(&["run", experience.to_str().unwrap()], plugins.path(), cache.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("1 failure(s):"), "{text}");
    assert!(
        text.contains("failing-activation failed during Activating: on-activating: required map data is missing"),
        "{text}"
    );
}

/// What makes a run mean something else than its experience says is a failure: a plugin name installed twice
/// (which one ran?) exits 2 with the cause listed; a pawn class nobody declares is refused naming the file.
#[test]
fn run_fails_on_a_plugin_installed_twice_and_on_an_unknown_pawn_class() {
    let plugins = PluginDir::with(&[EVENT_SINK]);
    let copy = plugins.path().join("event-sink-copy");
    std::fs::create_dir_all(&copy).unwrap();
    for file in ["plugin.toml", "event_sink.wasm"] {
        std::fs::copy(plugins.folder(&EVENT_SINK).join(file), copy.join(file)).unwrap();
    }
    let experiences = ExperienceDir::new();
    let experience = experiences.write("e.toml", "[experience]\nname = \"e\"\nfeatures = [\"event-sink\"]\n");
    let cache = SharedCache::new();
    let output = gfhost(&["run", experience.to_str().unwrap()], plugins.path(), cache.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("plugin discovery: plugin \"event-sink\" is installed twice"), "{text}");

    std::fs::remove_dir_all(&copy).unwrap();
    let unknown = experiences.write(
        "unknown.toml",
        "[experience]\nname = \"e\"\nfeatures = [\"event-sink\"]\n[pawn-data]\npawn-class = \"Nonexistent\"\n",
    );
    let output = gfhost(&["run", unknown.to_str().unwrap()], plugins.path(), cache.path());
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{}", stdout(&output));
    assert!(errors.contains("unknown.toml: [pawn-data] pawn-class \"Nonexistent\" is neither"), "{errors}");
}

/// `gfhost ticket` signs a join ticket as a matchmaker would; a server holding the same key accepts it.
#[test]
fn ticket_signs_a_join_ticket_the_key_verifies() {
    use gamefeature_host::net::ticket::{unix_now, TicketKey};
    let dir = tempfile::TempDir::new().unwrap();
    let key_file = dir.path().join("ticket.key");
    std::fs::write(&key_file, [9u8; 32]).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .args(["ticket", "--player", "p-7", "--name", "Ada", "--match-id", "m-1", "--valid-for", "60", "--key-file"])
        .arg(&key_file)
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    let ticket = TicketKey::new(vec![9; 32]).unwrap().verify(text.trim(), unix_now(), Some("m-1")).unwrap();
    assert_eq!((ticket.player.as_str(), ticket.name.as_str()), ("p-7", "Ada"));
    assert!(ticket.expires <= unix_now() + 60);
    std::fs::write(&key_file, b"short").unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .args(["ticket", "--player", "p", "--key-file"])
        .arg(&key_file)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("at least 32 bytes"));
}

/// `--log-format json`: the host's log is one JSON object a line, for log collectors.
#[test]
fn the_host_log_can_be_json_lines() {
    let plugins = PluginDir::with(&[EVENT_SINK]);
    let experiences = ExperienceDir::new();
    let experience = experiences.write("e.toml", "[experience]\nname = \"e\"\nfeatures = [\"event-sink\"]\n");
    let cache = SharedCache::new();
    let output = Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .args(["--log-format", "json", "run", experience.to_str().unwrap(), "--plugins"])
        .arg(plugins.path())
        .arg("--cache-dir")
        .arg(cache.path())
        .env("GFHOST_LOG", "info")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stdout(&output));
    let log = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = log.lines().collect();
    assert!(!lines.is_empty(), "something was logged");
    for line in lines {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(event["level"].is_string() && event["timestamp"].is_string(), "{line}");
    }
}

#[test]
fn run_shows_a_quarantine_in_the_timeline_and_the_trace() {
    let (plugins, experiences) = hostile_beside_lyra("panic-activating");
    let experience = experiences.path().join("e.toml");
    let trace = experiences.path().join("t.json");
    let cache = tempfile::TempDir::new().unwrap();
    let args = ["run", experience.to_str().unwrap(), "--trace", trace.to_str().unwrap()];
    let output = gfhost(&args, plugins.path(), cache.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    let quarantine = "quarantined: on-activating panicked or aborted (unreachable executed)";
    assert!(text.lines().any(|l| l.contains("plugin:hostile") && l.contains(quarantine)), "{text}");
    assert!(text.contains("hostile plugin panics on purpose in activating"), "its stderr is in the log: {text}");
    assert!(std::fs::read_to_string(&trace).unwrap().contains(quarantine));
    // The neighbour carried on: its pawn reached the last init state.
    assert!(text.contains("InitState.GameplayReady"), "{text}");
}

#[test]
fn a_missing_experience_is_a_clear_error() {
    let plugins = PluginDir::with(&[]);
    let cache = tempfile::TempDir::new().unwrap();
    let output = gfhost(&["run", "no/such/experience.toml"], plugins.path(), cache.path());
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("experience file no/such/experience.toml not found"), "{stderr}");
}

#[test]
fn plugins_lists_manifests_and_inspect_shows_the_interface() {
    let (plugins, _) = default_setup();
    let cache = SharedCache::new();
    let listing = gfhost(&["plugins"], plugins.path(), cache.path());
    let text = stdout(&listing);
    assert!(listing.status.success(), "{text}");
    assert!(text.contains("10 plugin(s)"), "{text}");
    assert!(text.contains("shooter-core 0.1.0  [Installed]"), "{text}");
    // What each plugin asked for, what the repository's gfhost.toml grants it, and its limits (the CLI's
    // --call-deadline-ms 1000 overrides the file's 10 ms).
    let lyra = text.split("\n\n").find(|p| p.starts_with("lyra-character")).expect("lyra-character is listed");
    assert!(lyra.contains("  declares: send-events\n  granted: send-events\n"), "{lyra}");
    assert!(
        lyra.contains("  limits: call deadline 1s, instantiation 1s, memory 64 MiB, 100000 world changes"),
        "{lyra}"
    );
    let shooter = text.split("\n\n").find(|p| p.starts_with("shooter-core")).expect("shooter-core is listed");
    assert!(shooter.contains("  declares: nothing\n  granted: nothing\n"), "{shooter}");
    assert!(text.contains("depends on: base-gameplay (activated first)"), "{text}");
    assert!(text.contains("action: add-components NameplateComponent -> Character"), "{text}");

    let inspect = gfhost(&["inspect", "shooter-core"], plugins.path(), cache.path());
    let text = stdout(&inspect);
    assert!(inspect.status.success(), "{text}");
    assert!(text.contains("built against: gamefeature:plugin@0.2.0 (manifest: api = \"0.2.0\")"), "{text}");
    assert!(text.lines().any(|l| l.contains("gamefeature:plugin/actors@0.2.0") && l.ends_with(" ok")), "{text}");
    assert!(text.lines().any(|l| l.contains("gamefeature:plugin/lifecycle@0.2.0") && l.ends_with(" ok")), "{text}");
}

/// A plugin as the hostile fixture, misbehaving as `behaviour` says, beside lyra-character in an experience.
fn hostile_beside_lyra(behaviour: &str) -> (PluginDir, ExperienceDir) {
    let plugins = PluginDir::with(&[LYRA_CHARACTER]);
    let folder = plugins.add_custom(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
         [bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n",
        Some(&HOSTILE),
    );
    std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
    let experiences = ExperienceDir::new();
    experiences
        .write("e.toml", "[experience]\nname = \"e\"\nfeatures = [\"hostile\", \"lyra-character\"]\n[pawn-data]\npawn-class = \"Character\"\n");
    (plugins, experiences)
}

/// Every failure reaches the summary and the exit status, whatever the phase: in play, at deactivation, at
/// unloading. A plugin quarantined while playing is not listed among those active at the end.
#[test]
fn failures_after_loading_reach_the_summary_and_the_exit_status() {
    for (behaviour, during) in [
        ("panic-event", "hostile failed during Playing: handle-extension-events: trapped: panicked"),
        ("panic-deactivating", "hostile failed during Deactivating: on-deactivating: trapped: panicked"),
        ("panic-unloading", "hostile failed during Unloading: on-unloading: trapped: panicked"),
    ] {
        let (plugins, experiences) = hostile_beside_lyra(behaviour);
        let cache = tempfile::TempDir::new().unwrap();
        let trace = experiences.path().join("t.json");
        let experience = experiences.path().join("e.toml");
        let args = ["run", experience.to_str().unwrap(), "--trace", trace.to_str().unwrap()];
        let output = gfhost(&args, plugins.path(), cache.path());
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(2), "{behaviour}: {text}");
        let summary = text.split("failure(s):").nth(1).unwrap_or_default();
        assert!(summary.contains(during), "{behaviour}: {during} in {text}");
        assert!(std::fs::read_to_string(&trace).unwrap().contains(during), "{behaviour}: in the trace");
        let active = text.lines().find(|l| l.contains("plugins active in the world at end of play")).unwrap();
        assert_eq!(active.contains("hostile"), behaviour != "panic-event", "{behaviour}: {active}");
    }
}

#[test]
fn a_missing_bundle_asset_names_its_cause_once() {
    let plugins = PluginDir::with(&[]);
    let experiences = ExperienceDir::new();
    let experience =
        experiences.write("e.toml", "[experience]\nname = \"e\"\n[bundles.Equipped]\ntuning = \"data/tuning.toml\"\n");
    let cache = tempfile::TempDir::new().unwrap();
    let output = gfhost(&["run", experience.to_str().unwrap()], plugins.path(), cache.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("asset \"tuning\""), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

/// Flags are checked as the configuration file is: nothing the user types can hang or panic the host.
#[test]
fn bad_flags_are_refused_before_anything_runs() {
    let plugins = PluginDir::with(&[]);
    let cache = tempfile::TempDir::new().unwrap();
    for args in [
        &["run", "--chaos-delay", "1e9,0"][..],
        &["run", "--chaos-delay=inf,0"],
        &["run", "--chaos-delay=-1,0"],
        &["run", "--chaos-delay=NaN,0"],
        &["run", "--call-deadline-ms", "0"],
        &["run", "--call-deadline-ms", "18446744073709551615"],
        &["run", "--clients", "2", "--seconds", "inf"],
        &["run", "--clients", "2", "--seconds=-1"],
        &["client", "--seconds", "NaN"],
        &["server", "--tick-rate", "0"],
        &["server", "--listen", "not-an-address"],
    ] {
        let output = gfhost(args, plugins.path(), cache.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error: invalid value"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn host_log_lines_have_no_colour_codes_outside_a_terminal() {
    let (plugins, experiences) = hostile_beside_lyra("panic-activating");
    let cache = tempfile::TempDir::new().unwrap();
    let experience = experiences.path().join("e.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .args(["run", experience.to_str().unwrap(), "--plugins", plugins.path().to_str().unwrap()])
        .arg("--cache-dir")
        .arg(cache.path())
        .env("GFHOST_LOG", "info")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("INFO"), "the host logged: {stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr}");
}

/// A component that does not fit the world is shown beside what the world wants: each mismatch named.
#[test]
fn inspect_shows_a_misfit_component_beside_the_world() {
    let plugins = PluginDir::with(&[WRONG_WIT_VERSION]);
    let cache = tempfile::TempDir::new().unwrap();
    let output = gfhost(&["inspect", "wrong-wit-version"], plugins.path(), cache.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.lines().any(|l| l.contains("gamefeature:plugin/log@0.9.0") && l.contains("NO: version 0.9.0")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.contains("gamefeature:plugin/lifecycle@0.2.0")
            && l.contains("NO: exported as gamefeature:plugin/lifecycle@0.9.0")),
        "{text}"
    );
    assert!(text.contains("does not fit: component file"), "{text}");
}

/// The README's path for a newcomer, in each language: `gfhost new --lang L`, name the plugin in an experience,
/// `gfhost build`, `gfhost run` — and the plugin's own log lines are in the timeline of that first run; `gfhost
/// test` runs the scenario `gfhost new` wrote. A source
/// edited after the build is reported as newer than the component.
#[test]
fn a_new_plugin_in_each_language_builds_loads_and_logs_on_the_first_run() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    let languages = [("rust", "src/lib.rs"), ("python", "plugin.py"), ("js", "plugin.js"), ("c", "plugin.c")];
    for (language, _) in languages {
        let created = gfhost_in(&["new", &format!("hello-{language}"), "--lang", language]);
        assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    }
    let built = gfhost_in(&["build"]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    for (language, _) in languages {
        assert!(stdout(&built).contains(&format!("hello-{language}: ")), "{}", stdout(&built));
        assert!(plugins.join(format!("hello-{language}/hello_{language}.wasm")).is_file(), "{language}");
    }

    let experience = root.path().join("e.toml");
    std::fs::write(
        &experience,
        "[experience]\nname = \"e\"\nfeatures = [\"hello-rust\", \"hello-python\", \"hello-js\", \"hello-c\"]\n\
         [pawn-data]\npawn-class = \"Character\"\n",
    )
    .unwrap();
    let run = gfhost_in(&["run", experience.to_str().unwrap()]);
    let text = stdout(&run);
    assert!(run.status.success(), "{text}\n{}", String::from_utf8_lossy(&run.stderr));
    for (language, _) in languages {
        assert!(text.contains(&format!("hello from hello-{language} in main with 0 pawns")), "{language}: {text}");
        assert!(text.contains(&format!("hello-{language} greets character 2")), "{language}: {text}");
    }

    // The scenario `gfhost new` wrote beside each plugin passes; one whose expectation does not hold fails,
    // naming its step and why, and `gfhost test` exits non-zero.
    for (language, _) in languages {
        let tested = gfhost_in(&["test", &format!("hello-{language}")]);
        let report = stdout(&tested);
        assert!(tested.status.success(), "{language}: {report}{}", String::from_utf8_lossy(&tested.stderr));
        assert!(report.contains("  ok    says hello") && report.contains("1 passed, 0 failed"), "{language}: {report}");
    }
    let wrong =
        "[scenario]\nname = \"says goodbye\"\n[[step]]\nspawn-players = 1\n[[step]]\nexpect-log = \"goodbye\"\n";
    std::fs::write(plugins.join("hello-c/tests/goodbye.toml"), wrong).unwrap();
    let tested = gfhost_in(&["test", "hello-c"]);
    let report = stdout(&tested);
    assert_eq!(tested.status.code(), Some(1), "{report}");
    assert!(report.contains("FAIL  tests/goodbye.toml: step 2"), "{report}");
    assert!(report.contains("no line of hello-c's log contains \"goodbye\""), "{report}");
    assert!(report.contains("1 passed, 1 failed"), "{report}");

    // Files touched but unchanged (an edit undone, a `git checkout`): `gfhost build` would call the Python,
    // JavaScript and C plugins fresh (their inputs' digest is what it recorded), and so does every other command;
    // a Rust plugin is judged by the times, as cargo judges it.
    for (language, source) in languages {
        let folder = plugins.join(format!("hello-{language}"));
        let later = std::fs::metadata(folder.join(format!("hello_{language}.wasm"))).unwrap().modified().unwrap()
            + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(folder.join(source)).unwrap().set_modified(later).unwrap();
    }
    let listing = gfhost_in(&["plugins"]);
    let stderr = String::from_utf8_lossy(&listing.stderr);
    assert!(stderr.contains("hello_rust.wasm is older than") && stderr.contains("lib.rs"), "{stderr}");
    for language in ["python", "js", "c"] {
        assert!(!stderr.contains(&format!("hello_{language}.wasm")), "{language}'s sources are as built: {stderr}");
    }
    // An edit after the build: the component no longer matches its sources, and gfhost says so.
    for (language, source) in &languages[1..] {
        let file = plugins.join(format!("hello-{language}")).join(source);
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str(if *language == "python" { "\n# edited\n" } else { "\n// edited\n" });
        std::fs::write(&file, text).unwrap();
    }
    let listing = gfhost_in(&["plugins"]);
    let stderr = String::from_utf8_lossy(&listing.stderr);
    for language in ["python", "js", "c"] {
        let stale = format!("hello_{language}.wasm was built from other sources than these");
        assert!(
            stderr.lines().any(|l| l.contains(&stale) && l.contains(&format!("plugin hello-{language}"))),
            "{stderr}"
        );
    }
    // Inspecting one says so too.
    let inspect = gfhost_in(&["inspect", "hello-js"]);
    let stderr = String::from_utf8_lossy(&inspect.stderr);
    assert!(stderr.contains("hello_js.wasm was built from other sources than these"), "{stderr}");
    // `gfhost test` builds a stale plugin before testing it; then it is fresh again.
    std::fs::remove_file(plugins.join("hello-c/tests/goodbye.toml")).unwrap();
    let tested = gfhost_in(&["test", "hello-c"]);
    let report = stdout(&tested);
    assert!(tested.status.success(), "{report}{}", String::from_utf8_lossy(&tested.stderr));
    assert!(report.contains("building hello-c first: ") && report.contains("1 passed, 0 failed"), "{report}");
    let listing = gfhost_in(&["plugins"]);
    assert!(!String::from_utf8_lossy(&listing.stderr).contains("hello_c.wasm"), "built again: fresh");
    // Every plugin of the folder in one command, for CI: the stale ones built first.
    let tested = gfhost_in(&["test", plugins.to_str().unwrap()]);
    let report = stdout(&tested);
    assert!(tested.status.success(), "{report}{}", String::from_utf8_lossy(&tested.stderr));
    assert!(report.contains("tested 4 plugin(s) in ") && report.contains(": 4 passed, 0 failed"), "{report}");
    assert!(report.contains("building hello-rust first: "), "{report}");
    let inspect = gfhost_in(&["inspect", "hello-rust"]);
    assert!(stdout(&inspect).contains("calls: direct (wasmtime's synchronous API)"), "{}", stdout(&inspect));
    // A plugin never built is built first too.
    assert!(gfhost_in(&["new", "unbuilt", "--lang", "c"]).status.success());
    let tested = gfhost_in(&["test", "unbuilt"]);
    let report = stdout(&tested);
    assert!(tested.status.success(), "{report}{}", String::from_utf8_lossy(&tested.stderr));
    assert!(report.contains("building unbuilt first: ") && report.contains("was never built"), "{report}");
}

#[test]
fn new_refuses_a_bad_name_and_an_existing_folder() {
    let plugins = tempfile::TempDir::new().unwrap();
    let cache = tempfile::TempDir::new().unwrap();
    let bad = gfhost(&["new", "Hello World"], plugins.path(), cache.path());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a valid plugin name"));
    assert!(gfhost(&["new", "twice"], plugins.path(), cache.path()).status.success());
    let again = gfhost(&["new", "twice"], plugins.path(), cache.path());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

/// `gfhost play --script`: a world that keeps running while features come and go.
#[test]
fn play_runs_a_script_of_live_changes() {
    let (plugins, experiences) = default_setup();
    let extra = tempfile::TempDir::new().unwrap();
    let event_sink = PluginDir::with(&[EVENT_SINK]);
    let extra_plugin = extra.path().join("event-sink");
    std::fs::rename(event_sink.folder(&EVENT_SINK), &extra_plugin).unwrap();
    let script = experiences.write(
        "script.txt",
        &format!(
            "# a session\nfeatures\nstate\ndeactivate input-binding\nstate\nactivate input-binding\nspawn 1\n\
             reload lyra-character\nstate\ninstall {}\nactivate event-sink\nuninstall event-sink\nactivate nobody\n\
             dance\nquit\nstate\n",
            extra_plugin.display()
        ),
    );
    let cache = SharedCache::new();
    let experience = experiences.path().join("default.toml");
    let recording = experiences.path().join("live.gfrec");
    let record = ["--record", recording.to_str().unwrap()];
    let args = [&["play", experience.to_str().unwrap(), "--script", script.to_str().unwrap()][..], &record].concat();
    let output = gfhost(&args, plugins.path(), cache.path());
    let text = stdout(&output);
    // Two lines of the script were refused (a plugin not installed, a command that does not exist): the run
    // says so and fails, the world having run all the same.
    assert_eq!(output.status.code(), Some(1), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    // The session replays from its recording alone: every command, the reload, the install (of a folder
    // elsewhere, which the replay follows only when told to) and uninstall.
    let args = ["replay", recording.to_str().unwrap(), "--expect-same", "--follow-recorded"];
    let replay = gfhost(&args, plugins.path(), cache.path());
    let replayed = stdout(&replay);
    assert!(replay.status.success(), "{replayed}\n{}", String::from_utf8_lossy(&replay.stderr));
    assert!(replayed.contains("the same: ") && !replayed.contains("note: "), "{replayed}");
    for expected in [
        "> features",
        "lyra-character 0.1.0  [Active]  (in this world)",
        "input-binding deactivated",
        "input-binding active",
        "spawned 1 player(s)",
        "lyra-character reloaded: 0.1.0 -> 0.1.0",
        "3 x PawnExtension InitState.GameplayReady",
        "event-sink installed from",
        "event-sink active",
        "event-sink uninstalled; compiled components held: 11 -> 10",
        "error: no plugin named \"nobody\" is installed",
        "error: unknown command \"dance\"",
        "2 script command(s) refused:\n  - activate nobody\n  - dance\n",
        "play ended; nothing failed in the world",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    assert!(!text.contains("> state\n0 actors"), "nothing runs after quit: {text}");
}

/// `gfhost play` runs its world in frames, as a server does: timers fire while a script waits (match-stats
/// counts the seconds of its match with a one-second timer).
#[test]
fn play_ticks_the_world_so_timers_fire() {
    let (plugins, experiences) = default_setup();
    let script = experiences.write("script.txt", "wait 3500\nquit\n");
    let cache = SharedCache::new();
    let experience = experiences.path().join("default.toml");
    let args = ["play", experience.to_str().unwrap(), "--script", script.to_str().unwrap()];
    let output = gfhost(&args, plugins.path(), cache.path());
    let text = stdout(&output);
    assert!(output.status.success(), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    let seconds: u32 = text
        .split("match over after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("match-stats reports its match: {text}"));
    // Game time is frames, not wall time: on a busy machine fewer frames may pass, never none.
    assert!((1..=4).contains(&seconds), "{seconds} s of match in 3.5 s of play: {text}");
}

/// A `gfhost` outside any checkout (installed elsewhere, run from elsewhere) finds no SDK: it says where it
/// looked and how to point it at one; with `GFHOST_HOME` it makes a Rust plugin whose SDK is that checkout's,
/// not the one it was compiled in.
#[test]
fn gfhost_outside_a_checkout_asks_for_gfhost_home_and_follows_it() {
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("bin/gfhost");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    if std::fs::hard_link(env!("CARGO_BIN_EXE_gfhost"), &copy).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_gfhost"), &copy).unwrap();
    }
    let mods = elsewhere.path().join("mods");
    std::fs::create_dir_all(&mods).unwrap();
    let new = |name: &str, home: Option<&Path>| {
        let mut command = Command::new(&copy);
        command.current_dir(elsewhere.path()).args(["new", name, "--lang", "rust", "--dir"]).arg(&mods);
        command.env_remove("GFHOST_HOME");
        if let Some(home) = home {
            command.env("GFHOST_HOME", home);
        }
        command.output().unwrap()
    };
    let lost = new("lost", None);
    let said = String::from_utf8_lossy(&lost.stderr);
    assert!(!lost.status.success(), "{said}");
    assert!(said.contains("finds no gamefeature checkout") && said.contains("set GFHOST_HOME"), "{said}");

    let home = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap();
    let found = new("far", Some(&home));
    assert!(found.status.success(), "{}", String::from_utf8_lossy(&found.stderr));
    let cargo_toml = std::fs::read_to_string(mods.join("far/Cargo.toml")).unwrap();
    let sdk = cargo_toml.split("gamefeature-sdk = { path = \"").nth(1).and_then(|rest| rest.split('"').next()).unwrap();
    let sdk = std::fs::canonicalize(mods.join("far").join(sdk)).unwrap();
    assert_eq!(sdk, home.join("guest-sdk"), "{cargo_toml}");

    let wrong = new("wrong", Some(elsewhere.path()));
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success() && said.contains("holds no gamefeature checkout"), "{said}");
}

/// A C plugin that builds with a warning shows it: the build succeeds, and clang's warning is on standard error
/// with the plugin's name.
#[test]
fn a_c_plugin_s_warnings_show_when_its_build_succeeds() {
    let (root, plugins) = modder_folder();
    let created = gfhost_as_modder(root.path(), &plugins, &["new", "warned", "--lang", "c"]);
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let source = plugins.join("warned/plugin.c");
    let mut text = std::fs::read_to_string(&source).unwrap();
    text.push_str("\nint warned_helper(void) {\n    int never_read = 1;\n    return 0;\n}\n");
    std::fs::write(&source, text).unwrap();
    let built = gfhost_as_modder(root.path(), &plugins, &["build"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "{stderr}");
    assert!(stderr.lines().any(|l| l.starts_with("plugin warned: clang: ") && l.contains("never_read")), "{stderr}");
}

/// `gfhost play --only PLUGIN` prints that plugin's lines and leaves out the other plugins' chatter; a plugin
/// that is not installed is refused, naming those that are.
#[test]
fn play_only_shows_the_named_plugin_s_lines() {
    let (plugins, experiences) = default_setup();
    let script = experiences.write("script.txt", "wait 1500\nquit\n");
    let cache = SharedCache::new();
    let experience = experiences.path().join("default.toml");
    let play = |only: &str| {
        let args = ["play", experience.to_str().unwrap(), "--script", script.to_str().unwrap(), "--only", only];
        gfhost(&args, plugins.path(), cache.path())
    };
    let output = play("announcer");
    let text = stdout(&output);
    assert!(output.status.success(), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    let plugin_lines: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert!(plugin_lines.iter().any(|l| l.starts_with("[announcer@main] ")), "{text}");
    assert!(plugin_lines.iter().all(|l| l.starts_with("[announcer")), "only the announcer's lines: {plugin_lines:#?}");

    let everyone = gfhost(
        &["play", experience.to_str().unwrap(), "--script", script.to_str().unwrap()],
        plugins.path(),
        cache.path(),
    );
    assert!(stdout(&everyone).contains("[match-stats@main] "), "without --only, every plugin's lines show");

    // The console's `only` does the same while play goes on, and a bare `only` shows everyone again.
    let switching =
        experiences.write("switching.txt", "only anouncer\nonly announcer\nwait 1500\nonly\nwait 1500\nquit\n");
    let args = ["play", experience.to_str().unwrap(), "--script", switching.to_str().unwrap()];
    let text = stdout(&gfhost(&args, plugins.path(), cache.path()));
    assert!(text.contains("error: only anouncer: no such plugin is installed (installed: "), "{text}");
    let (_, filtered) = text.split_once("showing what announcer say(s)").expect("`only NAME` answered");
    let (filtered, everyone) = filtered.split_once("showing every plugin's lines").expect("`only` answered");
    let filtered: Vec<&str> = filtered.lines().filter(|l| l.starts_with('[')).collect();
    assert!(filtered.iter().all(|l| l.starts_with("[announcer")), "{filtered:#?}");
    assert!(everyone.lines().any(|l| l.starts_with('[') && !l.starts_with("[announcer")), "{everyone}");

    let unknown = play("no-such-plugin");
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains("--only no-such-plugin: no such plugin is installed") && said.contains("score-keeper"),
        "{said}"
    );
}

/// A `gfhost` that keeps running (`play`, `build --watch`) with its console on standard input, its output read
/// a line at a time. Waits are bounded by line,
/// not timed: each step waits for the line it expects (the bound only stops a broken build from hanging the
/// suite).
struct Running {
    child: std::process::Child,
    received: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(mut command: Command) -> Self {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        let mut child = command
            .env_remove("GFHOST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("running gfhost play");
        let (lines, received) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, received, seen: Vec::new() }
    }

    /// The first line from now on that `wanted` accepts.
    fn wait_for(&mut self, wanted: &dyn Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.received.recv_timeout(left) {
                Ok(line) => {
                    let found = wanted(&line);
                    self.seen.push(line);
                    if found {
                        return self.seen.last().cloned().unwrap();
                    }
                }
                Err(_) => break,
            }
        }
        panic!("the line never came; output so far:\n{}", self.seen.join("\n"));
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        self.child.stdin.as_mut().unwrap().write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// Quits, and checks gfhost ended well.
    fn quit(mut self) {
        self.send("quit");
        self.wait_for(&|l| l.starts_with("play ended"));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{}", self.seen.join("\n"));
    }
}

/// `gfhost play --watch` as a modder uses it: the game runs with its console on standard input; a plugin's
/// files change on disk and the running world picks up the new version; a broken build is refused and the old
/// version keeps playing.
#[test]
fn play_watch_reloads_a_plugin_changed_on_disk_and_refuses_a_broken_one() {
    let (plugins, experiences) = default_setup();
    let cache = SharedCache::new();
    let experience = experiences.path().join("default.toml");
    // As the README has it: the plugin folder named relative to where gfhost runs (the watcher reports
    // absolute paths; both name the same files).
    let (parent, folder) = (plugins.path().parent().unwrap(), plugins.path().file_name().unwrap());
    let mut command = Command::new(env!("CARGO_BIN_EXE_gfhost"));
    command
        .current_dir(parent)
        .args(["play", experience.to_str().unwrap(), "--watch", "--plugins"])
        .arg(folder)
        .arg("--cache-dir")
        .arg(cache.path())
        .args(["--call-deadline-ms", "1000", "--config"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml"));
    let mut play = Running::start(command);
    play.wait_for(&|l| l.contains("loaded; commands"));
    play.wait_for(&|l| l.starts_with("spawned"));

    plugins.edit_manifest(&LYRA_CHARACTER, |text| text.replace("version = \"0.1.0\"", "version = \"0.4.0\""));
    play.wait_for(&|l| l.contains("lyra-character reloaded: 0.1.0 -> 0.4.0"));

    let component = plugins.folder(&LYRA_CHARACTER).join("lyra_character.wasm");
    std::fs::write(&component, b"a build that went wrong").unwrap();
    let refused = play.wait_for(&|l| l.starts_with("error:") && l.contains("lyra-character"));
    assert!(refused.contains("lyra_character.wasm"), "names the file: {refused}");

    play.send("features");
    play.wait_for(&|l| l.contains("lyra-character 0.4.0  [Active]"));

    // A plugin installed while the game runs is watched too.
    let extra = PluginDir::with(&[EVENT_SINK]);
    play.send(&format!("install {}", extra.folder(&EVENT_SINK).display()));
    play.wait_for(&|l| l.contains("event-sink installed"));
    play.send("activate event-sink");
    play.wait_for(&|l| l.contains("event-sink active"));
    extra.edit_manifest(&EVENT_SINK, |text| text.replace("version = \"0.1.0\"", "version = \"0.5.0\""));
    play.wait_for(&|l| l.contains("event-sink reloaded: 0.1.0 -> 0.5.0"));
    play.quit();
}

/// `gfhost test lyra-character`: the example's own scenario (init states, components) passes in the default
/// game.
#[test]
fn the_lyra_example_passes_its_own_scenario() {
    let (plugins, experiences) = default_setup();
    let cache = SharedCache::new();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/lyra-character/tests");
    let copy = plugins.folder(&LYRA_CHARACTER).join("tests");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(scenarios.join("hero.toml"), copy.join("hero.toml")).unwrap();
    let game = experiences.path().join("default.toml");
    let tested =
        gfhost(&["test", "lyra-character", "--experience", game.to_str().unwrap()], plugins.path(), cache.path());
    let report = stdout(&tested);
    assert!(tested.status.success(), "{report}{}", String::from_utf8_lossy(&tested.stderr));
    assert!(report.contains("  ok    a player's hero walks its init chain to GameplayReady"), "{report}");
}

/// `gfhost build --watch`: a plugin is built again whenever one of its sources is saved.
#[test]
fn build_watch_builds_a_plugin_again_when_a_source_is_saved() {
    let (root, plugins) = modder_folder();
    assert!(gfhost_as_modder(root.path(), &plugins, &["new", "greeter", "--lang", "c"]).status.success());
    let mut command = Command::new(env!("CARGO_BIN_EXE_gfhost"));
    command.current_dir(root.path()).args(["build", "--watch"]);
    let mut build = Running::start(command);
    build.wait_for(&|l| l.starts_with("greeter: "));
    build.wait_for(&|l| l.starts_with("watching the sources of 1 plugin(s)"));
    let component = plugins.join("greeter/greeter.wasm");
    let first = std::fs::read(&component).unwrap();
    let source = plugins.join("greeter/plugin.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("hello from", "hello again from")).unwrap();
    build.wait_for(&|l| l.starts_with("greeter built"));
    assert_ne!(std::fs::read(&component).unwrap(), first, "a new component");
    build.child.kill().unwrap();
    build.child.wait().unwrap();
}

/// Rebuild on save: with `play --watch` and the default `--plugins plugins`, a saved source is built again and
/// the new version reloaded into the running world (its new log line is heard); a save that does not compile
/// shows the compiler's error and the running version plays on.
#[test]
fn play_watch_builds_a_saved_source_again_and_keeps_the_running_version_when_it_does_not_compile() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    assert!(gfhost_in(&["new", "greeter", "--lang", "c"]).status.success());
    assert!(gfhost_in(&["build"]).status.success());
    let experience = root.path().join("e.toml");
    std::fs::write(
        &experience,
        "[experience]\nname = \"e\"\nfeatures = [\"greeter\"]\n[pawn-data]\npawn-class = \"Character\"\n",
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_gfhost"));
    command.current_dir(root.path()).args(["play", "e.toml", "--watch", "--cache-dir"]).arg(shared_cache());
    let mut play = Running::start(command);
    play.wait_for(&|l| l.contains("loaded; commands"));
    play.wait_for(&|l| l.contains("hello from greeter in main"));

    let source = plugins.join("greeter/plugin.c");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("hello from", "hello again from")).unwrap();
    play.wait_for(&|l| l.starts_with("building") && l.contains("greeter"));
    play.wait_for(&|l| l.starts_with("greeter built"));
    play.wait_for(&|l| l.contains("greeter reloaded: 0.1.0 -> 0.1.0"));
    play.wait_for(&|l| l.contains("hello again from greeter in main"));

    std::fs::write(&source, "this is not C;\n").unwrap();
    let failed = play.wait_for(&|l| l.starts_with("error:"));
    assert!(failed.contains("the running version stays: plugin greeter: clang failed"), "{failed}");
    play.send("features");
    play.wait_for(&|l| l.contains("greeter 0.1.0  [Active]"));
    play.quit();
}

/// componentize-qjs (QuickJS, from the JavaScript toolchain's lockfile): built with `--sync` it loads and runs
/// (resources with methods included); built with its default, the component model's async ABI, it is refused
/// with the flag to use.
#[test]
fn componentize_qjs_output_runs_when_sync_and_is_refused_naming_the_flag_otherwise() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let qjs = repository.join("toolchains/js/node_modules/.bin/componentize-qjs");
    let plugins = tempfile::TempDir::new().unwrap();
    for (name, flags) in [("qjs-sync", &["--sync"][..]), ("qjs-async", &[][..])] {
        let folder = plugins.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        let built = Command::new(&qjs)
            .args(["--wit", repository.join("wit/0.2.0").to_str().unwrap()])
            .args(["--js", repository.join("tests/qjs/hello.js").to_str().unwrap()])
            .args(["-n", "game-feature", "--stub-wasi"])
            .args(flags)
            .args(["-o", folder.join("plugin.wasm").to_str().unwrap()])
            .output()
            .expect("running componentize-qjs (installed by ./dev setup)");
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        let manifest =
            format!("[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"plugin.wasm\"\n");
        std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
    }
    let experiences = ExperienceDir::new();
    let experience = experiences.write(
        "e.toml",
        "[experience]\nname = \"e\"\nfeatures = [\"qjs-sync\", \"qjs-async\"]\n[pawn-data]\npawn-class = \"Character\"\n",
    );
    let cache = SharedCache::new();
    let run = gfhost(&["run", experience.to_str().unwrap()], plugins.path(), cache.path());
    let text = stdout(&run);
    assert_eq!(run.status.code(), Some(2), "a plugin failed: {text}");
    assert!(text.contains("quickjs plugin active in main"), "{text}");
    assert!(text.contains("handler 7 (7): GameActorReady for actor 2"), "{text}");
    assert!(text.contains("requires the component model async feature"), "{text}");
    assert!(text.contains("build it for synchronous calls (componentize-qjs: --sync)"), "{text}");
}

/// `gfhost check`: a plugin that fits and behaves passes with its calls listed; one run without the permission
/// it needs has the denial and the failure reported; a component missing exports is refused before it runs.
#[test]
fn check_reports_calls_denials_failures_and_misfits() {
    let plugins = PluginDir::with(&[INPUT_BINDING, DAMAGEABLE_PROPS, MISSING_EXPORTS, MATCH_STATS]);
    let ungranted = tempfile::NamedTempFile::new().unwrap();
    let game = Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiences/default.toml");
    let check = |plugin: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_gfhost"))
            .args(["check", plugin, "--experience", game.to_str().unwrap()])
            .arg("--plugins")
            .arg(plugins.path())
            .arg("--cache-dir")
            .arg(shared_cache())
            .args(["--call-deadline-ms", "1000", "--config"])
            .arg(ungranted.path())
            .env_remove("GFHOST_LOG")
            .output()
            .expect("running gfhost");
        (output.status.code(), stdout(&output))
    };

    let (status, text) = check("input-binding");
    assert_eq!(status, Some(0), "{text}");
    assert!(text.contains("interface: fits gamefeature:plugin@0.2.0"), "{text}");
    // What `gfhost plugins` cannot show without loading each component: the limits fitted to it.
    assert!(
        text.contains("limits, fitted to its component: call deadline 1s,") && text.contains("memory 64 MiB"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.trim_start().starts_with("handle-extension-events") && l.contains(" us")), "{text}");
    assert!(text.contains("ok: 0 failure(s), 0 denied, 0 refused"), "{text}");

    // Timer calls are calls like any other, and what a plugin costs per frame is shown beside its budget.
    let (status, text) = check("match-stats");
    assert_eq!(status, Some(0), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("on-timers") && l.contains(" x1 ")), "{text}");
    assert!(text.contains("CPU time per frame (60 frames of its timers, deliveries and calls)"), "{text}");
    assert!(text.contains("budget 20ms"), "{text}");

    let (status, text) = check(plugins.folder(&DAMAGEABLE_PROPS).to_str().unwrap());
    assert_eq!(status, Some(2), "{text}");
    assert!(text.contains("denied calls: 1"), "{text}");
    assert!(text.contains("lacks the spawn-actors permission"), "{text}");
    assert!(text.contains("damageable-props failed during Activating"), "{text}");
    assert!(text.contains("after end of play: nothing left"), "{text}");

    let (status, text) = check("missing-exports");
    assert_eq!(status, Some(2), "{text}");
    assert!(text.contains("interface: does not fit"), "{text}");
    assert!(!text.contains("calls (slowest"), "a misfit does not run: {text}");
}

/// One plugin that does not compile does not stop `gfhost build`: the others are built, the broken one's error
/// is shown, and the build exits non-zero. A plugin loaded before it was ever built says how to build it.
#[test]
fn a_broken_plugin_does_not_stop_the_build_of_the_others() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    for name in ["good", "broken"] {
        let created = gfhost_in(&["new", name, "--lang", "c"]);
        assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    }
    let unbuilt = gfhost_in(&["inspect", "good"]);
    let said = format!("{}{}", stdout(&unbuilt), String::from_utf8_lossy(&unbuilt.stderr));
    assert!(said.contains("not found: build the plugin first (`gfhost build`)"), "{said}");
    std::fs::write(plugins.join("broken/plugin.c"), "this is not C;\n").unwrap();
    let built = gfhost_in(&["build"]);
    let errors = String::from_utf8_lossy(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{errors}");
    assert!(stdout(&built).contains("good: "), "{}", stdout(&built));
    assert!(plugins.join("good/good.wasm").is_file());
    assert!(!plugins.join("broken/broken.wasm").exists());
    assert!(errors.contains("error: plugin broken: clang failed"), "{errors}");
    assert!(errors.contains("1 build(s) failed; the other plugins were built"), "{errors}");
}

/// A JavaScript syntax error is reported at its line in the file the modder wrote, before componentize-js
/// (which would point at the end of its bundle) runs.
#[test]
fn a_javascript_syntax_error_is_reported_at_its_line() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    assert!(gfhost_in(&["new", "typo", "--lang", "js"]).status.success());
    let source = plugins.join("typo/plugin.js");
    let text = std::fs::read_to_string(&source).unwrap();
    let broken: Vec<String> =
        text.lines().enumerate().map(|(n, l)| if n == 6 { format!("{l} let = ;") } else { l.to_string() }).collect();
    std::fs::write(&source, broken.join("\n")).unwrap();
    let built = gfhost_in(&["build"]);
    let errors = String::from_utf8_lossy(&built.stderr);
    assert_eq!(built.status.code(), Some(1), "{errors}");
    assert!(errors.contains("typo/plugin.js does not parse"), "{errors}");
    assert!(errors.contains("typo/plugin.js:7") && errors.contains("SyntaxError"), "{errors}");
}

/// `gfhost build` builds a plugin again only when what it is built from changed: a second build finds it fresh
/// and leaves its component as it was (so the compile cache hits); an edited source builds it again.
#[test]
fn a_plugin_is_built_again_only_when_its_sources_change() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    assert!(gfhost_in(&["new", "steady", "--lang", "c"]).status.success());
    let first = gfhost_in(&["build"]);
    assert!(String::from_utf8_lossy(&first.stderr).contains("Building steady (C)"), "{first:?}");
    let component = plugins.join("steady/steady.wasm");
    let modified = std::fs::metadata(&component).unwrap().modified().unwrap();
    let second = gfhost_in(&["build"]);
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("Fresh steady (C)"), "{second:?}");
    assert_eq!(std::fs::metadata(&component).unwrap().modified().unwrap(), modified, "left as it was");
    let source = plugins.join("steady/plugin.c");
    let edited = std::fs::read_to_string(&source).unwrap() + "\n/* edited */\n";
    std::fs::write(&source, edited).unwrap();
    let third = gfhost_in(&["build"]);
    assert!(String::from_utf8_lossy(&third.stderr).contains("Building steady (C)"), "{third:?}");
}

/// A plugin the command line names but the plugin folders do not hold, or a plugin folder that is not there: the
/// error says where it looked and how to point at the plugin.
#[test]
fn a_plugin_not_found_says_where_it_looked_and_how_to_point_at_it() {
    let root = tempfile::TempDir::new().unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    for command in [&["inspect", "hello"][..], &["check", "hello"], &["test", "hello"]] {
        let output = gfhost_as_modder(root.path(), &plugins, command);
        let text = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command:?}");
        assert!(
            text.contains("no plugin named \"hello\" in ") && text.contains("--plugins DIR"),
            "{command:?}: {text}"
        );
    }
    let build = gfhost_as_modder(root.path(), &root.path().join("nowhere"), &["build"]);
    let text = String::from_utf8_lossy(&build.stderr);
    assert!(!build.status.success());
    assert!(text.contains("there is no folder ") && text.contains("--plugins DIR"), "{text}");
}

/// A Python plugin edited and compiled again compiles only what changed: the interpreter's functions come from
/// the function cache the first compile filled, and `inspect` says so.
#[test]
fn a_python_plugin_compiled_again_after_an_edit_reuses_the_interpreter_s_functions() {
    let (root, plugins) = modder_folder();
    let cache = tempfile::TempDir::new().unwrap();
    let gfhost_in = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_gfhost"))
            .arg("--plugins")
            .arg(&plugins)
            .arg("--cache-dir")
            .arg(cache.path())
            .args(args)
            .current_dir(root.path())
            .output()
            .expect("running gfhost");
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    gfhost_in(&["new", "edited", "--lang", "python"]);
    gfhost_in(&["build"]);
    // "compiled in 1892.5 ms (22118 of its 22680 functions compiled before, reused)"
    let reused_of = |inspected: &str| -> (u64, u64) {
        let line = inspected.lines().find(|l| l.contains("compiled in")).unwrap_or_default();
        let counts: Vec<u64> = line.split(['(', ' ']).filter_map(|word| word.parse().ok()).collect();
        match counts[..] {
            [reused, all] => (reused, all),
            _ => (0, 1),
        }
    };
    let first = gfhost_in(&["inspect", "edited"]);
    let (reused, all) = reused_of(&first);
    // Functions the component holds twice, compiled once: a minority.
    assert!(first.contains("compiled in") && reused * 2 < all, "{first}");
    let source = plugins.join("edited/plugin.py");
    let text = std::fs::read_to_string(&source).unwrap();
    std::fs::write(&source, text.replace("hello from", "hello again from")).unwrap();
    gfhost_in(&["build"]);
    let second = gfhost_in(&["inspect", "edited"]);
    let (reused, all) = reused_of(&second);
    assert!(reused * 10 >= all * 9, "{second}");
}

/// `gfhost new` writes each language's editor configuration, with which `gfhost check --types` (and the
/// language's own command: `mypy`, `tsc -p jsconfig.json`) passes the new plugin and flags a misspelt hook
/// parameter in Python, JavaScript and C; the configuration is no source of the build.
#[test]
fn check_types_flags_a_misspelt_hook_parameter_in_every_language() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    let typos = [
        (
            "python",
            "plugin.py",
            "pyproject.toml",
            "context.world_name",
            "context.wrld_name",
            "has no attribute \"wrld_name\"",
        ),
        (
            "js",
            "plugin.js",
            "jsconfig.json",
            "context.worldName",
            "context.wrldName",
            "Property 'wrldName' does not exist",
        ),
        (
            "c",
            "plugin.c",
            "compile_flags.txt",
            "(int)world_name.len",
            "(int)wrld_name.len",
            "undeclared identifier 'wrld_name'",
        ),
    ];
    for (language, _, config, ..) in typos {
        let name = format!("typed-{language}");
        let made = gfhost_in(&["new", &name, "--lang", language]);
        assert!(String::from_utf8_lossy(&made.stdout).contains(config), "{made:?}");
    }
    let checked = gfhost_in(&["check", "--types", plugins.to_str().unwrap()]);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stdout));
    let typed_c = plugins.join("typed-c");
    assert!(gfhost_in(&["build", typed_c.to_str().unwrap()]).status.success());
    let rebuilt = gfhost_in(&["build", typed_c.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&rebuilt.stderr).contains("Building"), "the configuration is no source");

    for (language, source, _, right, wrong, said) in typos {
        let name = format!("typed-{language}");
        let path = plugins.join(&name).join(source);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(right), "{language}: {text}");
        std::fs::write(&path, text.replace(right, wrong)).unwrap();
        let checked = gfhost_in(&["check", "--types", &name]);
        let printed = String::from_utf8_lossy(&checked.stdout);
        assert_eq!(checked.status.code(), Some(1), "{language}: {printed}");
        assert!(printed.contains(said), "{language}: {printed}");
    }
}

/// A plugin named by its folder, as a modder standing beside it types it (`gfhost check hello` in the folder
/// holding `hello/`): the folder is found however short its path.
#[test]
fn a_plugin_folder_named_from_beside_it_is_found() {
    let (root, plugins) = modder_folder();
    assert!(gfhost_as_modder(root.path(), &plugins, &["new", "beside", "--lang", "c"]).status.success());
    assert!(gfhost_as_modder(root.path(), &plugins, &["build"]).status.success());
    for command in [&["inspect", "beside"][..], &["check", "beside"], &["test", "beside"]] {
        let output = gfhost_as_modder(&plugins, Path::new("elsewhere"), command);
        let text = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{command:?}: {text}");
    }
}

/// What comes from outside (a file's name, an archive's entry, a registry's answer) reaches the terminal as
/// data: an error quoting it escapes its control characters rather than passing an escape sequence on.
#[test]
fn errors_show_outside_text_as_data_never_as_terminal_controls() {
    let dir = tempfile::TempDir::new().unwrap();
    let crafted = dir.path().join("pkg\u{1b}[2J\u{1b}]0;owned\u{7}.gfpkg");
    std::fs::write(&crafted, b"not an archive").unwrap();
    let output = gfhost(&["install", crafted.to_str().unwrap(), "--into", "nowhere"], dir.path(), dir.path());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(said.contains("pkg\\u{1b}[2J"), "{said:?}");
    assert!(!said.trim_end().chars().any(gamefeature_host::text::is_control), "{said:?}");
}

/// Builds of one plugin in several processes at once (two terminals, a `play --watch` beside a `gfhost build`)
/// take turns: one builds, the others find it fresh; and whatever moment a host reads the component, it reads a
/// whole one — the old or the new, never a file being written. A build killed mid-way leaves the old component
/// and nothing half-written, and the next build goes ahead.
#[test]
fn builds_in_several_processes_take_turns_and_never_show_half_a_component() {
    let (root, plugins) = modder_folder();
    let gfhost_in = |args: &[&str]| gfhost_as_modder(root.path(), &plugins, args);
    assert!(gfhost_in(&["new", "shared", "--lang", "c"]).status.success());
    assert!(gfhost_in(&["build"]).status.success());
    let component = plugins.join("shared/shared.wasm");
    let source = plugins.join("shared/plugin.c");
    let old = std::fs::read(&component).unwrap();
    let edit = |from: &str, to: &str| {
        std::fs::write(&source, std::fs::read_to_string(&source).unwrap().replace(from, to)).unwrap();
    };
    edit("hello from", "hello again from");

    let builds: Vec<std::process::Child> = (0..3)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_gfhost"))
                .args(["build", "--plugins"])
                .arg(&plugins)
                .current_dir(root.path())
                .env_remove("CARGO_TARGET_DIR")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Read the component over and over while they run: every read is a whole component.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (component, done) = (component.clone(), done.clone());
        std::thread::spawn(move || {
            let mut reads = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&component) {
                    if reads.last() != Some(&bytes) {
                        reads.push(bytes);
                    }
                }
            }
            reads
        })
    };
    let outputs: Vec<std::process::Output> = builds.into_iter().map(|b| b.wait_with_output().unwrap()).collect();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().unwrap();
    let new = std::fs::read(&component).unwrap();
    assert_ne!(new, old, "the edit was built");
    let said: Vec<String> = outputs.iter().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).collect();
    assert!(outputs.iter().all(|o| o.status.success()), "{said:?}");
    assert_eq!(said.iter().filter(|s| s.contains("Building shared (C)")).count(), 1, "{said:?}");
    assert_eq!(said.iter().filter(|s| s.contains("Fresh shared (C)")).count(), 2, "{said:?}");
    for read in &reads {
        assert!(*read == old || *read == new, "a read of {} bytes was neither component", read.len());
    }

    // Killed mid-build (once it said it is building): the component is the last whole one, and the next build
    // neither waits for the dead one nor leaves its half-written file.
    edit("hello again from", "hello once more from");
    let mut killed = Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .args(["build", "--plugins"])
        .arg(&plugins)
        .current_dir(root.path())
        .env_remove("CARGO_TARGET_DIR")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(killed.stderr.take().unwrap());
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0 && !line.contains("Building shared") {
        line.clear();
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(std::fs::read(&component).unwrap(), new, "the last whole component stays");
    let rebuilt = gfhost_in(&["build"]);
    assert!(rebuilt.status.success(), "{}", String::from_utf8_lossy(&rebuilt.stderr));
    let left: Vec<String> = std::fs::read_dir(plugins.join("shared"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".building-"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// A command's help lists the options it takes and no others: `ticket` does not offer `--no-cache`. Given
/// before the command, the options apply to every command that takes them.
#[test]
fn each_command_lists_only_the_options_it_takes() {
    let help = |command: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_gfhost")).args([command, "--help"]).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let all = ["--plugins", "--config", "--cache-dir", "--no-cache", "--call-deadline-ms"];
    let takes = |command: &str| -> &[&str] {
        match command {
            "ticket" | "keygen" | "publish" | "outdated" | "yank" | "search" | "swarm" => &[],
            "build" | "pack" | "new" => &all[..1],
            "install" | "update" => &all[..2],
            "mirror" => &all[1..2],
            _ => &all,
        }
    };
    let commands = ["run", "server", "client", "play", "replay", "bisect", "plugins", "inspect", "check", "test"];
    let packages =
        ["install", "update", "outdated", "mirror", "yank", "search", "ticket", "keygen", "publish", "swarm"];
    for command in commands.iter().chain(&["build", "pack", "new"]).chain(&packages) {
        let text = help(command);
        for option in all {
            let shown = text.contains(&format!("{option} ")) || text.contains(&format!("{option}\n"));
            assert_eq!(shown, takes(command).contains(&option), "gfhost {command} --help and {option}:\n{text}");
        }
    }
}
