//! What watching costs the frame: a world playing the default experience with 50 players, its console served on
//! loopback, stepped frame after frame with no viewer, one, and 20 — each viewer a real Server-Sent Events
//! connection reading every snapshot. The frame thread builds one snapshot per period while anyone watches,
//! whoever that is; the viewers' sockets are written by the async runtime's threads, which share the machine's
//! cores with the frame.
//!
//! Then one snapshot alone (built and serialized), which the frame pays every `SNAPSHOT_EVERY` while anyone
//! watches.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo bench -p gamefeature-console --bench viewers
//! ```

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gamefeature_console::{Console, ConsoleOptions};
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::feature::GrantPolicy;
use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::live::Command;
use gamefeature_host::world::NetMode;
use gamefeature_host::{Session, SessionOptions};
use gamefeature_plugin_artifacts::{default_experience, PluginDir, DEFAULT_PLUGINS};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PLAYERS: usize = 50;
const FRAME: Duration = Duration::from_micros(33_333);

/// A viewer: an `/api/events` stream read to the end, its bytes counted.
async fn view(address: SocketAddr, received: Arc<AtomicU64>) {
    let Ok(mut stream) = tokio::net::TcpStream::connect(address).await else { return };
    let request = format!("GET /api/events HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return;
    }
    let mut buffer = vec![0u8; 64 << 10];
    while let Ok(read) = stream.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        received.fetch_add(read as u64, Ordering::Relaxed);
    }
}

fn viewers(c: &mut Criterion) {
    let plugins = PluginDir::with(&DEFAULT_PLUGINS);
    let experience = default_experience();
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let options = SessionOptions {
        plugin_dirs: vec![plugins.path().to_path_buf()],
        manager: ManagerOptions { grants: GrantPolicy::Declared, ..ManagerOptions::default() },
        ..SessionOptions::default()
    };
    let session = Session::new(options).unwrap();
    let mut manager = session.create_world("bench", NetMode::Standalone);
    tokio.block_on(manager.load(&experience.path().join("default.toml"))).unwrap();
    let mut game = GameLoop::new(Played::Standalone(Box::new(manager)), tokio.handle().clone());
    game.execute(&session, &Command::Spawn(PLAYERS), "spawn").unwrap();

    let mut console = Console::new(ConsoleOptions { frame_period: FRAME, ..ConsoleOptions::default() }, None);
    let listener = tokio.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let address = listener.local_addr().unwrap();
    let app = console.router(address).into_make_service_with_connect_info::<SocketAddr>();
    tokio.spawn(async move { axum::serve(listener, app).await });

    let mut group = c.benchmark_group("console");
    let received = Arc::new(AtomicU64::new(0));
    let mut watchers: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    for count in [0usize, 1, 20] {
        while watchers.len() < count {
            watchers.push(tokio.spawn(view(address, received.clone())));
        }
        // The viewers connected and streaming before the frames are timed.
        let before = received.load(Ordering::Relaxed);
        while count > 0 && received.load(Ordering::Relaxed) < before + 1000 * count as u64 {
            let step = game.step(FRAME);
            console.frame(&game, step.took);
            std::thread::sleep(Duration::from_millis(5));
        }
        group.bench_function(format!("frame_with_{count}_viewers"), |b| {
            b.iter(|| {
                let step = game.step(FRAME);
                console.frame(&game, step.took);
            })
        });
    }
    // One snapshot of this world, built and serialized: what the frame pays twice a second while anyone watches.
    group.bench_function(format!("snapshot_{PLAYERS}_players"), |b| b.iter(|| console.publish(&game)));
    group.finish();
    let total = received.load(Ordering::Relaxed);
    println!("console: 20 viewers received {:.1} MiB of snapshots in all", total as f64 / f64::from(1 << 20));
    assert!(total > 0, "the viewers received nothing");
    for watcher in watchers {
        watcher.abort();
    }
    let _ = game.end("the bench is over", FRAME, &mut ());
}

criterion_group!(benches, viewers);
criterion_main!(benches);
