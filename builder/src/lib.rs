//! Builds game-feature plugins from source into WebAssembly components, whatever language they are written in.
//!
//! A plugin folder holds its `plugin.toml` and its sources; the entry file says the language:
//!
//! | language   | entry file   | toolchain (installed by `./dev setup` into `toolchains/`, pinned)             |
//! |------------|--------------|--------------------------------------------------------------------------------|
//! | Rust       | `Cargo.toml` | cargo and the `wasm32-wasip2` target, with `guest-sdk/` (`gamefeature-sdk`)     |
//! | Python     | `plugin.py`  | componentize-py in a virtual environment, with `guest-sdk/python/`             |
//! | JavaScript | `plugin.js`  | componentize-js from a committed npm lockfile, with `guest-sdk/js/`            |
//! | C          | `plugin.c`   | wit-bindgen's C generator (built in), clang and wasi-libc from Debian          |
//!
//! Rust plugins are cargo crates, built a workspace at a time by the caller (cargo shares their dependencies);
//! this crate builds the others one plugin at a time with [`Toolchains::build`]. Both `gfhost build` and the
//! tests' build script use it, so a plugin builds the same way for a user and for the tests.

mod c;
mod javascript;
mod python;
mod run;
mod toolchains;
pub mod types;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

pub use toolchains::{files_under, readable_by_all, Toolchains};

/// The world every plugin implements, in each version of the `gamefeature:plugin` package.
pub const WORLD: &str = "game-feature";

/// The rustc flags Rust plugins are built with, as cargo's `CARGO_ENCODED_RUSTFLAGS` takes them: the folders
/// a component would otherwise name — the SDK's in this repository, the registry crates' under cargo's home —
/// are written as short names (`gamefeature/…`, `cargo/…`), so a package published from a modder's machine
/// carries none of their folder names in its panic locations. (A plugin's own crate is named by cargo with paths
/// relative to its workspace already.) The flags are the same for every plugin on a machine, so plugins keep
/// sharing their compiled dependencies.
pub fn rust_plugin_rustflags(repository: &Path) -> String {
    let repository = repository.canonicalize().unwrap_or_else(|_| repository.to_path_buf());
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let mut flags = vec![format!("--remap-path-prefix={}=gamefeature", repository.display())];
    if let Some(cargo_home) = cargo_home {
        let cargo_home = cargo_home.canonicalize().unwrap_or(cargo_home);
        flags.push(format!("--remap-path-prefix={}=cargo", cargo_home.display()));
    }
    flags.join("\x1f")
}

/// A language plugins are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    C,
}

impl Language {
    pub const ALL: [Language; 4] = [Language::Rust, Language::Python, Language::JavaScript, Language::C];

