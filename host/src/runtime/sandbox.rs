//! What a plugin instance may use: its WASI context and resource limits.
//!
//! A Rust `wasm32-wasip2` component imports `wasi:cli` and `wasi:io` even when it does no I/O (its standard
//! library does), so every instance gets a WASI context — an almost empty one: no environment, no arguments,
//! no stdin, no network, no clocks beyond reading the time; its stdout and stderr become log lines of the
//! plugin; and no filesystem, except for a plugin granted `fs.data`, which sees its own directory as `/data`
//! and nothing else (wasmtime-wasi opens every path through cap-std beneath that directory, so `..`,
//! absolute paths and symlinks leading out of it are refused).

use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use std::sync::Arc;

use super::plugin_log::LogBudget;
use super::stdio::PluginOutput;
use crate::feature::InstanceEnv;
use crate::timeline::LogLevel;

/// Where a plugin granted `fs.data` finds its data directory.
pub const DATA_DIR: &str = "/data";

/// Host memory the properties one plugin writes may hold by default.
pub const DEFAULT_HOST_MEMORY: usize = 16 << 20;

/// What a plugin's data directory may hold by default.
pub const DEFAULT_DATA_QUOTA: u64 = 64 << 20;

/// Entries (files, folders) a plugin's data directory may hold: a million empty files fill a disk's inodes,
/// not its bytes.
pub const MAX_DATA_ENTRIES: u64 = 10_000;

/// Why a plugin's data directory is over what it may hold, if it is (or cannot be measured).
pub fn data_over_quota(dir: &std::path::Path, quota: u64) -> Option<String> {
    let usage = match crate::files::usage(dir, MAX_DATA_ENTRIES) {
        Ok(usage) => usage,
        Err(e) => return Some(format!("its data directory {} cannot be measured: {e}", dir.display())),
    };
    if usage.entries > MAX_DATA_ENTRIES {
        return Some(format!(
            "its data directory {} holds more than {MAX_DATA_ENTRIES} files and folders, the most it may",
            dir.display()
        ));
    }
    (usage.bytes > quota).then(|| {
        format!(
            "its data directory {} holds {:.1} MiB, over its quota of {} MiB (data-quota-mib; clear it or raise the \
             quota)",
            dir.display(),
            usage.bytes as f64 / f64::from(1 << 20),
            quota >> 20
        )
    })
}

/// Memory a plugin instance may grow to by default.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 << 20;

/// How long one call into a plugin may run by default. A frame is 16 ms; a plugin taking most of it is broken.
pub const DEFAULT_CALL_DEADLINE: std::time::Duration = std::time::Duration::from_millis(10);

/// How long instantiating a plugin may run by default: a Python or JavaScript component starts its language's
/// runtime, which takes milliseconds.
pub const DEFAULT_INSTANTIATE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(1);

/// The WASI context of one instance: output into the log (within `budget`), and the data directory if one
/// was granted.
pub(crate) fn wasi_context(env: &InstanceEnv, budget: &Arc<LogBudget>) -> Result<WasiCtx, String> {
    let mut wasi = wasi_builder(env, budget);
    if let Some(dir) = &env.data_dir {
        // File operations run on the calling thread: they are short, and the call's deadline bounds them.
        wasi.allow_blocking_current_thread(true);
        wasi.preopened_dir(dir, DATA_DIR, FsPerms::ReadWrite)
            .map_err(|e| format!("cannot open its data directory {}: {e:#}", dir.display()))?;
    }
    Ok(wasi.build())
}

/// The WASI context of an instance without a data directory: nothing in it can fail.
pub fn plain_wasi_context(env: &InstanceEnv, budget: &Arc<LogBudget>) -> WasiCtx {
    wasi_builder(env, budget).build()
}

/// Standard output and error into the plugin's log, and nothing else.
fn wasi_builder(env: &InstanceEnv, budget: &Arc<LogBudget>) -> WasiCtxBuilder {
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(PluginOutput::new(env.clone(), budget.clone(), LogLevel::Info)).stderr(PluginOutput::new(
        env.clone(),
        budget.clone(),
        LogLevel::Warn,
    ));
    if let Some(tape) = &env.tape {
        super::taped_inputs::tape_inputs(&mut wasi, tape);
    }
    wasi
}

/// Limits applied to every plugin instance's store.
pub fn store_limits(memory_bytes: usize) -> StoreLimits {
    StoreLimitsBuilder::new()
        .memory_size(memory_bytes)
        // A Rust wasip2 component has three core instances and one memory; componentize-py's and
        // componentize-js's runtimes bring a score of core instances and several memories and tables.
        .instances(64)
        .tables(64)
        .memories(16)
        // A plugin growing past its limit is stopped with a trap naming the limit, rather than left to
        // handle a failed allocation however its language does.
        .trap_on_grow_failure(true)
        .build()
}
