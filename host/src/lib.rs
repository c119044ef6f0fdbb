//! # gamefeature host
//!
//! Runs game-feature plugins — WebAssembly components implementing `gamefeature:plugin/game-feature` — inside
//! a game's worlds, the way Unreal's Game Features and Modular Gameplay plugins and Lyra's experiences do. A
//! game embeds it and steps it once a frame; `docs/embedding.md` walks through a whole small game.
//!
//! Where to start:
//! - [`Session`]: one process's plugins (found once, compiled and cached, sandboxed) and its timeline; it
//!   creates worlds.
//! - [`game_loop`]: a world stepped a frame at a time in any net mode — standalone, a server and its clients,
//!   a client — with new plugin versions compiled off the frame, recording, and the end of play.
//! - [`experience`]: experience definitions and the per-world [`ExperienceManager`] that loads them through
//!   Lyra's load states, delivers plugins' work each frame, and tears them down at end of play.
//! - [`world`]: the game's side of a world: actors, classes, components and their properties, the component
//!   manager (receivers, component requests, extension handlers and events) and the init-state system.
//! - [`game`]: a minimal game mode: players whose controller and player state arrive after their pawn.
//! - [`Error`]: what a request to the host returns when it fails, with its [`Blame`] (a plugin, the caller or
//!   the host) as data to match on; each module's own error converts into it.
//!
//! The rest, by concern:
//! - [`feature`]: plugin manifests, discovery, admission and the process-wide [`FeatureSubsystem`] state
//!   machine (`Installed < Registered < Loaded < Active`, with dependencies and ref-counted activation).
//! - [`delivery`]: how a world's queued work reaches its plugins in batched calls, each plugin held to its frame
//!   budget; [`supervision`]: what becomes of a plugin that faults (restarts).
//! - [`net`]: multiplayer — a server and clients over QUIC or an in-memory network, replication, mod sync.
//! - [`package`]: signed plugin packages, installs, trust and registries; [`recording`] and [`replay`]: a
//!   session recorded as it runs and played again, compared checkpoint by checkpoint.
//! - [`live`]: console commands on a running world, and watching plugin folders for new versions.
//! - [`runtime`]: the only module that knows wasmtime; it compiles, caches and sandboxes plugins.
//! - [`config`]: the host's configuration (`gfhost.toml`); [`assets`]: bundles of data files, read-only to
//!   plugins; [`timeline`]: a timestamped record of all of it, printable and exportable as a Chrome trace.
//! - Files several processes share: [`files`] (reading what the host is given, bounded), [`whole_dirs`]
//!   (folders put in place whole) and [`file_lock`] (advisory locks); [`text`]: a plugin's text made safe to
//!   show; [`cpu_clock`]: the CPU time a thread has used.

// Every public item says what it is for.
#![warn(missing_docs)]

pub mod assets;
pub mod config;
pub mod cpu_clock;
pub mod delivery;
pub mod error;
pub mod experience;
pub mod feature;
pub mod file_lock;
pub mod files;
pub mod game;
pub mod game_loop;
pub mod live;
pub mod net;
pub mod package;
pub mod recording;
pub mod replay;
pub mod runtime;
mod session;
pub mod supervision;
pub mod text;
pub mod timeline;
pub mod whole_dirs;
pub mod world;

pub use error::{Blame, Error};
pub use experience::{ExperienceLoadState, ExperienceManager};
pub use feature::FeatureSubsystem;
pub use session::{Session, SessionOptions};
pub use timeline::Timeline;
pub use world::{NetMode, World};
