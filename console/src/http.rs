//! The console's routes: the page and its assets, `/api/snapshot` (the latest snapshot), `/api/events` (every
//! snapshot as it is built, over Server-Sent Events) and `POST /api/actions`.
//!
//! Every answer forbids framing and sniffing, and the page may load and connect to nothing but its own origin
//! (`Content-Security-Policy`). On a loopback console the `Host` must be a loopback name: a page elsewhere that
//! rebinds its own name to 127.0.0.1 reaches nothing.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::actions::{self, Asked, Refusal};
use crate::apply::Request;
use crate::Shared;

/// A viewer gets a snapshot at most this often, however often they are built.
pub const VIEWER_EVERY: Duration = Duration::from_millis(250);

/// A quiet stream says it is alive this often (an SSE comment), so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long an action waits for the frame loop to take it.
const ACTION_WAIT: Duration = Duration::from_secs(30);

const PAGE: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/console.js");
const STYLE: &str = include_str!("../assets/console.css");
const ICON: &str = include_str!("../assets/favicon.svg");

pub(crate) fn router(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/", get(|h: HeaderMap, s: State<Arc<Shared>>| asset(h, s, "text/html; charset=utf-8", PAGE)))
        .route("/console.js", get(|h: HeaderMap, s: State<Arc<Shared>>| asset(h, s, "text/javascript", SCRIPT)))
        .route("/console.css", get(|h: HeaderMap, s: State<Arc<Shared>>| asset(h, s, "text/css", STYLE)))
        .route("/favicon.svg", get(|h: HeaderMap, s: State<Arc<Shared>>| asset(h, s, "image/svg+xml", ICON)))
        .route("/api/snapshot", get(snapshot))
        .route("/api/events", get(events))
        .route("/api/actions", post(action))
        .with_state(shared)
}

/// Headers every answer carries.
fn guarded(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let policy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; \
                  base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Whether `Host` names the console as it is served: on loopback, a loopback name and the console's port.
fn host_ok(headers: &HeaderMap, shared: &Shared) -> bool {
    let Some(bound) = shared.bound.get() else { return false };
    if !bound.ip().is_loopback() {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let port = bound.port();
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|name| host == format!("{name}:{port}") || (port == 80 && host == *name))
}

fn refused(status: StatusCode, text: impl Into<String>) -> Response {
    guarded((status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text.into() + "\n").into_response())
}

fn wrong_host() -> Response {
    refused(StatusCode::MISDIRECTED_REQUEST, "the console answers to its loopback address only")
}

async fn asset(
    headers: HeaderMap,
    State(shared): State<Arc<Shared>>,
    kind: &'static str,
    body: &'static str,
) -> Response {
    if !host_ok(&headers, &shared) {
        return wrong_host();
    }
    guarded(([(header::CONTENT_TYPE, kind)], body).into_response())
}

async fn snapshot(headers: HeaderMap, State(shared): State<Arc<Shared>>) -> Response {
    if !host_ok(&headers, &shared) {
        return wrong_host();
    }
    let was_watched = shared.is_watched();
    shared.watched();
    let mut latest = shared.snapshot.subscribe();
    // Nobody was watching: what there is may be old, and the frame loop builds a new one within a period.
    if !was_watched || latest.borrow().is_empty() {
        let _ = tokio::time::timeout(Duration::from_secs(2), latest.changed()).await;
    }
    let frame = latest.borrow().clone();
    let json = frame.slice(b"data: ".len().min(frame.len())..frame.len().saturating_sub(2));
    guarded(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

async fn events(headers: HeaderMap, State(shared): State<Arc<Shared>>) -> Response {
    if !host_ok(&headers, &shared) {
        return wrong_host();
    }
    let Ok(viewer) = shared.viewers.clone().try_acquire_owned() else {
        return refused(StatusCode::SERVICE_UNAVAILABLE, "too many viewers; try again later");
    };
    shared.watched();
    let mut latest = shared.snapshot.subscribe();
    // A snapshot there is already goes first: a viewer who reconnects sees the world at once.
    if !latest.borrow().is_empty() {
        latest.mark_changed();
    }
    // Each viewer holds one snapshot at most (the watch channel keeps the newest only), the same bytes every
    // viewer is sent, and gets one every VIEWER_EVERY at most: a slow viewer skips snapshots, it never queues
    // them.
    let stream = futures_util::stream::unfold(
        (latest, viewer, shared, true),
        |(mut latest, viewer, shared, first)| async move {
            if !first {
                tokio::time::sleep(VIEWER_EVERY).await;
            }
            shared.watched();
            let frame = match tokio::time::timeout(KEEP_ALIVE, latest.changed()).await {
                Ok(Ok(())) => latest.borrow_and_update().clone(),
                Ok(Err(_)) => return None,
                Err(_) => Bytes::from_static(b":\n\n"),
            };
            Some((Ok::<Bytes, Infallible>(frame), (latest, viewer, shared, false)))
        },
    );
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(axum::body::Body::from_stream(stream))
        .unwrap_or_default();
    guarded(response)
}

async fn action(
    State(shared): State<Arc<Shared>>,
    peer: Option<axum::Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !host_ok(&headers, &shared) {
        return wrong_host();
    }
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let asked = Asked {
        host: text(header::HOST),
        origin: text(header::ORIGIN),
        content_type: text(header::CONTENT_TYPE),
        authorization: text(header::AUTHORIZATION),
        body: &body,
    };
    let Some(token) = shared.token.get() else { return refused(StatusCode::SERVICE_UNAVAILABLE, "starting") };
    let peer =
        peer.map_or_else(|| "an unknown address".to_string(), |axum::Extension(ConnectInfo(peer))| peer.to_string());
    let checked = {
        let mut rates = shared.rates.lock().unwrap_or_else(|e| e.into_inner());
        actions::check(&asked, token, &mut rates, Instant::now())
    };
    let action = match checked {
        Ok(action) => action,
        Err(refusal) => {
            let (status, why) = match refusal {
                Refusal::ReadOnly(why) => (StatusCode::FORBIDDEN, why),
                Refusal::Unauthorized => (StatusCode::UNAUTHORIZED, "the console's token is needed".to_string()),
                Refusal::Forbidden(why) => (StatusCode::FORBIDDEN, why),
                Refusal::TooMany => (StatusCode::TOO_MANY_REQUESTS, "too many actions; wait a moment".to_string()),
                Refusal::BadRequest(why) => (StatusCode::BAD_REQUEST, why),
            };
            // Logged where the server's log goes too: guessing at the token shows (at the rate allowed).
            let line = format!("console: an action from {peer} was refused ({}): {why}", status.as_u16());
            tracing::warn!("{line}");
            shared.say(line);
            return refused(status, why);
        }
    };
    let (reply, outcome) = tokio::sync::oneshot::channel();
    let who = format!("the operator at {peer}");
    if shared.requests.send(Request { action, who, reply }).is_err() {
        return refused(StatusCode::SERVICE_UNAVAILABLE, "the world has stopped");
    }
    match tokio::time::timeout(ACTION_WAIT, outcome).await {
        Ok(Ok(Ok(text))) => guarded((StatusCode::OK, text + "\n").into_response()),
        Ok(Ok(Err(why))) => refused(StatusCode::CONFLICT, why),
        Ok(Err(_)) => refused(StatusCode::SERVICE_UNAVAILABLE, "the world stopped before taking it"),
        Err(_) => refused(StatusCode::GATEWAY_TIMEOUT, "the world did not take it in time; it may still"),
    }
}
