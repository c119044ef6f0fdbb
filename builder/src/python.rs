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
    // componentize-py finds a syntax error only once it has compiled its interpreter and imports the plugin,
    // seconds later: the toolchain's own Python says where it is at once (a hint; the build goes on and has
    // the last word, since that Python may be older than the one componentize-py embeds).
    for hint in syntax_hints(toolchains, &target.folder) {
        eprintln!("plugin {}: {hint}", target.name);
    }
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

/// Compiles each file named on the command line, printing `path:line:column: message` for each that does not.
const SYNTAX_CHECK: &str = r#"
import sys
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as source:
            compile(source.read(), path, "exec", dont_inherit=True)
    except SyntaxError as error:
        print(f"{path}:{error.lineno}:{error.offset}: SyntaxError: {error.msg}")
"#;

/// What the toolchain's Python finds wrong with the syntax of the plugin's sources, as lines saying where and
/// which Python said so; nothing when it finds nothing or is not there.
fn syntax_hints(toolchains: &Toolchains, folder: &Path) -> Vec<String> {
    let python = toolchains.dir.join("python/venv/bin/python3");
    let sources = crate::Language::Python.sources(folder);
    if !python.is_file() || sources.is_empty() {
        return Vec::new();
    }
    let output = Command::new(&python).arg("-c").arg(SYNTAX_CHECK).args(&sources).output();
    let Some(output) = output.ok().filter(|o| o.status.success()) else { return Vec::new() };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let line = line.strip_prefix(&format!("{}/", folder.display())).unwrap_or(line);
            format!("{line} (the toolchain's Python says so before the build, which goes on to confirm)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A syntax error is shown where it is, in a fraction of the build's time.
    #[test]
    fn a_syntax_error_is_pointed_at_before_the_build() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("plugin.py"), "class Broken:\n    def hook(self) -> None\n        pass\n")
            .unwrap();
        std::fs::write(folder.path().join("fine.py"), "x = 1\n").unwrap();
        let hints = syntax_hints(&Toolchains::of_repository(&root), folder.path());
        assert_eq!(hints.len(), 1, "{hints:?}");
        // Where, and what (the column and the wording are the toolchain Python's).
        assert!(hints[0].starts_with("plugin.py:2:") && hints[0].contains("SyntaxError"), "{hints:?}");
    }
}
