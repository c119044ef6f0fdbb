//! Builds every plugin in `plugins/` for wasm32-wasip2 into this crate's own target directory and writes
//! `plugins.rs`: one constant per plugin (name, source folder, built component) and a `foreach_plugin!` macro,
//! so tests can require that every plugin has a test (as wasmtime's test-programs do).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().parent().unwrap().to_path_buf();
    let plugins_dir = root.join("plugins");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let target_dir = out_dir.join("plugins-target");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--manifest-path"])
        .arg(plugins_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        // The host build's flags are for the host target, not for plugins.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("running cargo to build the plugins");
    assert!(
        status.success(),
        "building plugins/ for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`)"
    );
    let release = target_dir.join("wasm32-wasip2").join("release");

    let mut plugins = Vec::new();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&plugins_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("plugin.toml").is_file())
        .collect();
    folders.sort();
    for folder in folders {
        let manifest: toml::Table = std::fs::read_to_string(folder.join("plugin.toml")).unwrap().parse().unwrap();
        let section = manifest["plugin"].as_table().unwrap();
        let name = section["name"].as_str().unwrap().to_string();
        let component = section["component"].as_str().unwrap().to_string();
        let wasm = release.join(&component);
        assert!(wasm.is_file(), "plugin {name}: {} was not built", wasm.display());
        rerun_for_dependencies(&release.join(component.replace(".wasm", ".d")));
        println!("cargo:rerun-if-changed={}", folder.join("plugin.toml").display());
        plugins.push((name, folder, wasm));
    }
    println!("cargo:rerun-if-changed={}", plugins_dir.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", root.join("wit").display());

    let mut code = String::new();
    for (name, folder, wasm) in &plugins {
        code += &format!(
            "/// The `{name}` plugin.\npub const {}: TestPlugin = TestPlugin {{ name: {name:?}, source: {:?}, component: {:?} }};\n",
            constant(name),
            folder.display().to_string(),
            wasm.display().to_string(),
        );
    }
    code += "\n/// Calls `$mac!(snake_case_name, CONSTANT)` for every plugin in `plugins/`.\n#[macro_export]\nmacro_rules! foreach_plugin {\n    ($mac:ident) => {\n";
    for (name, _, _) in &plugins {
        code += &format!("        $mac!({}, {});\n", name.replace('-', "_"), constant(name));
    }
    code += "    };\n}\n";
    std::fs::write(out_dir.join("plugins.rs"), code).unwrap();
}

fn constant(name: &str) -> String {
    name.replace('-', "_").to_uppercase()
}

/// Reruns when any source file the plugin was built from changes, as cargo's own dep-info lists them.
fn rerun_for_dependencies(dep_info: &Path) {
    let Ok(text) = std::fs::read_to_string(dep_info) else {
        return;
    };
    let Some((_, deps)) = text.split_once(':') else {
        return;
    };
    for dep in deps.split_whitespace() {
        println!("cargo:rerun-if-changed={dep}");
    }
}
