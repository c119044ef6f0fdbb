//! Whether a plugin's memory stays bounded under a stream of events, per language: delivers CALLS batches of
//! SIZE extension events to the event sink written in LANGUAGE (rust, python, js or c) under the default limits
//! (its memory limit fitted to its component) and reports how many calls it took before the instance was
//! stopped, if it was.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example language_memory js 4096 2500
//! ```
//!
//! Found with it: a componentize-js instance grows to a high-water mark between 64 and 96 MiB and stays there
//! (it was taken for a leak while the default limit was 64 MiB for every plugin); with its limit fitted to its
//! component (144 MiB) it takes 10,240,000 events in batches. One event per call, a call meets a collection
//! longer than its 10 ms deadline after ~58,000 calls.

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
    let config = RuntimeConfig { max_instances: 8, cache_dir: Some(shared_cache()), ..RuntimeConfig::default() };
    let runtime = Runtime::new(config).unwrap();
    let mut instance = runtime.load_plugin(&manifest).unwrap().instantiate(standalone_env(plugin.name)).unwrap();
    let batch = tick_batch(size);
    for call in 0..calls {
        if let Err(e) = instance.handle_extension_events(&batch) {
            println!("{language}, batches of {size}: out after {call} calls ({} events): {e}", call * size as u64);
            return;
        }
    }
    println!("{language}, batches of {size}: {calls} calls ({} events), memory bounded", calls * size as u64);
}
