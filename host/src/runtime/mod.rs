//! The WebAssembly runtime: the only module that knows wasmtime.
//!
//! [`Runtime`] owns the engine (with the pooling allocator), the linker holding the host's WIT interfaces and
//! WASI, and the compiled-component cache. It implements the feature subsystem's
//! [`PluginLoader`]: loading a plugin compiles its component (or reads it from
//! the cache), type-checks it against the `game-feature` world and pre-instantiates it, so that instantiating
//! it in each world is cheap.
//!
//! Each instance runs in its own store under [`Limits`] (deadline, fuel, memory, world changes, handles and
//! host memory per call or instance) resolved per plugin from [`RuntimeConfig`]; `sandbox` sets its WASI
//! context, `stdio` turns its output into log lines, `deadline` measures calls in CPU time (`crate::cpu_clock`),
//! `drive` runs every wait of a call to completion on the caller's thread (a component that can be is
//! called directly, with wasmtime's synchronous API; the others on a fiber: see `direct`), and `host` implements
//! the imports, each through one guard. `cache` keeps compiled components, signed so that only entries it
//! wrote are ever run.

mod bindings;
mod cache;
pub mod cache_budget;
pub mod checked_files;
mod compile_memory;
mod component_memory;
mod deadline;
mod direct;
mod drive;
mod epoch;
mod function_cache;
mod host;
mod instance;
mod limits;
mod plugin_log;
mod resources;
mod sandbox;
mod state;
mod stdio;
mod taped_inputs;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

pub use cache::{entry_key, ComponentCache, EntryKey, Lookup};
pub use direct::CallPath;
pub use host::DEFAULT_MAX_HANDLES;
pub use instance::{WasmInstance, WasmPlugin};
pub use limits::{
    fitted_deadline, fitted_memory, Limits, DEADLINE_PER_FITTED_MIB, FITTED_MEMORY_CAP, MEMORY_PER_INITIAL,
};
pub use sandbox::{
    DEFAULT_CALL_DEADLINE, DEFAULT_DATA_QUOTA, DEFAULT_HOST_MEMORY, DEFAULT_INSTANTIATE_DEADLINE, DEFAULT_MEMORY_LIMIT,
};

use crate::assets::{open_within, read_within, ReadWithinError};
use crate::config::{HostConfig, LimitOverrides};
use crate::delivery::WORLD_CHANGES_PER_CALL;
use crate::feature::{
    api_versions_shown, same_api, ComponentInterface, LoadError, LoadedPlugin, PluginLoader, PluginManifest, Provenance,
};
use crate::text::one_line;
use bindings::{v0_1_0, GameFeature, GameFeatureIndices};
use checked_files::{CheckedFiles, FileIdentity};
use epoch::EpochTicker;
use function_cache::FunctionCache;
use instance::Pre;
use state::InstanceState;

/// Linear memory and table bytes a freed instance slot keeps mapped for the next instance. With wasmtime's
/// PAGEMAP_SCAN reset off (see the pool's configuration), every byte kept resident is zeroed each time a slot is
/// freed, whether the plugin touched it or not, while a page decommitted costs a fault only if the next plugin
/// touches it: 64 KiB made a Rust plugin's instantiation (with its drop) 8.7 us against 26 us with 2 MiB, a
/// JavaScript one's 17 us against 158 us, a Python one's 565 us against 675 us (`loading` and `languages`
/// benches).
const RESIDENT_MEMORY_PER_SLOT: usize = 64 << 10;
const RESIDENT_TABLE_PER_SLOT: usize = 64 << 10;

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where compiled components are cached; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    /// The most bytes the cache's entries may take (see `cache_budget`).
    pub cache_budget: u64,
    /// Pre-reserve instance slots (faster instantiation, more virtual memory). On by default.
    pub pooling: bool,
    /// How many plugin instances may be alive at once with pooling.
    pub max_instances: u32,
    /// How much linear memory one plugin instance may use.
    pub memory_limit: usize,
    /// How much CPU time one call into a plugin may use before it is stopped (and the plugin quarantined).
    /// Measured on the thread running the call, so a busy machine never makes a plugin miss it; a wall-clock
    /// backstop of a hundred times as much (at least a second) stops a call that makes no progress at all.
    pub call_deadline: Duration,
    /// How much CPU time instantiating a plugin may use: its start-up code, not a call.
    pub instantiate_deadline: Duration,
    /// A deterministic budget of fuel (roughly, instructions) per call; off when `None`. Metering costs some
    /// speed, so it is off by default; the deadline stops endless loops either way.
    pub fuel: Option<u64>,
    /// World changes one call may make before the plugin counts as flooding the host.
    pub world_changes: u32,
    /// Handles (requests, handlers, subscriptions) one instance may hold at once.
    pub max_handles: u32,
    /// Host memory the properties one plugin writes may hold (the rest of what it makes the host keep is
    /// bounded by the limits above).
    pub host_memory: usize,
    /// CPU time all of one plugin's calls in one frame may use; a plugin over it frame after frame is
    /// quarantined (see `delivery::FrameCost`).
    pub frame_budget: Duration,
    /// What a plugin's data directory (granted with `fs.data`) may hold, in bytes; checked after each of its
    /// calls (a plugin over it is quarantined, and cannot start again until it is cleared).
    pub data_quota: u64,
    /// Per-plugin overrides of the limits above.
    pub plugin_limits: BTreeMap<String, LimitOverrides>,
    /// Fit each plugin's default memory limit to what its component starts with (see `limits::fitted_memory`):
    /// `memory_limit` is then the least any plugin gets. On by default; a `[sandbox] memory-mib` turns it off.
    pub fit_memory_to_components: bool,
    /// Give a plugin whose memory was fitted beyond `memory_limit` a longer call deadline, for its collector's
    /// pauses (see `limits::fitted_deadline`): `call_deadline` is then the least any plugin gets. On by default;
    /// a `[sandbox] call-deadline-ms` turns it off.
    pub fit_deadline_to_components: bool,
}

