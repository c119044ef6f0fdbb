//! Where each language's toolchain is. `./dev setup` installs them, pinned, into the repository's
//! `toolchains/` folder (ignored by git); environment variables point elsewhere when a user keeps them apart.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::{BuildTarget, Language};

/// The toolchains and the files every non-Rust build needs: the WIT packages and the helper libraries.
#[derive(Debug, Clone)]
pub struct Toolchains {
    /// The folder the pinned toolchains are installed into (`toolchains/`).
    pub dir: PathBuf,
    /// The folder of WIT packages, one sub-folder per version (`wit/`).
    pub wit: PathBuf,
    /// The helper libraries, one sub-folder per language (`guest-sdk/`).
    pub sdk: PathBuf,
}

impl Toolchains {
    /// The toolchains of the repository at `root`.
    pub fn of_repository(root: &Path) -> Toolchains {
        Toolchains { dir: root.join("toolchains"), wit: root.join("wit"), sdk: root.join("guest-sdk") }
    }

    /// Builds the plugin in `target.folder`, written in `language` (not Rust: cargo builds those), and writes its
    /// component where its manifest names it.
    pub fn build(&self, language: Language, target: &BuildTarget) -> Result<()> {
        let wit = self.wit.join(&target.api);
        if !wit.is_dir() {
            bail!(
                "plugin {}: its manifest says api = {:?}, but there is no WIT package {} to build against",
                target.name,
                target.api,
                wit.display()
            );
        }
        // Built beside the component and moved into its place whole: a host loading the plugin meanwhile (another
        // process, a watcher) reads the old component or the new one, never half of one.
        let folder = target.component.parent().unwrap_or(&target.folder);
        let building = tempfile::Builder::new()
            .prefix(".building-")
            .suffix(".wasm")
            .tempfile_in(folder)
            .map_err(|e| anyhow::anyhow!("plugin {}: cannot write into {}: {e}", target.name, folder.display()))?
            .into_temp_path();
        let into = BuildTarget { component: building.to_path_buf(), ..target.clone() };
        match language {
            Language::Rust => bail!("plugin {}: Rust plugins are built with cargo", target.name),
            Language::Python => crate::python::build(self, &wit, &into),
            Language::JavaScript => crate::javascript::build(self, &wit, &into),
            Language::C => crate::c::build(self, &wit, &into),
        }?;
        readable_by_all(&building).and_then(|()| building.persist(&target.component).map_err(|e| e.error)).map_err(
            |e| anyhow::anyhow!("plugin {}: putting {} in place: {e}", target.name, target.component.display()),
        )
    }

    /// A tool: the path an environment variable names, else `default`; refused with how to install it when
    /// missing.
    pub(crate) fn tool(&self, target: &BuildTarget, env: &str, default: PathBuf, what: &str) -> Result<PathBuf> {
        let path = std::env::var_os(env).map_or(default, PathBuf::from);
        if path.components().count() > 1 && !path.exists() {
            bail!(
                "plugin {}: building it needs {what}, not found at {} — run `./dev setup` (it installs the pinned \
                 toolchains into {}), or set {env}",
                target.name,
                path.display(),
                self.dir.display()
            );
        }
        Ok(path)
    }
}

/// The environment variables that choose a toolchain: a build with another is another build.
const TOOLCHAIN_VARIABLES: [&str; 4] =
    ["GFHOST_COMPONENTIZE_PY", "GFHOST_COMPONENTIZE_JS", "GFHOST_NODE", "GFHOST_CLANG"];

