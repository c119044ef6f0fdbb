//! Builds the example plugins of `plugins/` and the test fixtures of `tests/plugins/` — Rust ones for
//! wasm32-wasip2 with cargo, Python, JavaScript and C ones with `gamefeature-builder` and the toolchains
//! `./dev setup` installs — and writes `plugins.rs`: one constant per plugin (name, source folder, built component) and a `foreach_plugin!`
//! macro, so tests can require that every plugin has a test (as wasmtime's test-programs do).
//!
//! Plugins that are workspaces of their own (a user's, made by `gfhost new`) are left out: they are not the
//! project's, and need no test of it.
//!
//! Both workspaces build into `plugins/target`, the directory `gfhost build` (and so `./dev run`) uses for the
//! examples: whichever of the test build and the run build comes first compiles the plugins, the other finds
//! them done. Which file cargo built for which crate comes from its JSON messages, and each manifest is read
//! as TOML, so the component's name in `plugin.toml` need not follow the crate's.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gamefeature_builder::{BuildTarget, Language, Toolchains};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let target_dir = root.join("plugins").join("target");

    let toolchains = Toolchains::of_repository(&root);
    for helper in ["python", "js", "c"] {
        println!("cargo:rerun-if-changed={}", toolchains.sdk.join(helper).display());
    }
    // A new toolchain (a changed pin, or one named by the environment) builds the other languages again.
    for pin in ["python/requirements.txt", "js/package-lock.json"] {
        println!("cargo:rerun-if-changed={}", toolchains.dir.join(pin).display());
    }
    for variable in ["GFHOST_COMPONENTIZE_PY", "GFHOST_COMPONENTIZE_JS", "GFHOST_NODE", "GFHOST_CLANG"] {
        println!("cargo:rerun-if-env-changed={variable}");
    }
    let mut plugins = Vec::new();
    for workspace in [root.join("plugins"), root.join("tests").join("plugins")] {
        let built = build(&workspace, &target_dir);
        let others = own_plugins_in_other_languages(&workspace);
        let mut folders: Vec<PathBuf> = std::fs::read_dir(&workspace)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("plugin.toml").is_file())
            .collect();
        folders.sort();
        for folder in folders {
            let manifest: toml::Table = std::fs::read_to_string(folder.join("plugin.toml")).unwrap().parse().unwrap();
            let name = manifest["plugin"]["name"].as_str().unwrap().to_string();
            println!("cargo:rerun-if-changed={}", folder.join("plugin.toml").display());
            match Language::of(&folder).unwrap() {
                Some(Language::Rust) | None => {}
                // A plugin a modder added is theirs to build (`gfhost build`): a broken one must not break ours.
                Some(_) if others.as_ref().is_some_and(|own| !own.contains(&name)) => continue,
                Some(language) => {
                    plugins.push((name, folder.clone(), build_other(&toolchains, language, &folder, &out_dir)));
                    continue;
                }
            }
            let key = std::fs::canonicalize(&folder).unwrap();
            let Some((wasm, dep_info)) = built.get(&key) else {
                // A plugin of someone's own (`gfhost new` makes workspaces of their own) is not the tests'.
                let cargo = std::fs::read_to_string(folder.join("Cargo.toml")).unwrap_or_default();
                if cargo.parse::<toml::Table>().is_ok_and(|t| t.contains_key("workspace")) {
                    continue;
                }
                panic!("plugin {name}: cargo built no component for {}", folder.display())
            };
            rerun_for_dependencies(dep_info);
            plugins.push((name, folder, wasm.clone()));
        }
        println!("cargo:rerun-if-changed={}", workspace.join("Cargo.toml").display());
    }
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
    code += "\n/// Calls `$mac!(snake_case_name, CONSTANT)` for every plugin of `plugins/` and `tests/plugins/`.\n#[macro_export]\nmacro_rules! foreach_plugin {\n    ($mac:ident) => {\n";
    for (name, _, _) in &plugins {
        code += &format!("        $mac!({}, {});\n", name.replace('-', "_"), constant(name));
    }
    code += "    };\n}\n";
    std::fs::write(out_dir.join("plugins.rs"), code).unwrap();
}

/// The repository the plugin workspaces (`plugins/`, `tests/plugins/`) belong to.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds one plugin workspace and returns, by crate folder, the component cargo built and its dep-info file.
fn build(workspace: &Path, target_dir: &Path) -> HashMap<PathBuf, (PathBuf, PathBuf)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--message-format=json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        // The host build's flags are for the host target, not for plugins; and a `cargo clippy` of the host
        // must not lint (and so rebuild) the plugins through its wrapper.
        .env("CARGO_ENCODED_RUSTFLAGS", gamefeature_builder::rust_plugin_rustflags(&repository()))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .stdout(Stdio::piped())
        .spawn()
        .expect("running cargo to build the plugins");
    let mut built = HashMap::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line.unwrap()) else { continue };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let folder = Path::new(message["manifest_path"].as_str().unwrap()).parent().unwrap();
        let files = message["filenames"].as_array().unwrap();
        if let Some(wasm) = files.iter().filter_map(|f| f.as_str()).find(|f| f.ends_with(".wasm")) {
            let wasm = PathBuf::from(wasm);
            let dep_info = wasm.with_extension("d");
            built.insert(std::fs::canonicalize(folder).unwrap(), (wasm, dep_info));
        }
    }
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "building {} for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`)",
        workspace.display()
    );
    built
}

/// Builds a plugin written in another language than Rust into `OUT_DIR/<plugin>/`, under the file name its
/// manifest gives the component, and reruns when its sources change. A component newer than everything it is
/// built from (its sources, its helper library, the WIT and the toolchain's pin) is kept: a rerun for another
/// plugin's sake rebuilds none of the slow ones.
fn build_other(toolchains: &Toolchains, language: Language, folder: &Path, out_dir: &Path) -> PathBuf {
    let mut target = BuildTarget::read(folder).unwrap();
    let file_name = target.component.file_name().expect("a component file name").to_owned();
    let out = out_dir.join(&target.name);
    std::fs::create_dir_all(&out).unwrap();
    target.component = out.join(file_name);
    let sources = language.sources(folder);
    for source in &sources {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    let (helper, pin) = match language {
        Language::Python => ("python", "python/requirements.txt"),
        Language::JavaScript => ("js", "js/package-lock.json"),
        _ => ("c", "../Cargo.lock"),
    };
    let inputs = sources
        .into_iter()
        .chain([folder.join("plugin.toml"), toolchains.dir.join(pin)])
        .chain(gamefeature_builder::files_under(&toolchains.sdk.join(helper)))
        .chain(gamefeature_builder::files_under(&toolchains.wit.join(&target.api)));
    let built = modified(&target.component);
    if built.is_some() && inputs.map(|input| modified(&input)).all(|changed| changed < built) {
        return target.component;
    }
    if let Err(e) = toolchains.build(language, &target) {
        panic!("{e:#}\n(the toolchains are installed by `./dev setup`)");
    }
    target.component
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The plugins in other languages than Rust the project keeps in `workspace`, as its `Cargo.toml` lists them
/// (`[workspace.metadata.gamefeature] examples-in-other-languages`); `None`: every one (the test fixtures).
fn own_plugins_in_other_languages(workspace: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(workspace.join("Cargo.toml")).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let list = table.get("workspace")?.get("metadata")?.get("gamefeature")?.get("examples-in-other-languages")?;
    Some(list.as_array()?.iter().filter_map(|name| name.as_str().map(str::to_string)).collect())
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
