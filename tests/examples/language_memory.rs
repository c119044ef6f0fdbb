//! Whether a plugin's memory stays bounded under a stream of events, per language: delivers CALLS batches of
//! SIZE extension events to the event sink written in LANGUAGE (rust, python, js or c) under the default limits
//! (its memory limit fitted to its component) and reports how many calls it took before the instance was
//! stopped, if it was. It also reports the CPU time of the calls — the median, the longest, and how many took
//! longer than 10 ms, a Rust or C plugin's deadline — which shows a garbage-collected runtime's pauses (a
//! plugin's deadline is fitted to its memory for them: `runtime::fitted_deadline`). A fourth argument sets the
//! configured call deadline in milliseconds, to measure pauses longer than the default would let through.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example language_memory js 4096 2500
//! env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example language_memory js 1 200000 1000
//! ```
//!
//! Found with it: a componentize-js instance grows to a high-water mark between 64 and 96 MiB and stays there
//! (it was taken for a leak while the default limit was 64 MiB for every plugin); with its limit fitted to its
//! component (144 MiB) it takes 10,240,000 events in batches. One event per call, its longest calls (1 to 3 in
//! 100,000) took 17-31 ms of CPU time in collections, which stopped it after ~60,000 calls while every plugin's
//! deadline was 10 ms; its deadline fitted to its memory (50 ms) lets them through.

use std::time::Duration;

use gamefeature_host::cpu_clock;
use gamefeature_host::feature::{LoadedPlugin, PluginManifest};
use gamefeature_host::runtime::{Runtime, RuntimeConfig};
use gamefeature_tests::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let language = args.next().unwrap_or_else(|| "js".into());
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4096);
    let calls: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let plugin = match language.as_str() {
        "rust" => EVENT_SINK,
        "python" | "py" => EVENT_SINK_PY,
        "js" | "javascript" => EVENT_SINK_JS,
        "c" => EVENT_SINK_C,
        other => panic!("unknown language {other:?}: rust, python, js or c"),
    };
    let plugins = PluginDir::with(&[plugin]);
    let manifest = PluginManifest::read(&plugins.folder(&plugin)).unwrap();
    let mut config = RuntimeConfig { max_instances: 8, cache_dir: Some(shared_cache()), ..RuntimeConfig::default() };
    let default_deadline = config.call_deadline;
    if let Some(ms) = args.next().and_then(|s| s.parse().ok()) {
        config.call_deadline = Duration::from_millis(ms);
    }
    let deadline = config.call_deadline;
    let runtime = Runtime::new(config).unwrap();
    let mut instance = runtime.load_plugin(&manifest).unwrap().instantiate(standalone_env(plugin.name)).unwrap();
    let batch = tick_batch(size);
    let mut took = Vec::with_capacity(calls as usize);
    let mut outcome = format!("{calls} calls ({} events), memory bounded", calls * size as u64);
    for call in 0..calls {
        let started = cpu_clock::thread_cpu_time();
        let result = instance.handle_extension_events(&batch);
        if let (Some(started), Some(now)) = (started, cpu_clock::thread_cpu_time()) {
            took.push(now.saturating_sub(started));
        }
        if let Err(e) = result {
            outcome = format!("out after {call} calls ({} events): {e}", call * size as u64);
            break;
        }
    }
    println!("{language}, batches of {size}, call deadline {deadline:?} or fitted above it: {outcome}");
    took.sort();
    if let Some(longest) = took.last() {
        let over = took.iter().filter(|t| **t > default_deadline).count();
        println!(
            "  CPU time per call: median {:.3?}, 99.9th percentile {:.3?}, longest {longest:.3?}; {over} of {} \
             calls over {default_deadline:?} (a Rust or C plugin's deadline)",
            took[took.len() / 2],
            took[(took.len() * 999 / 1000).min(took.len() - 1)],
            took.len()
        );
    }
}
