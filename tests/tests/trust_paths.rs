//! Every path that brings a plugin into a running process goes through the same gate: start, a rescan,
//! `install DIR` from a console, a hot reload (console or `--watch`), a package installed over a watched
//! folder. Each is tried with a signed package whose publisher is capped (it may have nothing beyond the
//! sandbox) and with a folder changed after it was installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gamefeature_host::experience::{ExperienceManager, ReloadError};
use gamefeature_host::feature::Permissions;
use gamefeature_host::live::{Command, FolderWatcher, LiveWorld};
use gamefeature_host::package::install::install;
use gamefeature_host::package::{Package, SecretKey, TrustPolicy, TrustedPublisher};
use gamefeature_host::world::NetMode;
use gamefeature_host::{Blame, Error, Session, SessionOptions};
use gamefeature_tests::*;

/// A studio whose plugins may have nothing beyond the sandbox, its key, and packages of the test plugins.
struct Studio {
    key: SecretKey,
    trust: TrustPolicy,
}

impl Studio {
    fn capped() -> Studio {
        let key = SecretKey::generate();
        let publisher = TrustedPublisher { key: key.public_key(), permissions: Some(Permissions::default()) };
        let trust = TrustPolicy { publishers: BTreeMap::from([("studio".into(), publisher)]), allow_untrusted: false };
        Studio { key, trust }
    }

    /// Packs `source` (a plugin folder), signs it and installs it into `into`; returns the installed folder.
    fn install(&self, source: &Path, into: &Path) -> PathBuf {
        let package = Package::from_folder(source).unwrap();
        let signature = self.key.sign("studio", package.summary());
        install(&package, Some(&signature), into, &self.trust).unwrap().0
    }

    fn session(&self, plugin_dir: &Path) -> Session {
        let options = SessionOptions {
            plugin_dirs: vec![plugin_dir.to_path_buf()],
            runtime: runtime_config(None),
            manager: trusted(),
            trust: self.trust.clone(),
        };
        Session::new(options).unwrap()
    }
}

/// A world playing `plugin` alone.
async fn world_with(session: &Session, plugin: &str) -> (ExperienceManager, ExperienceDir) {
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&[plugin]));
    let mut manager = session.create_world("w", NetMode::DedicatedServer);
    manager.load(&path).await.unwrap();
    (manager, experiences)
}

fn writes_scores(session: &Session) -> bool {
    session.features().manifest("score-keeper").unwrap().permissions.may_write_properties_of("ScoreComponent")
}

/// A component changed in place after its package was installed.
fn tamper(folder: &Path) {
    let component = folder.join("score_keeper.wasm");
    let mut bytes = std::fs::read(&component).unwrap();
    bytes.extend_from_slice(b"\0");
    std::fs::write(component, bytes).unwrap();
}

#[tokio::test]
async fn a_reload_keeps_the_publishers_ceiling_and_refuses_a_folder_changed_since_it_was_installed() {
    let studio = Studio::capped();
    let built = PluginDir::with(&[SCORE_KEEPER]);
    let plugins = tempfile::tempdir().unwrap();
    let folder = studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    let session = studio.session(plugins.path());
    let (mut manager, _experiences) = world_with(&session, "score-keeper").await;
    assert_eq!(manager.live_features(), ["score-keeper"]);
    assert!(!writes_scores(&session), "capped at start");

    // The folder unchanged: the new version passes the same gate, and stays capped.
    manager.reload_feature("score-keeper").await.unwrap();
    assert!(!writes_scores(&session), "still capped after a reload");
    let limited = session.features().manifest("score-keeper").unwrap();
    assert!(limited.permissions_limited_by().unwrap().contains("publisher studio"), "{limited:?}");

    // Its package record removed: the folder would pass as the operator's own, uncapped; refused instead.
    let record = std::fs::read(folder.join(".gfpackage.json")).unwrap();
    std::fs::remove_file(folder.join(".gfpackage.json")).unwrap();
    let refused = manager.reload_feature("score-keeper").await.unwrap_err();
    assert!(refused.to_string().contains("its record of it is gone"), "{refused}");
    std::fs::write(folder.join(".gfpackage.json"), record).unwrap();

    // Changed since it was installed: refused, and the old version plays on.
    tamper(&folder);
    let refused = manager.reload_feature("score-keeper").await.unwrap_err();
    assert!(
        matches!(&refused, ReloadError::Refused { cause, .. } if cause.contains("changed since package score-keeper")),
        "{refused}"
    );
    assert_eq!(manager.live_features(), ["score-keeper"]);
    manager.end_play().await.unwrap();
}

