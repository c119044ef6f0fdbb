//! `gfhost replay` as a modder uses it: a session recorded with `--record`, replayed the same; replayed against
//! a changed build of a plugin, stopping at the first differing checkpoint with a report that names what
//! differs; and recordings that are cut short, damaged or not recordings at all.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gamefeature_plugin_artifacts::{
    default_experience, shared_cache, ExperienceDir, PluginDir, DEFAULT_PLUGINS, HOSTILE, LYRA_CHARACTER,
};

/// A plugin in C that tallies: it asks for a `Tally` component on every character, and every 200 ms of game
/// time adds `STEP` to its count and writes it to each character's tally.
const TALLY: &str = r#"#include <gamefeature.h>

#ifndef STEP
#define STEP 1
#endif

static gf_request tallies;
static gf_handler characters;
static gf_timer ticker;
static gf_actor seen[16];
static unsigned count;
static int64_t ticks;

const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {
    (void)world_name;
    (void)net_mode;
    if (!gf_request_component("Character", "Tally", &tallies)) return gf_last_error();
    if (!gf_add_extension_handler("Character", 1, &characters)) return gf_last_error();
    if (!gf_start_timer(200000, true, 2, &ticker)) return gf_last_error();
    return NULL;
}

void gf_on_extension_event(uint32_t handler, gf_actor actor, gf_str event) {
    (void)handler;
    if (gf_str_eq(event, GF_RECEIVER_ADDED) && count < 16) seen[count++] = actor;
}

void gf_on_timer(uint32_t timer, uint32_t times, uint64_t frame) {
    (void)timer;
    (void)frame;
    ticks += STEP * times;
    for (unsigned i = 0; i < count; i++) gf_set_integer(seen[i], "Tally", "ticks", ticks);
}
"#;

const MANIFEST: &str = r#"[plugin]
name = "tally"
version = "0.1.0"
api = "0.2.0"
component = "tally.wasm"

[permissions]
component-requests = ["Character"]
write-properties = ["Tally"]
"#;

/// A modder's folder: the tally plugin built, an experience that plays it, a configuration granting it.
struct Modder {
    root: tempfile::TempDir,
}

