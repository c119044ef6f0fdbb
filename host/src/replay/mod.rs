//! Record and replay: a session played again frame for frame from its recording, and the first difference
//! named.
//!
//! - recording a world as its game loop drives it, with checkpoints of its state, is
//!   [`game_loop::recording`](crate::game_loop::recording) (re-exported here); a world's state as entries a
//!   modder can read, and the differences between two, is [`game_loop::world_state`](crate::game_loop::world_state);
//! - [`transport`]: recording what the network delivered at each poll, and delivering it again;
//! - [`player`]: replaying a recording through the game loop, with the recorded components or newer builds of
//!   them;
//! - [`bisect`]: which of a recording's mods makes its failure come, by replays with some left out.
//!
//! A replay is deterministic because everything that reaches a world goes through a seam the host records:
//! frame deltas and commands (the loop), network frames (the transport's polls), clocks and random numbers
//! (each instance's WASI context, through the world's `recording::Tape`). The engine canonicalizes NaNs and
//! makes relaxed SIMD deterministic; iteration orders the world depends on are fixed (hashers without random
//! seeds); CPU-time limits, which no two runs meet alike, are loosened in a replay, and the calls and frame
//! budgets the recording says they stopped are stopped again at the same points.

pub mod bisect;
pub mod player;
pub mod transport;

pub use crate::game_loop::recording::{file_digest, Recorded, WorldRecording, DEFAULT_CHECKPOINT_EVERY};
pub use crate::game_loop::world_state::{chained_hash, Difference, StateTracker, WorldState};
pub use player::{replay, without_time_limits, Divergence, ReplayError, ReplayOptions, ReplayReport, SaidDifference};
pub use transport::{
    RecordedPolls, RecordingClientTransport, RecordingServerTransport, ReplayClientTransport, ReplayServerTransport,
};
