//! Components nobody vetted, through what the host does with a plugin's file: `gfhost inspect`'s look at it,
//! the load (compile, type-check against the world, pre-instantiate), an instance, and its lifecycle.
//!
//! The input's first byte picks the component: one wasm-smith generates from the rest; a real plugin (built
//! from `tests/plugins/`) with bytes changed, cut or spliced as the rest says; or the rest as it is. The host
//! refuses what is not a component of its world with an error naming the file, and never panics; what loads
//! runs its lifecycle, every failure a returned error.

use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use gamefeature_host::delivery::ActivationContext;
use gamefeature_host::feature::{LoadError, PluginLoader, PluginManifest};
use gamefeature_host::world::NetMode;
use gamefeature_tests::{standalone_env, LEGACY_PAWN_COUNTER, MISSING_EXPORTS, WRONG_WIT_VERSION};

use crate::server::SESSION;
use crate::with_file;

/// Real components the mutations start from: small ones (compiling is most of an input's cost), built against
/// each WIT version.
fn originals() -> Vec<Vec<u8>> {
    [MISSING_EXPORTS, LEGACY_PAWN_COUNTER, WRONG_WIT_VERSION]
        .iter()
        .map(|plugin| std::fs::read(plugin.component).expect("a built test plugin"))
        .collect()
}

thread_local! {
    static ORIGINALS: Vec<Vec<u8>> = originals();
}

/// The component an input describes (see the module's documentation).
fn component(data: &[u8]) -> Option<Vec<u8>> {
    let (mode, rest) = data.split_first()?;
    match mode % 4 {
        0 => {
            let generated = wasm_smith::Component::arbitrary_take_rest(Unstructured::new(rest)).ok()?;
            Some(generated.to_bytes())
        }
        1 | 2 => {
            let (pick, edits) = rest.split_first()?;
            let mut bytes = ORIGINALS.with(|o| o[usize::from(*pick) % o.len()].clone());
            for edit in edits.chunks_exact(5) {
                let at = u32::from_le_bytes([edit[1], edit[2], edit[3], edit[4]]) as usize % bytes.len().max(1);
                match edit[0] % 4 {
                    0 | 1 => bytes[at] ^= edit[0] | 1,
                    2 => bytes.truncate(at.max(8)),
                    _ => {
                        let from = at.saturating_sub(usize::from(edit[0]));
                        let copy = bytes[from..at].to_vec();
                        bytes.splice(at..at, copy);
                    }
                }
            }
            Some(bytes)
        }
        _ => Some(rest.to_vec()),
    }
}

/// See the module's documentation.
pub fn components(data: &[u8]) {
    let Some(bytes) = component(data) else { return };
    let api = if data.get(1).is_some_and(|b| b & 1 == 1) { "0.1.0" } else { "0.2.0" };
    let manifest =
        format!("[plugin]\nname = \"fuzzed\"\nversion = \"0.1.0\"\napi = \"{api}\"\ncomponent = \"fuzzed.wasm\"\n");
    with_file("plugin.toml", manifest.as_bytes(), |dir, _| {
        std::fs::write(dir.join("fuzzed.wasm"), &bytes).expect("writing the component");
        let manifest = PluginManifest::read(dir).expect("the manifest is the target's own");
        SESSION.with(|session| {
            let runtime = session.runtime();
            match runtime.inspect_plugin(&manifest) {
                Ok(_) => {}
                Err(error) => names_the_file(&error, &manifest.component_path),
            }
            match runtime.load_plugin(&manifest) {
                Ok(plugin) => run_lifecycle(plugin.as_ref()),
                Err(error) => names_the_file(&error, &manifest.component_path),
            }
            runtime.unloaded(&manifest);
        })
    })
}

fn names_the_file(error: &LoadError, path: &Path) {
    let name = path.file_name().expect("a file name").to_string_lossy();
    assert!(error.to_string().contains(&*name), "the error does not name {name}: {error}");
}

/// An instance of a component that loaded, through its whole lifecycle; each call may fail (a trap, a refusal,
/// an export missing), none may panic.
fn run_lifecycle(plugin: &dyn gamefeature_host::feature::LoadedPlugin) {
    let Ok(mut instance) = plugin.instantiate(standalone_env("fuzzed")) else { return };
    let context = ActivationContext { world_name: "bench".into(), net_mode: NetMode::Standalone };
    let _ = instance.on_registering();
    let _ = instance.on_loading();
    let _ = instance.on_activating(&context);
    let _ = instance.on_activated();
    let _ = instance.handle_extension_event(1, 0, 0, "Tick");
    let _ = instance.on_deactivating(&context);
    let _ = instance.on_unloading();
    let _ = instance.on_unregistering();
}