impl Modder {
    fn new() -> Modder {
        let root = tempfile::TempDir::new().unwrap();
        let tally = root.path().join("plugins/tally");
        std::fs::create_dir_all(&tally).unwrap();
        std::fs::write(tally.join("plugin.toml"), MANIFEST).unwrap();
        std::fs::write(tally.join("plugin.c"), TALLY).unwrap();
        std::fs::write(root.path().join("tally.toml"), "[experience]\nname = \"Tally\"\nfeatures = [\"tally\"]\n")
            .unwrap();
        let grants = "[grants.tally]\ncomponent-requests = [\"Character\"]\nwrite-properties = [\"Tally\"]\n";
        std::fs::write(root.path().join("gfhost.toml"), grants).unwrap();
        std::fs::write(root.path().join("script.txt"), "wait 1500\nquit\n").unwrap();
        let modder = Modder { root };
        let built = modder.gfhost(&["build"]);
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        modder
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn gfhost(&self, args: &[&str]) -> Output {
        gfhost_in(self.root.path(), args)
    }

    /// Plays the tally experience for 1.5 s, recorded into `file`.
    fn record(&self, file: &str) -> PathBuf {
        let played = self.gfhost(&["play", "tally.toml", "--script", "script.txt", "--record", file]);
        let text = stdout(&played);
        assert!(played.status.success(), "{text}\n{}", String::from_utf8_lossy(&played.stderr));
        assert!(text.contains(&format!("to {file} (")), "{text}");
        self.path(file)
    }
}

fn gfhost_in(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gfhost"))
        .arg("--cache-dir")
        .arg(shared_cache())
        // The options go before the command: they apply to every command that takes them.
        .args(args)
        .current_dir(root)
        .env_remove("GFHOST_LOG")
        .output()
        .expect("running gfhost")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn said(output: &Output) -> String {
    format!("{}{}", stdout(output), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn a_changed_plugin_makes_the_replay_stop_at_the_first_differing_checkpoint_and_name_it() {
    let modder = Modder::new();
    modder.record("tally.gfrec");
    let same = modder.gfhost(&["replay", "tally.gfrec", "--expect-same"]);
    assert!(same.status.success(), "{}", said(&same));
    assert!(stdout(&same).contains("the same: "), "{}", said(&same));

    // The modder changes the plugin (a tally that counts twice) and replays the session against the new build,
    // from another folder, as a maintainer checks a fix.
    let changed = modder.path("changed");
    std::fs::create_dir_all(changed.join("tally")).unwrap();
    std::fs::write(changed.join("tally/plugin.toml"), MANIFEST).unwrap();
    std::fs::write(changed.join("tally/plugin.c"), TALLY.replace("#define STEP 1", "#define STEP 2")).unwrap();
    let built = modder.gfhost(&["build", "changed"]);
    assert!(built.status.success(), "{}", said(&built));
    let replay = modder.gfhost(&["replay", "tally.gfrec", "--plugins", "changed", "--expect-same"]);
    let text = stdout(&replay);
    assert_eq!(replay.status.code(), Some(1), "{}", said(&replay));
    assert!(text.contains("note: tally: replayed with another build than recorded"), "{text}");
    assert!(text.contains("the replay differs from the recording at frame "), "{text}");
    let difference =
        text.lines().find(|l| l.contains("/ Tally.ticks: recorded Integer(")).unwrap_or_else(|| panic!("{text}"));
    let (recorded, replayed) = integers(difference);
    assert_eq!(replayed, recorded * 2, "{difference}");
    assert!(text.contains("the last calls into plugins before it:\n  tally: "), "{text}");
    assert!(!text.contains("(0 checkpoints were equal before it)"), "the world after loading is the same: {text}");

    // Without --expect-same, a difference is what the replay found, not a failure.
    let found = modder.gfhost(&["replay", "tally.gfrec", "--plugins", "changed"]);
    assert!(found.status.success(), "{}", said(&found));
}

/// A replay compares what plugins say beside the world's state: a changed build whose only difference is a
/// line it logs is found, naming the plugin, the call and both lines (it replayed "the same" before).
#[test]
fn a_changed_plugin_that_only_says_something_else_makes_the_replay_differ() {
    let modder = Modder::new();
    let saying = |said: &str| {
        TALLY.replace(
            "    ticks += STEP * times;",
            &format!("    ticks += STEP * times;\n    gf_info(\"{said} %lld\", (long long)ticks);"),
        )
    };
    std::fs::write(modder.path("plugins/tally/plugin.c"), saying("counted")).unwrap();
    let built = modder.gfhost(&["build"]);
    assert!(built.status.success(), "{}", said(&built));
    modder.record("says.gfrec");
    let same = modder.gfhost(&["replay", "says.gfrec", "--expect-same", "--show-output"]);
    assert!(same.status.success() && stdout(&same).contains("the same: "), "{}", said(&same));
    assert!(
        stdout(&same).contains("[tally@main] info: counted 1\n"),
        "the replay shows what plugins said: {}",
        said(&same)
    );

    let changed = modder.path("changed");
    std::fs::create_dir_all(changed.join("tally")).unwrap();
    std::fs::write(changed.join("tally/plugin.toml"), MANIFEST).unwrap();
    std::fs::write(changed.join("tally/plugin.c"), saying("tallied")).unwrap();
    let built = modder.gfhost(&["build", "changed"]);
    assert!(built.status.success(), "{}", said(&built));
    let replay = modder.gfhost(&["replay", "says.gfrec", "--plugins", "changed", "--expect-same"]);
    let text = stdout(&replay);
    assert_eq!(replay.status.code(), Some(1), "{}", said(&replay));
    assert!(text.contains("(0 entries differ)"), "the world's state is the same: {text}");
    assert!(
        text.contains("what plugins said: tally said \"info: counted 1\" in the recording, \"info: tallied 1\" in the replay (in on-timers"),
        "{text}"
    );
}

/// The two integers of `... recorded Integer(a), replayed Integer(b)`.
fn integers(line: &str) -> (i64, i64) {
    let numbers: Vec<i64> =
        line.split("Integer(").skip(1).map(|part| part.split(')').next().unwrap().parse().unwrap()).collect();
    (numbers[0], numbers[1])
}

/// A recording is data: one that installs a plugin from a folder elsewhere and activates it is replayed from
/// the replayer's own folders, the folder it names shown and not followed, and the plugin it brought in missed
/// at the checkpoints (they list every plugin playing, console-activated ones too); `--follow-recorded` follows
/// it, and the replay is the same.
#[test]
fn a_recorded_install_from_elsewhere_is_shown_not_followed_unless_asked() {
    let modder = Modder::new();
    let elsewhere = modder.path("elsewhere/tally-copy");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("plugin.toml"), MANIFEST.replace("name = \"tally\"", "name = \"tally-copy\""))
        .unwrap();
    std::fs::copy(modder.path("plugins/tally/tally.wasm"), elsewhere.join("tally.wasm")).unwrap();
    let grants = "[grants.tally-copy]\ncomponent-requests = [\"Character\"]\nwrite-properties = [\"Tally\"]\n";
    let config = std::fs::read_to_string(modder.path("gfhost.toml")).unwrap();
    std::fs::write(modder.path("gfhost.toml"), format!("{config}{grants}")).unwrap();
    std::fs::write(modder.path("script.txt"), "install elsewhere/tally-copy\nactivate tally-copy\nwait 1000\nquit\n")
        .unwrap();
    modder.record("installs.gfrec");

    let replay = modder.gfhost(&["replay", "installs.gfrec", "--expect-same"]);
    let text = stdout(&replay);
    assert_eq!(replay.status.code(), Some(1), "{}", said(&replay));
    assert!(
        text.contains("note: the recording installs elsewhere/tally-copy, outside the plugin folders played"),
        "{text}"
    );
    assert!(text.contains("the replay differs from the recording at frame "), "{text}");

    let followed = modder.gfhost(&["replay", "installs.gfrec", "--follow-recorded", "--expect-same"]);
    assert!(followed.status.success(), "{}", said(&followed));
    assert!(stdout(&followed).contains("the same: "), "{}", said(&followed));
}

#[test]
fn a_recording_cut_short_replays_as_far_as_it_goes_and_bad_ones_are_refused_by_name() {
    let modder = Modder::new();
    let whole = std::fs::read(modder.record("whole.gfrec")).unwrap();

    std::fs::write(modder.path("cut.gfrec"), &whole[..whole.len() * 2 / 3]).unwrap();
    let cut = modder.gfhost(&["replay", "cut.gfrec", "--expect-same"]);
    assert!(cut.status.success(), "{}", said(&cut));
    assert!(stdout(&cut).contains("the session was cut short there; the replay goes as far as the recording does"));
    assert!(stdout(&cut).contains("the same: "), "{}", said(&cut));

    let mut damaged = whole.clone();
    let last = damaged.len() - 1;
    damaged[last - 2] ^= 0xff; // in the checksum of the last record
    std::fs::write(modder.path("damaged.gfrec"), &damaged).unwrap();
    let refused = modder.gfhost(&["replay", "damaged.gfrec"]);
    assert!(!refused.status.success());
    assert!(said(&refused).contains("damaged.gfrec is corrupt: record "), "{}", said(&refused));

    let mut foreign = whole.clone();
    foreign[6] = 99;
    std::fs::write(modder.path("foreign.gfrec"), &foreign).unwrap();
    let refused = modder.gfhost(&["replay", "foreign.gfrec"]);
    assert!(said(&refused).contains("foreign.gfrec is a recording of format version 99; this host reads version 1"));

    let refused = modder.gfhost(&["replay", "tally.toml"]);
    assert!(said(&refused).contains("tally.toml is not a gamefeature recording"), "{}", said(&refused));
    let refused = modder.gfhost(&["replay", "missing.gfrec"]);
    assert!(said(&refused).contains("missing.gfrec: No such file"), "{}", said(&refused));
}

/// A hostile plugin with `behaviour` beside Lyra's character, played by `gfhost` with the repository's
/// configuration and `extra` lines of it.
struct Hostile {
    plugins: PluginDir,
    experiences: ExperienceDir,
    config: PathBuf,
}

impl Hostile {
    fn new(behaviour: &str, extra: &str) -> Hostile {
        let plugins = PluginDir::with(&[LYRA_CHARACTER]);
        let manifest =
            "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
                        [bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n";
        let folder = plugins.add_custom("hostile", manifest, Some(&HOSTILE));
        std::fs::write(folder.join("behaviour.txt"), behaviour).unwrap();
        let experiences = ExperienceDir::new();
        experiences.write(
            "e.toml",
            "[experience]\nname = \"e\"\nfeatures = [\"hostile\", \"lyra-character\"]\n[pawn-data]\npawn-class = \"Character\"\n",
        );
        let repository = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml")).unwrap();
        let config = experiences.write("gfhost.toml", &format!("{repository}\n{extra}"));
        Hostile { plugins, experiences, config }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.experiences.path().join(name)
    }

    fn gfhost(&self, args: &[&std::ffi::OsStr], call_deadline_ms: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_gfhost"))
            .arg("--plugins")
            .arg(self.plugins.path())
            .arg("--cache-dir")
            .arg(shared_cache())
            .arg("--config")
            .arg(&self.config)
            .args(["--call-deadline-ms", call_deadline_ms])
            // The options go before the command: they apply to every command that takes them.
            .args(args)
            .env_remove("GFHOST_LOG")
            .output()
            .expect("running gfhost")
    }

    /// Replays `recording` and checks it is the same.
    fn replays_the_same(&self, recording: &Path) {
        let replay = self.gfhost(&["replay".as_ref(), recording.as_os_str(), "--expect-same".as_ref()], "1000");
        assert!(replay.status.success(), "{}", said(&replay));
        assert!(stdout(&replay).contains("the same: "), "{}", said(&replay));
    }
}

/// The records of a recording that say why something was stopped.
fn stops(recording: &Path) -> Vec<String> {
    use gamefeature_host::recording::{Record, Recording};
    let read = Recording::read(recording).unwrap();
    read.records()
        .filter_map(|record| match record {
            Record::Stopped { cause, .. } => Some(cause),
            Record::OverBudget { cause, .. } => Some(cause),
            _ => None,
        })
        .collect()
}

/// A call stopped by its CPU-time deadline in the recording (a plugin looping in its event handler) is stopped
/// again in the replay, where time limits are loosened: the replay is the same, and does not run the loop.
#[test]
fn a_call_stopped_for_time_is_stopped_in_the_replay_too() {
    let hostile = Hostile::new("loop-event", "");
    let (experience, recording) = (hostile.path("e.toml"), hostile.path("loop.gfrec"));
    let run =
        hostile.gfhost(&["run".as_ref(), experience.as_os_str(), "--record".as_ref(), recording.as_os_str()], "200");
    let text = stdout(&run);
    assert!(
        text.contains("hostile failed during Playing: handle-extension-events: trapped: exceeded its call deadline")
    );
    let stops = stops(&recording);
    assert!(stops.len() == 1 && stops[0].starts_with("exceeded its call deadline"), "{stops:?}");
    hostile.replays_the_same(&recording);
}

/// A plugin quarantined over its frame budget in the recording is quarantined at the same frame in the replay,
/// though a replay loosens frame budgets (here 1 ms, which the replay's would not reach).
#[test]
fn a_plugin_over_its_frame_budget_is_quarantined_at_the_same_frame_in_the_replay() {
    let hostile = Hostile::new("busy-timers", "[limits.hostile]\nframe-budget-ms = 1\n");
    let (experience, recording) = (hostile.path("e.toml"), hostile.path("budget.gfrec"));
    let script = hostile.experiences.write("script.txt", "wait 2000\nquit\n");
    let args = ["play".as_ref(), experience.as_os_str(), "--script".as_ref(), script.as_os_str()];
    let play = hostile.gfhost(&[&args[..], &["--record".as_ref(), recording.as_os_str()]].concat(), "1000");
    let text = stdout(&play);
    assert!(text.contains("over its frame budget of 1.0 ms"), "{}", said(&play));
    let stops = stops(&recording);
    assert!(stops.len() == 1 && stops[0].contains("over its frame budget of 1.0 ms"), "{stops:?}");
    hostile.replays_the_same(&recording);
}

/// A plugin restarted after a fault (`[restarts]`) is restarted at the same frames in the replay, and the
/// recording says each restart: here it goes over its frame budget, comes back once, goes over again and stays
/// out; `play` prints each step.
#[test]
fn restarts_are_said_by_play_kept_in_the_recording_and_replayed_the_same() {
    let restarts = "[restarts.hostile]\npolicy = \"on-failure\"\nmax-restarts = 1\nbackoff-ms = 100\n";
    let hostile = Hostile::new("busy-timers", &format!("[limits.hostile]\nframe-budget-ms = 1\n{restarts}"));
    let (experience, recording) = (hostile.path("e.toml"), hostile.path("restarts.gfrec"));
    let script = hostile.experiences.write("script.txt", "wait 2000\nquit\n");
    let args = ["play".as_ref(), experience.as_os_str(), "--script".as_ref(), script.as_os_str()];
    let play = hostile.gfhost(&[&args[..], &["--record".as_ref(), recording.as_os_str()]].concat(), "1000");
    let text = stdout(&play);
    for step in [
        "[hostile@main] restart 1 of 1 in 100 ms of game time",
        "[hostile@main] restarted from its state kept at frame ",
        "[hostile@main] stays out: it faulted again after 1 restart(s) within 60 s of game time",
    ] {
        assert!(text.contains(step), "{step}:\n{}", said(&play));
    }
    use gamefeature_host::recording::{Record, Recording};
    let said_restarts: Vec<String> = Recording::read(&recording)
        .unwrap()
        .records()
        .filter_map(|record| match record {
            Record::Said { plugin, line } if plugin == "hostile" && line.starts_with("restart: ") => Some(line),
            _ => None,
        })
        .collect();
    assert_eq!(said_restarts.len(), 3, "{said_restarts:?}");
    hostile.replays_the_same(&recording);
}

/// `gfhost bisect` names a planted culprit among the example mods: the default experience with a plugin that
/// panics as pawns initialise, recorded; bisecting the recording replays it with halves of its plugins left out
/// (each kept one with what it needs) and names the culprit, in about log2(n) + 2 replays.
#[test]
fn bisect_names_a_planted_culprit_among_the_example_mods() {
    let plugins = PluginDir::with(&DEFAULT_PLUGINS);
    let manifest =
        "[plugin]\nname = \"hud-tweaks\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"hostile.wasm\"\n\
                    [permissions]\ncomponent-requests = [\"*\"]\n[bundles.Equipped]\nbehaviour = \"behaviour.txt\"\n";
    let folder = plugins.add_custom("hud-tweaks", manifest, Some(&HOSTILE));
    std::fs::write(folder.join("behaviour.txt"), "panic-state-changed").unwrap();
    let experiences = default_experience();
    let default = std::fs::read_to_string(experiences.path().join("default.toml")).unwrap();
    let planted = default.replacen("\"match-stats\"]", "\"match-stats\", \"hud-tweaks\"]", 1);
    assert_ne!(planted, default);
    let experience = experiences.write("planted.toml", &planted);
    let recording = experiences.path().join("planted.gfrec");
    let config = format!(
        "{}\n[grants.hud-tweaks]\ncomponent-requests = [\"*\"]\n",
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../gfhost.toml")).unwrap()
    );
    let config = experiences.write("gfhost.toml", &config);
    let script = experiences.write("script.txt", "wait 500\nquit\n");
    let gfhost = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_gfhost"))
            .arg("--plugins")
            .arg(plugins.path())
            .arg("--cache-dir")
            .arg(shared_cache())
            .arg("--config")
            .arg(&config)
            .args(["--call-deadline-ms", "1000"])
            .args(args)
            .env_remove("GFHOST_LOG")
            .output()
            .expect("running gfhost")
    };
    let play =
        [experience.as_os_str(), "--script".as_ref(), script.as_os_str(), "--record".as_ref(), recording.as_os_str()];
    let run = gfhost(&[&["play".as_ref()][..], &play[..]].concat());
    assert!(stdout(&run).contains("hostile plugin panics on purpose in state-changed"), "{}", said(&run));

    let bisect = gfhost(&["bisect".as_ref(), recording.as_os_str()]);
    let text = stdout(&bisect);
    assert!(bisect.status.success(), "{}", said(&bisect));
    assert!(text.contains("bisecting") && text.contains("over its 11 plugins: shooter-core"), "{text}");
    let named = text.lines().find(|l| l.starts_with("the failure comes with")).unwrap_or_else(|| panic!("{text}"));
    assert!(named.starts_with("the failure comes with hud-tweaks ("), "{text}");
    let replays = text.lines().filter(|l| l.starts_with("replay ")).count();
    assert!(replays <= 8, "about log2(11) + 2 replays, not {replays}:\n{text}");

    // A failure the recording does not hold is said not to come back.
    let bisect = gfhost(&["bisect".as_ref(), recording.as_os_str(), "--until".as_ref(), "no such line".as_ref()]);
    assert!(!bisect.status.success());
    assert!(stdout(&bisect).contains("the failure does not come back"), "{}", said(&bisect));
}
