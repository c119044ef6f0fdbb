//! How many players one server holds, and what each costs: a full server — the default experience's ten
//! plugins, replication, relevancy, the transport — with 100, 300 and 1,000 players joining and moving, over
//! the in-memory network and over real QUIC on loopback.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench capacity
//! CAPACITY_PLAYERS=100,300 CAPACITY_TRANSPORTS=memory cargo bench -p gamefeature-tests --bench capacity
//! ```
//!
//! The players are a swarm of lightweight protocol clients ([`gamefeature_host::net::swarm`]): they say hello
//! and acknowledge what they are sent, as real clients do, without a world of their own. Over the in-memory
//! network they share the server's process; over QUIC they run in two processes of their own (this bench
//! started again with `--swarm`), so the server's process holds the server alone.
//!
//! The bench is the game: each frame it moves every player's pawn (its `Position`: x, y and a heading, written
//! as a game's movement writes them) and keeps relevancy the way a game with a cull distance does — the world
//! is a grid of cells about four players each, a pawn is relevant to the clients whose pawn is in its cell or
//! one of the eight around it. Then the server's frame: what the clients sent, one tick of the world and its
//! plugins, replication.
//!
//! Measured for each size, in the one run: the frame's time (criterion's figure; its p99 from every frame
//! played), the frame thread's CPU time, the whole process's CPU time per frame (QUIC: the server's network
//! threads included; memory: the in-process swarm's work too), bytes sent per player per second at 30 Hz (QUIC: UDP bytes as quinn counts them; memory:
//! the messages' bytes), server memory per player (resident memory after the players joined less before), and
//! how long players waited to be welcomed.

use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use gamefeature_host::experience::ExperienceManager;
use gamefeature_host::net::swarm::{quic_swarm, QuicSwarmOptions, Swarm, SwarmPlayer};
use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
use gamefeature_host::net::transport::quic::QuicServer;
use gamefeature_host::net::transport::trust::{Fingerprint, ServerIdentity, ServerTrust};
use gamefeature_host::net::transport::ServerTransport;
use gamefeature_host::net::{GameServer, ServerNote, ServerOptions, DEFAULT_CLIENT_RATE};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::component_manager::{OwnerId, RequestFlags};
use gamefeature_host::world::{self, check_groups, ActorId, ClientId, NetMode, Relevancy, Value, World};
use gamefeature_tests::*;

const TICK_RATE: u32 = 30;
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / TICK_RATE as u64);
/// The side of a relevancy cell, in world units; pawns walk [`STEP`] a frame.
const CELL: f64 = 10.0;
const STEP: f64 = 0.1;
/// Players per cell, on average: the world grows with the players, so each client sees about as many.
const PLAYERS_PER_CELL: f64 = 4.0;
/// Swarm processes over QUIC, and the connections they open at once between them (a server lets eight from
/// one address greet at a time).
const SWARM_PROCESSES: usize = 2;
const GREETING_AT_ONCE: usize = 8;
/// How long joining may go without a player joining before the run goes on with those that did.
const JOIN_STALLED: Duration = Duration::from_secs(15);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--swarm") {
        return swarm_process(&args[2..]);
    }
    let sizes: Vec<usize> = std::env::var("CAPACITY_PLAYERS")
        .unwrap_or_else(|_| "100,300,1000".to_string())
        .split(',')
        .map(|n| n.trim().parse().expect("CAPACITY_PLAYERS: sizes separated by commas"))
        .collect();
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let plugins = PluginDir::with(&DEFAULT_PLUGINS);
    let runtime = RuntimeConfig { cache_dir: Some(shared_cache()), ..RuntimeConfig::default() };
    let session = session_with_runtime(&plugins, runtime, trusted());
    let experiences = default_experience();
    let mut table = Vec::new();
    let transports = std::env::var("CAPACITY_TRANSPORTS").unwrap_or_else(|_| "memory,quic".to_string());
    let transports = [Transport::Memory, Transport::Quic].into_iter().filter(|t| transports.contains(t.name()));
    for transport in transports {
        for &players in &sizes {
            let mut run = Run::start(&session, &experiences, &tokio, transport, players);
            let mut group = criterion.benchmark_group(format!("capacity/{}", transport.name()));
            group.bench_function(BenchmarkId::new("a frame with players moving", players), |b| {
                b.iter_custom(|frames| (0..frames).map(|_| run.frame()).sum())
            });
            group.finish();
            table.push(run.finish());
        }
    }
    println!("\ncapacity: the default experience, players moving, relevancy by cells of ~{PLAYERS_PER_CELL} players");
    println!("{}", Figures::HEADER);
    for figures in &table {
        println!("{figures}");
    }
    slopes(&table);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Transport {
    Memory,
    Quic,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Memory => "memory",
            Transport::Quic => "quic",
        }
    }
}

