//! `gfhost server`, `gfhost client` and `gfhost run --clients N`: multiplayer over QUIC.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::admin::{self, metrics::ServerMetrics, ServerHealth};
use crate::fleet::{Allocation, MatchEnd, Orchestrator};

use anyhow::{bail, Context, Result};
use gamefeature_host::game_loop::{frame_of, Ending, GameLoop, Pace, Played, Step};
use gamefeature_host::net::transport::quic::{QuicClient, QuicServer};
use gamefeature_host::net::transport::trust::{ServerIdentity, ServerTrust};
use gamefeature_host::net::transport::{ClientTransport, ServerTransport};
use gamefeature_host::net::ServerNote;
use gamefeature_host::net::{
    ClientError, ClientState, ClientStats, GameClient, GameServer, ServerOptions, TicketPolicy,
};
use gamefeature_host::recording::Role;
use gamefeature_host::replay::{RecordingClientTransport, RecordingServerTransport, WorldRecording};

use crate::record;
use gamefeature_host::world::{self, NetMode, NetRole};
use gamefeature_host::{Session, SessionOptions};

/// How long a client waits for a server to answer.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

/// Frames a client plays per second.
const CLIENT_FRAME_RATE: f64 = 60.0;

pub struct ServerArgs<'a> {
    pub experience: &'a Path,
    pub listen: SocketAddr,
    pub tick_rate: u32,
    pub token: Option<String>,
    /// The certificate chain and key files to show clients; a self-signed certificate when `None`.
    pub certificate: Option<(PathBuf, PathBuf)>,
    pub max_players: Option<usize>,
    /// Bytes of replicated values per second each client is sent at most; `None`: no limit.
    pub client_rate: Option<u32>,
    /// Join tickets clients must present, signed with this key, for this match.
    pub tickets: Option<gamefeature_host::net::TicketPolicy>,
    /// What a second use of a ticket does.
    pub ticket_reuse: gamefeature_host::net::TicketReuse,
    /// Where to serve the console, `/metrics`, `/healthz` and `/readyz`, and who may act through the console.
    pub admin: admin::console::AdminArgs,
    /// The orchestrator that runs this server, if any.
    pub fleet: Fleet,
    /// Hot-reload plugins whose files change, and have clients follow.
    pub watch: bool,
    /// Record the server's world to this file.
    pub record: Option<&'a Path>,
}

/// Which orchestrator a server answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fleet {
    /// None: the server plays until it is stopped.
    Standalone,
    /// Agones, through its SDK sidecar (`--agones`).
    Agones,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

