//! JavaScript plugins: componentize-js (SpiderMonkey inside) bundles the plugin's modules and the helper
//! library (`guest-sdk/js`) into one component.
//!
//! The build runs in a staging folder: the plugin's own files, the helper library, and an entry module exporting
//! the WIT interfaces from the plugin's default export. componentize-js's runtime resolves a bare module name
//! as a path from the folder it runs in, so the helper is staged as a file named `gamefeature`, and
//! `import { Plugin } from 'gamefeature'` finds it as it would find the npm package.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::run::run;
use crate::{BuildTarget, Language, Toolchains, WORLD};

/// The entry module: the plugin's class, wrapped by the helper into the world's exports.
const ENTRY: &str = "\
import PluginClass from './plugin.js';
import { exportPlugin } from 'gamefeature';
const exports = exportPlugin(PluginClass);
export const lifecycle = exports.lifecycle;
export const handlers = exports.handlers;
export const initStateCallbacks = exports.initStateCallbacks;
export const timerCallbacks = exports.timerCallbacks;
export const replicationCallbacks = exports.replicationCallbacks;
export const propertyCallbacks = exports.propertyCallbacks;
";

/// The helper library's module name, and so its file name in the staging folder.
const HELPER_MODULE: &str = "gamefeature";

/// The entry module's file name in the staging folder.
const ENTRY_FILE: &str = "__gamefeature_entry.js";

/// Parses each of the plugin's modules with Node before componentize-js runs: componentize-js reports a syntax
/// error at the end of the bundle, Node at its line and column in the file the modder wrote.
fn check_syntax(node: &std::ffi::OsStr, staging: &Path, target: &BuildTarget) -> Result<()> {
    // `--check` takes a `.js` file for a CommonJS script; the plugin's modules are ES modules.
    let probe = staging.join("__gamefeature_syntax_check.mjs");
    for source in Language::JavaScript.sources(&target.folder) {
        if source.extension().is_some_and(|e| e == "json") {
            continue;
        }
        std::fs::copy(&source, &probe)
            .with_context(|| format!("plugin {}: reading {}", target.name, source.display()))?;
        let output = Command::new(node).arg("--check").arg(&probe).output().with_context(|| {
            format!("plugin {}: cannot start {node:?} (Node.js, installed by ./dev setup)", target.name)
        })?;
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr)
                .replace(&probe.display().to_string(), &source.display().to_string());
            let said: Vec<&str> = said
                .lines()
                .take_while(|line| !line.trim_start().starts_with("at "))
                .filter(|line| !line.trim().is_empty())
                .collect();
            anyhow::bail!(
                "plugin {}: {} does not parse:\n    {}",
                target.name,
                source.display(),
                said.join("\n    ").trim_end()
            );
        }
    }
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

pub fn build(toolchains: &Toolchains, wit: &Path, target: &BuildTarget) -> Result<()> {
    let cli = toolchains.tool(
        target,
        "GFHOST_COMPONENTIZE_JS",
        toolchains.dir.join("js/node_modules/@bytecodealliance/componentize-js/src/cli.js"),
        "componentize-js",
    )?;
    let staging = tempfile::tempdir().context("creating a staging folder")?;
    let stage = |what: &str| format!("plugin {}: staging {what}", target.name);
    for source in Language::JavaScript.sources(&target.folder) {
        let relative = source.strip_prefix(&target.folder).expect("sources are in the plugin's folder");
        let copy = staging.path().join(relative);
        std::fs::create_dir_all(copy.parent().expect("a file has a parent")).with_context(|| stage("sources"))?;
        std::fs::copy(&source, &copy).with_context(|| stage(&source.display().to_string()))?;
    }
    std::fs::copy(toolchains.sdk.join("js/gamefeature.js"), staging.path().join(HELPER_MODULE))
        .with_context(|| stage("the helper library"))?;
    std::fs::write(staging.path().join(ENTRY_FILE), ENTRY).with_context(|| stage("the entry"))?;

    let node = std::env::var_os("GFHOST_NODE").unwrap_or_else(|| "node".into());
    check_syntax(&node, staging.path(), target)?;
    let mut command = Command::new(node);
    command
        .arg(cli)
        .arg(ENTRY_FILE)
        .arg("--wit")
        .arg(wit)
        .args(["--world-name", WORLD])
        // The host links WASI's CLI, clocks, random and I/O (so `console.log` reaches the plugin's log), but no
        // HTTP: a plugin has no network.
        .args(["--disable", "http", "fetch-event"])
        .arg("--out")
        .arg(std::path::absolute(&target.component).context("resolving the component's path")?)
        .current_dir(staging.path());
    run(&format!("plugin {}: componentize-js", target.name), &mut command)
}