impl Toolchains {
    /// What a plugin's build of `language` in `folder` depends on, as one SHA-256 (hex): the plugin's sources
    /// and manifest, the language's helper library, the WIT packages, the toolchain's pin, and the variables
    /// choosing a toolchain — each file by its path under its root and its bytes. The same digest as at the
    /// last build, with its component in place, means building again would make the same component.
    pub fn inputs_digest(&self, language: Language, folder: &Path) -> Result<String> {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        let mut add_file = |root: &Path, path: &Path| -> Result<()> {
            let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
            let relative = path.strip_prefix(root).unwrap_or(path);
            hasher.update(relative.to_string_lossy().as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
            Ok(())
        };
        let mut sources = language.sources(folder);
        sources.push(folder.join("plugin.toml"));
        sources.sort();
        for source in &sources {
            add_file(folder, source)?;
        }
        let helper = self.sdk.join(match language {
            Language::Python => "python",
            Language::JavaScript => "js",
            Language::C => "c",
            Language::Rust => "src",
        });
        for root in [helper, self.wit.clone()] {
            let mut files = files_under(&root);
            files.sort();
            for file in &files {
                add_file(&root, file)?;
            }
        }
        let pin = match language {
            Language::Python => Some(self.dir.join("python/requirements.txt")),
            Language::JavaScript => Some(self.dir.join("js/package-lock.json")),
            Language::C | Language::Rust => None,
        };
        if let Some(pin) = pin.filter(|pin| pin.is_file()) {
            add_file(&self.dir, &pin)?;
        }
        for variable in TOOLCHAIN_VARIABLES {
            hasher.update(variable.as_bytes());
            hasher.update(std::env::var_os(variable).unwrap_or_default().as_encoded_bytes());
        }
        Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// Every file under `dir`, but Python's caches (componentize-py writes them while building): what a build
/// reads of a helper library or a WIT package.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && entry.file_name() != "__pycache__" => pending.push(path),
                Ok(kind) if kind.is_file() => files.push(path),
                _ => {}
            }
        }
    }
    files
}

/// Gives a file built in a temporary file (readable by its owner alone) the mode a file written plainly gets, so
/// a host running as another user can still load the component.
pub fn readable_by_all(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository of its own: a helper library, a WIT package, a pin, and one Python plugin.
    fn repository() -> (tempfile::TempDir, Toolchains, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let toolchains = Toolchains::of_repository(root.path());
        for (path, text) in [
            ("guest-sdk/python/gamefeature/__init__.py", "x = 1\n"),
            ("wit/0.2.0/world.wit", "package a:b@0.2.0;\n"),
            ("toolchains/python/requirements.txt", "componentize-py==0.25.1\n"),
            ("plugins/p/plugin.toml", "[plugin]\nname = \"p\"\n"),
            ("plugins/p/plugin.py", "print(1)\n"),
        ] {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let plugin = root.path().join("plugins/p");
        (root, toolchains, plugin)
    }

    #[test]
    fn the_inputs_digest_changes_with_any_input_and_only_then() {
        let (root, toolchains, plugin) = repository();
        let digest = || toolchains.inputs_digest(Language::Python, &plugin).unwrap();
        let first = digest();
        assert_eq!(digest(), first, "the same inputs");
        // Caches and outputs are not inputs.
        std::fs::create_dir_all(root.path().join("guest-sdk/python/gamefeature/__pycache__")).unwrap();
        std::fs::write(root.path().join("guest-sdk/python/gamefeature/__pycache__/x.pyc"), "cache").unwrap();
        std::fs::write(plugin.join("p.wasm"), "output").unwrap();
        assert_eq!(digest(), first, "a cache and the output change nothing");
        let mut seen = vec![first];
        for (path, text) in [
            ("plugins/p/plugin.py", "print(2)\n"),
            ("plugins/p/plugin.toml", "[plugin]\nname = \"p\"\nversion = \"2\"\n"),
            ("guest-sdk/python/gamefeature/__init__.py", "x = 2\n"),
            ("wit/0.2.0/world.wit", "package a:b@0.2.0;\n// edited\n"),
            ("toolchains/python/requirements.txt", "componentize-py==0.26.0\n"),
        ] {
            std::fs::write(root.path().join(path), text).unwrap();
            let now = digest();
            assert!(!seen.contains(&now), "{path} changed the digest");
            seen.push(now);
        }
    }
}