    /// The short name `gfhost new --lang` takes.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "js",
            Language::C => "c",
        }
    }

    /// The language named `name`: its short name, or `javascript`, `py` or `rs`.
    pub fn parse(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "javascript" => Some(Language::JavaScript),
            "py" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            lower => Language::ALL.into_iter().find(|language| language.name() == lower),
        }
    }

    /// The file whose presence in a plugin folder makes it a plugin in this language.
    pub fn entry_file(self) -> &'static str {
        match self {
            Language::Rust => "Cargo.toml",
            Language::Python => "plugin.py",
            Language::JavaScript => "plugin.js",
            Language::C => "plugin.c",
        }
    }

    /// The language of the plugin in `folder`, from its entry file; `None` for a folder without sources (a
    /// prebuilt package). A folder with the entry files of two languages is refused: which to build would be a
    /// guess.
    pub fn of(folder: &Path) -> Result<Option<Language>> {
        let found: Vec<Language> =
            Language::ALL.into_iter().filter(|language| folder.join(language.entry_file()).is_file()).collect();
        match found.as_slice() {
            [] => Ok(None),
            [language] => Ok(Some(*language)),
            several => {
                let files: Vec<&str> = several.iter().map(|language| language.entry_file()).collect();
                bail!("{} holds the sources of several languages ({}): keep one", folder.display(), files.join(", "))
            }
        }
    }

    /// The source files of a plugin in this language, whose changes make its component stale.
    pub fn sources(self, folder: &Path) -> Vec<PathBuf> {
        let extensions: &[&str] = match self {
            Language::Rust => &["rs", "toml"],
            Language::Python => &["py"],
            Language::JavaScript => &["js", "mjs", "json"],
            Language::C => &["c", "h"],
        };
        let mut sources = Vec::new();
        let mut pending = vec![folder.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                match entry.file_type() {
                    // Build outputs, dependencies, caches, data and scenario tests are not sources.
                    Ok(kind) if kind.is_dir() => {
                        let skipped =
                            matches!(name.as_ref(), "target" | "node_modules" | "__pycache__" | "data" | "tests");
                        if !skipped && !name.starts_with('.') {
                            pending.push(path);
                        }
                    }
                    Ok(kind) if kind.is_file() => {
                        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
                        // The manifest and the type checkers' configurations are not inputs of the build.
                        let configuration = name == "plugin.toml" || types::CONFIG_FILES.contains(&name.as_ref());
                        if extensions.contains(&extension) && !configuration {
                            sources.push(path);
                        }
                    }
                    _ => {}
                }
            }
        }
        sources.sort();
        sources
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::C => "C",
        })
    }
}

/// What a plugin's manifest says that building needs: its name, the WIT version it is built against and where
/// its component goes. Read here without the host's manifest type, so that build scripts need no host.
#[derive(Debug, Clone)]
pub struct BuildTarget {
    pub name: String,
    pub folder: PathBuf,
    pub api: String,
    pub component: PathBuf,
}

impl BuildTarget {
    /// Reads `folder/plugin.toml`.
    pub fn read(folder: &Path) -> Result<BuildTarget> {
        let path = folder.join("plugin.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let table: toml::Table = text.parse().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let plugin = table.get("plugin").and_then(|p| p.as_table());
        let field = |key: &str| plugin.and_then(|p| p.get(key)).and_then(|v| v.as_str()).map(str::to_string);
        let (Some(name), Some(api), Some(component)) = (field("name"), field("api"), field("component")) else {
            bail!("{}: [plugin] needs name, api and component to be built", path.display());
        };
        Ok(BuildTarget { name, folder: folder.to_path_buf(), api, component: folder.join(component) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_file_names_the_language_and_two_entries_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Language::of(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join("plugin.py"), "").unwrap();
        assert_eq!(Language::of(dir.path()).unwrap(), Some(Language::Python));
        std::fs::write(dir.path().join("plugin.c"), "").unwrap();
        let error = Language::of(dir.path()).unwrap_err().to_string();
        assert!(error.contains("plugin.py, plugin.c"), "{error}");
    }

    #[test]
    fn sources_leave_out_outputs_and_data() {
        let dir = tempfile::tempdir().unwrap();
        for file in
            ["plugin.js", "lib/util.js", "node_modules/x/index.js", "data/table.json", "plugin.wasm", "jsconfig.json"]
        {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let sources = Language::JavaScript.sources(dir.path());
        let names: Vec<_> = sources.iter().map(|s| s.strip_prefix(dir.path()).unwrap().to_path_buf()).collect();
        assert_eq!(names, [PathBuf::from("lib/util.js"), PathBuf::from("plugin.js")]);
    }

    #[test]
    fn languages_parse_by_short_and_long_name() {
        assert_eq!(Language::parse("js"), Some(Language::JavaScript));
        assert_eq!(Language::parse("JavaScript"), Some(Language::JavaScript));
        assert_eq!(Language::parse("c"), Some(Language::C));
        assert_eq!(Language::parse("py"), Some(Language::Python));
        assert_eq!(Language::parse("rs"), Some(Language::Rust));
        assert_eq!(Language::parse("cobol"), None);
    }
}
