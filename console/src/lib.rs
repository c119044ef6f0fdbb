//! A live web console for a running world: what its actors hold and who gave it to them, what each plugin costs
//! against the frame budget, who is connected and what they cost, the latest calls and the log — and, behind a
//! token, the operator's controls (reload, activate, deactivate, install, kick, end the match).
//!
//! The console has two halves. [`Console`] lives with the frame loop: each frame it notes what plugins spent
//! (a few map updates), and a few times a second, only while someone is watching, it builds one
//! [`Snapshot`](snapshot::Snapshot) of the world as JSON. Its [`router`](Console::router) is the other half,
//! served from the program's async runtime beside `/metrics`: every viewer gets that same text over
//! Server-Sent Events, so viewers cost the frame nothing — one more viewer is one more socket write on another
//! thread, and a slow one skips snapshots rather than queueing them. Actions travel the other way, checked on
//! the async side ([`actions`]) and carried out between frames by [`Console::apply`].
//!
//! The page (`assets/`) is embedded in the binary: no CDN, no build step, works offline.

pub mod actions;
mod apply;
mod http;
pub mod recent;
pub mod snapshot;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use gamefeature_host::game_loop::GameLoop;
use gamefeature_host::world::ClientId;

pub use actions::{Action, Token};
pub use apply::Applied;

/// How often a snapshot is built while someone watches.
pub const SNAPSHOT_EVERY: Duration = Duration::from_millis(500);

/// How long after a viewer last asked the world keeps being snapshotted.
pub const WATCHED_FOR: Duration = Duration::from_secs(3);

/// Viewers streaming at once; more are told to come back later.
pub const MAX_VIEWERS: usize = 64;

/// What the console shows beside the world, from the program's configuration.
#[derive(Debug, Clone, Default)]
pub struct ConsoleOptions {
    /// The experience played.
    pub experience: String,
    /// A frame's length at the tick rate.
    pub frame_period: Duration,
    /// Each plugin's CPU allowance per frame, if the host sets one.
    pub frame_budget: Option<Duration>,
    /// The trusted publisher of each plugin installed as a signed package (from the lock file).
    pub publishers: BTreeMap<String, String>,
}

/// The frame loop's half of the console (see the crate's documentation).
pub struct Console {
    shared: Arc<Shared>,
    options: ConsoleOptions,
    token: Mutex<Option<Token>>,
    requests: std::sync::mpsc::Receiver<apply::Request>,
    recent: recent::Recent,
    last_snapshot: Option<Instant>,
    seq: u64,
    frames: u64,
    last_frame: Duration,
    client_traffic: BTreeMap<ClientId, (u64, u64)>,
    end_asked: Option<String>,
    /// Activations waiting for their plugin's compile.
    preparing: Vec<apply::Preparing>,
}

/// What the frame loop and the endpoint's tasks share.
struct Shared {
    started: Instant,
    /// The latest snapshot as a Server-Sent Events frame (`data: <json>\n\n`), built once for every viewer;
    /// empty before the first.
    snapshot: tokio::sync::watch::Sender<Bytes>,
    /// Milliseconds since `started` until which someone watches.
    watched_until_ms: AtomicU64,
    viewers: Arc<tokio::sync::Semaphore>,
    requests: std::sync::mpsc::Sender<apply::Request>,
    /// The console's token, or why it takes no action; set when it is served.
    token: std::sync::OnceLock<Result<Token, String>>,
    rates: Mutex<actions::Rates>,
    /// The endpoint's own lines (refused tries), for the log strip; the oldest dropped past `LOG_KEPT`.
    said: Mutex<std::collections::VecDeque<String>>,
    /// The address served, for the Host check that keeps other sites' pages from reaching a loopback console.
    bound: std::sync::OnceLock<SocketAddr>,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Someone is looking: snapshots are built for a while.
    fn watched(&self) {
        let until = self.now_ms().saturating_add(u64::try_from(WATCHED_FOR.as_millis()).unwrap_or(u64::MAX));
        self.watched_until_ms.fetch_max(until, Ordering::Relaxed);
    }

