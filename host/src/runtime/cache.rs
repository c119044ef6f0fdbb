//! The compiled-component cache: compiling a component is the slow part of loading a plugin (tens of
//! milliseconds for Rust, seconds for Python or JavaScript), so compiled code is kept on disk.
//!
//! An entry is keyed by the SHA-256 of the component's bytes and of the engine's compatibility hash (wasmtime
//! version, target and every setting that changes generated code), so a changed plugin or a changed engine
//! configuration misses instead of loading stale code. Writes go to a temporary file renamed into place, so a
//! crash never leaves a truncated entry under a valid name.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::Engine;

/// A directory of compiled components for one engine configuration.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
}

/// Feeds `Hash` implementations into SHA-256, so the engine's compatibility hash is stable on disk.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("only the SHA-256 digest is used")
    }
}

impl ComponentCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ComponentCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the compiled form of `wasm` for `engine` lives.
    pub fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        let mut hasher = Sha256Hasher(Sha256::new());
        hasher.write(wasm);
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let digest = hasher.0.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.cwasm"))
    }

    /// The cached component for `wasm`, if there is a usable entry. An unusable entry (truncated, or written by
    /// an incompatible build) is treated as a miss and overwritten by the next [`store`](Self::store).
    pub fn fetch(&self, engine: &Engine, wasm: &[u8]) -> Option<Component> {
        let path = self.entry_path(engine, wasm);
        if !path.is_file() {
            return None;
        }
        // SAFETY: entries are written only by `store` below, from `Component::serialize` of this engine
        // configuration (the key includes its compatibility hash), into a directory the host owns. wasmtime
        // additionally checks the header's version and configuration before using the code.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), "ignoring unusable cache entry: {e:#}");
                None
            }
        }
    }

    /// Writes the compiled form of `wasm`. Failing to write only costs the next start a compile.
    pub fn store(&self, engine: &Engine, wasm: &[u8], component: &Component) {
        let path = self.entry_path(engine, wasm);
        let result = (|| -> Result<(), String> {
            let bytes = component.serialize().map_err(|e| format!("{e:#}"))?;
            std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
            let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&temporary, bytes).map_err(|e| e.to_string())?;
            std::fs::rename(&temporary, &path).map_err(|e| e.to_string())
        })();
        if let Err(e) = result {
            tracing::warn!(dir = %self.dir.display(), "cannot write to the component cache: {e}");
        }
    }
}
