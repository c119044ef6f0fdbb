//! `gfhost new`: a plugin skeleton that builds and loads unchanged — a manifest, the sources of a first plugin in
//! the language asked for (Rust, Python, JavaScript or C), whose hooks log, so a newcomer sees their plugin's
//! lines in the timeline of the first run. Every language's skeleton does the same thing.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gamefeature_builder::Language;
use gamefeature_host::feature::{is_valid_plugin_name, API_VERSION};

/// Writes a new plugin in `language` under `parent/name`; returns its folder and the files written.
pub fn new_plugin(parent: &Path, name: &str, language: Language) -> Result<(PathBuf, Vec<&'static str>)> {
    if language == Language::Rust {
        let folder = new_rust_plugin(parent, name)?;
        write_scenario(&folder, name)?;
        return Ok((folder, vec!["plugin.toml", "Cargo.toml", "src/lib.rs", SCENARIO_FILE]));
    }
    let folder = create_folder(parent, name)?;
    let component = format!("{}.wasm", name.replace('-', "_"));
    write(&folder, "plugin.toml", manifest(name, &component))?;
    let (file, source) = match language {
        Language::Python => ("plugin.py", python_source(name)),
        Language::JavaScript => ("plugin.js", js_source(name)),
        Language::C => ("plugin.c", c_source(name)),
        Language::Rust => unreachable!("handled above"),
    };
    write(&folder, file, source)?;
    write_scenario(&folder, name)?;
    let mut written = vec!["plugin.toml", file, SCENARIO_FILE];
    // The editor's (and `gfhost check --types`'s) configuration: the helper library's types, checked strictly.
    let toolchains = gamefeature_builder::Toolchains::of_repository(&crate::build::repository()?);
    if let Some(config) = toolchains.editor_config(language, &folder)? {
        write(&folder, config.file, config.text)?;
        written.push(config.file);
    }
    Ok((folder, written))
}

/// The first scenario `gfhost test` runs, beside every new plugin.
const SCENARIO_FILE: &str = "tests/hello.toml";

/// Writes the first scenario: what every language's skeleton does, as `gfhost test NAME` checks it.
fn write_scenario(folder: &Path, name: &str) -> Result<()> {
    let tests = folder.join(crate::scenario::SCENARIO_FOLDER);
    std::fs::create_dir_all(&tests).with_context(|| format!("creating {}", tests.display()))?;
    let text = format!(
        "# A scenario `gfhost test {name}` runs: {name} plays alone in a fresh headless world of the game, step by\n\
         # step. Actions: spawn-players, spawn, frames, event, set. Expectations: expect-log, expect-no-log,\n\
         # expect-state, expect-component, expect-no-component, expect-property. Nothing may be left at end of play.\n\
         [scenario]\nname = \"says hello, then greets every character that becomes ready\"\n\n\
         [[step]]\nexpect-log = \"hello from {name} in\"\n\n\
         [[step]]\nspawn-players = 2\n\n\
         [[step]]\nframes = 2\n\n\
         [[step]]\nexpect-log = \"{name} greets character\"\n\n\
         [[step]]\nexpect-no-log = \"error\"\n"
    );
    write(folder, SCENARIO_FILE, text)
}

fn create_folder(parent: &Path, name: &str) -> Result<PathBuf> {
    if !is_valid_plugin_name(name) {
        bail!("{name:?} is not a valid plugin name: lowercase letters, digits and '-', starting with a letter");
    }
    let folder = parent.join(name);
    if folder.exists() {
        bail!("{} already exists", folder.display());
    }
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    Ok(folder)
}

fn write(folder: &Path, file: &str, text: String) -> Result<()> {
    let path = folder.join(file);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

fn manifest(name: &str, component: &str) -> String {
    format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Says hello to every character.\"\n\
         api = \"{API_VERSION}\"               # the gamefeature:plugin WIT version it is built against\n\
         component = \"{component}\"   # where `gfhost build` puts the component\n"
    )
}

