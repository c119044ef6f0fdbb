//! A small game that embeds the gamefeature host: the game owns its loop and steps the host once a frame.
//!
//! It loads an experience whose features come from plugins (Lyra's character flow, a score keeper), spawns two
//! players, plays three seconds, reads the score a plugin wrote, hot-reloads that plugin while the game runs
//! (the score stays: it is the world's), and ends play. `docs/embedding.md` walks through it.
//!
//! Run it from the repository, once `./dev setup` has built the plugins:
//! `cargo run -p gamefeature-host --example embedded_game`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gamefeature_host::config::HostConfig;
use gamefeature_host::experience::ManagerOptions;
use gamefeature_host::game_loop::{GameLoop, Played};
use gamefeature_host::runtime::RuntimeConfig;
use gamefeature_host::world::{NetMode, Value};
use gamefeature_host::{game, Session, SessionOptions};

/// The game's frame: 30 frames a second.
const FRAME: Duration = Duration::from_millis(33);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    play(&repository.join("plugins"))
}

/// The game, with the plugins in `plugins` (each a folder with its plugin.toml and built component).
fn play(plugins: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");

    // The host's side: where plugins are, what each may do (the repository's gfhost.toml), a compile cache.
    let config = HostConfig::from_file(&repository.join("gfhost.toml"))?;
    let session = Session::new(SessionOptions {
        plugin_dirs: vec![plugins.to_path_buf()],
        runtime: RuntimeConfig { cache_dir: Some(cache_dir(&repository)), ..RuntimeConfig::default() },
        manager: ManagerOptions { grants: config.grants, data_dir: config.data_dir, ..ManagerOptions::default() },
        trust: config.trust,
    })?;

    // A world with the game's own class (its hero is a Character: what plugins add to characters, it gets), then
    // its experience loaded: the plugins it names are compiled (or read from the cache) and activated.
    let tokio = tokio::runtime::Runtime::new()?;
    let mut world = session.create_world("game", NetMode::Standalone);
    world.with_world(|w| w.declare_class("HeroCharacter", "Character"))?;
    tokio.block_on(world.load(&repository.join("host/examples/embedded_game.toml")))?;
    let mut host = GameLoop::new(Played::Standalone(Box::new(world)), tokio.handle().clone());

    // The game's players: a pawn, a controller and a player state each; the controller possesses the pawn,
    // then the player state arrives (as Unreal's do), and the plugins' features on the pawn get to play.
    let players = host
        .with_world(|w| {
            let pawn_class = "HeroCharacter";
            let players: Vec<game::Player> = (0..2).filter_map(|_| game::spawn_player(w, pawn_class).ok()).collect();
            for player in &players {
                game::possess(w, player).and_then(|()| game::replicate_player_state(w, player))?;
            }
            Ok::<_, gamefeature_host::world::WorldError>(players)
        })
        .expect("a standalone world is the game's")?;

    // The game's loop: the host steps once a frame, inside it.
    for _ in 0..90 {
        host.step(FRAME);
    }

    // What a plugin wrote, read from the world: score-keeper scores a point a second.
    let score = |host: &GameLoop| {
        let world = gamefeature_host::world::lock(host.manager().world());
        match world.property(players[0].player_state, "ScoreComponent", "score") {
            Ok(Some(Value::Integer(points))) => *points,
            _ => 0,
        }
    };
    let before = score(&host);
    println!("after 3 s of play the first player has {before} point(s)");

    // A new version of the plugin, compiled off the frame while the game plays on, swapped in between frames.
    host.reload("score-keeper");
    let mut reloaded = None;
    for _ in 0..3000 {
        let step = host.step(FRAME);
        if let Some(reload) = step.reloads.into_iter().next() {
            reloaded = Some(reload.outcome?);
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("{}", reloaded.ok_or("the new version did not compile in time")?);
    for _ in 0..30 {
        host.step(FRAME);
    }
    let after = score(&host);
    println!("a second after the reload: {after} point(s)");

    // End of play: every plugin deactivates, and leaves nothing behind in the world.
    let ended = host.end("the game is over", FRAME, &mut ())?;
    let failures = &ended.manager.report().failures;
    for failure in failures {
        println!("failure: {failure}");
    }
    if before < 2 || after <= before || !failures.is_empty() {
        return Err(format!("the game did not play as it should: scores {before} then {after}").into());
    }
    println!("play ended");
    Ok(())
}

/// Where compiled plugins are kept between runs: the repository's `target/`, beside the build.
fn cache_dir(repository: &Path) -> PathBuf {
    repository.join("target").join("embedded-game-cache")
}

/// The game plays with the plugins built from source for the tests (`./dev setup` builds the repository's).
#[test]
fn the_embedded_game_plays() {
    use gamefeature_plugin_artifacts::{PluginDir, LYRA_CHARACTER, SCORE_KEEPER};
    let plugins = PluginDir::with(&[LYRA_CHARACTER, SCORE_KEEPER]);
    play(plugins.path()).unwrap();
}
