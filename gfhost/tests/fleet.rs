//! `gfhost server` as a fleet runs it: its admin endpoint scraped by a real Prometheus, and (with the `agones`
//! feature) its lifecycle driven by an Agones SDK server — both installed by `./dev setup` and started here on
//! loopback. Every wait is bounded and ends as soon as what it waits for is there.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, gfhost, installed, setup, Running, Service};
use gamefeature_plugin_artifacts::*;

/// How long a wait may take before the test fails: only a broken build comes near it.
const PATIENCE: Duration = Duration::from_secs(120);

/// `GET url`: the status and the body (an error status is an answer too).
fn get(url: &str) -> Option<(u16, String)> {
    get_with(url, &[])
}

/// `GET url?name=value&...`, the query encoded.
fn get_with(url: &str, query: &[(&str, &str)]) -> Option<(u16, String)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut response = agent.get(url).query_pairs(query.iter().copied()).call().ok()?;
    let status = response.status().as_u16();
    Some((status, response.body_mut().read_to_string().ok()?))
}

/// Asks until `answer` says yes (bounded by [`PATIENCE`]); what it last said.
fn eventually<T>(what: &str, mut answer: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = answer() {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "{what}: never");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A server with an admin endpoint, one client playing in it: Prometheus scrapes the server's metrics (its
/// frames, each plugin's calls and CPU time, the client's traffic and backlog, the compile cache), and the
/// health and readiness endpoints answer as an orchestrator's probes expect.
#[test]
fn prometheus_scrapes_a_serving_servers_metrics() {
    let (plugins, experiences) = setup();
    let cache = shared_cache();
    let mut command = gfhost(plugins.path(), &cache);
    command.arg("server").arg(experiences.path().join("default.toml"));
    command.args(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--token", "sesame"]);
    let mut server = Running::start(command);
    let admin = server.wait_for(|l| l.starts_with("admin endpoint on http://"));
    let admin = admin.trim_start_matches("admin endpoint on http://").split_whitespace().next().unwrap().to_string();
    let listening = server.wait_for(|l| l.starts_with("listening on "));
    let addr = listening.trim_start_matches("listening on ").split_whitespace().next().unwrap().to_string();
    let pin = server.wait_for(|l| l.starts_with("certificate sha256: "));
    let pin = pin.trim_start_matches("certificate sha256: ").to_string();
    server.wait_for(|l| l.starts_with("ready: "));
    let mut client = gfhost(plugins.path(), &cache);
    client.args(["client", "--connect", &addr, "--server-cert-sha256", &pin, "--experiences"]);
    client.arg(experiences.path()).env("GFHOST_TOKEN", "sesame");
    let _client = Running::start(client);
    server.wait_for(|l| l.contains(" client 1 joined"));
    // Asked until it answers: a starved machine may leave the frame loop silent for a while, which is what
    // /healthz reports.
    eventually("healthy", || get(&format!("http://{admin}/healthz")).filter(|(s, _)| *s == 200));
    assert_eq!(eventually("ready", || get(&format!("http://{admin}/readyz")).filter(|(s, _)| *s == 200)).1, "ready\n");

    let folder = tempfile::TempDir::new().unwrap();
    let config = folder.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: gfhost\n    \
             static_configs:\n      - targets: ['{admin}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let _prometheus = Service(
        Command::new(installed("prometheus", "prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", folder.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting prometheus"),
    );
    // A query's samples, as Prometheus answers them once it has scraped them: (labels, value) pairs.
    let query = |expression: &str| -> Option<Vec<(serde_json::Value, f64)>> {
        let (status, body) = get_with(&format!("http://127.0.0.1:{port}/api/v1/query"), &[("query", expression)])?;
        let answer: serde_json::Value = serde_json::from_str(&body).ok().filter(|_| status == 200)?;
        let samples: Vec<(serde_json::Value, f64)> = (answer["data"]["result"].as_array()?.iter())
            .filter_map(|r| Some((r["metric"].clone(), r["value"][1].as_str()?.parse().ok()?)))
            .collect();
        (!samples.is_empty()).then_some(samples)
    };
    let targets = format!("http://127.0.0.1:{port}/api/v1/targets");
    let scraped = || query("up{job=\"gfhost\"}").filter(|s| s[0].1 == 1.0);
    let up = eventually(&format!("the scrape (see {targets})"), || {
        let up = scraped();
        if up.is_none() {
            eprintln!("targets: {:?}", get(&targets));
        }
        up
    });
    assert_eq!(up.len(), 1);
    let frames = eventually("frames", || query("gamefeature_frame_seconds_count").filter(|s| s[0].1 > 0.0));
    assert!(frames[0].1 >= 1.0);
    let calls = eventually("lyra's calls", || query("gamefeature_plugin_calls_total{plugin=\"lyra-character\"} > 0"));
    assert_eq!(calls.len(), 1);
    eventually("plugin CPU", || query("gamefeature_plugin_cpu_seconds_total{plugin=\"lyra-character\"} > 0"));
    let playing = eventually("a playing client", || query("gamefeature_clients{state=\"playing\"} == 1"));
    assert_eq!(playing.len(), 1);
    let sent = eventually("bytes sent", || query("gamefeature_client_sent_bytes_total > 1000"));
    assert_eq!(sent[0].0["client"], "1", "{sent:?}");
    eventually("bytes received", || query("gamefeature_client_received_bytes_total{client=\"1\"} > 0"));
    eventually("the backlog", || query("gamefeature_client_backlog_values{client=\"1\"}"));
    // The plugins were compiled or read from the cache, once each.
    let components = eventually("the compile cache", || {
        query("gamefeature_compile_cache_hits_total + gamefeature_compiled_components_total > 0")
    });
    assert!(components[0].1 >= DEFAULT_PLUGINS.len() as f64, "{components:?}");

    // The Grafana dashboard in deploy/: each of its metrics has series here, and each of its queries is one
    // this Prometheus evaluates (its variables standing for this job).
    let dashboard = grafana_dashboard();
    for metric in metrics_named_in(&dashboard) {
        eventually(&format!("{metric} in the dashboard"), || query(&format!("count({{__name__=\"{metric}\"}}) > 0")));
    }
    for expression in expressions_in(&dashboard) {
        let expression = expression.replace("$job", "gfhost").replace("$instance", ".*");
        let (status, body) =
            get_with(&format!("http://127.0.0.1:{port}/api/v1/query"), &[("query", &expression)]).unwrap();
        assert_eq!(status, 200, "the dashboard's query {expression}: {body}");
    }

    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

/// The Grafana dashboard `deploy/` ships for the server's metrics.
fn grafana_dashboard() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/grafana/gamefeature-server.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Every PromQL expression of a dashboard's panels.
fn expressions_in(dashboard: &serde_json::Value) -> Vec<String> {
    let panels = dashboard["panels"].as_array().expect("panels");
    let expressions: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .map(|t| t["expr"].as_str().expect("an expression").to_string())
        .collect();
    assert!(expressions.len() >= panels.len(), "a panel without a query");
    expressions
}

/// The `gamefeature_` metrics a dashboard's expressions name.
fn metrics_named_in(dashboard: &serde_json::Value) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for expression in expressions_in(dashboard) {
        for (start, _) in expression.match_indices("gamefeature_") {
            let rest = &expression[start..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            names.insert(rest[..end].to_string());
        }
    }
    names
}

/// A server of the default experience with an admin endpoint on loopback, and that endpoint's address.
fn server_with_admin(plugins: &PluginDir, experiences: &ExperienceDir) -> (Running, String) {
    let mut command = gfhost(plugins.path(), &shared_cache());
    command.arg("server").arg(experiences.path().join("default.toml"));
    command.args(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"]);
    let mut server = Running::start(command);
    let admin = server.wait_for(|l| l.starts_with("admin endpoint on http://"));
    let admin = admin.trim_start_matches("admin endpoint on http://").split_whitespace().next().unwrap().to_string();
    (server, admin)
}

/// The probes an orchestrator sends: alive while the experience loads, ready once it has loaded; metrics in
/// the OpenMetrics text format; nothing else served. (A stalled frame loop's answer is unit-tested in `admin`.)
#[test]
fn a_servers_probes_answer_while_it_loads_and_plays() {
    let (plugins, experiences) = setup();
    let (mut server, admin) = server_with_admin(&plugins, &experiences);
    // Bound before the experience loads: alive, not ready.
    let loading = get(&format!("http://{admin}/healthz")).unwrap();
    assert_eq!(loading.0, 200, "{loading:?}");
    server.wait_for(|l| l.starts_with("ready: "));
    eventually("ready", || get(&format!("http://{admin}/readyz")).filter(|(s, _)| *s == 200));
    let (status, body) = get(&format!("http://{admin}/metrics")).unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("# TYPE gamefeature_frame_seconds histogram") && body.ends_with("# EOF\n"), "{body}");
    assert_eq!(get(&format!("http://{admin}/nothing")).map(|(s, _)| s), Some(404));
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

#[cfg(feature = "agones")]
mod agones {
    use super::*;

    /// The Agones SDK server's view of the GameServer: `GET /` answers it as YAML.
    fn game_server() -> Option<String> {
        get("http://127.0.0.1:9357/").filter(|(status, _)| *status == 200).map(|(_, body)| body)
    }

    /// The dummy Agones SDK server on its default ports, once it answers.
    fn start_sdk_server() -> Service {
        let sdk_server = Service(
            Command::new(installed("dummy-agones", "agones/bin"))
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting the Agones SDK server"),
        );
        eventually("the SDK server", game_server);
        sdk_server
    }

    /// What a matchmaker's GameServerAllocation does to the GameServer: Allocated, with the match's
    /// annotations. The SDK server takes the whole GameServer (JSON is YAML).
    fn allocate(annotations: &serde_json::Value) {
        let game_server = serde_json::json!({
            "objectMeta": {
                "name": "gfhost-test", "namespace": "default", "uid": "", "resourceVersion": "", "generation": 0,
                "creationTimestamp": 0, "deletionTimestamp": 0, "annotations": annotations,
                "labels": {"agones.dev/sdk-experience": "default.toml"}
            },
            "status": {"state": "Allocated", "address": "", "addresses": [], "ports": [], "counters": {}, "lists": {}}
        });
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let response = agent
            .post("http://127.0.0.1:9357/")
            .header("content-type", "application/yaml")
            .send(game_server.to_string())
            .expect("posting the allocation");
        assert_eq!(response.status().as_u16(), 200);
    }

    /// Ready once loaded (labelled with its experience) and closed to players until its match; Allocated
    /// with a match id and a ticket key in its annotations, it takes that match's players; when the last one
    /// has left, it ends play, calls Shutdown, and exits 0 on the SIGTERM that follows.
    #[test]
    fn an_agones_server_goes_ready_allocated_shutdown() {
        // The SDK server listens on Agones' fixed port: one such test at a time on this machine, whichever
        // suite runs it (two suites side by side otherwise talk to each other's SDK server).
        let port = std::env::temp_dir().join("gamefeature-tests-agones-9357.lock");
        let _port = gamefeature_host::file_lock::FileLock::exclusive(&port, || ()).unwrap();
        let (plugins, experiences) = setup();
        let cache = shared_cache();
        let sdk_server = start_sdk_server();

        let mut command = gfhost(plugins.path(), &cache);
        command.arg("server").arg(experiences.path().join("default.toml"));
        command.args(["--listen", "127.0.0.1:0", "--agones"]);
        let mut server = Running::start(command);
        let listening = server.wait_for(|l| l.starts_with("listening on "));
        let addr = listening.trim_start_matches("listening on ").split_whitespace().next().unwrap().to_string();
        let pin = server.wait_for(|l| l.starts_with("certificate sha256: "));
        let pin = pin.trim_start_matches("certificate sha256: ").to_string();
        server.wait_for(|l| l == "agones: Ready");
        let ready = game_server().unwrap();
        assert!(ready.contains("state: Ready") && ready.contains("default.toml"), "{ready}");
        // The matchmaker reads what players pin from the GameServer.
        assert!(ready.contains(&format!("certificate-sha256: {pin}")), "{ready}");

        let folder = tempfile::TempDir::new().unwrap();
        let key_file = folder.path().join("ticket.key");
        std::fs::write(&key_file, [5u8; 32]).unwrap();
        let ticket = |match_id: &str| {
            let output = gfhost(plugins.path(), &cache)
                .args(["ticket", "--player", "p-1", "--name", "Ada", "--match-id", match_id, "--key-file"])
                .arg(&key_file)
                .output()
                .unwrap();
            assert!(output.status.success());
            String::from_utf8(output.stdout).unwrap().trim().to_string()
        };
        let client = |ticket: &str, seconds: &str| {
            let mut command = gfhost(plugins.path(), &cache);
            command.args(["client", "--connect", &addr, "--server-cert-sha256", &pin, "--seconds", seconds]);
            command.arg("--experiences").arg(experiences.path()).env("GFHOST_TOKEN", ticket);
            command
        };
        // Before its match the server takes nobody, whatever they hold.
        let early = client(&ticket("m-7"), "1").output().unwrap();
        let said = String::from_utf8_lossy(&early.stderr);
        assert!(said.contains("the server takes no players yet: it has no match"), "{said}");

        // The sidecar restarts (its watch of the GameServer ends with it): the server watches the new one, and
        // still sees its allocation. A server that stopped watching when its watch ended never did.
        drop(sdk_server);
        let sdk_server = start_sdk_server();
        server.wait_for(|l| l.contains("agones: the GameServer watch") && l.contains("watching again"));

        use base64::Engine as _;
        let key = base64::engine::general_purpose::STANDARD.encode([5u8; 32]);
        allocate(&serde_json::json!({"gamefeature.dev/match-id": "m-7", "gamefeature.dev/ticket-key": key}));
        server.wait_for(|l| l == "allocated: match m-7");
        // A ticket for another match is refused; the match's player plays, then leaves.
        let stray = client(&ticket("m-8"), "1").output().unwrap();
        assert!(String::from_utf8_lossy(&stray.stderr).contains("it is for another match"));
        let player = Running::start(client(&ticket("m-7"), "2"));
        server.wait_for(|l| l.contains(" joined (from 127.0.0.1:"));
        let (status, text) = player.finish();
        assert_eq!(status.code(), Some(0), "{text}");
        server.wait_for(|l| l == "match over: the last player left; ending play");
        server.wait_for(|l| l == "agones: Shutdown");
        server.wait_for(|l| l == "waiting for SIGTERM");
        assert!(game_server().unwrap().contains("state: Shutdown"));
        server.signal(libc::SIGTERM);
        let (status, text) = server.finish();
        assert_eq!(status.code(), Some(0), "{text}");
        assert!(text.ends_with("stopped"), "{text}");

        // A fleet's next server, allocated with a ticket key it cannot read: its match ends at once, cleanly,
        // saying why, and the orchestrator is told to replace it.
        let mut command = gfhost(plugins.path(), &cache);
        command.arg("server").arg(experiences.path().join("default.toml"));
        command.args(["--listen", "127.0.0.1:0", "--agones"]);
        let mut server = Running::start(command);
        server.wait_for(|l| l == "agones: Ready");
        allocate(&serde_json::json!({"gamefeature.dev/match-id": "m-9", "gamefeature.dev/ticket-key": "not base64!"}));
        let over = server.wait_for(|l| l.starts_with("match over: "));
        assert!(over.contains("gamefeature.dev/ticket-key is not base64"), "{over}");
        server.wait_for(|l| l == "agones: Shutdown");
        server.signal(libc::SIGTERM);
        let (status, text) = server.finish();
        assert_eq!(status.code(), Some(0), "{text}");
        drop(sdk_server);
    }
}

/// The series a scrape holds (its lines that are not comments), but the plugins' (which come as plugins are
/// first called, whatever peers do).
fn series(metrics: &str) -> Vec<&str> {
    metrics.lines().filter(|l| !l.starts_with('#') && !l.contains("{plugin=")).collect()
}

/// A metric's value in a scrape, by its series' name and labels as written.
fn value(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// A crowd of connections that never join (no token needed): each is closed, the series a scrape holds stay
/// as many as before, and the connections closed show by why, with what they carried counted server-wide.
#[test]
fn connections_that_never_join_leave_the_series_flat_and_are_counted_by_why() {
    use gamefeature_host::net::transport::quic::QuicClient;
    use gamefeature_host::net::transport::trust::{Fingerprint, ServerTrust};
    use gamefeature_host::net::transport::{Channel, ClientTransport};

    let (plugins, experiences) = setup();
    let (mut server, admin) = server_with_admin(&plugins, &experiences);
    let listening = server.wait_for(|l| l.starts_with("listening on "));
    let addr = listening.trim_start_matches("listening on ").split_whitespace().next().unwrap().parse().unwrap();
    let pin = server.wait_for(|l| l.starts_with("certificate sha256: "));
    let pin = ServerTrust::Pinned(Fingerprint::parse(pin.trim_start_matches("certificate sha256: ")).unwrap());
    server.wait_for(|l| l.starts_with("ready: "));
    let metrics = || get(&format!("http://{admin}/metrics")).map(|(_, body)| body).unwrap_or_default();
    // Once the server has played a frame and read its clients: every series of a quiet server is there.
    let read = |m: &String| m.contains("gamefeature_clients{state=\"greeting\"}") && m.contains("plugin_calls_total");
    let before = eventually("a first scrape", || Some(metrics()).filter(read));

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut crowd = Vec::new();
    for _ in 0..40 {
        let mut peer = runtime.block_on(QuicClient::connect(addr, &pin, Duration::from_secs(10))).unwrap();
        peer.send(Channel::Reliable, vec![0xff; 64]);
        crowd.push(peer);
    }
    let closed = "gamefeature_connections_closed_total{reason=\"protocol\"}";
    let after = eventually("40 connections closed for the protocol", || {
        Some(metrics()).filter(|m| value(m, closed).is_some_and(|n| n >= 40.0))
    });
    assert_eq!(series(&after).len(), series(&before).len(), "no series per connection:\n{after}");
    assert!(!after.contains("client=\""), "a connection that never joined has no series:\n{after}");
    let received = value(&after, "gamefeature_received_bytes_total").unwrap_or_default();
    assert!(received >= 40.0 * 64.0, "what the closed connections sent is counted: {received}\n{after}");
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}
