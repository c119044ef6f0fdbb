//! Memory a compile used, given back to the system once it is done.
//!
//! Cranelift allocates freely while it compiles (IR, register allocation, relocations: several hundred MB for
//! a Python or JavaScript runtime of 20,000 functions, on every compile thread). Two things kept that memory
//! after a compile, so a server that compiled its plugins at start stayed near its compile peak though play
//! needs none of it:
//!
//! - wasmtime keeps its compile contexts, and every buffer they grew to, for the life of their engine: each
//!   compile runs in an engine of its own, dropped after it (`Runtime::compile_apart`);
//! - glibc's allocator keeps what was freed in its arenas for the process's next allocations: [`give_back`]
//!   trims them after each compile.
//!
//! Measured with `gfhost server experiences/default.toml` (debug build, ten plugins, resident memory once
//! ready): a cold start (empty cache) held 753 MB, and holds 316 MB; a warm start holds 126-157 MB. What is
//! left of the difference is in the allocator's thread arenas, live; not yet traced. Elsewhere (musl, macOS,
//! Windows) the allocator decides, and nothing is trimmed.

/// Gives the pages the allocator holds free back to the system.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own arenas to the system; it touches no
    // memory in use and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