/// A dedicated server, as fleets run them: one world per process; ready once its experience is loaded; on
/// SIGTERM or SIGINT it ends play (clients told, plugins deactivated) and exits 0. Under an orchestrator it
/// also ends when its match is over, then waits for SIGTERM.
pub fn serve(args: ServerArgs<'_>, options: SessionOptions) -> Result<ExitCode> {
    if !args.experience.is_file() {
        bail!("experience file {} not found", args.experience.display());
    }
    let tokio = runtime()?;
    // Caught from the start: a signal while the server starts stops it cleanly (exit 0), rather than killing
    // it; one while its experience loads abandons the load (a cold load of a Python plugin takes tens of
    // seconds, near an orchestrator's grace period).
    let stop = stop_on_signal(&tokio);
    let session = Session::new(options.clone())?;
    let mut chores = Chores::start(&args, &options, &session, &tokio)?;
    let Some((mut game, fingerprint)) = start_server(&args, &options, &session, &tokio, &stop)? else {
        println!("stopping: a signal came while the experience loaded; the load is abandoned");
        // Compiles still running on blocking threads are not waited for: the process is ending.
        tokio.shutdown_background();
        println!("stopped");
        return Ok(ExitCode::SUCCESS);
    };
    println!("ready: {} loaded", args.experience.display());
    chores.ready(&mut game, &fingerprint, args.watch)?;
    let frame = frame_of(args.tick_rate.into());
    let mut pace = Pace::new(frame);
    let ended_by = loop {
        if stop.load(Ordering::SeqCst) {
            break EndedBy::Signal;
        }
        let step = game.step(frame);
        if let Some(ended_by) = chores.after(&mut game, step) {
            break ended_by;
        }
        pace.wait();
    };
    chores.health.set_ready(false);
    match &ended_by {
        EndedBy::Signal => println!("stopping: ending play"),
        EndedBy::MatchOver(why) => println!("match over: {why}; ending play"),
    }
    let ended = game.end("the server is shutting down", frame, &mut Paced { pace, health: &chores.health })?;
    if let (Some(recording), Some(file)) = (ended.recording, args.record) {
        record::said(recording, file);
    }
    for failure in &ended.manager.report().failures {
        println!("  failure: {failure}");
    }
    if let (Some(orchestrator), EndedBy::MatchOver(_)) = (chores.orchestrator.as_mut(), &ended_by) {
        // The orchestrator stops the server (SIGTERM) once it has heard: until then it stays, healthy.
        orchestrator.shutdown()?;
        println!("waiting for SIGTERM");
        while !stop.load(Ordering::SeqCst) {
            chores.health.frame_done();
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    println!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// What a dedicated server does around its frames besides playing them: its log of clients, its metrics and
/// health (`--admin`), `--watch`'s rebuilds of plugins whose sources change, and its fleet's orchestrator.
struct Chores<'a> {
    metrics: ServerMetrics,
    console: Option<gamefeature_console::Console>,
    health: Arc<ServerHealth>,
    orchestrator: Option<Box<dyn Orchestrator>>,
    match_end: MatchEnd,
    experience_name: String,
    max_players: Option<usize>,
    tick_rate: u32,
    frames: u64,
    rebuilds: crate::rebuild::Rebuilds,
    played_folders: Vec<PathBuf>,
    session: &'a Session,
    tokio: &'a tokio::runtime::Runtime,
}

impl<'a> Chores<'a> {
    /// Metrics, the admin endpoint when asked for, and the orchestrator, before the server starts.
    fn start(
        args: &ServerArgs<'_>,
        options: &SessionOptions,
        session: &'a Session,
        tokio: &'a tokio::runtime::Runtime,
    ) -> Result<Self> {
        let mut registry = prometheus_client::registry::Registry::default();
        let metrics = ServerMetrics::register(&mut registry);
        let health = ServerHealth::new(registry);
        let console = admin::console::start(&args.admin, args.experience, args.tick_rate, options, &health, tokio)?;
        let orchestrator = orchestrator(args.fleet, tokio, &health)?;
        Ok(Chores {
            metrics,
            console,
            health,
            orchestrator,
            match_end: MatchEnd::default(),
            experience_name: args.experience.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            max_players: args.max_players,
            tick_rate: args.tick_rate,
            frames: 0,
            rebuilds: Default::default(),
            played_folders: Vec::new(),
            session,
            tokio,
        })
    }

    /// The server is loaded: the orchestrator hears it is ready, and its plugins' folders are watched if asked.
    fn ready(&mut self, game: &mut GameLoop, fingerprint: &str, watch: bool) -> Result<()> {
        if let Some(orchestrator) = self.orchestrator.as_mut() {
            orchestrator.ready(&self.experience_name, fingerprint)?;
        }
        if watch {
            self.played_folders = game.plugin_folders();
            println!(
                "watching the folders of {} plugin(s) for new versions (and their sources, to build them again)",
                self.played_folders.len()
            );
            game.watch(&crate::rebuild::watched_folders(&self.played_folders))
                .context("watching the plugin folders")?;
        }
        Ok(())
    }

    /// After a frame: what it did, shown and measured; the fleet's allocation taken. Why play ends, when it does.
    fn after(&mut self, game: &mut GameLoop, step: Step) -> Option<EndedBy> {
        let server = game.server_mut().expect("a server's loop");
        let mut said: Vec<String> = step.notes.iter().map(|note| logged(server, note)).collect();
        self.metrics.observe_frame(server, step.took);
        for reload in step.reloads {
            said.push(match reload.outcome {
                Ok(said) => said,
                Err(why) => format!("error: reloading {}: {why}", reload.plugin),
            });
        }
        said.extend(step.compiling.iter().map(|plugin| crate::rebuild::compiling(plugin)));
        said.extend(self.rebuilds.follow(self.tokio, &self.played_folders, &step.changed));
        for line in said {
            println!("{line}");
            if let Some(console) = self.console.as_mut() {
                console.log(&line);
            }
        }
        let followed = admin::console::after_frame(self.console.as_mut(), game, self.session, step.took);
        if followed.plugins_changed && !self.played_folders.is_empty() {
            self.played_folders = game.plugin_folders();
            if let Err(e) = game.watch(&crate::rebuild::watched_folders(&self.played_folders)) {
                println!("error: watching the plugin folders: {e}");
            }
        }
        if let Some(why) = followed.end {
            return Some(EndedBy::MatchOver(why));
        }
        let server = game.server_mut().expect("a server's loop");
        if self.frames.is_multiple_of(u64::from(self.tick_rate)) {
            self.metrics.observe_clients(server, self.session.runtime().compile_counts());
        }
        self.frames += 1;
        let playing = server.players().len();
        self.health.set_ready(self.max_players.is_none_or(|max| playing < max));
        self.health.frame_done();
        let orchestrator = self.orchestrator.as_mut()?;
        // An allocation the server cannot take (another experience, an unreadable ticket key) ends it, cleanly,
        // saying why: the orchestrator replaces it.
        let taken = orchestrator.allocation().map_err(|e| format!("{e:#}")).and_then(|allocation| match allocation {
            Some(allocation) => allocated(server, allocation, &self.experience_name).map(|()| true),
            None => Ok(false),
        });
        match taken {
            Ok(true) => self.match_end.allocated(),
            Ok(false) => {}
            Err(why) => {
                eprintln!("error: {why}");
                return Some(EndedBy::MatchOver(why));
            }
        }
        orchestrator.players(playing);
        self.match_end
            .is_over(playing, server.players_away())
            .then(|| EndedBy::MatchOver("the last player left".to_string()))
    }
}

/// A server's setup: listening (saying where, and the certificate clients pin), recording when asked, its
/// experience loaded; with its certificate's SHA-256. `None` when a signal came while it loaded.
fn start_server(
    args: &ServerArgs<'_>,
    options: &SessionOptions,
    session: &Session,
    tokio: &tokio::runtime::Runtime,
    stop: &AtomicBool,
) -> Result<Option<(GameLoop, String)>> {
    let identity = match &args.certificate {
        Some((chain, key)) => ServerIdentity::from_files(chain, key),
        None => ServerIdentity::self_signed(),
    }
    .map_err(|e| anyhow::anyhow!("the server's certificate: {e}"))?;
    let transport = QuicServer::bind(args.listen, identity, tokio.handle())?;
    let server_fingerprint = transport.fingerprint();
    let addr = transport.local_addr()?;
    // A fleet's server without a secret of its own takes nobody until its match brings one (or it is allocated
    // without: then the fleet's operator chose an open server).
    let closed_until_allocated = args.fleet != Fleet::Standalone && args.token.is_none() && args.tickets.is_none();
    if !addr.ip().is_loopback() && args.token.is_none() && args.tickets.is_none() && !closed_until_allocated {
        eprintln!(
            "warning: listening on {addr}, reachable from other machines, and no token is asked of clients: anyone \
             who finds the address can join (give one with --token-file or GFHOST_TOKEN)"
        );
    }
    let mut manager = session.create_world("server", NetMode::DedicatedServer);
    let recording = match args.record {
        Some(file) => {
            Some(record::start(file, server_recorded(args.experience, args.tick_rate), options, &mut manager)?)
        }
        None => None,
    };
    let transport = recorded_server_transport(Box::new(transport), recording.as_ref());
    let server_options = ServerOptions {
        tick_rate: args.tick_rate,
        token: args.token.clone(),
        max_players: args.max_players,
        tickets: args.tickets.clone(),
        closed: closed_until_allocated,
        reconnect_grace: None,
        client_rate: args.client_rate,
        ticket_reuse: args.ticket_reuse,
    };
    let mut server = GameServer::new(manager, transport, server_options);
    println!("listening on {addr} (QUIC; tick rate {} Hz)", args.tick_rate);
    // What clients pin (--server-cert-sha256) when the certificate is not signed by an authority they trust.
    println!("certificate sha256: {}", server_fingerprint);
    let loaded = tokio.block_on(async {
        tokio::select! {
            loaded = server.load(args.experience) => Some(loaded),
            () = signalled(stop) => None,
        }
    });
    let Some(loaded) = loaded else {
        return Ok(None);
    };
    loaded?;
    let mut recording = recording;
    if let Some(recording) = &mut recording {
        recording.checkpoint(server.manager());
    }
    let game = recorded_loop(GameLoop::new(Played::Server(Box::new(server)), tokio.handle().clone()), recording);
    Ok(Some((game, server_fingerprint.to_string())))
}

/// How a paced server waits between its last frames: the frame's length, still answering health checks; and
/// what it says of its clients meanwhile.
struct Paced<'a> {
    pace: Pace,
    health: &'a ServerHealth,
}

impl Ending for Paced<'_> {
    fn note(&mut self, server: &GameServer, note: ServerNote) {
        println!("{}", logged(server, &note));
    }

    fn wait(&mut self, _frame: Duration) {
        self.health.frame_done();
        self.pace.wait();
    }
}

