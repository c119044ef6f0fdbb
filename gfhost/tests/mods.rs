//! Mods that travel, as a studio and its players use `gfhost`: a publisher key made with `keygen`, every plugin
//! of the default experience packed and signed with `pack`, installed on a server with `install`; a player
//! with no plugins at all joins over loopback QUIC and plays, having fetched and checked every package; a
//! player who does not trust the studio refuses, and both sides say so. Each player is shown the server's plugins
//! first and answers whether to fetch and run them; the answer is remembered per server.

mod common;

use std::path::Path;

use common::{gfhost, gfhost_configured, repository_config, setup, start_server, Running};
use gamefeature_plugin_artifacts::*;

/// A configuration: the repository's grants, trusting `key` as the publisher "studio".
fn trusting(dir: &Path, name: &str, key: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{}\n[publishers.studio]\nkey = \"{key}\"\n", repository_config())).unwrap();
    path
}

/// A publisher key made with `keygen` in `work`, and a configuration trusting it as "studio".
fn studio_key(built: &PluginDir, cache: &Path, work: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let key_file = work.join("studio.pem");
    let keygen = stdout(gfhost(built.path(), cache).arg("keygen").arg(&key_file).output().unwrap());
    let key = keygen.lines().find_map(|l| l.strip_prefix("public key: ")).unwrap().to_string();
    (key_file, trusting(work, "studio.toml", &key))
}

fn stdout(output: std::process::Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}{}", String::from_utf8_lossy(&output.stderr));
    text
}

