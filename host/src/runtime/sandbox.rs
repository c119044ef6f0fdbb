//! What a plugin instance may use: its WASI context and resource limits.
//!
//! A Rust `wasm32-wasip2` component imports `wasi:cli` and `wasi:io` even when it does no I/O (its standard
//! library does), so every instance gets a WASI context — an empty one: no preopened directories, no
//! environment, no arguments, no inherited stdio, no network.

use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

/// Memory a plugin instance may grow to by default.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 << 20;

/// How long one call into a plugin may run by default. A frame is 16 ms; a plugin taking most of it is broken.
pub const DEFAULT_CALL_DEADLINE: std::time::Duration = std::time::Duration::from_millis(10);

/// The default WASI context: nothing granted.
pub fn wasi_context() -> WasiCtx {
    WasiCtxBuilder::new().build()
}

/// Limits applied to every plugin instance's store.
pub fn store_limits(memory_bytes: usize) -> StoreLimits {
    StoreLimitsBuilder::new()
        .memory_size(memory_bytes)
        // A Rust wasip2 component has three core instances; the margin covers other toolchains' adapters.
        .instances(16)
        .tables(32)
        .memories(8)
        // A plugin growing past its limit is stopped with a trap naming the limit, rather than left to
        // handle a failed allocation however its language does.
        .trap_on_grow_failure(true)
        .build()
}