/// A capped plugin's denial names the ceiling that limits it, since no grant in the host's configuration can
/// lift it.
#[tokio::test]
async fn a_capped_plugins_denial_names_its_publishers_ceiling() {
    let studio = Studio::capped();
    let built = PluginDir::with(&[SCORE_KEEPER]);
    let plugins = tempfile::tempdir().unwrap();
    studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    let session = studio.session(plugins.path());
    let experiences = ExperienceDir::new();
    let scored = "[experience]\nname = \"scored\"\nfeatures = [\"score-keeper\"]\n[[actions]]\n\
                  kind = \"add-components\"\nactor-class = \"PlayerState\"\ncomponent-class = \"ScoreComponent\"\n";
    let path = experiences.write("e.toml", scored);
    let mut manager = session.create_world("w", NetMode::DedicatedServer);
    manager.load(&path).await.unwrap();
    let player = manager.with_world(|w| gamefeature_host::game::spawn_player(w, "Character")).unwrap();
    manager.with_world(|w| gamefeature_host::game::possess(w, &player)).unwrap();
    manager.with_world(|w| gamefeature_host::game::replicate_player_state(w, &player)).unwrap();
    for _ in 0..12 {
        manager.tick(std::time::Duration::from_millis(100));
    }
    let track = gamefeature_host::timeline::track::instance("score-keeper", "w");
    let notes = session.timeline().texts(&track, gamefeature_host::timeline::EventKind::Note);
    let denial = notes.iter().find(|n| n.contains("needs the write-properties permission")).expect("a denial");
    assert!(
        denial.contains("allowed by the ceiling of publisher studio ([publishers.studio] permissions)"),
        "{denial}"
    );
    manager.end_play().await.unwrap();
}

#[tokio::test]
async fn a_folder_changed_since_it_was_installed_fails_to_load_at_start_and_says_why() {
    let studio = Studio::capped();
    let built = PluginDir::with(&[SCORE_KEEPER]);
    let plugins = tempfile::tempdir().unwrap();
    let folder = studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    tamper(&folder);
    let session = studio.session(plugins.path());
    let (manager, _experiences) = world_with(&session, "score-keeper").await;
    assert!(manager.live_features().is_empty());
    let failure = manager.report().failures.iter().find(|f| f.source == "score-keeper").expect("a failure");
    assert!(failure.cause.contains("changed since package score-keeper 0.1.0 was installed"), "{failure}");
}

#[tokio::test]
async fn install_dir_and_rescan_pass_the_gate_a_start_does() {
    let studio = Studio::capped();
    let built = PluginDir::with(&[SCORE_KEEPER]);
    let empty = tempfile::tempdir().unwrap();
    let session = studio.session(empty.path());
    let experiences = ExperienceDir::new();
    let path = experiences.write("e.toml", &experience_with_features(&[]));
    let mut manager = session.create_world("w", NetMode::DedicatedServer);
    manager.load(&path).await.unwrap();
    let mut live = LiveWorld::new(manager, &session);

    // A folder installed elsewhere and changed since: `install DIR` refuses it, naming why.
    let elsewhere = tempfile::tempdir().unwrap();
    let folder = studio.install(&built.folder(&SCORE_KEEPER), elsewhere.path());
    tamper(&folder);
    let refused = live.execute(&Command::Install(folder.clone())).await.unwrap_err();
    assert_eq!(refused.blame(), Blame::Plugin("score-keeper".into()), "{refused}");
    assert!(refused.to_string().contains("changed since package score-keeper"), "{refused}");
    assert!(session.features().state("score-keeper").is_none(), "not installed");

    // Whole again: installed, capped, and activated capped.
    let folder = studio.install(&built.folder(&SCORE_KEEPER), elsewhere.path());
    live.execute(&Command::Install(folder)).await.unwrap();
    live.execute(&Command::Activate("score-keeper".into())).await.unwrap();
    assert!(!writes_scores(&session), "capped when installed from a folder");

    // An unsigned package dropped into the plugin folder is refused by a rescan, with why.
    let development = TrustPolicy { allow_untrusted: true, ..TrustPolicy::default() };
    let source = PluginDir::with(&[LYRA_CHARACTER]);
    let other = Package::from_folder(&source.folder(&LYRA_CHARACTER)).unwrap();
    install(&other, None, empty.path(), &development).unwrap();
    let text = live.execute(&Command::Rescan).await.unwrap();
    assert!(text.contains("plugin \"lyra-character\" refused") && text.contains("unsigned"), "{text}");
    // Asked for by name, it is not only "not installed": the answer says why.
    let refused = live.execute(&Command::Activate("lyra-character".into())).await.unwrap_err();
    assert!(matches!(&refused, Error::NotFound { name, .. } if name == "lyra-character"), "{refused:?}");
    let text = refused.to_string();
    assert!(text.contains("is installed: plugin") && text.contains("unsigned"), "{text}");
    live.into_manager().end_play().await.unwrap();
}