/// What a server's recording says of it.
fn server_recorded(experience: &Path, tick_rate: u32) -> record::Recorded<'_> {
    record::Recorded {
        role: Role::Server,
        experience: Some(experience),
        experiences_dir: None,
        mods: None,
        world: "server",
        net_mode: NetMode::DedicatedServer,
        tick_rate,
    }
}

/// Why a server's play ended.
enum EndedBy {
    Signal,
    MatchOver(String),
}

/// The orchestrator `fleet` names, connected.
fn orchestrator(
    fleet: Fleet,
    tokio: &tokio::runtime::Runtime,
    health: &std::sync::Arc<ServerHealth>,
) -> Result<Option<Box<dyn Orchestrator>>> {
    match fleet {
        Fleet::Standalone => Ok(None),
        #[cfg(feature = "agones")]
        Fleet::Agones => Ok(Some(Box::new(crate::fleet::agones::Agones::connect(tokio, health.clone())?))),
        #[cfg(not(feature = "agones"))]
        Fleet::Agones => {
            let _ = (tokio, health);
            bail!(
                "this gfhost was built without Agones support: build it with `cargo build -p gfhost --features \
                 agones` (which needs protoc: Debian's protobuf-compiler and libprotobuf-dev; ./dev setup installs them)"
            )
        }
    }
}