/// The plugin's name as a type name: `hello-world` -> `HelloWorld`.
fn type_name(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

fn python_source(name: &str) -> String {
    let type_name = type_name(name);
    format!(
        r#""""The `{name}` plugin: says hello when activated, and greets every character that becomes ready."""

import gamefeature as gf
from gamefeature import components, log, world


class {type_name}(gf.Plugin):
    def on_activating(self, context: gf.ActivationContext) -> None:
        pawns = world.actors_of_class("Pawn")
        log.info(f"hello from {name} in {{context.world_name}} with {{len(pawns)}} pawns")
        # Handler number 1: it comes back with every event for it. Keep the handle while it should apply.
        self.characters = components.add_extension_handler("Character", 1)

    def on_extension_event(self, handler: int, actor: int, event: str) -> None:
        if event == components.GAME_ACTOR_READY:
            log.info(f"{name} greets character {{actor}}")
"#
    )
}

fn js_source(name: &str) -> String {
    let type_name = type_name(name);
    format!(
        r#"// The `{name}` plugin: says hello when activated, and greets every character that becomes ready.

/** @import {{ ActivationContext, ActorId }} from 'gamefeature' */
import {{ Plugin, components, log, world }} from 'gamefeature';

// Hooks name their parameters' types (JSDoc), so editors and `gfhost check --types` check what they use.
export default class {type_name} extends Plugin {{
  /** @param {{ActivationContext}} context */
  onActivating(context) {{
    const pawns = world.actorsOfClass('Pawn');
    log.info(`hello from {name} in ${{context.worldName}} with ${{pawns.length}} pawns`);
    // Handler number 1: it comes back with every event for it. Keep the handle while it should apply.
    this.characters = components.addExtensionHandler('Character', 1);
  }}

  /**
   * @param {{number}} handler
   * @param {{ActorId}} actor
   * @param {{string}} event
   */
  onExtensionEvent(handler, actor, event) {{
    if (event === components.GAME_ACTOR_READY) log.info(`{name} greets character ${{actor}}`);
  }}
}}
"#
    )
}

fn c_source(name: &str) -> String {
    format!(
        r#"/* The `{name}` plugin: says hello when activated, and greets every character that becomes ready. */
#include <gamefeature.h>

static gf_handler characters;

const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {{
    (void)net_mode;
    gf_info("hello from {name} in %.*s with %zu pawns", (int)world_name.len, world_name.ptr, gf_count_actors("Pawn"));
    /* Handler number 1: it comes back with every event for it. Keep the handle while it should apply. */
    if (!gf_add_extension_handler("Character", 1, &characters)) return gf_last_error();
    return NULL;
}}

void gf_on_extension_event(uint32_t handler, gf_actor actor, gf_str event) {{
    (void)handler;
    if (gf_str_eq(event, GF_GAME_ACTOR_READY)) gf_info("{name} greets character %llu", (unsigned long long)actor);
}}
"#
    )
}

/// A new Rust plugin's files, written under `parent/name`: a crate that is a workspace of its own (so that it
/// builds wherever it is, and joining a plugin directory changes nothing else there), depending on the SDK by
/// a relative path when it sits in the same tree. Returns the plugin's folder.
fn new_rust_plugin(parent: &Path, name: &str) -> Result<PathBuf> {
    let folder = create_folder(parent, name)?;
    std::fs::create_dir_all(folder.join("src")).with_context(|| format!("creating {}", folder.display()))?;
    write(&folder, "Cargo.toml", cargo_toml(name, &folder)?)?;
    write(&folder, "plugin.toml", manifest(name, &format!("{}.wasm", name.replace('-', "_"))))?;
    write(&folder, "src/lib.rs", lib_rs(name))?;
    Ok(folder)
}

fn cargo_toml(name: &str, folder: &Path) -> Result<String> {
    // A new Rust plugin depends on the SDK's sources by path.
    let sdk_dir = crate::build::repository()?.join("guest-sdk");
    let sdk = std::fs::canonicalize(&sdk_dir).with_context(|| format!("finding the SDK at {}", sdk_dir.display()))?;
    let here = std::fs::canonicalize(folder).with_context(|| format!("finding {}", folder.display()))?;
    let sdk = gamefeature_builder::types::relative_path(&here, &sdk).unwrap_or(sdk);
    Ok(format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\ncrate-type = [\"cdylib\"]   # a component: built with `gfhost build`\n\n\
         [dependencies]\ngamefeature-sdk = {{ path = {:?} }}\n\n\
         # A workspace of its own: it builds wherever it is.\n[workspace]\n\n\
         # Plugins are small and do not unwind.\n\
         [profile.release]\nopt-level = \"s\"\nlto = true\nstrip = true\ncodegen-units = 1\npanic = \"abort\"\n\n\
         # The SDK's own code runs for every entry of every batch: built for speed.\n\
         [profile.release.package.gamefeature-sdk]\nopt-level = 3\n",
        sdk.display().to_string()
    ))
}

fn lib_rs(name: &str) -> String {
    let type_name = type_name(name);
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
