//! `arena`: plays the arena headless (a line of news every few seconds, and the plugins' log), for a number of
//! seconds or until stopped, and draws a picture of it at the end when asked.
//!
//! ```text
//! arena                                 # four heroes, in real time, until Ctrl-C
//! arena --seconds 20 --fast --picture docs/images/arena.png
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bevy_app::{AppExit, FixedUpdate, Last, ScheduleRunnerPlugin};
use bevy_ecs::prelude::*;
use bevy_time::TimeUpdateStrategy;
use clap::Parser;
use gamefeature_arena::{arena_app, picture, summary, ArenaOptions, TICK_HZ};

#[derive(Parser, Debug)]
#[command(about = "Play the arena: a Bevy game whose gameplay comes from game-feature plugins")]
struct Args {
    /// Directory of plugin folders.
    #[arg(long, default_value = "plugins")]
    plugins: PathBuf,
    /// The experience to play.
    #[arg(long, default_value = "experiences/arena.toml")]
    experience: PathBuf,
    /// The host's configuration (what each plugin is granted).
    #[arg(long, default_value = "gfhost.toml")]
    config: PathBuf,
    /// Heroes in the arena.
    #[arg(long, default_value_t = 4)]
    heroes: usize,
    /// Seconds of play, then stop (by default, play until stopped).
    #[arg(long)]
    seconds: Option<f64>,
    /// Play frames as fast as the machine can, not in real time (the match is the same).
    #[arg(long)]
    fast: bool,
    /// Draw the arena as it is at the end into this PNG file.
    #[arg(long)]
    picture: Option<PathBuf>,
    /// The seed of the game's random numbers: the same seed plays the same match.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Reload a plugin when its component is rebuilt (`gfhost build --watch` in another terminal).
    #[arg(long)]
    watch: bool,
    /// Play in a window (needs a display, and the arena built with `--features window`).
    #[arg(long)]
    window: bool,
    /// Serve the web console (a map of the arena, each mod's cost) on this address [default when given without
    /// one: 127.0.0.1:9100]; its actions need GFHOST_ADMIN_TOKEN.
    #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:9100")]
    admin: Option<std::net::SocketAddr>,
}

/// How long the match runs, what to do at the end.
#[derive(Resource)]
struct Run {
    frames: u64,
    last_frame: Option<u64>,
    picture: Option<PathBuf>,
    failed: bool,
}

fn count_frames(mut run: ResMut<'_, Run>) {
    run.frames += 1;
}

/// News every five seconds; at the end, the picture and the exit.
fn news_and_end(world: &mut World) {
    let (frames, last_frame) = {
        let run = world.resource::<Run>();
        (run.frames, run.last_frame)
    };
    let every = (5.0 * TICK_HZ) as u64;
    let ended = last_frame.is_some_and(|last| frames >= last);
    if frames > 0 && (frames % every == 0 || ended) && world.resource::<Run>().frames != 0 {
        println!("[{:>5.1} s] {}", frames as f64 / TICK_HZ, summary(world));
    }
    if !ended {
        return;
    }
    if let Some(file) = world.resource::<Run>().picture.clone() {
        let saved = picture::draw(world)
            .ok_or_else(|| "the arena is too large to draw".to_string())
            .and_then(|pixmap| pixmap.save_png(&file).map_err(|e| e.to_string()));
        match saved {
            Ok(()) => println!("picture: {}", file.display()),
            Err(e) => {
                eprintln!("error: writing {}: {e}", file.display());
                world.resource_mut::<Run>().failed = true;
            }
        }
    }
    let failed = world.resource::<Run>().failed;
    world.write_message(if failed { AppExit::error() } else { AppExit::Success });
    // Counted once: the exit is written once.
    world.resource_mut::<Run>().last_frame = None;
}

/// The arena in a window of its size, Bevy's default plugins around it (the log is the arena's own).
#[cfg(feature = "window")]
fn in_window(options: ArenaOptions) -> Result<bevy_app::App, String> {
    let arena = gamefeature_arena::arena_of(&options);
    let mut app = bevy_app::App::new();
    gamefeature_arena::window::add_window(&mut app, arena.width, arena.height);
    gamefeature_arena::arena_in(app, options).map_err(|e| e.to_string())
}

#[cfg(not(feature = "window"))]
fn in_window(_: ArenaOptions) -> Result<bevy_app::App, String> {
    Err("this arena was built without a window: cargo run -p gamefeature-arena --features window -- --window".into())
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("GFHOST_LOG").unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let mut options = ArenaOptions::new(&args.plugins, &args.experience);
    options.heroes = args.heroes;
    options.seed = args.seed;
    options.host = options.host.cache_dir(gamefeature_host::runtime::RuntimeConfig::user_cache_dir());
    if args.config.exists() {
        options.host = options.host.config(&args.config);
    }
    if args.watch {
        options.host = options.host.watch();
    }
    let app = match args.window {
        true => in_window(options),
        false => arena_app(options).map_err(|e| e.to_string()),
    };
    let mut app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(address) = args.admin {
        let token = std::env::var("GFHOST_ADMIN_TOKEN").ok().filter(|t| !t.is_empty());
        app.add_plugins(bevy_gamefeature::GameFeatureConsolePlugin { address, token });
    }
    let frame = Duration::from_secs_f64(1.0 / TICK_HZ);
    let last_frame = args.seconds.map(|s| (s * TICK_HZ).round().max(1.0) as u64);
    app.insert_resource(Run { frames: 0, last_frame, picture: args.picture, failed: false })
        .add_systems(FixedUpdate, count_frames)
        .add_systems(Last, news_and_end);
    if args.fast {
        app.insert_resource(TimeUpdateStrategy::ManualDuration(frame));
    }
    // A window's event loop runs the app; headless, Bevy's schedule runner does.
    if !args.window {
        app.add_plugins(ScheduleRunnerPlugin::run_loop(if args.fast { Duration::ZERO } else { frame / 2 }));
    }
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(_) => ExitCode::FAILURE,
    }
}
