//! `gfhost new`: a plugin skeleton that builds and loads unchanged — a manifest, a crate and a first hook that
//! logs, so a newcomer sees their plugin's line in the timeline of the first run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gamefeature_host::feature::{is_valid_plugin_name, API_VERSION};

/// Where the SDK's sources are: a plugin created outside the project's `plugins/` workspace depends on it by
/// path.
const SDK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../guest-sdk");

/// A new Rust plugin's files, written under `parent/name`. When `parent` is a cargo workspace of plugins (as
/// `plugins/` is) the crate joins it; otherwise it is a workspace of its own. Returns the plugin's folder.
pub fn new_rust_plugin(parent: &Path, name: &str) -> Result<PathBuf> {
    if !is_valid_plugin_name(name) {
        bail!("{name:?} is not a valid plugin name: lowercase letters, digits and '-', starting with a letter");
    }
    let folder = parent.join(name);
    if folder.exists() {
        bail!("{} already exists", folder.display());
    }
    let workspace = parent.join("Cargo.toml");
    let joins_workspace = workspace.is_file() && joins(&workspace, name)?;
    std::fs::create_dir_all(folder.join("src")).with_context(|| format!("creating {}", folder.display()))?;
    let crate_name = name.replace('-', "_");
    let write = |file: &str, text: String| {
        let path = folder.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("Cargo.toml", cargo_toml(name, joins_workspace)?)?;
    write(
        "plugin.toml",
        format!(
            "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Says hello to every character.\"\n\
             api = \"{API_VERSION}\"               # the gamefeature:plugin WIT version it is built against\n\
             component = \"{crate_name}.wasm\"   # what `gfhost build` puts here: the crate's name, '-' as '_'\n"
        ),
    )?;
    write("src/lib.rs", lib_rs(name))?;
    Ok(folder)
}

/// Adds `name` to a plugin workspace's members, keeping the file's layout and comments. False when the file
/// is not a workspace offering the SDK.
fn joins(workspace: &Path, name: &str) -> Result<bool> {
    let text = std::fs::read_to_string(workspace).with_context(|| format!("reading {}", workspace.display()))?;
    let mut document: toml_edit::DocumentMut =
        text.parse().with_context(|| format!("{} is not valid TOML", workspace.display()))?;
    let offers_sdk =
        document.get("workspace").and_then(|w| w.get("dependencies")).and_then(|d| d.get("gamefeature-sdk")).is_some();
    let Some(members) = document.get_mut("workspace").and_then(|w| w.get_mut("members")).and_then(|m| m.as_array_mut())
    else {
        return Ok(false);
    };
    if !offers_sdk {
        return Ok(false);
    }
    members.push(name);
    std::fs::write(workspace, document.to_string()).with_context(|| format!("writing {}", workspace.display()))?;
    Ok(true)
}

fn cargo_toml(name: &str, in_workspace: bool) -> Result<String> {
    let head = format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n");
    let lib = "[lib]\ncrate-type = [\"cdylib\"]   # a component: built with `gfhost build`\n\n";
    if in_workspace {
        return Ok(format!("{head}{lib}[dependencies]\ngamefeature-sdk.workspace = true\n"));
    }
    let sdk = std::fs::canonicalize(SDK_DIR).with_context(|| format!("finding the SDK at {SDK_DIR}"))?;
    Ok(format!(
        "{head}{lib}[dependencies]\ngamefeature-sdk = {{ path = {:?} }}\n\n\
         # A workspace of its own, built for wasm32-wasip2 small and without unwinding.\n[workspace]\n\n\
         [profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\ncodegen-units = 1\npanic = \"abort\"\n",
        sdk.display().to_string()
    ))
}

fn lib_rs(name: &str) -> String {
    let type_name: String = name
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect();
    format!(
        r#"//! The `{name}` plugin: says hello when activated, and greets every character that becomes ready.

use gamefeature_sdk::components::{{self, events, ExtensionHandler}};
use gamefeature_sdk::world::ActorId;
use gamefeature_sdk::{{export_plugin, log, world, ActivationContext, Plugin}};

#[derive(Default)]
struct {type_name} {{
    /// Keeps the handler registered; dropping it (or deactivation) removes it.
    characters: Option<ExtensionHandler>,
}}

impl Plugin for {type_name} {{
    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {{
        let pawns = world::actors_of_class("Pawn").map_err(|e| format!("{{e:?}}"))?;
        log::info(&format!("hello from {name} in {{}} with {{}} pawns", context.world_name, pawns.len()));
        // Handler number 1: it comes back with every event for it.
        self.characters = Some(components::add_extension_handler("Character", 1).map_err(|e| format!("{{e:?}}"))?);
        Ok(())
    }}

    fn on_extension_event(&mut self, _handler: u32, actor: ActorId, event: &str) {{
        if event == events::GAME_ACTOR_READY {{
            log::info(&format!("{name} greets character {{actor}}"));
        }}
    }}
}}

export_plugin!({type_name});
"#
    )
}