impl RuntimeConfig {
    /// Applies a host configuration's `[sandbox]` defaults and `[limits.<plugin>]` overrides.
    pub fn with_host_config(mut self, config: &HostConfig) -> Self {
        if let Some(deadline) = config.defaults.call_deadline() {
            self.call_deadline = deadline;
            self.fit_deadline_to_components = false;
        }
        if let Some(deadline) = config.defaults.instantiate_deadline() {
            self.instantiate_deadline = deadline;
        }
        if let Some(memory) = config.defaults.memory_bytes() {
            self.memory_limit = memory;
            self.fit_memory_to_components = false;
        }
        self.fuel = config.defaults.fuel.or(self.fuel);
        self.world_changes = config.defaults.world_changes.unwrap_or(self.world_changes);
        self.max_handles = config.defaults.handles.unwrap_or(self.max_handles);
        self.host_memory = config.defaults.host_memory_bytes().unwrap_or(self.host_memory);
        self.frame_budget = config.defaults.frame_budget().unwrap_or(self.frame_budget);
        self.data_quota = config.defaults.data_quota_bytes().unwrap_or(self.data_quota);
        self.plugin_limits.extend(config.limits.clone());
        self.cache_budget = config.cache_budget.unwrap_or(self.cache_budget);
        self
    }

    /// The most memory any plugin may have: what each pooled instance slot reserves.
    fn largest_memory_limit(&self) -> usize {
        let default = match self.fit_memory_to_components {
            true => self.memory_limit.max(limits::FITTED_MEMORY_CAP),
            false => self.memory_limit,
        };
        self.plugin_limits.values().filter_map(LimitOverrides::memory_bytes).fold(default, usize::max)
    }

    fn meters_fuel(&self) -> bool {
        self.fuel.is_some() || self.plugin_limits.values().any(|limits| limits.fuel.is_some())
    }
}

impl RuntimeConfig {
    /// Where a game or tool keeps its compile cache unless told otherwise: `$GFHOST_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/gamefeature` (or `~/.cache/gamefeature`), else `.gamefeature-cache` here.
    pub fn user_cache_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("GFHOST_CACHE_DIR") {
            return dir.into();
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cache")));
        base.map_or_else(|| PathBuf::from(".gamefeature-cache"), |b| b.join("gamefeature"))
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            cache_dir: None,
            cache_budget: cache_budget::DEFAULT_BUDGET,
            pooling: true,
            max_instances: 1000,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            call_deadline: DEFAULT_CALL_DEADLINE,
            instantiate_deadline: DEFAULT_INSTANTIATE_DEADLINE,
            fuel: None,
            world_changes: WORLD_CHANGES_PER_CALL,
            max_handles: DEFAULT_MAX_HANDLES,
            host_memory: DEFAULT_HOST_MEMORY,
            frame_budget: crate::config::DEFAULT_FRAME_BUDGET,
            data_quota: DEFAULT_DATA_QUOTA,
            plugin_limits: BTreeMap::new(),
            fit_memory_to_components: true,
            fit_deadline_to_components: true,
        }
    }
}

/// One component's compile, done once and shared: the component, or why it is not one.
type CompileSlot = Arc<OnceLock<Result<Component, String>>>;

