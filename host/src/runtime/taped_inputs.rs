//! A recorded world's plugins read their clocks and random numbers through its tape (see
//! `recording::Tape`): recorded as they read them, or handed back in a replay.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wasi_rand::SeedableRng as _;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

use crate::recording::{ClockKind, InstanceTape};

/// Gives an instance's WASI context the clocks and generators of its tape.
pub fn tape_inputs(wasi: &mut WasiCtxBuilder, tape: &InstanceTape) {
    let seed_of = |purpose: &str| wasi_rand::rngs::StdRng::from_seed(tape.seed(purpose));
    let insecure_seed = tape.seed("insecure-random-seed");
    wasi.wall_clock(TapedWallClock(tape.clone()))
        .monotonic_clock(TapedMonotonicClock { tape: tape.clone(), start: Instant::now() })
        .secure_random(seed_of("secure-random"))
        .insecure_random(seed_of("insecure-random"))
        .insecure_random_seed(u128::from_le_bytes(insecure_seed[..16].try_into().expect("16 bytes")));
}

struct TapedWallClock(InstanceTape);

impl HostWallClock for TapedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let real = || SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Duration::from_nanos(self.0.read_clock(ClockKind::Wall, real))
    }
}

struct TapedMonotonicClock {
    tape: InstanceTape,
    start: Instant,
}

impl HostMonotonicClock for TapedMonotonicClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        self.tape.read_clock(ClockKind::Monotonic, || self.start.elapsed().as_nanos() as u64)
    }
}