/// Takes the match an orchestrator allocated the server: its tickets from now on. A match for another
/// experience than the one loaded is refused (the orchestrator allocated the wrong server).
fn allocated(server: &mut GameServer, allocation: Allocation, experience: &str) -> Result<(), String> {
    if let Some(wanted) = allocation.experience.as_deref().filter(|wanted| *wanted != experience) {
        return Err(format!("allocated for the experience {wanted:?}, but this server plays {experience:?}"));
    }
    let match_id = allocation.match_id.clone();
    if let Some(key) = allocation.ticket_key {
        server.set_tickets(Some(TicketPolicy { key, match_id: allocation.match_id }));
    } else if allocation.match_id.is_some() {
        server.set_tickets(
            server.tickets().map(|policy| TicketPolicy { key: policy.key, match_id: allocation.match_id }),
        );
    }
    server.set_open(true);
    println!("allocated: match {}", match_id.as_deref().unwrap_or("(unnamed)"));
    Ok(())
}

/// A server's note as its log shows it: when (UTC), and the peer's address, so that an abusive peer can be
/// told apart (`client 3 joined` -> `2026-11-27T22:50:01.123Z client 3 joined (from 203.0.113.5:50312)`).
fn logged(server: &GameServer, note: &gamefeature_host::net::ServerNote) -> String {
    // The same, as a structured event for log collectors (`--log-format json`).
    let peer = server.peer(note.client()).map(|peer| peer.to_string()).unwrap_or_default();
    tracing::info!(target: "gfhost::peers", client = note.client().0, peer, "{note}");
    let now = time::OffsetDateTime::now_utc();
    let at = now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    match server.peer(note.client()) {
        Some(peer) => format!("{at} {note} (from {peer})"),
        None => format!("{at} {note}"),
    }
}

/// A flag raised by SIGTERM or SIGINT, which no longer end the process: the loop that reads the flag ends
/// play and exits.
fn stop_on_signal(tokio: &tokio::runtime::Runtime) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = stop.clone();
    // Registered before this returns, so a signal that comes at once is not lost.
    let terminate = tokio.block_on(async { tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) });
    tokio.spawn(async move {
        let Ok(mut terminate) = terminate else { return };
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        signalled.store(true, Ordering::SeqCst);
    });
    stop
}