/// The engine could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the WebAssembly engine: {0}")]
pub struct RuntimeError(String);

/// How the components this process loaded got their code: read from the compile cache, or compiled (a miss).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CompileCounts {
    /// Components read from the compile cache.
    pub cache_hits: u64,
    /// Components compiled (cache misses, or no cache).
    pub compiled: u64,
    /// Component files hashed and cache entries checked in full: the rest were vouched for by an earlier check,
    /// of this process or (through the cache's records) of another (see [`checked_files`]).
    pub checked_in_full: u64,
    /// Functions a compile found compiled already (by an earlier compile of this or another version of the
    /// component, in this process or another): a component compiled again after an edit compiles only the
    /// functions that changed.
    pub functions_reused: u64,
    /// Functions compiled and kept for later compiles.
    pub functions_compiled: u64,
}

#[derive(Debug, Default)]
struct CompileCounters {
    cache_hits: AtomicU64,
    compiled: AtomicU64,
    components_hashed: AtomicU64,
}

/// Compiles, caches and pre-instantiates plugin components.
pub struct Runtime {
    engine: Engine,
    /// The engine's configuration without its instance pool: what each compile's own engine is made from.
    compile_config: Config,
    linker: Linker<InstanceState>,
    /// The host's interfaces and only synchronous WASI functions: a component whose imports it satisfies is
    /// called without a fiber (see `direct`).
    direct_linker: Linker<InstanceState>,
    cache: Option<ComponentCache>,
    /// The compiled functions beside it, which wasmtime reads and writes as it compiles.
    functions: Option<Arc<FunctionCache>>,
    /// Every distinct component compiled (or read from the cache) in this process, by its cache key: plugins
    /// sharing a component share its code, and concurrent loads of one component wait for one compile.
    compiled: Mutex<HashMap<EntryKey, CompileSlot>>,
    /// Which compiled component each loaded plugin's component file is, so unloading can free it.
    in_use: Mutex<HashMap<PathBuf, EntryKey>>,
    counts: CompileCounters,
    config: RuntimeConfig,
    _ticker: EpochTicker,
    /// Serves the WASI functions plugins may wait in (timers), on a thread of its own, so that they work the
    /// same whether the game calls the host from a multi-threaded runtime, a single-threaded one (whose timers
    /// would not advance while a call blocks its thread) or none.
    wasi_io: WasiIo,
}

/// The runtime behind WASI timers; shut down without waiting, since a host may be dropped inside async code.
struct WasiIo(Option<tokio::runtime::Runtime>);

impl WasiIo {
    fn handle(&self) -> tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle().clone()
    }
}

