//! Whether a plugin's memory stays bounded under a stream of events, per language: delivers CALLS batches of
//! SIZE extension events to the event sink written in LANGUAGE (rust, python, js or c) and reports how many
//! calls it took before the instance ran out of its 64 MiB, if it did.
//!
//! ```sh
//! env -u RUST_BACKTRACE cargo run --release -p gamefeature-tests --example language_memory js 4096 20000
//! ```
//!
//! Found with it: componentize-js 0.23's generated bindings never free an export's arguments (about 16 bytes
//! per event plus a few hundred per call), so a JavaScript plugin runs out of memory after ~900 batches of
//! 4,096 events, or ~55,000 single-event calls. The Python, C and Rust sinks stay bounded.

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