/// Where the players are: in this process (the in-memory network) or in swarm processes (QUIC).
enum Players {
    InProcess { network: MemoryNetwork, swarm: Swarm, joined: usize },
    Processes(Vec<Child>),
}

/// One size over one transport: the server, its players, and what its frames measured.
struct Run {
    transport: Transport,
    players: usize,
    server: GameServer,
    field: Field,
    clients: Players,
    /// Every measured frame's wall time and the frame thread's CPU time.
    frames: Vec<(Duration, Duration)>,
    /// The process's CPU time and the transport's bytes at the first measured frame, and at the last.
    since: Option<(Duration, u64)>,
    until: (Duration, u64),
    rss_before_join: u64,
    rss_joined: u64,
    joined_in: Duration,
    join_times: Vec<Duration>,
    /// Why each player the swarm lost went.
    lost: Vec<String>,
}

impl Run {
    fn start(
        session: &gamefeature_host::Session,
        experiences: &ExperienceDir,
        tokio: &tokio::runtime::Runtime,
        transport: Transport,
        players: usize,
    ) -> Run {
        let manager: ExperienceManager = session.create_world("server", NetMode::DedicatedServer);
        let options =
            ServerOptions { tick_rate: TICK_RATE, client_rate: Some(DEFAULT_CLIENT_RATE), ..Default::default() };
        let (server_transport, clients, address): (Box<dyn ServerTransport>, _, _) = match transport {
            Transport::Memory => {
                let network = MemoryNetwork::new(1, Conditions::PERFECT);
                let server = Box::new(network.server());
                (server, Players::InProcess { network, swarm: Swarm::new(), joined: 0 }, None)
            }
            Transport::Quic => {
                let identity = ServerIdentity::self_signed().unwrap();
                let fingerprint = identity.fingerprint();
                let server = QuicServer::bind("127.0.0.1:0".parse().unwrap(), identity, tokio.handle()).unwrap();
                let address = server.local_addr().unwrap();
                (Box::new(server), Players::Processes(Vec::new()), Some((address, fingerprint)))
            }
        };
        let mut server = GameServer::new(manager, server_transport, options);
        tokio.block_on(server.load(&experiences.path().join("default.toml"))).unwrap();
        {
            let mut w = world::lock(server.manager().world());
            w.declare_replicated("Position", ["x", "y", "heading"]);
            // The game's own component on every pawn, for the whole run.
            std::mem::forget(w.add_component_request(OwnerId::HOST, "Pawn", "Position", RequestFlags::default()));
        }
        settle_allocator();
        let rss_before_join = resident_bytes();
        let mut run = Run {
            transport,
            players,
            server,
            field: Field::new(players),
            clients,
            frames: Vec::new(),
            since: None,
            until: (Duration::ZERO, 0),
            rss_before_join,
            rss_joined: 0,
            joined_in: Duration::ZERO,
            join_times: Vec::new(),
            lost: Vec::new(),
        };
        if let (Players::Processes(children), Some((address, fingerprint))) = (&mut run.clients, address) {
            for process in 0..SWARM_PROCESSES {
                let share = players / SWARM_PROCESSES + usize::from(process < players % SWARM_PROCESSES);
                children.push(spawn_swarm(address, &fingerprint, share, GREETING_AT_ONCE / SWARM_PROCESSES));
            }
        }
        run.join_everyone();
        run
    }

    /// Plays paced frames until every player is welcomed and its pawn placed, or no player has joined for
    /// [`JOIN_STALLED`]: those that could not join are counted (and the swarm says why).
    fn join_everyone(&mut self) {
        let started = Instant::now();
        let mut last_join = Instant::now();
        while self.field.walkers.len() < self.players && last_join.elapsed() < JOIN_STALLED {
            let frame_started = Instant::now();
            let before = self.field.walkers.len();
            self.step();
            if self.field.walkers.len() > before {
                last_join = Instant::now();
            }
            if self.transport == Transport::Quic {
                std::thread::sleep(FRAME.saturating_sub(frame_started.elapsed()));
            }
        }
        self.joined_in = started.elapsed();
        assert!(!self.field.walkers.is_empty(), "no player joined");
        // A second's frames, so what joining sent has been acknowledged before anything is measured.
        for _ in 0..TICK_RATE {
            self.step();
            if self.transport == Transport::Quic {
                std::thread::sleep(FRAME);
            }
        }
        self.rss_joined = resident_bytes();
    }