/// Resolves once `stop` is raised (checked every 50 ms).
async fn signalled(stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub struct ClientArgs {
    pub connect: SocketAddr,
    /// How the client knows the server it reached is the one meant.
    pub trust: ServerTrust,
    pub token: Option<String>,
    pub experiences: PathBuf,
    /// Which of the server's plugins to fetch, and what they may do.
    pub mod_sync: gamefeature_host::net::mod_sync::ModSync,
    /// Whether the player is asked before they are fetched and run.
    pub consent: gamefeature_host::config::ModConsent,
    /// Leave after this long; by default play until the server ends play.
    pub seconds: Option<f64>,
    /// Record the client's world to this file.
    pub record: Option<PathBuf>,
}

/// A client process: connects, plays until the server ends play (or `--seconds` pass), prints its world's
/// timeline. A server that is absent, refuses it or speaks another protocol is a clear error.
pub fn join(args: ClientArgs, options: SessionOptions) -> Result<ExitCode> {
    let tokio = runtime()?;
    let session = Session::new(options.clone())?;
    if matches!(args.trust, ServerTrust::InsecureLoopback) {
        eprintln!("warning: INSECURE: the server's certificate is not verified (--insecure-loopback)");
    }
    let transport = tokio.block_on(QuicClient::connect(args.connect, &args.trust, CONNECT_WAIT))?;
    // Answers about a server's plugins are kept by its certificate, which outlives its address.
    let server = transport.server_certificate_sha256().unwrap_or_else(|| args.connect.to_string());
    let answers = gamefeature_host::net::consent::RememberedAnswers::path_in(&args.mod_sync.cache_dir);
    let mut args = args;
    args.mod_sync.consent = Some(crate::consent::hook(args.consent, server, answers));
    let mut manager = session.create_world("client", NetMode::Client);
    let policy = match args.mod_sync.policy {
        gamefeature_host::net::mod_sync::FetchPolicy::Trusted => "trusted",
        gamefeature_host::net::mod_sync::FetchPolicy::Any => "any",
        gamefeature_host::net::mod_sync::FetchPolicy::Never => "never",
    };
    let recording = match &args.record {
        Some(file) => {
            let recorded = client_recorded(&args.experiences, Some((policy, &args.mod_sync.cache_dir)), "client");
            Some(record::start(file, recorded, &options, &mut manager)?)
        }
        None => None,
    };
    let transport = recorded_client_transport(Box::new(transport), recording.as_ref());
    let client = GameClient::connect(manager, transport, args.token, &args.experiences).with_mod_sync(args.mod_sync);
    let mut game = recorded_loop(GameLoop::new(Played::Client(Box::new(client)), tokio.handle().clone()), recording);
    let frame = frame_of(CLIENT_FRAME_RATE);
    let mut pace = Pace::new(frame);
    let started = Instant::now();
    let stop = stop_on_signal(&tokio);
    let mut loaded = false;
    let mut announced = 0;
    let outcome = loop {
        if stop.load(Ordering::SeqCst) {
            // Stopped by a signal: the server is told the player left, rather than finding the connection dead.
            break Ok("left: stopped by a signal".to_string());
        }
        let step = game.step(frame);
        let client = game.client().expect("a client's loop");
        if !loaded && client.manager().state() == gamefeature_host::ExperienceLoadState::Loaded {
            loaded = true;
            announce_loaded(client);
            announced = client.fetched().len();
        }
        // New versions the server hot-reloaded, which this client fetched and hot-reloaded in turn.
        for package in client.fetched().iter().skip(announced) {
            println!(
                "the server updated {} to {}: fetched ({}) and reloaded",
                package.name, package.version, package.digest
            );
            announced += 1;
        }
        if let Some(ended) = step.ended {
            break ended;
        }
        if args.seconds.is_some_and(|s| started.elapsed().as_secs_f64() >= s) {
            break Ok("left".to_string());
        }
        pace.wait();
    };
    // The server hears why this client went (it left, unless the server ended play) before the process exits.
    let ended = game.end("the client left", frame, &mut ())?;
    if let (Some(recording), Some(file)) = (ended.recording, &args.record) {
        record::said(recording, file);
    }
    print!("{}", session.timeline().render_world_text("client"));
    match outcome {
        Ok(reason) => {
            println!("play ended: {reason}");
            Ok(ExitCode::SUCCESS)
        }
        Err(ClientError::Refused(reason)) => bail!("the server at {} refused this client: {reason}", args.connect),
        Err(e) => bail!("{e}"),
    }
}

/// What a client's recording says of it.
fn client_recorded<'a>(
    experiences: &'a Path,
    mods: Option<(&'a str, &'a Path)>,
    world: &'a str,
) -> record::Recorded<'a> {
    record::Recorded {
        role: Role::Client,
        experience: None,
        experiences_dir: Some(experiences),
        mods,
        world,
        net_mode: NetMode::Client,
        tick_rate: CLIENT_FRAME_RATE as u32,
    }
}

/// The server's transport, recorded when the server is.
fn recorded_server_transport(
    transport: Box<dyn ServerTransport>,
    recording: Option<&WorldRecording>,
) -> Box<dyn ServerTransport> {
    match recording {
        Some(recording) => Box::new(RecordingServerTransport::new(transport, recording.recorder().clone())),
        None => transport,
    }
}

/// The client's transport, recorded when the client is.
fn recorded_client_transport(
    transport: Box<dyn ClientTransport>,
    recording: Option<&WorldRecording>,
) -> Box<dyn ClientTransport> {
    match recording {
        Some(recording) => Box::new(RecordingClientTransport::new(transport, recording.recorder().clone())),
        None => transport,
    }
}