    fn is_watched(&self) -> bool {
        self.now_ms() < self.watched_until_ms.load(Ordering::Relaxed)
    }

    fn say(&self, line: String) {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if said.len() == recent::LOG_KEPT {
            said.pop_front();
        }
        said.push_back(line);
    }
}

impl Console {
    /// A console for a world played with `options`; its token, if any, allows actions (see [`actions`]).
    pub fn new(options: ConsoleOptions, token: Option<Token>) -> Console {
        let (requests_in, requests) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared {
            started: Instant::now(),
            snapshot: tokio::sync::watch::Sender::new(Bytes::new()),
            watched_until_ms: AtomicU64::new(0),
            viewers: Arc::new(tokio::sync::Semaphore::new(MAX_VIEWERS)),
            requests: requests_in,
            token: std::sync::OnceLock::new(),
            rates: Mutex::new(actions::Rates::default()),
            said: Mutex::new(std::collections::VecDeque::new()),
            bound: std::sync::OnceLock::new(),
        });
        Console {
            shared,
            options,
            token: Mutex::new(token),
            requests,
            recent: recent::Recent::default(),
            last_snapshot: None,
            seq: 0,
            frames: 0,
            last_frame: Duration::ZERO,
            client_traffic: BTreeMap::new(),
            end_asked: None,
            preparing: Vec::new(),
        }
    }

    /// The console's routes (`/`, its assets and `/api/...`), for serving on `bound`, where they are reached
    /// (which decides whether actions are taken: loopback only). Served once. Serve them with
    /// `into_make_service_with_connect_info::<SocketAddr>()`, so that the log says where each action came from.
    pub fn router(&self, bound: SocketAddr) -> axum::Router {
        let token = self.token.lock().unwrap_or_else(|e| e.into_inner()).take();
        let _ = self.shared.token.set(actions::policy(token, bound));
        let _ = self.shared.bound.set(bound);
        http::router(self.shared.clone())
    }

    /// Why the console takes no action, if it takes none (once served).
    pub fn read_only(&self) -> Option<&str> {
        self.shared.token.get().and_then(|t| t.as_ref().err()).map(String::as_str)
    }

    /// After each frame, which took `took`: what plugins spent in it, and a snapshot when one is due and
    /// someone watches.
    pub fn frame(&mut self, game: &GameLoop, took: Duration) {
        self.frames += 1;
        self.last_frame = took;
        let manager = game.manager();
        self.recent.frame(manager.last_frame_spend().map(|(plugin, spent)| (plugin, spent.cpu, spent.calls)));
        let due = self.last_snapshot.is_none_or(|at| at.elapsed() >= SNAPSHOT_EVERY);
        if due && self.shared.is_watched() {
            self.publish(game);
        }
    }

    /// A line for the log strip: what the program printed about the world (joins, reloads, errors).
    pub fn log(&mut self, line: &str) {
        self.recent.log(self.shared.now_ms(), line);
    }

    /// Builds a snapshot now and sends it to every viewer.
    pub fn publish(&mut self, game: &GameLoop) {
        // Rates are measured between two snapshots close together; after a pause they would be averages.
        let seconds = self.last_snapshot.map_or(0.0, |at| at.elapsed().as_secs_f64());
        let seconds = if seconds > 4.0 * SNAPSHOT_EVERY.as_secs_f64() { 0.0 } else { seconds };
        self.last_snapshot = Some(Instant::now());
        self.seq += 1;
        let said = std::mem::take(&mut *self.shared.said.lock().unwrap_or_else(|e| e.into_inner()));
        for line in said {
            self.log(&line);
        }
        let snapshot = apply::snapshot_of(self, game, seconds);
        let mut frame = b"data: ".to_vec();
        match serde_json::to_writer(&mut frame, &snapshot) {
            Ok(()) => {
                frame.extend_from_slice(b"\n\n");
                self.shared.snapshot.send_replace(Bytes::from(frame));
            }
            Err(e) => tracing::error!("the console's snapshot did not serialize: {e}"),
        }
    }

    /// Whether the operator asked to end the match, and why.
    pub fn end_asked(&self) -> Option<&str> {
        self.end_asked.as_deref()
    }
}
