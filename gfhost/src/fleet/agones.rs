//! `gfhost server --agones`: a well-behaved Agones game server, through the official SDK and the sidecar
//! beside it (gRPC on `AGONES_SDK_GRPC_PORT`, 9357 by default).
//!
//! - Connects to the sidecar, retrying while it starts.
//! - Pings health once a second while the server loads or its frames keep coming ([`ServerHealth`]): a stalled
//!   world stops pinging, and Agones marks it Unhealthy. A health stream that ends is opened again.
//! - Ready once the experience is loaded and the port bound, labelled with the experience it plays
//!   (`agones.dev/sdk-experience`), so allocations select servers by experience, and annotated with its
//!   certificate's SHA-256 (`agones.dev/sdk-certificate-sha256`), which the matchmaker hands players to pin.
//! - Watches for Allocated (watching again whenever a watch ends: a sidecar restarts, or drops a watcher that fell
//!   behind) and reads its match from the GameServer's annotations: `gamefeature.dev/match-id`,
//!   `gamefeature.dev/ticket-key` (base64 of at least 32 bytes; a key mounted from a Secret with
//!   `--ticket-key-file` serves every match instead) and `gamefeature.dev/experience`.
//! - Reports its players in the `players` Counter (declared in the GameServer's spec, see `deploy/`).
//! - Shutdown at the end of the match; the server then waits for SIGTERM.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use gamefeature_host::net::ticket::TicketKey;
use tokio::sync::watch;

use super::{Allocation, Orchestrator};
use crate::admin::ServerHealth;

/// How long a server waits for its sidecar in all (the SDK tries for 30 s each time).
const SIDECAR_WAIT: Duration = Duration::from_secs(120);

/// How often health is pinged; Agones' default asks for one every 5 s.
const HEALTH_PERIOD: Duration = Duration::from_secs(1);

/// How long after a GameServer watch ended it is started again.
const REWATCH_AFTER: Duration = Duration::from_secs(1);

/// The label the server's experience is published under (the SDK prefixes `agones.dev/sdk-`).
pub const EXPERIENCE_LABEL: &str = "experience";
/// The server's certificate's SHA-256 (hex), published at Ready (the SDK prefixes `agones.dev/sdk-`).
pub const CERTIFICATE_ANNOTATION: &str = "certificate-sha256";
pub const MATCH_ID_ANNOTATION: &str = "gamefeature.dev/match-id";
pub const TICKET_KEY_ANNOTATION: &str = "gamefeature.dev/ticket-key";
pub const EXPERIENCE_ANNOTATION: &str = "gamefeature.dev/experience";
/// The Counter the server's players are reported in.
pub const PLAYERS_COUNTER: &str = "players";

pub struct Agones {
    sdk: agones::Sdk,
    tokio: tokio::runtime::Handle,
    game_server: watch::Receiver<Option<agones::GameServer>>,
    allocated: bool,
    players_reported: Option<usize>,
    /// The health pings and the GameServer watch, which run until this is dropped.
    background: [tokio::task::AbortHandle; 2],
}

impl Drop for Agones {
    /// Stops pinging health (Agones then sees the server go, as it should) and watching the GameServer: neither
    /// outlives the server's connection to its sidecar.
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
    }
}

impl Agones {
    /// Connects to the sidecar (retrying while it starts), then pings health and watches the GameServer.
    pub fn connect(tokio: &tokio::runtime::Runtime, health: Arc<ServerHealth>) -> Result<Self> {
        let started = std::time::Instant::now();
        let sdk = loop {
            match tokio.block_on(agones::Sdk::new(None, None)) {
                Ok(sdk) => break sdk,
                Err(e) if started.elapsed() < SIDECAR_WAIT => {
                    eprintln!("agones: the SDK server does not answer yet ({e}); trying again");
                    std::thread::sleep(Duration::from_secs(1));
                }
                Err(e) => bail!("agones: no SDK server answered within {SIDECAR_WAIT:?}: {e}"),
            }
        };
        let _runtime = tokio.enter();
        let pinging = tokio.spawn(ping_health(sdk.clone(), health)).abort_handle();
        let (publish, game_server) = watch::channel(None);
        let watching = tokio.spawn(watch_game_server(sdk.clone(), publish)).abort_handle();
        println!("agones: connected to the SDK server");
        let background = [pinging, watching];
        Ok(Agones {
            sdk,
            tokio: tokio.handle().clone(),
            game_server,
            allocated: false,
            players_reported: None,
            background,
        })
    }
}

/// Pings health every [`HEALTH_PERIOD`] while the world is not stalled. The stream the pings go through ends
/// when the sidecar restarts; another is opened then, or Agones would take the silence for a dead server.
async fn ping_health(sdk: agones::Sdk, health: Arc<ServerHealth>) {
    let mut pings = sdk.health_check();
    let mut period = tokio::time::interval(HEALTH_PERIOD);
    // While the sidecar is away, each new stream takes a ping or so and closes again: only the first closing
    // after the stream held for a few pings is worth a warning.
    let (mut warned, mut held) = (false, 0u32);
    loop {
        period.tick().await;
        if health.is_stalled() {
            continue;
        }
        if pings.send(()).await.is_ok() {
            held += 1;
            warned &= held < 3;
            continue;
        }
        if !warned {
            tracing::warn!("agones: the health stream closed; opening another");
        }
        (warned, held) = (true, 0);
        pings = sdk.health_check();
    }
}

