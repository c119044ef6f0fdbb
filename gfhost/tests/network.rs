//! `gfhost` multiplayer as a user runs it, over real loopback QUIC: a server and clients in one process
//! (`run --clients`), and a dedicated `gfhost server` process with two `gfhost client` processes, stopped the
//! way an orchestrator stops it (SIGTERM). Every wait is bounded by lines the processes print, not by time.

mod common;

use common::{gfhost, setup, start_server, Running};
use gamefeature_plugin_artifacts::*;

/// Also recorded (with a hot reload on the server halfway), and the server's recording and a client's each
/// replayed with every checkpoint equal.
#[test]
fn run_with_clients_plays_a_server_and_two_clients_over_loopback_quic() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    let trace = experiences.path().join("t.json");
    let recording = experiences.path().join("session.gfrec");
    let script = experiences.path().join("server.txt");
    std::fs::write(&script, "wait 1000\nreload score-keeper\n").unwrap();
    let output = gfhost(plugins.path(), &cache)
        .args(["run"])
        .arg(experiences.path().join("default.toml"))
        .args(["--clients", "2", "--seconds", "2.5", "--trace"])
        .arg(&trace)
        .arg("--script")
        .arg(&script)
        .arg("--record")
        .arg(&recording)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    for expected in [
        "== world server ==",
        "== world client-1 ==",
        "== world client-2 ==",
        "client-1: the server ended play: the run is over",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    // Every client has the server's actors relevant to it — 205 of its 206: 3 players' worth for each of 2
    // clients and 200 props, but not the other player's controller — and their replicated values; only the
    // props that were hit have a health component, on every side.
    for client in ["client-1", "client-2"] {
        let line = text.lines().find(|l| l.trim_start().starts_with(&format!("{client}: 205 replicated actors")));
        let line = line.unwrap_or_else(|| panic!("{client} summary in:\n{text}"));
        assert!(line.contains("(3 its own player's)") && line.contains(", the server's;"), "{line}");
    }
    let server = text.lines().find(|l| l.trim_start().starts_with("server: 206 actors")).expect("server summary");
    let created: usize = server.split("lazy components: ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((1..=4).contains(&created), "{server}");
    assert!(server.ends_with(&format!("{created} created, {} avoided", 200 - created)), "{server}");
    // Rep-notify on each client: the score keeper announces the scores it receives.
    for client in ["client-1", "client-2"] {
        let announced = format!("plugin:score-keeper@{client}");
        assert!(text.lines().any(|l| l.contains(&announced) && l.contains("score of player")), "{client}: {text}");
    }
    let trace: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let processes: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(processes, ["process", "world server", "world client-1", "world client-2"]);

    assert!(text.contains("score-keeper reloaded: 0.1.0 -> 0.1.0; clients follow"), "{text}");
    let client_recording = experiences.path().join("session.client-1.gfrec");
    for (file, role) in [(&recording, "Server"), (&client_recording, "Client")] {
        assert!(text.contains(&format!("to {} (", file.display())), "{text}");
        let replay = gfhost(plugins.path(), &cache).arg("replay").arg(file).arg("--expect-same").output().unwrap();
        let said = String::from_utf8_lossy(&replay.stdout);
        assert!(replay.status.success(), "{said}\n{}", String::from_utf8_lossy(&replay.stderr));
        assert!(said.contains(&format!("({role} world")), "{said}");
        assert!(said.contains("the same: ") && said.contains("checkpoints equal"), "{said}");
        assert!(!said.contains("note: "), "a replay on the recording's machine needs no note: {said}");
    }
}

/// `experiences/rooms.toml` as its comment says to try it, with the repository's `gfhost.toml` granting the
/// rooms plugin its permission: three clients in rooms of two, each with the server's values of exactly the
/// actors relevant to it — its roommate's pawn, and not the others'.
#[test]
fn run_with_clients_in_rooms_sends_each_client_its_rooms_pawns() {
    let (plugins, experiences) = setup();
    plugins.add(&ROOMS);
    let output = gfhost(plugins.path(), &shared_cache())
        .args(["run"])
        .arg(experiences.path().join("rooms.toml"))
        .args(["--clients", "3", "--seconds", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    for room in ["room-0", "room-0", "room-1"] {
        assert!(text.lines().any(|l| l.contains("plugin:rooms@server") && l.ends_with(room)), "{room} in:\n{text}");
    }
    // Each client has its own player's 3 actors and every other player's state (not their controllers); the two
    // in room-0 (whichever joined first: the clients connect at once) also have each other's pawn.
    let mut counts = Vec::new();
    for client in ["client-1", "client-2", "client-3"] {
        let summary = format!("{client}: ");
        let line =
            text.lines().map(str::trim_start).find(|l| l.starts_with(&summary) && l.contains(" replicated actors"));
        let line = line.unwrap_or_else(|| panic!("{client} summary in:\n{text}"));
        assert!(line.contains(", the server's;"), "{line}");
        counts.push(line[summary.len()..].split(' ').next().unwrap().parse::<usize>().unwrap());
    }
    counts.sort();
    assert_eq!(counts, [5, 6, 6], "{text}");
}

#[test]
fn a_dedicated_server_process_serves_two_client_processes_and_stops_cleanly_on_sigterm() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    // Compile once, so the three processes share the cache rather than racing to fill it.
    let warm = gfhost(plugins.path(), &cache).arg("run").arg(experiences.path().join("default.toml")).output();
    assert!(warm.unwrap().status.success());

    let mut server_command = gfhost(plugins.path(), &cache);
    server_command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0"]);
    // The token from a file, not the command line, where any user of the machine reads it.
    let secrets = tempfile::TempDir::new().unwrap();
    let token_file = secrets.path().join("token");
    std::fs::write(&token_file, "sesame\n").unwrap();
    server_command.arg("--token-file").arg(&token_file);
    let (mut server, addr, pin) = start_server(server_command);

    let client = |token: &str| {
        let mut command = gfhost(plugins.path(), &cache);
        command.args(["client", "--connect", &addr, "--server-cert-sha256", &pin, "--experiences"]);
        command.arg(experiences.path()).env("GFHOST_TOKEN", token);
        command
    };
    let first = Running::start(client("sesame"));
    let second = Running::start(client("sesame"));
    // Each line says when (UTC) and where the peer is: `2026-11-27T22:50:01.1Z client 1 joined (from 127.0.0.1:…)`.
    let peer_joined = |l: &str| {
        (l.contains(" client 1 joined (from 127.0.0.1:") || l.contains(" client 2 joined (from 127.0.0.1:"))
            && l.starts_with("20")
    };
    server.wait_for(peer_joined);
    server.wait_for(peer_joined);
    let refused = client("wrong").output().unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("refused this client: a wrong or missing token"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    // A client expecting another certificate (a server in the middle would show another) refuses the
    // server before saying anything: the server never hears its token.
    let other_pin = "ab".repeat(32);
    let mut wary = gfhost(plugins.path(), &cache);
    wary.args(["client", "--connect", &addr, "--server-cert-sha256", &other_pin, "--experiences"]);
    let wary = wary.arg(experiences.path()).env("GFHOST_TOKEN", "sesame").output().unwrap();
    let said = String::from_utf8_lossy(&wary.stderr);
    assert!(!wary.status.success());
    assert!(said.contains(&format!("is not the one pinned (sha256 {other_pin})")), "{said}");

    // A player stopped with Ctrl-C or SIGTERM says goodbye: the server hears it left, and it exits 0.
    let leaving = Running::start(client("sesame"));
    let joined = server.wait_for(|l| {
        l.contains(" joined (from ") && !l.contains(" client 1 joined") && !l.contains(" client 2 joined")
    });
    let leaver = joined.split(" joined").next().unwrap().split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
    leaving.signal(libc::SIGTERM);
    let (status, text) = leaving.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(text.contains("play ended: left: stopped by a signal"), "{text}");
    // Told at once by the client closing its connection, not found out by a timeout.
    let left = server.wait_for(|l| l.contains(&format!(" {leaver} left: ")));
    assert!(left.contains("the client left") || left.contains("the client stopped"), "{left}");

    // An orchestrator stops the server: play ends everywhere, cleanly.
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(text.contains("stopping: ending play") && text.ends_with("stopped"), "{text}");
    // Four clients presented their token (three joined, one of them left; one was wrong); the wary one never
    // got so far.
    assert_eq!(text.lines().filter(|l| l.contains(" joined")).count(), 3, "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("wrong or missing token")).count(), 1, "{text}");
    for client in [first, second] {
        let (status, text) = client.finish();
        assert_eq!(status.code(), Some(0), "{text}");
        assert!(text.contains("play ended: the server ended play: the server is shutting down"), "{text}");
        // What the reliable channel carried before the end is all there: the experience, loaded on the client,
        // and the server's actors.
        assert!(text.contains("experience@client") && text.contains("=> Loaded"), "{text}");
        assert!(text.contains("spawned HeroCharacter"), "{text}");
        assert!(text.contains("plugin:progress-save@client") && text.contains("flush complete"), "{text}");
    }
}

/// Starts a server of the default experience over the compile cache `cache`, signals it SIGTERM as soon as it
/// listens, and returns what it printed once it exited 0.
fn signalled_as_soon_as_it_listens(cache: &std::path::Path) -> String {
    let (plugins, experiences) = setup();
    let mut command = gfhost(plugins.path(), cache);
    command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0"]);
    let mut server = Running::start(command);
    server.wait_for(|l| l.starts_with("listening on "));
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    text
}

/// A server stopped while it starts (its experience still loading) stops cleanly, not killed.
#[test]
fn a_server_signalled_while_it_starts_stops_cleanly() {
    let text = signalled_as_soon_as_it_listens(&shared_cache());
    // Loaded or not when the signal came: it stops, saying so, and exits 0.
    assert!(text.contains("stopping: ") && text.ends_with("stopped"), "{text}");
}

/// SIGTERM while the experience loads cold (every component compiled, a Python one among them: tens of
/// seconds) abandons the load and exits 0, rather than holding the orchestrator's grace period.
#[test]
fn a_server_signalled_while_its_experience_loads_cold_abandons_the_load() {
    let cold = tempfile::tempdir().unwrap();
    let text = signalled_as_soon_as_it_listens(cold.path());
    assert!(text.contains("the load is abandoned") && text.ends_with("stopped"), "{text}");
    assert!(!text.contains("ready: "), "{text}");
}

#[test]
fn a_client_without_a_server_says_so() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    // A port nobody listens on: bound, then released.
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = std::time::Instant::now();
    let output = gfhost(plugins.path(), &cache)
        .args(["client", "--connect", &format!("127.0.0.1:{port}"), "--insecure-loopback", "--experiences"])
        .arg(experiences.path())
        .output()
        .unwrap();
    let ran = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains(&format!("no server answered at 127.0.0.1:{port} within ")), "{stderr}");
    // The time it says is no more than the time it waited (the handshake ends at the connection's idle timeout,
    // before the client's own wait).
    let said: f64 = stderr.split(" within ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(said <= ran, "it says {said} s; it ran {ran:.1} s: {stderr}");
}

/// The commands of the manual's "A server on the internet" that make a certificate authority and the server's
/// certificate (`openssl`, as `docs/multiplayer.md` writes them), run as written: a server showing that
/// certificate is joined by a client that trusts the authority and connects by IP address with `--server-name`,
/// and refused by one that names nothing (its name would be the address).
#[test]
fn the_manual_s_certificate_commands_make_a_server_a_client_joins_by_ip_with_its_name() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    let manual =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/multiplayer.md"))
            .unwrap();
    let steps = manual.split("## A server on the internet, step by step").nth(1).expect("the section");
    let block = steps.split("```sh").nth(1).and_then(|b| b.split("```").next()).expect("its commands");
    // The certificate's commands: `openssl ...` and `printf ...`, continuation lines joined.
    let script: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("openssl ") || line.starts_with("printf "))
        .map(str::to_string)
        .collect();
    assert!(script.len() >= 3, "the certificate commands: {script:?}");
    let folder = tempfile::TempDir::new().unwrap();
    let made = std::process::Command::new("bash")
        .arg("-euc")
        .arg(script.join("\n"))
        .current_dir(folder.path())
        .output()
        .expect("bash");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));

    let mut command = gfhost(plugins.path(), &cache);
    command.arg("server").arg(experiences.path().join("default.toml")).args(["--listen", "127.0.0.1:0", "--cert"]);
    command.arg(folder.path().join("server.crt")).arg("--key").arg(folder.path().join("server.key"));
    let (mut server, addr, _) = start_server(command);
    let client = |name: Option<&str>| {
        let mut command = gfhost(plugins.path(), &cache);
        command.args(["client", "--connect", &addr, "--seconds", "1", "--experiences"]).arg(experiences.path());
        command.arg("--ca-cert").arg(folder.path().join("ca.crt"));
        if let Some(name) = name {
            command.args(["--server-name", name]);
        }
        command.output().unwrap()
    };
    let joined = client(Some("game.example.org"));
    assert!(joined.status.success(), "{}", String::from_utf8_lossy(&joined.stderr));
    server.wait_for(|l| l.contains(" client 1 joined"));
    let unnamed = client(None);
    assert!(!unnamed.status.success(), "a certificate for another name is refused");
    let said = String::from_utf8_lossy(&unnamed.stderr);
    assert!(said.contains("certificate") || said.contains("name"), "{said}");
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