/// Says (at once, not with the timeline at the end) that the server's experience is playing, and which of its
/// plugins were fetched from it.
fn announce_loaded(client: &GameClient) {
    let name = client.manager().current().map(|d| d.name.clone()).unwrap_or_default();
    let fetched = client.fetched();
    let bytes: u64 = fetched.iter().map(|p| p.size).sum();
    println!("playing {name:?}: {} plugin(s) fetched from the server ({bytes} bytes)", fetched.len());
    for package in fetched {
        println!("  fetched {} {} ({})", package.name, package.version, package.digest);
    }
    let _ = std::io::Write::flush(&mut std::io::stdout());
}

pub struct RunArgs<'a> {
    pub experience: &'a Path,
    pub clients: usize,
    pub seconds: f64,
    pub tick_rate: u32,
    pub trace: Option<&'a Path>,
    /// What happens on the server while it plays.
    pub script: Option<&'a Path>,
    /// Record the server's world to this file, and each client's beside it.
    pub record: Option<&'a Path>,
}

/// What `run --clients --script` does on the server: plugins hot-reloaded at given frames.
#[derive(Debug, Default)]
struct ServerScript {
    /// (frame, plugin), in order.
    reloads: std::collections::VecDeque<(usize, String)>,
}

impl ServerScript {
    /// Reads a script: `wait MS` lets frames pass, `reload PLUGIN` reloads a plugin; `#` starts a comment.
    fn read(path: &Path, tick_rate: u32) -> Result<ServerScript> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut script = ServerScript::default();
        let mut at_ms: u64 = 0;
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            let fail =
                |why: &str| anyhow::anyhow!("{}:{}: {why} (`wait MS` or `reload PLUGIN`)", path.display(), number + 1);
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => {}
                ["wait", ms] => {
                    at_ms = at_ms.saturating_add(ms.parse::<u64>().map_err(|e| fail(&format!("{ms:?}: {e}")))?)
                }
                ["reload", plugin] => {
                    let frame = at_ms.saturating_mul(u64::from(tick_rate)).div_ceil(1000) as usize;
                    script.reloads.push_back((frame, plugin.to_string()));
                }
                _ => return Err(fail(&format!("{line:?} is not a server command"))),
            }
        }
        Ok(script)
    }

    /// The plugins to reload before frame `frame` is played.
    fn reloads_due(&mut self, frame: usize) -> Vec<String> {
        let mut due = Vec::new();
        while self.reloads.front().is_some_and(|(at, _)| *at <= frame) {
            due.extend(self.reloads.pop_front().map(|(_, plugin)| plugin));
        }
        due
    }
}

