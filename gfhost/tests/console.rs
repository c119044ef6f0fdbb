//! The web console in a real browser: Debian's chromium, headless, driven through WebDriver (Debian's
//! chromium-driver, both installed by `./dev setup`) against a `gfhost server` with a client playing in it.
//! Loopback only; every wait is bounded and ends as soon as what it waits for is there.
//!
//! With `GAMEFEATURE_BLESS=1` the test also writes its screenshot to `docs/console.png`, the picture the book
//! shows.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, gfhost, installed, setup, Running, Service};
use fantoccini::{Client, ClientBuilder, Locator};

/// How long a wait may take before the test fails: only a broken build comes near it.
const PATIENCE: Duration = Duration::from_secs(120);

const TOKEN: &str = "console-test-token-0123456789";

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// chromedriver on a free loopback port, once it answers.
fn start_driver() -> (Service, u16) {
    let port = free_port();
    let child = Command::new(installed("chromedriver", "browser"))
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromedriver");
    let driver = Service(child);
    let started = Instant::now();
    while agent().get(&format!("http://127.0.0.1:{port}/status")).call().map(|r| r.status().as_u16()).ok() != Some(200)
    {
        assert!(started.elapsed() < PATIENCE, "chromedriver never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    (driver, port)
}

/// The browser's console lines at SEVERE (errors: a script that threw, a resource refused, a CSP violation),
/// read through chromedriver's log endpoint.
fn browser_errors(driver_port: u16, session: &str) -> Vec<String> {
    let url = format!("http://127.0.0.1:{driver_port}/session/{session}/se/log");
    let mut response = agent()
        .post(&url)
        .header("Content-Type", "application/json")
        .send(r#"{"type":"browser"}"#)
        .expect("reading the browser's log");
    let body: serde_json::Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    body["value"]
        .as_array()
        .unwrap_or_else(|| panic!("no browser log: {body}"))
        .iter()
        .filter(|entry| entry["level"] == "SEVERE")
        .map(|entry| entry["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Asks the page until `ready` holds (bounded by [`PATIENCE`]).
async fn eventually(client: &Client, what: &str, script: &str) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let value = client.execute(script, vec![]).await.expect("running a script in the page");
        if !value.is_null() && value != serde_json::Value::Bool(false) {
            return value;
        }
        assert!(started.elapsed() < PATIENCE, "{what}: never");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn click(client: &Client, selector: &str) {
    client.find(Locator::Css(selector)).await.unwrap_or_else(|e| panic!("{selector}: {e}")).click().await.unwrap();
}

/// What the last action's answer said: `(status, text)` once it has come.
async fn action_result(client: &Client) -> (String, String) {
    let script = "const r = document.querySelector('#action-result'); \
                  return r.dataset.status ? [r.dataset.status, r.textContent] : null;";
    let answer = eventually(client, "the action's answer", script).await;
    (answer[0].as_str().unwrap().to_string(), answer[1].as_str().unwrap().to_string())
}

/// The plugins the page lists, with whether each runs in the world.
const PLUGIN_STATES: &str = "return Object.fromEntries([...document.querySelectorAll('#plugins tbody tr')]\
                             .map(r => [r.dataset.plugin, r.dataset.state]));";

/// A server playing the default experience, with the console on loopback and its token in a file, and one
/// client playing in it: the page loads without a console error, lists the plugins and the world's actors,
/// refuses an action without the token and takes it with the token, and follows a reload.
#[test]
fn the_console_shows_the_world_and_takes_actions_only_with_the_token() {
    let (plugins, experiences) = setup();
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    let token_file = scratch.path().join("console.token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let mut command = gfhost(plugins.path(), &cache);
    command.arg("server").arg(experiences.path().join("default.toml"));
    command.args(["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--admin-token-file"]).arg(&token_file);
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
    client.arg(experiences.path());
    let _client = Running::start(client);
    server.wait_for(|l| l.contains(" client 1 joined"));

    let (_driver, driver_port) = start_driver();
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tokio.block_on(async {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": installed("chromium", "browser"),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1400,1100", "--no-first-run"],
            }),
        );
        capabilities.insert("goog:loggingPrefs".into(), serde_json::json!({ "browser": "ALL" }));
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let browser = ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{driver_port}"))
            .await
            .expect("a chromium session");
        let session = browser.session_id().await.unwrap().expect("a session id");
        let outcome = exercise(&browser, &admin, driver_port, &session).await;
        let _ = browser.close().await;
        outcome
    });

    // Every action is in the server's log: who (from where), when, what, and what came of it.
    let audit = server.wait_for(|l| l.starts_with("console: ") && l.contains("deactivate damageable-props"));
    assert!(audit.contains("the operator at 127.0.0.1:") && audit.contains("damageable-props deactivated"), "{audit}");
    server.signal(libc::SIGTERM);
    let (status, text) = server.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}

async fn exercise(browser: &Client, admin: &str, driver_port: u16, session: &str) {
    browser.goto(&format!("http://{admin}/")).await.unwrap();
    let listed = "const rows = document.querySelectorAll('#plugins tbody tr').length; \
                  const actors = document.querySelectorAll('#actors details').length; \
                  const clients = document.querySelectorAll('#clients tbody tr').length; \
                  return rows >= 8 && actors > 0 && clients == 1 ? [rows, actors] : null;";
    eventually(browser, "the plugins, actors and client listed", listed).await;
    let states = eventually(browser, "plugin states", PLUGIN_STATES).await;
    for plugin in ["shooter-core", "lyra-character", "damageable-props", "scoreboard", "announcer", "match-stats"] {
        assert_eq!(states[plugin], "running", "{plugin} in {states}");
    }
    let classes =
        eventually(browser, "classes", "return document.querySelector('#classes').textContent || null;").await;
    assert!(classes.as_str().unwrap().contains("HeroCharacter"), "{classes}");
    // Live: the snapshots keep coming.
    let seq = eventually(browser, "a snapshot", "return Number(document.body.dataset.seq) || null;").await;
    let next = format!("return Number(document.body.dataset.seq) > {seq} || null;");
    eventually(browser, "a later snapshot", &next).await;
    assert_eq!(browser_errors(driver_port, session), Vec::<String>::new(), "the page logged errors");

    // Without the token: refused, and the plugin plays on.
    click(browser, "button[data-action=deactivate][data-plugin=damageable-props]").await;
    let (status, text) = action_result(browser).await;
    assert_eq!(status, "refused", "{text}");
    assert!(text.contains("401"), "{text}");
    let states = eventually(browser, "plugin states", PLUGIN_STATES).await;
    assert_eq!(states["damageable-props"], "running");

    // With the token: taken, and the page shows it.
    browser.find(Locator::Css("#token")).await.unwrap().send_keys(TOKEN).await.unwrap();
    click(browser, "button[data-action=deactivate][data-plugin=damageable-props]").await;
    let (status, text) = action_result(browser).await;
    assert_eq!((status.as_str(), text.as_str()), ("ok", "damageable-props deactivated"));
    let gone = "const r = document.querySelector('#plugins tr[data-plugin=\"damageable-props\"]'); \
                return r && r.dataset.state !== 'running' || null;";
    eventually(browser, "damageable-props out of the world", gone).await;

    // A reload: the log strip shows the new version replacing the old, and the plugin runs on.
    click(browser, "button[data-action=reload][data-plugin=score-keeper]").await;
    let (status, text) = action_result(browser).await;
    assert_eq!(status, "ok", "{text}");
    let reloaded = "return [...document.querySelectorAll('#log li')].some(l => l.textContent.includes('score-keeper reloaded')) || null;";
    eventually(browser, "the reload in the log", reloaded).await;
    let states = eventually(browser, "plugin states", PLUGIN_STATES).await;
    assert_eq!(states["score-keeper"], "running");

    let picture = browser.screenshot().await.expect("a screenshot");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console.png");
    std::fs::write(&target, &picture).unwrap();
    if std::env::var("GAMEFEATURE_BLESS").is_ok_and(|b| b == "1") {
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/console.png"), &picture).unwrap();
    }
}

/// `gfhost play --admin`, the token from the environment: the snapshot describes the standalone world, an
/// action from another site is refused, a plugin folder installed from the console is activated (compiled off
/// the frame first), and `end-match` with the token ends play (as `quit` does), each action logged.
#[test]
fn play_serves_the_console_and_ends_when_the_operator_ends_the_match() {
    let (plugins, experiences) = setup();
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("script.txt");
    std::fs::write(&script, "wait 60000\n").unwrap();
    let mut command = gfhost(plugins.path(), &scratch.path().join("cache"));
    command.arg("play").arg(experiences.path().join("default.toml")).args(["--admin", "127.0.0.1:0", "--script"]);
    command.arg(&script).env("GFHOST_ADMIN_TOKEN", TOKEN);
    let mut play = Running::start(command);
    let admin = play.wait_for(|l| l.starts_with("admin endpoint on http://"));
    let admin = admin.trim_start_matches("admin endpoint on http://").split_whitespace().next().unwrap().to_string();
    play.wait_for(|l| l.contains("loaded; commands:"));

    let mut response = agent().get(&format!("http://{admin}/api/snapshot")).call().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let snapshot: serde_json::Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(snapshot["world"]["net_mode"], "standalone", "{snapshot}");
    assert_eq!(snapshot["actions"]["allowed"], true, "{snapshot}");
    let players = snapshot["classes"]["HeroCharacter"].as_u64();
    assert_eq!(players, Some(2), "the two players play spawned: {}", snapshot["classes"]);
    assert!(snapshot["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "lyra-character" && p["in_world"] == "running"));

    let act = |origin: Option<&str>, action: &str| {
        let mut request = agent()
            .post(&format!("http://{admin}/api/actions"))
            .header("Content-Type", "application/json")
            .header("Authorization", &format!("Bearer {TOKEN}"));
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        let mut response = request.send(action).unwrap();
        (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
    };
    let end_match = r#"{"action":"end-match","reason":"test over"}"#;
    let (status, text) = act(Some("http://evil.example"), end_match);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("own page"), "{text}");
    // A page that points its own name at loopback is not answered.
    let mut rebound =
        agent().get(&format!("http://{admin}/api/snapshot")).header("Host", "evil.example").call().unwrap();
    assert_eq!(rebound.status().as_u16(), 421, "{}", rebound.body_mut().read_to_string().unwrap());
    // A mod that was not installed: installed from its folder, then activated (its code compiled first).
    let more = gamefeature_plugin_artifacts::PluginDir::with(&[gamefeature_plugin_artifacts::DASH]);
    let folder = more.folder(&gamefeature_plugin_artifacts::DASH);
    let install = serde_json::json!({ "action": "install", "path": folder }).to_string();
    let (status, text) = act(None, &install);
    assert_eq!(status, 200, "{text}");
    assert!(text.starts_with("dash installed from "), "{text}");
    let (status, text) = act(None, r#"{"action":"activate","plugin":"dash"}"#);
    assert_eq!((status, text.trim()), (200, "dash active"));
    let (status, text) = act(None, r#"{"action":"activate","plugin":"no-such-mod"}"#);
    assert_eq!(status, 409, "{text}");
    let (status, text) = act(None, end_match);
    assert_eq!((status, text.trim()), (200, "ending the match"));
    play.wait_for(|l| l.contains("asked to end the match (test over): ending the match"));
    play.wait_for(|l| l == "ending play: test over");
    let (status, text) = play.finish();
    assert_eq!(status.code(), Some(0), "{text}");
}
