//! A server's admin endpoint, for orchestrators and monitoring: `/metrics` (Prometheus text exposition),
//! `/healthz` (the frame loop is making progress) and `/readyz` (the experience is loaded, the port is bound,
//! the server is not stopping or full, and its frame loop is not stalled); and for people, the web console at
//! `/` (see `gamefeature_console`). It listens on loopback unless told otherwise: metrics name plugins and
//! clients, which is nobody's business outside the cluster.

pub mod console;
pub mod metrics;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;

/// A frame loop silent this long is stalled: `/healthz` says so, and an orchestrator restarts the server.
pub const STALLED_AFTER: Duration = Duration::from_secs(5);

/// What the endpoints report, shared between the frame loop (which writes it) and the endpoint's tasks.
pub struct ServerHealth {
    started: Instant,
    /// Milliseconds since `started` at the end of the last frame; `u64::MAX` before the first.
    last_frame_ms: AtomicU64,
    ready: AtomicBool,
    registry: Mutex<Registry>,
}

impl ServerHealth {
    pub fn new(registry: Registry) -> Arc<Self> {
        Arc::new(ServerHealth {
            started: Instant::now(),
            last_frame_ms: AtomicU64::new(u64::MAX),
            ready: AtomicBool::new(false),
            registry: Mutex::new(registry),
        })
    }

    /// The frame loop finished a frame.
    pub fn frame_done(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
        self.last_frame_ms.store(ms, Ordering::Relaxed);
    }

    /// Whether the server takes players now.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Whether the frame loop has gone silent for [`STALLED_AFTER`] (a server still loading is not stalled): the
    /// Agones health pings stop when it has.
    #[cfg(feature = "agones")]
    pub fn is_stalled(&self) -> bool {
        self.stalled_for().is_some()
    }

    fn stalled_for(&self) -> Option<Duration> {
        self.stalled_at(self.started.elapsed())
    }

    /// How long the frame loop has been silent at `now` (since `started`), if that is a stall.
    fn stalled_at(&self, now: Duration) -> Option<Duration> {
        let last = self.last_frame_ms.load(Ordering::Relaxed);
        if last == u64::MAX {
            // Loading: not stalled, not ready either.
            return None;
        }
        let since = now.saturating_sub(Duration::from_millis(last));
        (since > STALLED_AFTER).then_some(since)
    }
}

/// Serves the endpoints on `address` from `tokio`, and `console`'s pages beside them; returns the address bound
/// (port 0 picks one).
pub fn serve(
    address: SocketAddr,
    health: Arc<ServerHealth>,
    console: Option<&gamefeature_console::Console>,
    tokio: &tokio::runtime::Runtime,
) -> Result<SocketAddr> {
    let listener = tokio
        .block_on(tokio::net::TcpListener::bind(address))
        .with_context(|| format!("binding the admin endpoint to {address}"))?;
    let bound = listener.local_addr()?;
    let mut app = axum::Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(health);
    if let Some(console) = console {
        app = app.merge(console.router(bound));
    }
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    tokio.spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("the admin endpoint stopped: {e}");
        }
    });
    Ok(bound)
}

async fn metrics(State(health): State<Arc<ServerHealth>>) -> impl IntoResponse {
    let mut text = String::new();
    let encoded = {
        let registry = health.registry.lock().unwrap_or_else(|e| e.into_inner());
        prometheus_client::encoding::text::encode(&mut text, &registry)
    };
    match encoded {
        Ok(()) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
            text,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("encoding the metrics: {e}\n")).into_response(),
    }
}

async fn healthz(State(health): State<Arc<ServerHealth>>) -> impl IntoResponse {
    match health.stalled_for() {
        None => (StatusCode::OK, "ok\n".to_string()),
        Some(since) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("stalled: no frame for {:.1} s\n", since.as_secs_f64()))
        }
    }
}

async fn readyz(State(health): State<Arc<ServerHealth>>) -> impl IntoResponse {
    readiness(&health, health.started.elapsed())
}

/// Whether the server takes players at `now` (since `started`): loaded, not full or stopping, and its frame
/// loop not stalled (a stalled server would take a player and never answer it).
fn readiness(health: &ServerHealth, now: Duration) -> (StatusCode, String) {
    if let Some(since) = health.stalled_at(now) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: stalled, no frame for {:.1} s\n", since.as_secs_f64()),
        );
    }
    if health.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ready\n".to_string())
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_silent_past_the_stall_time_is_stalled_and_a_loading_one_is_not() {
        let health = ServerHealth::new(Registry::default());
        let much_later = health.started.elapsed() + STALLED_AFTER * 10;
        assert_eq!(health.stalled_at(much_later), None, "no frame yet: loading");
        health.frame_done();
        let now = health.started.elapsed();
        assert_eq!(health.stalled_at(now + Duration::from_secs(1)), None);
        assert!(health.stalled_at(now + STALLED_AFTER + Duration::from_secs(1)).is_some());
        health.frame_done();
        assert_eq!(health.stalled_at(health.started.elapsed()), None, "frames again: healthy again");
    }

    /// A stalled server is not ready either, though it was when it stalled: an orchestrator sends it no more
    /// players.
    #[test]
    fn a_stalled_server_is_not_ready() {
        let health = ServerHealth::new(Registry::default());
        health.set_ready(true);
        health.frame_done();
        let now = health.started.elapsed();
        assert_eq!(readiness(&health, now).0, StatusCode::OK);
        let (status, text) = readiness(&health, now + STALLED_AFTER + Duration::from_secs(1));
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(text.starts_with("not ready: stalled"), "{text}");
    }
}
