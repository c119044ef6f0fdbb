//! C plugins: wit-bindgen's C generator writes the world's bindings (`game_feature.h`, its glue and an object
//! holding the component type), clang compiles them with the helper (`guest-sdk/c`, which implements the
//! exports and calls the plugin's `gf_*` hooks), the plugin's `.c` files and wasi-libc into a core
//! WebAssembly module, and wit-component turns the module into a component, adapting any WASI preview 1
//! imports (`printf` and friends) to preview 2 with wasmtime's adapter.

use std::path::Path;
use std::process::Command;

use anyhow::{anyhow, Context, Result};
use wit_bindgen_core::Files;
use wit_parser::Resolve;

use crate::run::run_showing_warnings;
use crate::{BuildTarget, Language, Toolchains, WORLD};

/// The core module's target: WASI preview 1 (Debian's wasi-libc), adapted to preview 2 when componentized.
const CLANG_TARGET: &str = "--target=wasm32-wasi";

pub fn build(toolchains: &Toolchains, wit: &Path, target: &BuildTarget) -> Result<()> {
    let clang = toolchains.tool(target, "GFHOST_CLANG", "clang".into(), "clang")?;
    let staging = tempfile::tempdir().context("creating a staging folder")?;
    let bindings = staging.path().join("bindings");
    write_bindings(wit, &bindings).with_context(|| format!("plugin {}: generating C bindings", target.name))?;

    let core = staging.path().join("core.wasm");
    let mut command = Command::new(clang);
    command
        .arg(CLANG_TARGET)
        // A reactor: no `main`; its exports are called after `_initialize`.
        .arg("-mexec-model=reactor")
        .args(["-O2", "-Wall", "-Wno-unused-function", "-std=c11"])
        .arg("-I")
        .arg(&bindings)
        .arg("-I")
        .arg(toolchains.sdk.join("c"))
        .args(Language::C.sources(&target.folder).into_iter().filter(|s| s.extension().is_some_and(|e| e == "c")))
        .arg(toolchains.sdk.join("c/gamefeature.c"))
        .arg(bindings.join("game_feature.c"))
        .arg(bindings.join("game_feature_component_type.o"))
        .arg("-o")
        .arg(&core);
    // A build that succeeds still shows what clang warned of: the warnings are the modder's to read.
    run_showing_warnings(&format!("plugin {}: clang", target.name), &mut command)?;

    let module = std::fs::read(&core).with_context(|| format!("reading {}", core.display()))?;
    let component = componentize(&module).map_err(|e| anyhow!("plugin {}: making a component: {e:#}", target.name))?;
    std::fs::write(&target.component, component)
        .with_context(|| format!("plugin {}: writing {}", target.name, target.component.display()))
}

/// Writes the C bindings of the world in the WIT package at `wit` into `out`. (`guest-sdk/c/game_feature.h` is
/// the same header for the current API, committed so that an editor or `clang -fsyntax-only` needs nothing
/// generated; a test keeps it equal to what this writes.)
fn write_bindings(wit: &Path, out: &Path) -> Result<()> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_path(wit)?;
    let world = resolve.select_world(&[package], Some(WORLD))?;
    let mut files = Files::default();
    wit_bindgen_c::Opts::default().build().generate(&mut resolve, world, &mut files)?;
    std::fs::create_dir_all(out)?;
    for (name, contents) in files.iter() {
        std::fs::write(out.join(name), contents)?;
    }
    Ok(())
}

/// A component from a core module carrying its component type, with WASI preview 1 adapted.
fn componentize(module: &[u8]) -> Result<Vec<u8>> {
    use wasi_preview1_component_adapter_provider::{
        WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
    };
    wit_component::ComponentEncoder::default()
        .module(module)?
        .validate(true)
        .adapter(WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)?
        .encode()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The API the C helper is written for (what `gfhost new --lang c` writes in a manifest).
    const HELPER_API: &str = "0.2.0";

    fn repository() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The header the C helper includes is committed beside it, as the generator writes it for the current API
    /// (`GAMEFEATURE_BLESS=1` writes it again after the generator or the WIT changed).
    #[test]
    fn the_committed_bindings_header_is_what_the_generator_writes() {
        let out = tempfile::tempdir().unwrap();
        write_bindings(&repository().join("wit").join(HELPER_API), out.path()).unwrap();
        let generated = std::fs::read_to_string(out.path().join("game_feature.h")).unwrap();
        let committed_path = repository().join("guest-sdk/c/game_feature.h");
        if std::env::var("GAMEFEATURE_BLESS").is_ok_and(|b| b == "1") {
            std::fs::write(&committed_path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is not what the generator writes: GAMEFEATURE_BLESS=1",
            committed_path.display()
        );
    }

    /// With the SDK's folder on the include path and nothing generated, clang reads an example plugin as an
    /// editor would (`-fsyntax-only`), with every warning the build asks for.
    #[test]
    fn an_example_plugin_compiles_against_the_sdk_alone() {
        let root = repository();
        let output = Command::new("clang")
            .arg(CLANG_TARGET)
            .args(["-fsyntax-only", "-Wall", "-Wno-unused-function", "-std=c11", "-I"])
            .arg(root.join("guest-sdk/c"))
            .arg(root.join("plugins/match-stats/plugin.c"))
            .output()
            .expect("clang (./dev setup installs it)");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    }
}
