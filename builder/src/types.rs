//! Type checking a plugin's sources, as a modder's editor does and as `gfhost check --types` does: each language
//! with the project's own pinned checker (TypeScript for JavaScript, mypy for Python, clang for C), configured
//! to read the helper library's types, so a misspelt hook parameter (`context.wrldName`) is an error before the
//! plugin is built.
//!
//! `gfhost new` writes each language's editor configuration ([`EditorConfig`]) beside the plugin's sources: a
//! `jsconfig.json` (TypeScript, `checkJs`, strict, the ES2022 target whose BigInt literals the helper uses, and
//! `gamefeature` mapped to the helper's declarations), a `pyproject.toml` (mypy, strict, and pyright, both
//! reading the helper library and the WIT bindings componentize-py generates, committed for type checkers in
//! `guest-sdk/python/wit-bindings`), or a `compile_flags.txt` (clangd: the wasm32-wasi target and the helper's
//! headers). Paths in them are relative to the plugin's folder when it sits inside the checkout that holds the
//! helpers (as `plugins/` does), so a checkout moved whole keeps working; whole otherwise. None of these files is
//! a source of the build: writing or changing one never makes a component stale.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::{Language, Toolchains};

/// The file a language's editor and checker read their configuration from, and what `gfhost new` writes in it.
pub struct EditorConfig {
    /// Its name in the plugin's folder.
    pub file: &'static str,
    pub text: String,
}

/// The configuration files of the languages' checkers: never sources of a build.
pub const CONFIG_FILES: [&str; 4] = ["jsconfig.json", "tsconfig.json", "pyproject.toml", "compile_flags.txt"];

/// The folder of the WIT bindings componentize-py generates, committed under the Python helper for type
/// checkers (a build generates its own).
pub const PYTHON_BINDINGS: &str = "python/wit-bindings";

/// What a type check found.
pub struct TypeCheck {
    /// The command run, as a modder would type it.
    pub command: String,
    pub passed: bool,
    /// What the checker printed.
    pub output: String,
}

impl Toolchains {
    /// The editor configuration for a plugin in `language` in `folder`: `None` for Rust, whose editors read
    /// `Cargo.toml`.
    pub fn editor_config(&self, language: Language, folder: &Path) -> Result<Option<EditorConfig>> {
        let sdk =
            |part: &str| -> Result<String> { Ok(self.path_from(folder, &self.sdk.join(part))?.display().to_string()) };
        let config = match language {
            Language::Rust => return Ok(None),
            Language::JavaScript => EditorConfig {
                file: "jsconfig.json",
                text: serde_json::to_string_pretty(&serde_json::json!({
                    "compilerOptions": {
                        "checkJs": true,
                        "strict": true,
                        "noEmit": true,
                        "target": "es2022",
                        "module": "es2022",
                        "moduleResolution": "bundler",
                        "lib": ["es2022"],
                        "types": [],
                        "paths": { "gamefeature": [sdk("js/gamefeature.d.ts")?] }
                    },
                    "include": ["**/*.js", "**/*.mjs"],
                    "exclude": ["node_modules", "target"]
                }))? + "\n",
            },
            Language::Python => {
                // mypy reads relative paths from where it runs, unless they start at the configuration's folder.
                let in_config = |path: String| match Path::new(&path).is_relative() {
                    true => format!("$MYPY_CONFIG_FILE_DIR/{path}"),
                    false => path,
                };
                let (helper, bindings) = (sdk("python")?, sdk(PYTHON_BINDINGS)?);
                let mypy_path = format!("{}:{}", in_config(helper.clone()), in_config(bindings.clone()));
                // As TOML strings: quoted and escaped whatever the paths hold.
                let text = |value: String| toml::Value::String(value).to_string();
                let (mypy_path, helper, bindings) = (text(mypy_path), text(helper), text(bindings));
                EditorConfig {
                    file: "pyproject.toml",
                    text: format!(
                        "# How editors and `gfhost check --types` type-check this plugin: the helper library and the\n\
                         # WIT bindings componentize-py generates at build time, strictly (every hook annotated).\n\
                         [tool.mypy]\n\
                         mypy_path = {mypy_path}\n\
                         strict = true\n\
                         files = [\"plugin.py\"]\n\n\
                         [tool.pyright]\n\
                         extraPaths = [{helper}, {bindings}]\n\
                         typeCheckingMode = \"strict\"\n"
                    ),
                }
            }
            Language::C => EditorConfig {
                file: "compile_flags.txt",
                // The flags the build compiles with, so the check and the build agree on what is an error.
                text: format!("--target=wasm32-wasi\n-std=c11\n-Wall\n-Wno-unused-function\n-I{}\n", sdk("c")?),
            },
        };
        Ok(Some(config))
    }