impl Drop for WasiIo {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// A compile error on one line, with what to do about the ones a toolchain's defaults cause.
fn explain_compile_error(error: &str) -> String {
    let line = one_line(error);
    if let Some(needed) = initial_memory_over_the_pool(&line) {
        return format!(
            "{TOO_LITTLE_MEMORY}: it starts with {:.1} MiB of linear memory, more than the {} MiB an instance may have \
             (memory-mib under [sandbox] or [limits.<plugin>] in the host configuration); raise memory-mib",
            needed as f64 / f64::from(1 << 20),
            memory_limit_of(&line).map_or_else(|| "configured".to_string(), |limit| (limit >> 20).to_string())
        );
    }
    if line.contains("requires the component model async feature") {
        // componentize-qjs, by default, and other toolchains' async modes lower every export through the
        // component model's async ABI; plugin calls here are synchronous, each under a deadline.
        format!(
            "{line} — the component uses the component model's async ABI, which plugins may not use: build it \
             for synchronous calls (componentize-qjs: --sync)"
        )
    } else {
        line
    }
}

/// The start of the cause of a component the configuration gives too little memory: not the component's fault.
const TOO_LITTLE_MEMORY: &str = "the host configuration gives it too little memory";

/// The initial memory (bytes) of a component the instance pool's memory limit is too small for, from
/// wasmtime's words ("memory has a minimum byte size of N which exceeds the limit of 0xM bytes").
fn initial_memory_over_the_pool(cause: &str) -> Option<u64> {
    let rest = cause.split("memory has a minimum byte size of ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The memory limit (bytes) named in the same words.
fn memory_limit_of(cause: &str) -> Option<u64> {
    let rest = cause.split("exceeds the limit of ").nth(1)?.split(' ').next()?;
    match rest.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => rest.parse().ok(),
    }
}

/// A component's path as errors name it: the file name is the plugin's own (its `plugin.toml` names it), so
/// it is escaped like any text of a plugin's, and cut only past the longest path Linux opens.
fn shown_path(path: &std::path::Path) -> String {
    crate::text::shown(&path.display().to_string(), 4096)
}

/// Why a core module is not a plugin, and how to make one.
const CORE_MODULE: &str = "it is a core WebAssembly module, not a component: build the plugin for the \
                           wasm32-wasip2 target (cargo build --target wasm32-wasip2), or wrap the module in a \
                           component with `wasm-tools component new` (wit-component; a wasm32-wasip1 module also \
                           needs `--adapt` with the WASI preview 1 adapter)";

/// What loading a component file found, by the file's identity (see [`checked_files`]).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct ComponentFacts {
    /// The BLAKE3 of its bytes.
    digest: [u8; 32],
    /// Its largest initial linear memory (see [`component_memory`]).
    initial_memory: Option<u64>,
}

static CHECKED_COMPONENTS: CheckedFiles<ComponentFacts> = CheckedFiles::new();

/// Forgets which component files and cache entries this process read and checked, as a new process starts:
/// the next load of each reads and hashes it in full unless the compile cache's records say an earlier process
/// did (see [`ComponentCache::records`]; [`CheckRecords::forget_all`](checked_files::CheckRecords::forget_all)
/// forgets those).
pub fn forget_checked_files() {
    CHECKED_COMPONENTS.forget_all();
    cache::forget_checked_entries();
}

/// How a load's error begins when its component file changed between the host's reading it and compiling it.
const CHANGED_WHILE_LOADING: &str = "the component file changed while it was loading; load it again";

/// The bytes of a component file read again (its compiled form was not in the cache after all), if they are
/// still those whose digest was taken.
fn read_unchanged(read: impl FnOnce() -> Result<Vec<u8>, LoadError>, digest: &[u8; 32]) -> Result<Vec<u8>, String> {
    let bytes = read().map_err(|e| format!("{CHANGED_WHILE_LOADING} ({e})"))?;
    if cache::digest(&bytes) != *digest {
        return Err(CHANGED_WHILE_LOADING.to_string());
    }
    Ok(bytes)
}

/// Whether `bytes` start as a core WebAssembly module does: the magic `\0asm`, then version 1 and layer 0 (a
/// component has version 0xd and layer 1).
fn is_core_module(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\0asm\x01\0\0\0")
}

/// The function cache takes this share of the compile cache's budget (a quarter: a few language runtimes'
/// functions, and the edits made to them).
const FUNCTION_CACHE_SHARE: u64 = 4;

/// Set to `1`, the host writes a perf map of the plugins' compiled code (`/tmp/perf-<pid>.map`), so that
/// `perf report` shows which plugin function the time went to.
pub const PERF_MAP_VARIABLE: &str = "GAMEFEATURE_PERF_MAP";

impl Runtime {
    /// A runtime configured by `config`: its engine, linkers, compile cache and the threads it needs.
    pub fn new(config: RuntimeConfig) -> Result<Arc<Self>, RuntimeError> {
        let mut wasm = Config::new();
        wasm.epoch_interruption(true);
        wasm.consume_fuel(config.meters_fuel());
        // A plugin computes the same on every machine and in every run, so a recorded session replays bit for
        // bit: NaNs come out canonical, and relaxed SIMD instructions take their deterministic results.
        wasm.cranelift_nan_canonicalization(true);
        wasm.relaxed_simd_deterministic(true);
        // `perf` names plugin functions in its profiles when the host writes /tmp/perf-<pid>.map for it.
        if std::env::var_os(PERF_MAP_VARIABLE).is_some_and(|v| v == "1") {
            wasm.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        // Compiles run in an engine of their own, dropped after each: Cranelift keeps its compile contexts (and
        // every buffer they grew to, hundreds of MB after a language runtime) for the life of its engine.
        let mut compile_config = wasm.clone();
        if config.pooling {
            let mut pool = PoolingAllocationConfig::default();
            let instances = config.max_instances;
            pool.total_component_instances(instances)
                // A Rust wasip2 component holds three core instances, one memory and a few tables; a Python one
                // (componentize-py) fourteen core instances and a JavaScript one about as many. The totals let
                // every instance be one of those; unused slots cost address space, not memory.
                .total_core_instances(instances * 16)
                .total_memories(instances * 4)
                .total_tables(instances * 8)
                .max_memory_size(config.largest_memory_limit())
                // A freed slot's kept-resident pages are zeroed, and the rest decommitted, as wasmtime does without
                // PAGEMAP_SCAN. Its PAGEMAP_SCAN reset (rewriting only the pages found dirty) is off: a dirty page
                // that was swapped out is neither reset nor decommitted, and the scan stops after 32 regions, so
                // the next plugin in the slot could read the previous one's bytes (wasmtime PR #14357, open).
                .pagemap_scan(Enabled::No)
                .linear_memory_keep_resident(RESIDENT_MEMORY_PER_SLOT)
                .table_keep_resident(RESIDENT_TABLE_PER_SLOT);
            wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let cache = config.cache_dir.clone().map(|dir| ComponentCache::new(dir).with_budget(config.cache_budget));
        // Beside the compiled components, their compiled functions: a component compiled after an edit compiles
        // only the functions that changed (see `function_cache`).
        let functions = cache
            .as_ref()
            .map(|cache| Arc::new(FunctionCache::new(cache.clone(), config.cache_budget / FUNCTION_CACHE_SHARE)));
        if let Some(functions) = &functions {
            wasm.enable_incremental_compilation(functions.clone()).map_err(|e| RuntimeError(format!("{e:#}")))?;
            compile_config
                .enable_incremental_compilation(functions.clone())
                .map_err(|e| RuntimeError(format!("{e:#}")))?;
        }
        let engine = Engine::new(&wasm).map_err(|e| RuntimeError(format!("{e:#}")))?;
        let linker_error = |e: wasmtime::Error| RuntimeError(format!("{e:#}"));
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(linker_error)?;
        // Every version of the package the host loads, side by side: the names carry the version.
        GameFeature::add_to_linker::<InstanceState, HasSelf<InstanceState>>(&mut linker, |state| state)
            .map_err(linker_error)?;
        v0_1_0::GameFeature::add_to_linker::<InstanceState, HasSelf<InstanceState>>(&mut linker, |state| state)
            .map_err(linker_error)?;
        let mut direct_linker = Linker::new(&engine);
        direct::add_wasi_to_linker(&mut direct_linker).map_err(linker_error)?;
        GameFeature::add_to_linker::<InstanceState, HasSelf<InstanceState>>(&mut direct_linker, |state| state)
            .map_err(linker_error)?;
        let ticker = EpochTicker::start(&engine).map_err(|e| RuntimeError(format!("starting the epoch clock: {e}")))?;
        let wasi_io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gamefeature-wasi")
            .enable_time()
            .build()
            .map_err(|e| RuntimeError(format!("starting the WASI thread: {e}")))?;
        let wasi_io = WasiIo(Some(wasi_io));
        Ok(Arc::new(Runtime {
            engine,
            compile_config,
            linker,
            direct_linker,
            cache,
            functions,
            compiled: Mutex::default(),
            in_use: Mutex::default(),
            counts: CompileCounters::default(),
            config,
            _ticker: ticker,
            wasi_io,
        }))
    }

    /// Compiles `bytes` in an engine made for this compile and dropped after it (so Cranelift's contexts go with
    /// it), into a component of this runtime's engine.
    fn compile_apart(&self, bytes: &[u8]) -> wasmtime::Result<Component> {
        let compiler = Engine::new(&self.compile_config)?;
        let serialized = compiler.precompile_component(bytes)?;
        drop(compiler);
        // SAFETY: the bytes were compiled just now, in this process, by an engine of this engine's configuration.
        unsafe { Component::deserialize(&self.engine, &serialized) }
    }

    /// The wasmtime engine every component is compiled for.
    // wasmtime's types are not part of the stable API (a wasmtime upgrade must not break a game): hidden
    // from it, for the project's own benches and fuzz targets.
    #[doc(hidden)]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// How many components were read from the compile cache and how many were compiled, and how many files
    /// were checked in full, since the start.
    pub fn compile_counts(&self) -> CompileCounts {
        let entries_checked = self.cache.as_ref().map_or(0, ComponentCache::entries_checked_in_full);
        CompileCounts {
            cache_hits: self.counts.cache_hits.load(Ordering::Relaxed),
            compiled: self.counts.compiled.load(Ordering::Relaxed),
            checked_in_full: self.counts.components_hashed.load(Ordering::Relaxed) + entries_checked,
            functions_reused: self.functions.as_ref().map_or(0, |f| f.reused()),
            functions_compiled: self.functions.as_ref().map_or(0, |f| f.added()),
        }
    }

    /// The compile cache, when there is one.
    pub fn cache(&self) -> Option<&ComponentCache> {
        self.cache.as_ref()
    }

    /// Loads a plugin's component as [`PluginLoader::load`] does, returning the concrete type.
    pub fn load_plugin(&self, manifest: &PluginManifest) -> Result<Arc<WasmPlugin>, LoadError> {
        let compiled = self.compile(manifest)?;
        self.link(manifest, compiled)
    }

    /// Compiles a plugin's component (or reads it from the cache) and reports what it imports and exports and,
    /// when it does not fit the world, why — without failing on the mismatch, for `gfhost inspect`.
    pub fn inspect_plugin(&self, manifest: &PluginManifest) -> Result<Inspection, LoadError> {
        let compiled = self.compile(manifest)?;
        let (provenance, interface) = (compiled.provenance, compiled.interface.clone());
        let (call_path, problem) = match self.link(manifest, compiled) {
            Ok(plugin) => (Some(plugin.call_path().clone()), None),
            Err(problem) => (None, Some(problem)),
        };
        Ok(Inspection { provenance, interface, call_path, problem })
    }

    fn compile(&self, manifest: &PluginManifest) -> Result<Compiled, LoadError> {
        let path = &manifest.component_path;
        let shown = shown_path(path);
        // Read through cap-std beneath the plugin's folder: a symlinked component cannot lead out of it.
        let relative = path.strip_prefix(&manifest.dir).ok().and_then(|p| p.to_str()).unwrap_or_default();
        let unreadable = |e: ReadWithinError| match e {
            ReadWithinError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                LoadError::MissingComponent { path: shown.clone() }
            }
            e => LoadError::Other { path: shown.clone(), cause: e.to_string() },
        };
        let read = || read_within(&manifest.dir, relative, crate::files::MAX_COMPONENT_BYTES).map_err(unreadable);
        let started = Instant::now();
        // A component file this process (or, as the cache's records say, an earlier one) read and hashed,
        // unchanged since, is not read again while its compiled form is in the cache.
        let file = open_within(&manifest.dir, relative).map_err(unreadable)?;
        let identity = file.metadata().ok().and_then(|m| FileIdentity::settled(&m, std::time::SystemTime::now()));
        // Looked for only when this process has not checked the file itself.
        let records = std::cell::OnceCell::new();
        let records = || records.get_or_init(|| self.cache.as_ref().and_then(ComponentCache::records)).as_ref();
        let subject = [b"component ".as_slice(), path.as_os_str().as_encoded_bytes()].concat();
        let recorded = |identity| {
            let facts = records()?.recall::<ComponentFacts>(&subject, &identity)?;
            CHECKED_COMPONENTS.remember(identity, facts);
            Some(facts)
        };
        let (facts, mut bytes) =
            match identity.and_then(|identity| CHECKED_COMPONENTS.get(&identity).or_else(|| recorded(identity))) {
                Some(facts) => (facts, None),
                None => {
                    let bytes = crate::files::read_regular(file, crate::files::MAX_COMPONENT_BYTES)
                        .map_err(|e| unreadable(ReadWithinError::Io(e)))?;
                    // wasmtime's own word for a core module ("attempted to parse a wasm module with a component
                    // parser") does not say what the file is or what to do: say both.
                    if is_core_module(&bytes) {
                        return Err(LoadError::Invalid { path: shown, cause: CORE_MODULE.into() });
                    }
                    self.counts.components_hashed.fetch_add(1, Ordering::Relaxed);
                    let facts = ComponentFacts {
                        digest: cache::digest(&bytes),
                        initial_memory: component_memory::largest_initial_memory(&bytes),
                    };
                    if let Some(identity) = identity {
                        CHECKED_COMPONENTS.remember(identity, facts);
                        if let Some(records) = records() {
                            records.record(&subject, identity, &facts);
                        }
                    }
                    (facts, Some(bytes))
                }
            };
        let key = cache::key_of(&self.engine, &facts.digest);
        // One compile per distinct component, however many plugins share it and however many load at once.
        let slot = self.compiled.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone();
        let mut compiled_now = false;
        let outcome = slot.get_or_init(|| {
            if let Some(Lookup::Hit(component)) = self.cache.as_ref().map(|cache| cache.fetch(&self.engine, &key)) {
                self.counts.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(component);
            }
            let bytes = match bytes.take() {
                Some(bytes) => bytes,
                None => read_unchanged(read, &facts.digest)?,
            };
            self.counts.compiled.fetch_add(1, Ordering::Relaxed);
            let component = self.compile_apart(&bytes);
            if let Some(functions) = &self.functions {
                functions.flush();
            }
            let mut component = component.map_err(|e| explain_compile_error(&format!("{e:#}")));
            if let (Some(cache), Ok(compiled)) = (&self.cache, &component) {
                cache.store(&key, compiled);
                // Played from the file just stored, as a warm start plays it: its code mapped from the file (pages
                // the system may share and drop) rather than held in the compile's own memory, which goes.
                if let Lookup::Hit(stored) = cache.fetch(&self.engine, &key) {
                    component = Ok(stored);
                }
            }
            // What the compiler (and the cache's serializing) allocated is free now, whether the compile succeeded
            // or not: the process need not keep it.
            compile_memory::give_back();
            compiled_now = component.is_ok();
            component
        });
        let took = started.elapsed();
        let component = outcome.clone().map_err(|cause| {
            if cause.starts_with(CHANGED_WHILE_LOADING) {
                // Not the component's fault: the next load reads it again (unless another load already put a
                // compile of its own in the slot's place).
                let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
                if compiled.get(&key).is_some_and(|current| Arc::ptr_eq(current, &slot)) {
                    compiled.remove(&key);
                }
            }
            match cause.starts_with(TOO_LITTLE_MEMORY) || cause.starts_with(CHANGED_WHILE_LOADING) {
                // The component is valid: the configuration (or the file's writer) is what to change.
                true => LoadError::Other { path: shown.clone(), cause },
                false => LoadError::Invalid { path: shown.clone(), cause },
            }
        })?;
        // A plugin's file compiled again (a new version) lets go of the old compile, once nobody else uses it.
        let mut in_use = self.in_use.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = in_use.insert(path.clone(), key) {
            if old != key && !in_use.values().any(|k| *k == old) {
                self.compiled.lock().unwrap_or_else(|e| e.into_inner()).remove(&old);
            }
        }
        drop(in_use);
        let provenance = if compiled_now { Provenance::Compiled { took } } else { Provenance::Cached { took } };
        let ty = component.component_type();
        let interface = ComponentInterface {
            imports: ty.imports(&self.engine).map(|(name, _)| name.to_string()).collect(),
            exports: ty.exports(&self.engine).map(|(name, _)| name.to_string()).collect(),
        };
        Ok(Compiled { component, provenance, interface, initial_memory: facts.initial_memory })
    }

    /// Type-checks a compiled component against the host's linker and pre-instantiates it.
    fn link(&self, manifest: &PluginManifest, compiled: Compiled) -> Result<Arc<WasmPlugin>, LoadError> {
        let shown = shown_path(&manifest.component_path);
        let Compiled { component, provenance, interface, initial_memory } = compiled;
        if let Some(version) = interface.foreign_api_version() {
            let implemented = api_versions_shown();
            let cause =
                format!("it was built against gamefeature:plugin@{version}; this host implements {implemented}");
            return Err(LoadError::Incompatible { path: shown, cause });
        }
        // A component exporting nothing of the package is checked against the world its manifest names.
        let version = interface.api_version().unwrap_or(&manifest.api).to_string();
        if !same_api(&version, &manifest.api) {
            let cause = format!(
                "it was built against gamefeature:plugin@{version}, but {} declares api = {:?}",
                manifest.manifest_path.display(),
                manifest.api
            );
            return Err(LoadError::Incompatible { path: shown, cause });
        }
        // wasmtime names the first import it cannot satisfy; the fit check says why, and what to do.
        let unsatisfied: Vec<String> = interface
            .fit()
            .imports
            .into_iter()
            .filter_map(|line| Some(format!("{}: {}", line.name, line.problem?)))
            .collect();
        let incompatible = |e: wasmtime::Error| {
            let mut cause = one_line(&format!("{e:#}"));
            if !unsatisfied.is_empty() {
                cause = format!("{cause} ({})", unsatisfied.join("; "));
            }
            LoadError::Incompatible { path: shown.clone(), cause }
        };
        // Where the world's exports are, found (and type-checked) once per component; each instance looks them
        // up at its first call.
        let (direct, call_path) = if same_api(&version, "0.1.0") {
            (None, CallPath::Fiber { because: "it was built against gamefeature:plugin@0.1.0".into() })
        } else {
            match self.direct_linker.instantiate_pre(&component) {
                Ok(pre) => (Some(pre), CallPath::Direct),
                Err(e) => (None, CallPath::fiber_for_import(&e)),
            }
        };
        let pre = if let Some(pre) = direct {
            let indices = bindings::direct::GameFeatureIndices::new(&pre).map_err(incompatible)?;
            Pre::Direct(pre, indices)
        } else if same_api(&version, "0.1.0") {
            let pre = self.linker.instantiate_pre(&component).map_err(incompatible)?;
            let indices = v0_1_0::GameFeatureIndices::new(&pre).map_err(incompatible)?;
            Pre::V0_1(pre, indices)
        } else {
            let pre = self.linker.instantiate_pre(&component).map_err(incompatible)?;
            let indices = GameFeatureIndices::new(&pre).map_err(incompatible)?;
            Pre::Latest(pre, indices)
        };
        let limits = Limits::for_component(&manifest.name, &self.config, initial_memory);
        let wasi_io = self.wasi_io.handle();
        Ok(Arc::new(WasmPlugin { pre, provenance, interface, limits, wasi_io, call_path }))
    }
}

/// A compiled component and what it imports and exports, before it is linked.
struct Compiled {
    component: Component,
    provenance: Provenance,
    interface: ComponentInterface,
    /// The largest initial linear memory of its core modules, in bytes, when its binary could be read for it.
    initial_memory: Option<u64>,
}

/// What `gfhost inspect` shows of a component: how it was obtained, its interface, and why it does not fit
/// the world, if it does not.
#[derive(Debug)]
pub struct Inspection {
    /// How its code was obtained (compiled, or from the cache).
    pub provenance: Provenance,
    /// What it imports and exports.
    pub interface: ComponentInterface,
    /// How its calls are made, when it fits.
    pub call_path: Option<CallPath>,
    /// Why it does not fit the world, if it does not.
    pub problem: Option<LoadError>,
}

impl PluginLoader for Runtime {
    fn load(&self, manifest: &PluginManifest) -> Result<Arc<dyn LoadedPlugin>, LoadError> {
        Ok(self.load_plugin(manifest)?)
    }