/// A server and clients in one process over real loopback QUIC: plays for a while, ends play on the server,
/// and prints each world's timeline.
pub fn run_networked(args: RunArgs<'_>, options: SessionOptions) -> Result<ExitCode> {
    if !args.experience.is_file() {
        bail!("experience file {} not found", args.experience.display());
    }
    let mut script = match args.script {
        Some(path) => ServerScript::read(path, args.tick_rate)?,
        None => ServerScript::default(),
    };
    let experiences = crate::folder_of(args.experience).to_path_buf();
    let tokio = runtime()?;
    let session = Session::new(options.clone())?;
    let identity = ServerIdentity::self_signed().map_err(|e| anyhow::anyhow!("the server's certificate: {e}"))?;
    // The clients in this process pin the server's certificate: they know it, as a player would be told it.
    let trust = ServerTrust::Pinned(identity.fingerprint());
    let transport = QuicServer::bind("127.0.0.1:0".parse().expect("an address"), identity, tokio.handle())?;
    let addr = transport.local_addr()?;
    let mut manager = session.create_world("server", NetMode::DedicatedServer);
    let recorded = server_recorded(args.experience, args.tick_rate);
    let mut server_recording =
        args.record.map(|file| record::start(file, recorded, &options, &mut manager)).transpose()?;
    let transport = recorded_server_transport(Box::new(transport), server_recording.as_ref());
    let server_options = ServerOptions {
        tick_rate: args.tick_rate,
        token: None,
        client_rate: Some(gamefeature_host::net::DEFAULT_CLIENT_RATE),
        ..Default::default()
    };
    let mut server = GameServer::new(manager, transport, server_options);
    tokio.block_on(server.load(args.experience))?;
    if let Some(recording) = &mut server_recording {
        recording.checkpoint(server.manager());
    }
    let mut server =
        recorded_loop(GameLoop::new(Played::Server(Box::new(server)), tokio.handle().clone()), server_recording);
    let mut clients = Vec::new();
    for index in 1..=args.clients {
        let transport = tokio.block_on(QuicClient::connect(addr, &trust, CONNECT_WAIT))?;
        let world = format!("client-{index}");
        let mut manager = session.create_world(&world, NetMode::Client);
        let recording = match args.record {
            Some(file) => {
                let mut recorded = client_recorded(&experiences, None, &world);
                recorded.tick_rate = args.tick_rate;
                Some(record::start(&record::client_path(file, index), recorded, &options, &mut manager)?)
            }
            None => None,
        };
        let transport = recorded_client_transport(Box::new(transport), recording.as_ref());
        let client = GameClient::connect(manager, transport, None, &experiences);
        clients.push(recorded_loop(GameLoop::new(Played::Client(Box::new(client)), tokio.handle().clone()), recording));
    }
    let frame = frame_of(args.tick_rate.into());
    let mut everyone = Everyone { clients, pace: Pace::new(frame), problems: Vec::new(), frame, session: &session };
    let frames = (args.seconds * f64::from(args.tick_rate)).ceil() as usize;
    // What each client had been sent at half-time: the second half of play is its traffic while playing, the
    // join and its world's first state excluded.
    let mut halfway = Vec::new();
    for played in 0..frames {
        if played == frames / 2 {
            halfway = server.server().expect("a server's loop").client_stats();
        }
        for plugin in script.reloads_due(played) {
            match server.reload_now(&plugin).outcome {
                Ok(said) => println!("{said}"),
                Err(why) => everyone.problems.push(format!("reloading {plugin}: {why}")),
            }
        }
        everyone.play_frame(&mut server);
    }
    // The world stands still while the last values reach the clients (bounded): frames that went on playing
    // would write new ones (a score a second) while the comparison waits for the old.
    server.settle(frame, &mut everyone);
    let client_views: Vec<&GameClient> = everyone.clients.iter().filter_map(GameLoop::client).collect();
    let summary = compare_worlds(server.server().expect("a server's loop"), &client_views, &halfway);
    // The server ends play; its clients, stepped between its last frames, hear it and go.
    let server_failures = server.manager().report().failures.clone();
    let ended = server.end("the run is over", frame, &mut everyone)?;
    if let (Some(recording), Some(file)) = (ended.recording, args.record) {
        record::said(recording, file);
    }
    let Everyone { clients, problems, .. } = everyone;
    let mut failures: Vec<String> = server_failures.iter().map(|f| format!("server: {f}")).collect();
    let mut states = Vec::new();
    for (index, client) in clients.into_iter().enumerate() {
        let state = match client.client().map(GameClient::state) {
            Some(ClientState::Ended(reason)) => reason.clone(),
            other => format!("{other:?}"),
        };
        let ended = client.end("the run is over", frame, &mut ())?;
        let world = ended.manager.world_name().to_string();
        failures.extend(ended.manager.report().failures.iter().map(|f| format!("{world}: {f}")));
        if let (Some(recording), Some(file)) = (ended.recording, args.record) {
            record::said(recording, &record::client_path(file, index + 1));
        }
        states.push(format!("{world}: {state}"));
    }

    println!("== process ==");
    print!("{}", session.timeline().render_process_text());
    let mut worlds = vec!["server".to_string()];
    worlds.extend((1..=args.clients).map(|i| format!("client-{i}")));
    for name in &worlds {
        println!("\n== world {name} ==");
        print!("{}", session.timeline().render_world_text(name));
    }
    println!(
        "\nexperience {} on a dedicated server and {} client(s) over QUIC ({addr}):",
        args.experience.display(),
        args.clients
    );
    for line in summary.iter().chain(&states) {
        println!("  {line}");
    }
    if let Some(path) = args.trace {
        let json = serde_json::to_string_pretty(&session.timeline().to_chrome_trace())?;
        std::fs::write(path, json).with_context(|| format!("writing trace {}", path.display()))?;
        println!("  trace written to {} (one process per world)", path.display());
    }
    failures.extend(problems);
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    println!("\n{} failure(s):", failures.len());
    for failure in &failures {
        println!("  - {failure}");
    }
    Ok(ExitCode::from(2))
}

/// A loop, recorded when `recording` is given.
fn recorded_loop(game: GameLoop, recording: Option<WorldRecording>) -> GameLoop {
    match recording {
        Some(recording) => game.recorded(recording),
        None => game,
    }
}