    /// Type-checks the plugin in `folder` with its language's checker, configured by the folder's editor
    /// configuration when it has one, else by the one [`editor_config`](Self::editor_config) would write. A Rust
    /// plugin is checked by `cargo check` into `rust_target_dir` (where its builds go, so the SDK is not
    /// compiled again).
    pub fn check_types(&self, language: Language, folder: &Path, rust_target_dir: Option<&Path>) -> Result<TypeCheck> {
        let folder = std::fs::canonicalize(folder).with_context(|| format!("finding {}", folder.display()))?;
        // A configuration of the folder's own, else the default one in a folder of its own.
        let scratch = tempfile::tempdir().context("creating a scratch folder")?;
        let config = |name: &str| -> Result<PathBuf> {
            let own = folder.join(name);
            if own.is_file() {
                return Ok(own);
            }
            let default = self.editor_config(language, &folder)?.context("no configuration")?;
            let text = match language {
                // Its paths are relative to the plugin's folder: a configuration elsewhere names them whole.
                Language::JavaScript => self.absolute_js_config(&folder)?,
                _ => default.text,
            };
            let path = scratch.path().join(name);
            std::fs::write(&path, text)?;
            Ok(path)
        };
        let mut command = match language {
            Language::Rust => {
                let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                // As `gfhost build` builds it, so the check shares its compiled dependencies.
                let repository = self.dir.parent().unwrap_or(&self.dir);
                cargo.env("CARGO_ENCODED_RUSTFLAGS", crate::rust_plugin_rustflags(repository)).env_remove("RUSTFLAGS");
                cargo
                    .args(["check", "--release", "--target", "wasm32-wasip2", "--manifest-path"])
                    .arg(folder.join("Cargo.toml"));
                if let Some(dir) = rust_target_dir {
                    cargo.arg("--target-dir").arg(dir);
                }
                cargo
            }
            Language::JavaScript => {
                let mut tsc = Command::new(self.dir.join("js/node_modules/.bin/tsc"));
                tsc.args(["--pretty", "false", "-p"]).arg(config("jsconfig.json")?);
                tsc
            }
            Language::Python => {
                let mut mypy = Command::new(self.dir.join("python/venv/bin/mypy"));
                let own = folder.join("pyproject.toml");
                let configured = own.is_file() && std::fs::read_to_string(&own)?.contains("[tool.mypy]");
                let config = match configured {
                    true => own,
                    false => {
                        let path = scratch.path().join("pyproject.toml");
                        let text = self.editor_config(language, scratch.path())?.context("no configuration")?.text;
                        // Relative to the scratch folder's own place in the tree.
                        std::fs::write(&path, text)?;
                        path
                    }
                };
                mypy.args(["--no-color-output", "--no-error-summary", "--config-file"]).arg(config);
                mypy.arg("--cache-dir").arg(scratch.path().join("mypy-cache"));
                mypy.args(Language::Python.sources(&folder));
                mypy
            }
            Language::C => {
                let mut clang = Command::new(std::env::var_os("GFHOST_CLANG").unwrap_or_else(|| "clang".into()));
                clang.arg("-fsyntax-only");
                let flags = std::fs::read_to_string(config("compile_flags.txt")?)?;
                // The folder's own flags name the helper's headers relative to it.
                for flag in flags.lines().map(str::trim).filter(|f| !f.is_empty()) {
                    match flag.strip_prefix("-I") {
                        Some(dir) if Path::new(dir).is_relative() => {
                            clang.arg(format!("-I{}", folder.join(dir).display()))
                        }
                        _ => clang.arg(flag),
                    };
                }
                clang
                    .args(Language::C.sources(&folder).into_iter().filter(|s| s.extension().is_some_and(|e| e == "c")));
                clang
            }
        };
        command.current_dir(&folder).env_remove("RUST_BACKTRACE");
        let shown = shown_command(&command);
        let output = command.output().with_context(|| {
            format!("running {shown} (`./dev setup` installs the project's checkers into {})", self.dir.display())
        })?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok(TypeCheck { command: shown, passed: output.status.success(), output: text })
    }

    /// The JavaScript configuration with the helper's declarations named by their whole path, for a check run
    /// from a configuration outside the plugin's folder; the plugin's sources are named too.
    fn absolute_js_config(&self, folder: &Path) -> Result<String> {
        let declarations = std::fs::canonicalize(self.sdk.join("js/gamefeature.d.ts"))?;
        let sources: Vec<String> = Language::JavaScript
            .sources(folder)
            .into_iter()
            .filter(|s| s.extension().is_some_and(|e| e == "js" || e == "mjs"))
            .map(|s| s.display().to_string())
            .collect();
        let mut config: serde_json::Value =
            serde_json::from_str(&self.editor_config(Language::JavaScript, folder)?.context("no configuration")?.text)?;
        config["compilerOptions"]["paths"]["gamefeature"] = serde_json::json!([declarations.display().to_string()]);
        config["files"] = serde_json::json!(sources);
        if let Some(config) = config.as_object_mut() {
            config.remove("include");
            config.remove("exclude");
        }
        Ok(serde_json::to_string_pretty(&config)?)
    }
}

impl Toolchains {
    /// `to` (in the checkout) as the folder `from` names it: relative when `from` is inside the checkout too (a
    /// checkout moved whole keeps working), whole otherwise (a modder's folder elsewhere may move on its own).
    fn path_from(&self, from: &Path, to: &Path) -> Result<PathBuf> {
        let from = std::fs::canonicalize(from).with_context(|| format!("finding {}", from.display()))?;
        let to = std::fs::canonicalize(to).with_context(|| format!("finding {}", to.display()))?;
        let checkout = self.sdk.parent().and_then(|root| std::fs::canonicalize(root).ok());
        match checkout {
            Some(checkout) if from.starts_with(&checkout) => Ok(relative_path(&from, &to).unwrap_or(to)),
            _ => Ok(to),
        }
    }
}

/// `to` relative to `from` (both absolute and canonical), when they share a root below `/`.
pub fn relative_path(from: &Path, to: &Path) -> Option<PathBuf> {
    let (from, to): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return None;
    }
    let ups = std::iter::repeat_n(Component::ParentDir, from.len() - common);
    Some(ups.chain(to[common..].iter().copied()).collect())
}

/// A command as a modder would type it.
fn shown_command(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
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