    /// One frame of the game: the players' clients (memory: in this process, not timed), the pawns moved,
    /// the server's frame. Returns the time of the moves and the server's frame.
    fn step(&mut self) -> (Duration, Duration) {
        if let Players::InProcess { network, swarm, joined } = &mut self.clients {
            // A server lets 64 connections greet at once; the swarm keeps under it.
            while *joined < self.players && swarm.greeting() < 32 {
                swarm.add(SwarmPlayer::new(Box::new(network.connect()), None, Instant::now()));
                *joined += 1;
            }
        }
        let (wall, cpu) = (Instant::now(), thread_cpu());
        self.field.walk(&mut world::lock(self.server.manager().world()));
        let notes = self.server.frame(FRAME);
        let took = (wall.elapsed(), thread_cpu() - cpu);
        for note in notes {
            match note {
                ServerNote::Joined(client) => {
                    let pawn = self.server.players()[&client].pawn;
                    self.field.place(&mut world::lock(self.server.manager().world()), client, pawn);
                }
                other => {
                    println!("capacity: {} over {}: {other}", self.players, self.transport.name());
                    self.field.walkers.retain(|walker| walker.client != other.client());
                }
            }
        }
        if let Players::InProcess { network, swarm, .. } = &mut self.clients {
            network.advance(FRAME);
            swarm.poll();
        }
        took
    }

    /// One measured frame, paced to 30 Hz over QUIC so the swarm's acknowledgements arrive as they would.
    fn frame(&mut self) -> Duration {
        if self.since.is_none() {
            self.since = Some((process_cpu(), self.bytes_sent()));
        }
        let (wall, cpu) = self.step();
        self.frames.push((wall, cpu));
        // Read after every frame: criterion's analysis between the frames and the figures is not the server's.
        self.until = (process_cpu(), self.bytes_sent());
        if self.transport == Transport::Quic {
            std::thread::sleep(FRAME.saturating_sub(wall));
        }
        wall
    }

    fn bytes_sent(&self) -> u64 {
        match &self.clients {
            Players::InProcess { swarm, .. } => swarm.received().bytes,
            Players::Processes(_) => self.server.total_traffic().bytes_sent,
        }
    }

    /// The figures of the run; the players leave.
    fn finish(mut self) -> Figures {
        let (cpu_since, bytes_since) = self.since.expect("frames were measured");
        let (cpu_until, bytes_until) = self.until;
        let frames = self.frames.len() as f64;
        let process_cpu_per_frame = (cpu_until - cpu_since).as_secs_f64() / frames;
        let joined = self.field.walkers.len();
        let bytes_per_player_second =
            (bytes_until - bytes_since) as f64 / frames / joined as f64 * f64::from(TICK_RATE);
        match &mut self.clients {
            Players::InProcess { swarm, .. } => {
                let report = swarm.report();
                self.lost = report.gone.into_iter().map(|(_, why)| why).collect();
                self.join_times = report.join_times;
            }
            Players::Processes(children) => {
                for child in children.iter_mut() {
                    drop(child.stdin.take());
                }
                for child in children.drain(..) {
                    let report = SwarmLine::read(child);
                    self.join_times.extend(report.join_times);
                    self.lost.extend(report.lost);
                }
                self.join_times.sort_unstable();
            }
        }
        assert_eq!(self.server.players().len(), joined, "every player that joined stayed");
        for why in &self.lost {
            println!("capacity: {} over {}: a player was lost: {why}", self.players, self.transport.name());
        }
        let mut walls: Vec<Duration> = self.frames.iter().map(|(wall, _)| *wall).collect();
        walls.sort_unstable();
        let mean_cpu = self.frames.iter().map(|(_, cpu)| cpu.as_secs_f64()).sum::<f64>() / frames;
        Figures {
            transport: self.transport,
            players: self.players,
            joined,
            frames: self.frames.len(),
            frame_mean: walls.iter().map(Duration::as_secs_f64).sum::<f64>() / frames,
            frame_p99: percentile(&walls, 0.99).as_secs_f64(),
            frame_cpu: mean_cpu,
            process_cpu: process_cpu_per_frame,
            bytes_per_player_second,
            memory_per_player: self.rss_joined.saturating_sub(self.rss_before_join) as f64 / joined as f64,
            joined_in: self.joined_in,
            join_p50: percentile(&self.join_times, 0.5),
            join_p99: percentile(&self.join_times, 0.99),
        }
    }
}