/// `gfhost swarm` load-tests a server process from outside: its players join over QUIC with the server's
/// token, are sent the world, and leave when done; those the server cannot take are counted with its reason,
/// and the swarm fails saying so.
#[test]
fn a_swarm_joins_a_server_process_and_counts_the_players_it_could_not_take() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    let mut server_command = gfhost(plugins.path(), &cache);
    server_command.arg("server").arg(experiences.path().join("default.toml"));
    server_command.args(["--listen", "127.0.0.1:0", "--max-players", "24"]).env("GFHOST_TOKEN", "sesame");
    let (mut server, addr, pin) = start_server(server_command);

    let mut swarm = gfhost(plugins.path(), &cache);
    swarm.args(["swarm", "--connect", &addr, "--server-cert-sha256", &pin, "--players", "30", "--seconds", "1"]);
    let swarm = swarm.env("GFHOST_TOKEN", "sesame").output().unwrap();
    let said = String::from_utf8_lossy(&swarm.stdout).into_owned() + &String::from_utf8_lossy(&swarm.stderr);
    assert!(!swarm.status.success(), "six players could not join: {said}");
    assert!(said.contains("swarm: 24 of 30 players joined"), "{said}");
    assert!(said.contains("swarm: 6 players lost: the server is full: 24 players"), "{said}");
    // Each player was sent the world as it joined: the experience, its actors and their values.
    let sent = said.lines().find(|l| l.starts_with("swarm: each player was sent ")).expect(&said);
    let bytes: f64 =
        sent.trim_start_matches("swarm: each player was sent ").split(' ').next().unwrap().parse().unwrap();
    assert!(bytes > 0.0, "{sent}");

    // The server took 24 players, and heard each of them leave.
    let left = (0..24).map(|_| server.wait_for(|l| l.contains(" left: "))).collect::<Vec<_>>();
    assert!(left.iter().all(|l| l.contains("the swarm left")), "{left:?}");
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains(" joined (from ")).count(), 24, "{text}");
}
