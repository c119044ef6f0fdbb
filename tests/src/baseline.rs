//! What the benchmarks measure the host against, in the same run: raw wasmtime running the same component with
//! its synchronous API and nothing of the host's (no WASI context, no limits, no deadline, no fiber; imports
//! trap if called), and a printout of the ratios between criterion's results.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use gamefeature_host::runtime::DEFAULT_MEMORY_LIMIT;
use wasmtime::component::{Component, Func, Instance, InstancePre, Linker};
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};

/// A component pre-instantiated by raw wasmtime, in a pooling engine set up as the host sets up its own.
pub struct RawComponent {
    engine: Engine,
    pre: InstancePre<()>,
    epochs: bool,
}

/// One raw instance in its own store.
pub struct RawInstance {
    pub store: Store<()>,
    pub instance: Instance,
}

impl RawComponent {
    /// Compiles the component at `path`; `define` adds the imports the measured calls use, and every other
    /// import is defined as a function that traps. With `epochs`, the code is compiled with epoch
    /// interruption, as the host compiles plugins (to stop a call at its deadline) — the one part of the host's
    /// sandbox that costs inside the guest's own code.
    pub fn load(path: &Path, epochs: bool, define: impl FnOnce(&mut Linker<()>) -> wasmtime::Result<()>) -> Self {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(16)
            .total_core_instances(16 * 16)
            .total_memories(16 * 4)
            .total_tables(16 * 8)
            .max_memory_size(DEFAULT_MEMORY_LIMIT)
            .pagemap_scan(Enabled::Auto)
            .linear_memory_keep_resident(2 << 20)
            .table_keep_resident(64 << 10);
        let mut config = Config::new();
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        config.epoch_interruption(epochs);
        let engine = Engine::new(&config).expect("a raw engine");
        let component = Component::from_file(&engine, path).expect("the component compiles");
        let mut linker = Linker::new(&engine);
        define(&mut linker).expect("imports defined");
        linker.define_unknown_imports_as_traps(&component).expect("imports defined");
        let pre = linker.instantiate_pre(&component).expect("pre-instantiates");
        RawComponent { engine, pre, epochs }
    }

    /// A fresh store and instance: `InstancePre::instantiate`, synchronous.
    pub fn instantiate(&self) -> RawInstance {
        let mut store = Store::new(&self.engine, ());
        if self.epochs {
            store.set_epoch_deadline(u64::MAX / 2);
        }
        let instance = self.pre.instantiate(&mut store).expect("instantiates");
        RawInstance { store, instance }
    }
}

impl RawInstance {
    /// Function `function` of exported interface `interface` (`gamefeature:plugin/handlers@0.2.0`, say).
    pub fn export(&mut self, interface: &str, function: &str) -> Func {
        let within = self.instance.get_export_index(&mut self.store, None, interface).expect("interface exported");
        let index =
            self.instance.get_export_index(&mut self.store, Some(&within), function).expect("function exported");
        self.instance.get_func(&mut self.store, index).expect("a function")
    }
}

/// Where criterion keeps its results (its own rule: `$CRITERION_HOME`, `$CARGO_TARGET_DIR/criterion`, else the
/// workspace's target folder).
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

/// The median criterion measured for `group/bench` in this process (`None` when it was not run now).
fn median_ns(group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_home().join(group).join(bench).join("new/estimates.json");
    let written = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    if written < since {
        return None;
    }
    let estimates: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// Marks the start of a benchmark run (call it first): [`print_ratios`] only reads results written since.
pub fn mark_start() -> SystemTime {
    static STARTED: OnceLock<SystemTime> = OnceLock::new();
    *STARTED.get_or_init(SystemTime::now)
}

/// Prints how the host compares with its baselines, from criterion's medians of this run: one line per
/// `(group, subject, baseline, target)`, the ratio `subject / baseline` beside the target ratio.
pub fn print_ratios(pairs: &[(&str, &str, &str, f64)]) {
    let since = mark_start();
    println!("\nratios (medians of this run; lower is better):");
    for (group, subject, baseline, target) in pairs {
        match (median_ns(group, subject, since), median_ns(group, baseline, since)) {
            (Some(s), Some(b)) => {
                let ratio = s / b;
                let verdict = if ratio <= *target { "meets" } else { "misses" };
                println!(
                    "  {group}: {subject} {} / {baseline} {} = {ratio:.2}x ({verdict} target <= {target}x)",
                    shown(s),
                    shown(b)
                );
            }
            _ => println!("  {group}: {subject} / {baseline}: not both measured in this run"),
        }
    }
}

/// Prints one item of a measure in units of one item of another, from criterion's medians of this run (each
/// `(group, bench, items per iteration)`), beside the most units the target allows: how many raw calls a
/// pawn's init chain costs, say.
pub fn print_in_units(subject: (&str, &str, f64), unit: (&str, &str, f64), target: f64) {
    let since = mark_start();
    let ((group, name, items), (unit_group, unit_name, unit_items)) = (subject, unit);
    match (median_ns(group, name, since), median_ns(unit_group, unit_name, since)) {
        (Some(s), Some(u)) => {
            let (s, u) = (s / items, u / unit_items);
            let units = s / u;
            let verdict = if units <= target { "meets" } else { "misses" };
            println!(
                "  {group}: {name} {} per item = {units:.0} x {unit_name} {} ({verdict} target <= {target})",
                shown(s),
                shown(u)
            );
        }
        _ => println!("  {group}: {name} in {unit_name}: not both measured in this run"),
    }
}

/// A duration in nanoseconds, in the unit criterion would print it.
fn shown(ns: f64) -> String {
    match ns {
        ns if ns < 1e3 => format!("{ns:.1} ns"),
        ns if ns < 1e6 => format!("{:.2} us", ns / 1e3),
        ns if ns < 1e9 => format!("{:.2} ms", ns / 1e6),
        ns => format!("{:.2} s", ns / 1e9),
    }
}