    /// Frees the compiled component of an unloaded plugin, unless another loaded plugin's file is the same
    /// component (instances still running keep their code alive until they go).
    fn unloaded(&self, manifest: &PluginManifest) {
        let mut in_use = self.in_use.lock().unwrap_or_else(|e| e.into_inner());
        let Some(key) = in_use.remove(&manifest.component_path) else { return };
        if !in_use.values().any(|k| *k == key) {
            self.compiled.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        }
    }
}

impl Runtime {
    /// How many distinct compiled components the runtime holds for loaded plugins.
    pub fn compiled_components(&self) -> usize {
        self.compiled.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<RuntimeError> for crate::error::Error {
    fn from(error: RuntimeError) -> crate::error::Error {
        crate::error::Error::Host(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_little_memory_is_blamed_on_the_configuration() {
        let wasmtime = "module memory does not fit in pooling allocator requirements: memory index 0 is unsupported \
                        in this pooling allocator configuration: memory has a minimum byte size of 1114112 which \
                        exceeds the limit of 0x100000 bytes";
        let cause = explain_compile_error(wasmtime);
        assert!(cause.starts_with(TOO_LITTLE_MEMORY), "{cause}");
        assert!(cause.contains("it starts with 1.1 MiB of linear memory, more than the 1 MiB"), "{cause}");
        assert!(cause.ends_with("raise memory-mib"), "{cause}");
        assert_eq!(explain_compile_error("bad magic"), "bad magic");
    }

    #[test]
    fn a_core_module_is_told_from_a_component_by_its_preamble() {
        assert!(is_core_module(b"\0asm\x01\0\0\0"));
        assert!(is_core_module(b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0"));
        // A component: version 0xd, layer 1.
        assert!(!is_core_module(b"\0asm\x0d\0\x01\0"));
        assert!(!is_core_module(b"\0asm"));
        assert!(!is_core_module(b"definitely not wasm"));
    }

    /// A core module where a plugin's component should be is refused saying what it is and how to make a
    /// component of it (wasmtime alone says it "attempted to parse a wasm module with a component parser").
    #[test]
    fn a_core_module_is_refused_saying_how_to_make_a_component() {
        let dir = tempfile::TempDir::new().unwrap();
        std::fs::write(dir.path().join("core.wasm"), b"\0asm\x01\0\0\0").unwrap();
        let manifest = PluginManifest::parse(
            dir.path(),
            "[plugin]\nname = \"core\"\nversion = \"0.1.0\"\napi = \"0.2.0\"\ncomponent = \"core.wasm\"\n",
        )
        .unwrap();
        let runtime = Runtime::new(RuntimeConfig { pooling: false, ..RuntimeConfig::default() }).unwrap();
        for error in [runtime.load_plugin(&manifest).err(), runtime.inspect_plugin(&manifest).err()] {
            let error = error.expect("a core module is not a plugin");
            assert!(matches!(error, LoadError::Invalid { .. }), "{error:?}");
            let text = error.to_string();
            assert!(text.contains("core.wasm is not a valid WebAssembly component"), "names the file: {text}");
            assert!(text.contains("it is a core WebAssembly module, not a component"), "{text}");
            assert!(text.contains("wasm32-wasip2") && text.contains("wasm-tools component new"), "{text}");
            assert!(!text.contains("component parser"), "{text}");
        }
        assert_eq!(runtime.compiled_components(), 0);
    }
}
