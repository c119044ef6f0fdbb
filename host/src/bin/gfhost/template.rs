//! `gfhost new`: a plugin skeleton that builds and loads unchanged — a manifest, a crate and a first hook that
//! logs, so a newcomer sees their plugin's line in the timeline of the first run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gamefeature_host::feature::{is_valid_plugin_name, API_VERSION};

/// Where the SDK's sources are: a new plugin depends on them by path.
const SDK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../guest-sdk");

/// A new Rust plugin's files, written under `parent/name`: a crate that is a workspace of its own (so that it
/// builds wherever it is, and joining a plugin directory changes nothing else there), depending on the SDK by
/// a relative path when it sits in the same tree. Returns the plugin's folder.
pub fn new_rust_plugin(parent: &Path, name: &str) -> Result<PathBuf> {
    if !is_valid_plugin_name(name) {
        bail!("{name:?} is not a valid plugin name: lowercase letters, digits and '-', starting with a letter");
    }
    let folder = parent.join(name);
    if folder.exists() {
        bail!("{} already exists", folder.display());
    }
    std::fs::create_dir_all(folder.join("src")).with_context(|| format!("creating {}", folder.display()))?;
    let crate_name = name.replace('-', "_");
    let write = |file: &str, text: String| {
        let path = folder.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("Cargo.toml", cargo_toml(name, &folder)?)?;
    write(
        "plugin.toml",
        format!(
            "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Says hello to every character.\"\n\
             api = \"{API_VERSION}\"               # the gamefeature:plugin WIT version it is built against\n\
             component = \"{crate_name}.wasm\"   # where `gfhost build` puts the component\n"
        ),
    )?;
    write("src/lib.rs", lib_rs(name))?;
    Ok(folder)
}

fn cargo_toml(name: &str, folder: &Path) -> Result<String> {
    let sdk = std::fs::canonicalize(SDK_DIR).with_context(|| format!("finding the SDK at {SDK_DIR}"))?;
    let here = std::fs::canonicalize(folder).with_context(|| format!("finding {}", folder.display()))?;
    let sdk = relative_path(&here, &sdk).unwrap_or(sdk);
    Ok(format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\ncrate-type = [\"cdylib\"]   # a component: built with `gfhost build`\n\n\
         [dependencies]\ngamefeature-sdk = {{ path = {:?} }}\n\n\
         # A workspace of its own: it builds wherever it is.\n[workspace]\n\n\
         # Plugins are small and do not unwind.\n\
         [profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\ncodegen-units = 1\npanic = \"abort\"\n",
        sdk.display().to_string()
    ))
}

/// `to` relative to `from` (both absolute and canonical), when they share a root below `/`.
fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    let (from, to): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return None;
    }
    let ups = std::iter::repeat_n(std::path::Component::ParentDir, from.len() - common);
    Some(ups.chain(to[common..].iter().copied()).collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        let sdk = relative_path(Path::new("/repo/plugins/hello"), Path::new("/repo/guest-sdk"));
        assert_eq!(sdk, Some(PathBuf::from("../../guest-sdk")));
        assert_eq!(relative_path(Path::new("/tmp/x"), Path::new("/repo/guest-sdk")), None);
    }
}