/// The game's pawns walking a square world of cells, and who sees whom.
struct Field {
    side: f64,
    walkers: Vec<Walker>,
    seed: u64,
}

struct Walker {
    client: ClientId,
    pawn: ActorId,
    x: f64,
    y: f64,
    heading: f64,
    cell: (i64, i64),
}

impl Field {
    fn new(players: usize) -> Field {
        let cells = (players as f64 / PLAYERS_PER_CELL).max(1.0);
        Field { side: cells.sqrt().ceil() * CELL, walkers: Vec::new(), seed: 0x9E37_79B9_7F4A_7C15 }
    }

    fn random(&mut self) -> f64 {
        // splitmix64: the same walk every run.
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }

    fn place(&mut self, world: &mut World, client: ClientId, pawn: ActorId) {
        let (x, y, heading) =
            (self.random() * self.side, self.random() * self.side, self.random() * std::f64::consts::TAU);
        let walker = Walker { client, pawn, x, y, heading, cell: cell_of(x, y) };
        see_from(world, &walker);
        self.walkers.push(walker);
    }

    /// Every pawn takes a step, turning a little, and turns back at the world's edge.
    fn walk(&mut self, world: &mut World) {
        for index in 0..self.walkers.len() {
            let turn = (self.random() - 0.5) * 0.2;
            let side = self.side;
            let walker = &mut self.walkers[index];
            walker.heading += turn;
            let (x, y) = (walker.x + STEP * walker.heading.cos(), walker.y + STEP * walker.heading.sin());
            if !(0.0..side).contains(&x) || !(0.0..side).contains(&y) {
                walker.heading += std::f64::consts::PI;
            } else {
                (walker.x, walker.y) = (x, y);
            }
            for (property, value) in [("x", walker.x), ("y", walker.y), ("heading", walker.heading)] {
                world.set_property(walker.pawn, "Position", property, Value::Float(value)).unwrap();
            }
            let cell = cell_of(walker.x, walker.y);
            if cell != walker.cell {
                walker.cell = cell;
                see_from(world, walker);
            }
        }
    }
}

fn cell_of(x: f64, y: f64) -> (i64, i64) {
    ((x / CELL).floor() as i64, (y / CELL).floor() as i64)
}

/// The walker's pawn is in its cell's group; its client sees its cell and the eight around it.
fn see_from(world: &mut World, walker: &Walker) {
    let (cx, cy) = walker.cell;
    let own = format!("cell-{cx}-{cy}");
    world.set_relevancy(walker.pawn, Relevancy::Groups(check_groups([own.as_str()]).unwrap())).unwrap();
    let around: Vec<String> =
        (-1..=1).flat_map(|dx| (-1..=1).map(move |dy| format!("cell-{}-{}", cx + dx, cy + dy))).collect();
    world.set_client_groups(walker.client, check_groups(around.iter().map(String::as_str)).unwrap());
}

/// One size's figures.
struct Figures {
    transport: Transport,
    players: usize,
    joined: usize,
    frames: usize,
    frame_mean: f64,
    frame_p99: f64,
    frame_cpu: f64,
    process_cpu: f64,
    bytes_per_player_second: f64,
    memory_per_player: f64,
    joined_in: Duration,
    join_p50: Duration,
    join_p99: Duration,
}

impl Figures {
    const HEADER: &'static str =
        "transport  players   joined  frames  frame mean   p99   frame CPU  process CPU  CPU/player  \
                                  bytes/s/player  memory/player  all joined in  join p50   p99";
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |seconds: f64| format!("{:.2} ms", seconds * 1e3);
        write!(
            f,
            "{:<9}  {:>7}  {:>7}  {:>6}  {:>10}  {:>8}  {:>9}  {:>11}  {:>10}  {:>14.0}  {:>10.0} KiB  {:>13.1?}  {:>8.1?}  {:.1?}",
            self.transport.name(),
            self.players,
            self.joined,
            self.frames,
            ms(self.frame_mean),
            ms(self.frame_p99),
            ms(self.frame_cpu),
            ms(self.process_cpu),
            format!("{:.1} us", self.process_cpu / self.joined as f64 * 1e6),
            self.bytes_per_player_second,
            self.memory_per_player / 1024.0,
            self.joined_in,
            self.join_p50,
            self.join_p99,
        )
    }
}

