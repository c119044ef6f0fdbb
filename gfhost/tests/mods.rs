//! Mods that travel, as a studio and its players use `gfhost`: a publisher key made with `keygen`, every plugin
//! of the default experience packed and signed with `pack`, installed on a server with `install`; a player
//! with no plugins at all joins over loopback QUIC and plays, having fetched and checked every package; a
//! player who does not trust the studio refuses, and both sides say so.

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
    let key_file = work.path().join("studio.pem");
    let keygen = stdout(gfhost(built.path(), &cache).arg("keygen").arg(&key_file).output().unwrap());
    let key = keygen.lines().find_map(|l| l.strip_prefix("public key: ")).unwrap().to_string();
    let studio = trusting(work.path(), "studio.toml", &key);

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
    let mut player = Running::start(client(&studio, "mods"));
    let playing = player.wait_for(|l| l.starts_with("playing \"Shooter Gym\""));
    assert!(playing.contains(&format!("{} plugin(s) fetched from the server", DEFAULT_PLUGINS.len())), "{playing}");
    player.signal(libc::SIGTERM);
    let (status, text) = player.finish();
    assert_eq!(status.code(), Some(0), "{text}");
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
