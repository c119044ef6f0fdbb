//! Session recordings: every input that can change a world, written as the session runs, to replay it frame
//! for frame (the `replay` module plays them back).
//!
//! A world's behaviour follows from its inputs alone once the host fixes what it can: the frame deltas, the
//! commands applied between frames, what the network delivered at each poll, and what plugins read from
//! outside the sandbox (clocks and random numbers, through a [`Tape`]). This module is the vocabulary and the
//! file: [`Record`]s, the [`Recorder`] that appends them, and [`Recording`] that reads them back. It knows
//! nothing of worlds, so the runtime (which hands plugins their clocks) and the replay above can both use it.

mod format;
mod recorder;
mod tape;

pub use format::{
    encode, header, parse, Checkpoint, ClockKind, NetEvent, Record, Recording, RecordingError, Role, SessionInfo,
    FORMAT_VERSION, MAGIC, MAX_RECORDING_BYTES, MAX_RECORD_BYTES,
};
pub use recorder::Recorder;
pub use tape::{InstanceTape, Tape};
