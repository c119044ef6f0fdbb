//! What recording a session costs: the default experience on a dedicated server with two clients (over the
//! in-memory network, so the wire adds no noise), one frame of all three worlds per iteration, played plain
//! and with each world recorded to a file (`--record`: frames, network polls, plugins' clock readings and a
//! checkpoint every 30 frames) — the frame time of both and the bytes a minute of play writes.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-tests --bench recording
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_host::net::transport::memory::{Conditions, MemoryNetwork};
use gamefeature_host::net::transport::{ClientTransport, ServerTransport};
use gamefeature_host::net::{GameClient, GameServer, ServerOptions};
use gamefeature_host::recording::{Role, SessionInfo};
use gamefeature_host::replay::{
    RecordingClientTransport, RecordingServerTransport, WorldRecording, DEFAULT_CHECKPOINT_EVERY,
};
use gamefeature_host::world::NetMode;
use gamefeature_host::{ExperienceManager, Session};
use gamefeature_tests::*;

const TICK_RATE: u32 = 30;
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / TICK_RATE as u64);

/// A server and two clients playing the default experience, each world recorded into `record_dir` if given.
struct Game {
    network: MemoryNetwork,
    server: GameServer,
    clients: Vec<GameClient>,
    /// The server's recording first, then each client's.
    recordings: Vec<WorldRecording>,
}

fn session_info(role: Role, world: &str) -> SessionInfo {
    SessionInfo {
        host_version: String::new(),
        role,
        experience: String::new(),
        experience_digest: None,
        plugin_dirs: Vec::new(),
        experiences_dir: None,
        mods: None,
        world: world.into(),
        net_mode: String::new(),
        chaos: None,
        tick_rate: TICK_RATE,
        checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
        seed: [9; 32],
        started_unix: 0,
    }
}

fn recording(dir: Option<&Path>, role: Role, world: &str, manager: &mut ExperienceManager) -> Option<WorldRecording> {
    let file = dir?.join(format!("{world}.gfrec"));
    let recording = WorldRecording::create(&file, session_info(role, world)).unwrap();
    manager.set_tape(recording.tape());
    Some(recording)
}

impl Game {
    fn start(tokio: &tokio::runtime::Runtime, session: &Session, experience: &Path, record_dir: Option<&Path>) -> Game {
        let network = MemoryNetwork::new(1, Conditions::PERFECT);
        let mut manager = session.create_world("server", NetMode::DedicatedServer);
        let mut recordings = Vec::new();
        let server_recording = recording(record_dir, Role::Server, "server", &mut manager);
        let mut transport: Box<dyn ServerTransport> = Box::new(network.server());
        if let Some(recording) = &server_recording {
            transport = Box::new(RecordingServerTransport::new(transport, recording.recorder().clone()));
        }
        recordings.extend(server_recording);
        let options = ServerOptions { tick_rate: TICK_RATE, ..Default::default() };
        let mut server = GameServer::new(manager, transport, options);
        tokio.block_on(server.load(experience)).unwrap();
        let mut clients = Vec::new();
        for index in 1..=2 {
            let world = format!("client-{index}");
            let mut manager = session.create_world(&world, NetMode::Client);
            let client_recording = recording(record_dir, Role::Client, &world, &mut manager);
            let mut transport: Box<dyn ClientTransport> = Box::new(network.connect());
            if let Some(recording) = &client_recording {
                transport = Box::new(RecordingClientTransport::new(transport, recording.recorder().clone()));
            }
            recordings.extend(client_recording);
            clients.push(GameClient::connect(manager, transport, None, experience.parent().unwrap()));
        }
        Game { network, server, clients, recordings }
    }

    /// One frame of every world, each recorded if it is.
    fn frame(&mut self, tokio: &tokio::runtime::Runtime) {
        let mut recordings = self.recordings.iter_mut();
        match recordings.next() {
            Some(recording) => {
                recording.frame(FRAME);
                self.server.frame(FRAME);
                recording.frame_done(self.server.manager());
            }
            None => {
                self.server.frame(FRAME);
            }
        }
        self.network.advance(FRAME);
        for client in &mut self.clients {
            match recordings.next() {
                Some(recording) => {
                    recording.frame(FRAME);
                    tokio.block_on(client.frame(FRAME)).unwrap();
                    recording.frame_done(client.manager());
                }
                None => tokio.block_on(client.frame(FRAME)).unwrap(),
            }
        }
    }

    /// Bytes each recording holds so far: the server's, then each client's.
    fn recorded_bytes(&self) -> Vec<u64> {
        self.recordings.iter().map(|r| r.recorder().bytes()).collect()
    }
}

fn recording_cost(c: &mut Criterion) {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let plugins = PluginDir::with(&gamefeature_plugin_artifacts::DEFAULT_PLUGINS);
    let experiences = gamefeature_plugin_artifacts::default_experience();
    let experience = experiences.path().join("default.toml");
    let cache = gamefeature_plugin_artifacts::shared_cache();
    let session = session_with(&plugins, Some(&cache), trusted());
    session.timeline().set_retention(Some(10_000));
    let record_dir = tempfile::TempDir::new().unwrap();
    let mut plain = Game::start(&tokio, &session, &experience, None);
    let mut recorded = Game::start(&tokio, &session, &experience, Some(record_dir.path()));
    // Both sessions join and settle before they are measured: a client loads its experience in its first frames.
    for _ in 0..TICK_RATE * 2 {
        plain.frame(&tokio);
        recorded.frame(&tokio);
    }

    let mut group = c.benchmark_group("session_frame");
    let mut spent = [Duration::ZERO; 2];
    let mut frames = [0u64; 2];
    let before = recorded.recorded_bytes();
    for (index, (name, game)) in [("plain", &mut plain), ("recorded", &mut recorded)].into_iter().enumerate() {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let started = Instant::now();
                for _ in 0..iterations {
                    game.frame(&tokio);
                }
                let took = started.elapsed();
                spent[index] += took;
                frames[index] += iterations;
                took
            })
        });
    }
    group.finish();
    if frames[0] == 0 || frames[1] == 0 {
        return;
    }
    let per_frame = |i: usize| spent[i] / frames[i] as u32;
    let (plain_frame, recorded_frame) = (per_frame(0), per_frame(1));
    let overhead = (recorded_frame.as_secs_f64() / plain_frame.as_secs_f64() - 1.0) * 100.0;
    let added = recorded_frame.saturating_sub(plain_frame);
    let of_frame = added.as_secs_f64() / FRAME.as_secs_f64() * 100.0;
    println!(
        "recording: {recorded_frame:?} per frame of server and 2 clients recorded, {plain_frame:?} plain: {added:?} \
         more ({overhead:+.1} % of the host's own frame work), {of_frame:.3} % of a {TICK_RATE} Hz frame \
         (target <= 10 %)"
    );
    let after = recorded.recorded_bytes();
    let minutes = frames[1] as f64 / f64::from(TICK_RATE) / 60.0;
    for (world, (before, after)) in ["server", "client-1", "client-2"].iter().zip(before.iter().zip(&after)) {
        let per_minute = (after - before) as f64 / minutes / 1e6;
        println!("recording: {world} writes {per_minute:.3} MB per minute of play (target ~1 MB)");
    }
}

criterion_group!(benches, recording_cost);
criterion_main!(benches);