/// Publishes every GameServer the sidecar sends, for as long as the server listens.
///
/// A watch ends when the sidecar restarts, and errs when the sidecar drops a watcher that fell behind (the SDK
/// server's stream fails a lagging watcher, which a busy machine makes happen between Ready's three updates).
/// Left ended, the server would never see its allocation: so a watch that ends is started again after
/// [`REWATCH_AFTER`], and each new watch begins with the GameServer as it is now.
async fn watch_game_server(mut sdk: agones::Sdk, publish: watch::Sender<Option<agones::GameServer>>) {
    while !publish.is_closed() {
        match sdk.watch_gameserver().await {
            Ok(mut stream) => loop {
                match stream.message().await {
                    Ok(Some(update)) => {
                        if publish.send(Some(update)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        println!("agones: the GameServer watch ended; watching again");
                        break;
                    }
                    Err(e) => {
                        println!("agones: the GameServer watch failed ({e}); watching again");
                        break;
                    }
                }
            },
            // Once a second while the sidecar is away: a debug line, not a warning each time.
            Err(e) => tracing::debug!("agones: cannot watch the GameServer ({e}); trying again"),
        }
        tokio::time::sleep(REWATCH_AFTER).await;
    }
}

impl Orchestrator for Agones {
    fn ready(&mut self, experience: &str, certificate: &str) -> Result<()> {
        let mut sdk = self.sdk.clone();
        let experience = experience.to_string();
        let certificate = certificate.to_string();
        self.tokio.block_on(async move {
            // What a matchmaker hands players with the address, so that they can pin this server.
            sdk.set_annotation(CERTIFICATE_ANNOTATION, certificate)
                .await
                .context("agones: annotating the certificate")?;
            // A label value is at most 63 characters of [A-Za-z0-9._-]; another name is not published.
            if is_label_value(&experience) {
                sdk.set_label(EXPERIENCE_LABEL, experience).await.context("agones: labelling the experience")?;
            }
            sdk.ready().await.context("agones: Ready")
        })?;
        println!("agones: Ready");
        Ok(())
    }

    fn allocation(&mut self) -> Result<Option<Allocation>> {
        if self.allocated || !self.game_server.has_changed().unwrap_or(false) {
            return Ok(None);
        }
        let Some(game_server) = self.game_server.borrow_and_update().clone() else {
            return Ok(None);
        };
        if game_server.status.as_ref().is_none_or(|status| status.state != "Allocated") {
            return Ok(None);
        }
        self.allocated = true;
        let annotations = game_server.object_meta.map(|meta| meta.annotations).unwrap_or_default();
        let ticket_key = match annotations.get(TICKET_KEY_ANNOTATION) {
            Some(text) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .with_context(|| format!("agones: the annotation {TICKET_KEY_ANNOTATION} is not base64"))?;
                Some(TicketKey::new(bytes).map_err(|e| anyhow::anyhow!("agones: {TICKET_KEY_ANNOTATION}: {e}"))?)
            }
            None => None,
        };
        Ok(Some(Allocation {
            match_id: annotations.get(MATCH_ID_ANNOTATION).cloned(),
            ticket_key,
            experience: annotations.get(EXPERIENCE_ANNOTATION).cloned(),
        }))
    }

    fn players(&mut self, playing: usize) {
        if self.players_reported == Some(playing) {
            return;
        }
        let first = self.players_reported.is_none();
        self.players_reported = Some(playing);
        let sdk = self.sdk.clone();
        self.tokio.spawn(async move {
            let mut beta = sdk.beta().clone();
            if let Err(e) = beta.set_counter_count(PLAYERS_COUNTER, playing as i64).await {
                // Said once: a GameServer without the Counter (or an SDK server without Counters) would
                // otherwise fill the log at every join.
                if first {
                    eprintln!("agones: players are not reported (the `{PLAYERS_COUNTER}` Counter: {e})");
                }
            }
        });
    }

    fn shutdown(&mut self) -> Result<()> {
        let mut sdk = self.sdk.clone();
        self.tokio.block_on(async move { sdk.shutdown().await }).context("agones: Shutdown")?;
        println!("agones: Shutdown");
        Ok(())
    }
}

/// Whether `value` may be a Kubernetes label value.
fn is_label_value(value: &str) -> bool {
    value.len() <= 63
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    #[test]
    fn experience_file_names_that_are_label_values_are_published() {
        assert!(super::is_label_value("default.toml"));
        assert!(super::is_label_value("capture-the-flag_v2.toml"));
        assert!(!super::is_label_value("my experience.toml"));
        assert!(!super::is_label_value(&"x".repeat(64)));
        assert!(!super::is_label_value(".hidden"));
    }
}