/// The reloads of the first changes `watcher` reports, carried out in `live`.
async fn reloads_seen(live: &mut LiveWorld<'_>, watcher: &mut FolderWatcher) -> Vec<Result<String, Error>> {
    // Bounded: file events arrive within milliseconds; the bound only guards against a lost event.
    let started = std::time::Instant::now();
    let mut reloaded = Vec::new();
    while reloaded.is_empty() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        reloaded = live.reload_changed(&watcher.changed()).await;
    }
    reloaded
}

#[tokio::test]
async fn a_package_installed_over_a_watched_folder_is_seen_and_reloaded_through_the_gate() {
    let studio = Studio::capped();
    let built = PluginDir::with(&[SCORE_KEEPER]);
    let plugins = tempfile::tempdir().unwrap();
    studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    let session = studio.session(plugins.path());
    let (manager, _experiences) = world_with(&session, "score-keeper").await;
    let mut live = LiveWorld::new(manager, &session);
    let mut watcher = FolderWatcher::new(&live.plugin_folders()).unwrap();

    // Version 0.1.1, installed into place as `gfhost install --into` does: the old folder's watch goes with it.
    built.edit_manifest(&SCORE_KEEPER, |text| text.replace("version = \"0.1.0\"", "version = \"0.1.1\""));
    studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    let reloaded = reloads_seen(&mut live, &mut watcher).await;
    assert_eq!(reloaded.len(), 1, "{reloaded:?}");
    assert_eq!(reloaded[0].as_deref(), Ok("score-keeper reloaded: 0.1.0 -> 0.1.1"));
    assert!(!writes_scores(&session), "the new version is capped as the old one was");

    // The folder in place is watched again: its next version is seen too.
    built.edit_manifest(&SCORE_KEEPER, |text| text.replace("version = \"0.1.1\"", "version = \"0.1.2\""));
    watcher.follow(&live.plugin_folders()).unwrap();
    studio.install(&built.folder(&SCORE_KEEPER), plugins.path());
    let reloaded = reloads_seen(&mut live, &mut watcher).await;
    assert_eq!(reloaded[0].as_deref(), Ok("score-keeper reloaded: 0.1.1 -> 0.1.2"));
    live.into_manager().end_play().await.unwrap();
}

#[test]
fn an_install_killed_midway_is_never_discovered() {
    let plugins = PluginDir::with(&[SCORE_KEEPER]);
    // What a killed install leaves: its staging folder, with a manifest and a truncated component.
    let staging = plugins.path().join(".installing-x1y2z3");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::copy(plugins.folder(&SCORE_KEEPER).join("plugin.toml"), staging.join("plugin.toml")).unwrap();
    std::fs::write(staging.join("score_keeper.wasm"), b"\0asm").unwrap();
    let session = session(&plugins);
    assert!(session.discovery().errors.is_empty(), "{:?}", session.discovery().errors);
    let found: Vec<_> = session.discovery().found.iter().map(|m| m.dir.clone()).collect();
    assert_eq!(found, [plugins.folder(&SCORE_KEEPER)]);
}

/// A component built here and published carries none of this machine's folder names (the SDK's panic
/// locations name `gamefeature/guest-sdk/…`, registry crates `cargo/…`).
#[test]
fn components_built_here_name_no_folder_of_this_machine() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let repository = repository.display().to_string();
    for plugin in [SCORE_KEEPER, LYRA_CHARACTER] {
        let bytes = std::fs::read(plugin.component).unwrap();
        let found = bytes.windows(repository.len()).any(|w| w == repository.as_bytes());
        assert!(!found, "{} names {repository}", plugin.component);
    }
}