/// How the cost grows with the players: the slope between the smallest and the largest size, per transport.
fn slopes(table: &[Figures]) {
    for transport in [Transport::Memory, Transport::Quic] {
        let sizes: Vec<&Figures> = table.iter().filter(|f| f.transport == transport).collect();
        let (Some(small), Some(large)) = (sizes.first(), sizes.last()) else { continue };
        if large.players == small.players {
            continue;
        }
        let players = (large.joined as f64) - (small.joined as f64);
        println!(
            "capacity: {}: each player more costs {:.1} us of process CPU a frame ({:.1} us of the frame thread's), \
             from {} to {} players",
            transport.name(),
            (large.process_cpu - small.process_cpu) / players * 1e6,
            (large.frame_cpu - small.frame_cpu) / players * 1e6,
            small.joined,
            large.joined,
        );
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    match sorted.len() {
        0 => Duration::ZERO,
        n => sorted[(((n - 1) as f64) * fraction).round() as usize],
    }
}

fn thread_cpu() -> Duration {
    gamefeature_host::cpu_clock::thread_cpu_time().unwrap_or_default()
}

/// The CPU time of this whole process (every thread), so far.
fn process_cpu() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes one `timespec` through a pointer to a valid, exclusively borrowed one.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the process CPU clock");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// This process's resident memory (`VmRSS`), in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) * 1024
}

/// Gives the allocator's free pages back, so the memory a size adds is not hidden by what the last one freed.
fn settle_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free pages of glibc's heaps to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

// The swarm processes.

fn spawn_swarm(address: std::net::SocketAddr, fingerprint: &Fingerprint, players: usize, at_once: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--swarm", &address.to_string(), &fingerprint.to_string(), &players.to_string(), &at_once.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the bench starts its swarm")
}

/// A swarm process: joins its players and plays them until its standard input closes, then prints its report
/// as one line (see [`SwarmLine`]).
fn swarm_process(args: &[String]) {
    let [address, fingerprint, players, at_once] = args else { panic!("--swarm ADDRESS FINGERPRINT PLAYERS AT-ONCE") };
    let options = QuicSwarmOptions {
        server: address.parse().unwrap(),
        trust: ServerTrust::Pinned(Fingerprint::parse(fingerprint).unwrap()),
        token: None,
        players: players.parse().unwrap(),
        at_once: at_once.parse().unwrap(),
        connect_wait: Duration::from_secs(10),
    };
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let told = ended.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        told.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let report = quic_swarm(&options, tokio.handle(), Duration::from_millis(2), |_, _| {
        ended.load(std::sync::atomic::Ordering::Relaxed)
    });
    let times: Vec<String> = report.join_times.iter().map(|t| t.as_micros().to_string()).collect();
    let gone: Vec<String> = report.gone.iter().map(|(_, why)| why.replace('\n', " ")).collect();
    // The bench may have ended first (it failed): nobody reads the report then.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "joined {}", times.join(" "));
    let _ = writeln!(out, "gone {}", gone.join(" | "));
}

/// What a swarm process reported.
struct SwarmLine {
    join_times: Vec<Duration>,
    /// Why each player lost went (the players leaving at the end are not lost).
    lost: Vec<String>,
}

impl SwarmLine {
    fn read(mut child: Child) -> SwarmLine {
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let lines: Vec<String> = stdout.lines().map_while(Result::ok).collect();
        assert!(child.wait().unwrap().success(), "a swarm process failed: {lines:?}");
        let field = |name: &str| lines.iter().find_map(|l| l.strip_prefix(name)).unwrap_or("").trim().to_string();
        let gone = field("gone");
        let lost = gone.split(" | ").filter(|why| !why.is_empty() && *why != "the swarm left").map(str::to_string);
        let lost = lost.collect();
        let join_times =
            field("joined").split_whitespace().map(|micros| Duration::from_micros(micros.parse().unwrap())).collect();
        SwarmLine { join_times, lost }
    }
}