#[test]
fn a_player_with_no_plugins_joins_a_server_of_signed_packages_and_plays() {
    let (built, experiences) = setup();
    let cache = shared_cache();
    let work = tempfile::tempdir().unwrap();
    let (key_file, studio) = studio_key(&built, &cache, work.path());

    let packages = work.path().join("packages");
    let server_plugins = work.path().join("server-plugins");
    for plugin in &DEFAULT_PLUGINS {
        let mut pack = gfhost(built.path(), &cache);
        pack.arg("pack").arg(built.folder(plugin)).arg("--key").arg(&key_file).arg("--out").arg(&packages);
        assert!(stdout(pack.output().unwrap()).contains("signed by studio"));
    }
    for entry in std::fs::read_dir(&packages).unwrap() {
        let mut install = gfhost_configured(&server_plugins, &cache, &studio);
        install.arg("install").arg(entry.unwrap().path()).arg("--into").arg(&server_plugins);
        assert!(stdout(install.output().unwrap()).contains("published by studio"));
    }

    let mut server_command = gfhost_configured(&server_plugins, &cache, &studio);
    server_command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0"]);
    let (mut server, addr, pin) = start_server(server_command);

    // A player's machine: no plugins, no experiences, a fresh mods folder; it trusts the studio.
    let empty = work.path().join("player-plugins");
    std::fs::create_dir(&empty).unwrap();
    let client = |config: &Path, mods: &str| {
        let mut command = gfhost_configured(&empty, &cache, config);
        command.args(["client", "--connect", &addr, "--server-cert-sha256", &pin]);
        command.arg("--experiences").arg(&empty).arg("--mods-dir").arg(work.path().join(mods));
        command
    };
    // A player who answers no: nothing is fetched, and both sides say why.
    let mut declining = Running::start_answering(client(&studio, "declined-mods"), Some("n\n"));
    declining.wait_for(|l| l.starts_with("The server plays these plugins"));
    let (status, text) = declining.finish();
    assert!(!status.success(), "{text}");
    assert!(!work.path().join("declined-mods/plugins").exists(), "nothing fetched:\n{text}");
    server.wait_for(|l| l.contains(" left: ") && l.contains("the player refused to fetch and run them"));
    // The answer stands: the same offer from the same server is refused without asking.
    let again = client(&studio, "declined-mods").output().unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success() && said.contains("you refused these plugins from this server before"), "{said}");

    // A player who answers yes is shown each plugin, its publisher, size and permissions, and plays.
    let mut player = Running::start_answering(client(&studio, "mods"), Some("y\n"));
    let shown = player.wait_for(|l| l.starts_with("  lyra-character 0.1.0"));
    assert!(shown.contains("by studio (trusted)") && shown.contains("KiB"), "{shown}");
    let asks = player.wait_for(|l| l.trim_start().starts_with("asks for:"));
    assert!(asks.contains("would be granted: nothing"), "fetched plugins get nothing by default: {asks}");
    let playing = player.wait_for(|l| l.starts_with("playing \"Shooter Gym\""));
    assert!(playing.contains(&format!("{} plugin(s) fetched from the server", DEFAULT_PLUGINS.len())), "{playing}");
    player.signal(libc::SIGTERM);
    let (status, text) = player.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    let answers = std::fs::read_to_string(work.path().join("mods/consent.toml")).unwrap();
    let pinned = pin.replace(':', "").to_lowercase();
    assert!(
        answers.contains(&format!("[servers.\"sha256:{pinned}\"]")) && answers.contains("agreed = true"),
        "{answers}"
    );

    // The answer stands for this server: joining again asks nothing (no input is given).
    let mut again = Running::start_answering(client(&studio, "mods"), Some(""));
    let remembered = again.wait_for(|l| l.starts_with("fetching them:"));
    assert!(remembered.contains("you agreed to them from this server before"), "{remembered}");
    again.wait_for(|l| l.starts_with("playing \"Shooter Gym\""));
    again.signal(libc::SIGTERM);
    assert_eq!(again.finish().0.code(), Some(0));
    assert!(text.contains("experience@client") && text.contains("=> Loaded"), "{text}");
    assert!(text.contains("spawned HeroCharacter"), "the server's actors arrived:\n{text}");
    for plugin in ["lyra-character", "scoreboard", "announcer", "match-stats"] {
        assert!(text.contains(&format!("plugin:{plugin}@client")), "{plugin} runs on the player's machine:\n{text}");
    }
    let fetched = std::fs::read_dir(work.path().join("mods/plugins")).unwrap().count();
    assert_eq!(fetched, DEFAULT_PLUGINS.len(), "one package a plugin, cached by digest");

    // A player who does not trust the studio refuses before fetching, naming the package; the server's log
    // says why the player left.
    let wary = trusting(work.path(), "wary.toml", &{
        let other =
            stdout(gfhost(built.path(), &cache).arg("keygen").arg(work.path().join("other.pem")).output().unwrap());
        other.lines().find_map(|l| l.strip_prefix("public key: ")).unwrap().to_string()
    });
    let refused = client(&wary, "wary-mods").output().unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(said.contains("refused plugin") && said.contains("which this host does not trust"), "{said}");
    let left = server.wait_for(|l| l.contains(" left: ") && l.contains("does not trust"));
    assert!(left.contains("could not be synced"), "{left}");

    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