/// The clients of `run --clients`, stepped after each of the server's frames, paced as one.
struct Everyone<'a> {
    clients: Vec<GameLoop>,
    pace: Pace,
    problems: Vec<String>,
    frame: Duration,
    session: &'a Session,
}

impl Everyone<'_> {
    /// One frame of the server, then of each client; then the frame's wait.
    fn play_frame(&mut self, server: &mut GameLoop) {
        let step = server.step(self.frame);
        if let Some(server) = server.server() {
            for note in step.notes {
                self.note(server, note);
            }
        }
        self.wait(self.frame);
    }

    /// One frame of each client.
    fn step_clients(&mut self) {
        for client in &mut self.clients {
            if let Some(Err(e)) = client.step(self.frame).ended {
                self.problems.push(e.to_string());
            }
        }
    }
}

impl Ending for Everyone<'_> {
    fn note(&mut self, _server: &GameServer, note: ServerNote) {
        self.session.timeline().record(
            gamefeature_host::timeline::track::experience("server"),
            gamefeature_host::timeline::EventKind::Note,
            note.to_string(),
        );
    }

    fn wait(&mut self, _frame: Duration) {
        self.step_clients();
        self.pace.wait();
    }
}

/// What the server sent a client: the values (sent again ones included) and the UDP bytes, all its messages', in
/// all and since `halfway` (empty where the transport does not count bytes).
fn wire_line(server: &GameServer, client: &GameClient, halfway: &[ClientStats]) -> String {
    let stats = server.client_stats();
    let find = |stats: &[ClientStats]| stats.iter().find(|s| Some(s.client) == client.id()).cloned();
    let Some(now) = find(&stats) else { return String::new() };
    if now.traffic.bytes_sent == 0 {
        return String::new();
    }
    let mut line = format!("; sent {} values in {} UDP bytes in all", now.values_sent, now.traffic.bytes_sent);
    if let Some(then) = find(halfway) {
        let values = now.values_sent - then.values_sent;
        let bytes = now.traffic.bytes_sent - then.traffic.bytes_sent;
        let datagrams = now.traffic.packets_sent - then.traffic.packets_sent;
        line += &format!(
            "; in the second half of play {values} values in {bytes} bytes ({:.1} per value) and {datagrams} \
             datagrams ({:.1} bytes each)",
            bytes as f64 / values.max(1) as f64,
            bytes as f64 / datagrams.max(1) as f64
        );
    }
    line
}

/// One line per client: its actors and replicated values beside the server's (those of the actors relevant to
/// it), and its own player's role.
fn compare_worlds(server: &GameServer, clients: &[&GameClient], halfway: &[ClientStats]) -> Vec<String> {
    type Replicated = Vec<(world::ActorId, String, String, world::Value)>;
    let replicated = |w: &world::World, wanted: &dyn Fn(world::ActorId) -> bool| -> Replicated {
        let mut values = Vec::new();
        for actor in w.actors().filter(|actor| wanted(actor.id)) {
            for component in actor.components.iter().filter(|c| c.replicated) {
                for (name, value) in &component.properties {
                    if w.replicated_classes().replicates(&component.class, name) {
                        values.push((actor.id, component.class.to_string(), name.to_string(), value.clone()));
                    }
                }
            }
        }
        values
    };
    let expected = replicated(&world::lock(server.manager().world()), &|_| true);
    let (server_actors, (lazy, avoided)) = {
        let w = world::lock(server.manager().world());
        (w.actors().count(), w.lazy_components())
    };
    let mut lines = vec![format!(
        "server: {server_actors} actors, {} replicated values; lazy components: {lazy} created, {avoided} avoided",
        expected.len()
    )];
    for client in clients {
        let expected = {
            let w = world::lock(server.manager().world());
            replicated(&w, &|actor| client.id().is_none_or(|id| w.is_relevant_to(actor, id)))
        };
        let w = world::lock(client.manager().world());
        let values = replicated(&w, &|_| true);
        let own = w.actors().filter(|a| a.role == NetRole::AutonomousProxy).count();
        let replicas = w.actors().filter(|a| a.role != NetRole::Authority).count();
        let same = if values == expected { "the server's" } else { "DIFFERENT from the server's" };
        let buffered = client.buffer_stats();
        lines.push(format!(
            "{}: {replicas} replicated actors ({own} its own player's), {} replicated values, {same}; values that \
             came before their component: {} applied when it came, {} dropped{}",
            client.manager().world_name(),
            values.len(),
            buffered.applied_late,
            buffered.dropped_stale + buffered.dropped_over_cap,
            wire_line(server, client, halfway)
        ));
    }
    lines
}
