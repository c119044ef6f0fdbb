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
        match language {
            Language::Rust => bail!("plugin {}: Rust plugins are built with cargo", target.name),
            Language::Python => crate::python::build(self, &wit, target),
            Language::JavaScript => crate::javascript::build(self, &wit, target),
            Language::C => crate::c::build(self, &wit, target),
        }
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