/// The documented live update: a signed package installed into the folder a `server --watch` plays from is
/// seen, reloaded through the host's checks and offered to the players, who fetch it and reload it too. A
/// folder changed by hand afterwards is refused, named, and not offered.
#[test]
fn a_package_installed_into_a_watched_servers_folder_is_a_live_update_its_players_follow() {
    let (built, experiences) = setup();
    let cache = shared_cache();
    let work = tempfile::tempdir().unwrap();
    let (key_file, studio) = studio_key(&built, &cache, work.path());
    let pack = |folder: &Path, out: &Path| {
        let mut pack = gfhost(built.path(), &cache);
        pack.arg("pack").arg(folder).arg("--key").arg(&key_file).arg("--out").arg(out);
        stdout(pack.output().unwrap());
    };
    let packages = work.path().join("packages");
    for plugin in &DEFAULT_PLUGINS {
        pack(&built.folder(plugin), &packages);
    }
    let server_plugins = work.path().join("server-plugins");
    let install = |package: &Path| {
        let mut install = gfhost_configured(&server_plugins, &cache, &studio);
        install.arg("install").arg(package).arg("--into").arg(&server_plugins);
        install.output().unwrap()
    };
    for entry in std::fs::read_dir(&packages).unwrap() {
        stdout(install(&entry.unwrap().path()));
    }
    // Version 0.1.1 of score-keeper, packed and signed beside the rest.
    built.edit_manifest(&SCORE_KEEPER, |text| text.replace("version = \"0.1.0\"", "version = \"0.1.1\""));
    pack(&built.folder(&SCORE_KEEPER), &work.path().join("update"));

    let mut server_command = gfhost_configured(&server_plugins, &cache, &studio);
    server_command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0"]);
    server_command.arg("--watch");
    let (mut server, addr, pin) = start_server(server_command);
    let empty = work.path().join("player-plugins");
    std::fs::create_dir(&empty).unwrap();
    // The player agrees once; the update (the same plugin, asking for no more) is not asked about again.
    let mut player = Running::start_answering(
        {
            let mut command = gfhost_configured(&empty, &cache, &studio);
            command.args(["client", "--connect", &addr, "--server-cert-sha256", &pin]);
            command.arg("--experiences").arg(&empty).arg("--mods-dir").arg(work.path().join("mods"));
            command
        },
        Some("y\n"),
    );
    player.wait_for(|l| l.starts_with("playing \"Shooter Gym\""));

    stdout(install(&work.path().join("update/score-keeper-0.1.1.gfpkg")));
    let reloaded = server.wait_for(|l| l.contains("score-keeper reloaded") || l.contains("error: reloading"));
    assert!(reloaded.contains("score-keeper reloaded: 0.1.0 -> 0.1.1; clients follow"), "{reloaded}");

    // Changed by hand after it was installed: refused, saying why, and the installed version plays on.
    let component = server_plugins.join("score-keeper/score_keeper.wasm");
    let mut bytes = std::fs::read(&component).unwrap();
    bytes.push(0);
    std::fs::write(&component, bytes).unwrap();
    let refused = server.wait_for(|l| l.contains("reloading score-keeper"));
    assert!(refused.contains("changed since package score-keeper 0.1.1 was installed"), "{refused}");

    player.signal(libc::SIGTERM);
    let (status, text) = player.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    let followed = text.lines().any(|l| l.starts_with("the server updated score-keeper to 0.1.1: fetched"));
    assert!(followed && text.contains("and reloaded"), "the player followed the live update:\n{text}");
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

/// Client processes on one machine share its mods folder: six join one server at once with one empty mods
/// folder, three times over, and every one loads (a client read another's half-written experience files before they
/// were put in place whole).
#[test]
fn client_processes_sharing_one_empty_mods_folder_all_join() {
    let (built, experiences) = setup();
    let cache = shared_cache();
    let mut server_command = gfhost(built.path(), &cache);
    server_command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0"]);
    let (server, addr, pin) = start_server(server_command);
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("player-plugins");
    std::fs::create_dir(&empty).unwrap();
    for round in 0..3 {
        let mods = work.path().join(format!("mods-{round}"));
        let mut players: Vec<Running> = (0..6)
            .map(|_| {
                let mut command = gfhost(&empty, &cache);
                command.args(["client", "--connect", &addr, "--server-cert-sha256", &pin, "--fetch", "any", "--yes"]);
                command.arg("--experiences").arg(&empty).arg("--mods-dir").arg(&mods);
                Running::start(command)
            })
            .collect();
        for player in &mut players {
            player.wait_for(|l| l.starts_with("playing \"Shooter Gym\""));
        }
        for player in players {
            player.signal(libc::SIGTERM);
            let (status, text) = player.finish();
            assert_eq!(status.code(), Some(0), "round {round}:\n{text}");
        }
    }
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}
