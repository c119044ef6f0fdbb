//! Python plugins: componentize-py bundles CPython, the plugin's modules and the helper library
//! (`guest-sdk/python`) into one component. The component's exports come from the helper's
//! `gamefeature_exports` module, which finds the plugin's class in the plugin's `plugin.py`.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use crate::run::run;
use crate::{BuildTarget, Toolchains, WORLD};

/// The helper module componentize-py takes as the application: it defines the export classes.
const EXPORTS_MODULE: &str = "gamefeature_exports";

pub fn build(toolchains: &Toolchains, wit: &Path, target: &BuildTarget) -> Result<()> {
    let componentize_py = toolchains.tool(
        target,
        "GFHOST_COMPONENTIZE_PY",
        toolchains.dir.join("python/venv/bin/componentize-py"),
        "componentize-py",
    )?;
    let mut command = Command::new(componentize_py);
    command
        .arg("--wit-path")
        .arg(wit)
        .args(["--world", WORLD, "componentize"])
        .arg("--python-path")
        .arg(&target.folder)
        .arg("--python-path")
        .arg(toolchains.sdk.join("python"))
        .arg(EXPORTS_MODULE)
        .arg("--output")
        .arg(&target.component);
    let result = run(&format!("plugin {}: componentize-py", target.name), &mut command);
    // componentize-py's interpreter leaves compiled modules beside the sources; the component holds its own.
    let _ = std::fs::remove_dir_all(target.folder.join("__pycache__"));
    result
}
