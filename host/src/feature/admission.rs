//! The one way code enters the process: a plugin manifest reaches the feature subsystem only as an
//! [`Admitted`], and only a [`Gate`] makes one.
//!
//! Every path that brings a plugin in — discovery at start, a rescan, `install DIR` from a console, a hot
//! reload (console, `--watch`, a server's live update), a client's fetched package, a replay — hands the
//! manifest it read to a gate, and the subsystem's `install`, `compile_new_version` and `swap_code` take
//! nothing else. So a new path cannot forget the checks: it does not compile without them. A plugin's later
//! versions pass the gate its first version came through
//! ([`FeatureSubsystem::readmit`](super::FeatureSubsystem::readmit)).
//!
//! What a gate checks is its [`Checks`]: the host's are the package checks (`package::gate`): a folder
//! installed from a package must be that package, signed by a publisher the host trusts, and asks for no more
//! than the publisher's ceiling. A check may leave a [`Recheck`] for the bytes — the folder still packs to its
//! package — which the subsystem runs right before it compiles the code (at `Loading`, and for a new version
//! before it is swapped in), so a folder changed after it was admitted is refused there too.

use std::sync::Arc;

use super::manifest::PluginManifest;

/// What a gate checks a plugin folder's manifest against.
pub trait Checks: Send + Sync {
    /// Checks `manifest` (as read from its folder) and narrows what it asks for to what it may have; returns
    /// the check of its bytes to run before its code is compiled, if there is one, or why it is refused
    /// (naming the folder).
    fn admit(&self, manifest: &mut PluginManifest) -> Result<Option<Recheck>, String>;
}

/// A check of a plugin folder's bytes, run right before its code is compiled; why it fails, naming the
/// folder.
pub type Recheck = Arc<dyn Fn(&PluginManifest) -> Result<(), String> + Send + Sync>;

/// Lets plugins into a feature subsystem, through its [`Checks`].
pub struct Gate {
    checks: Box<dyn Checks>,
}

/// A plugin manifest that passed a gate: the only form in which the feature subsystem takes one.
#[derive(Clone)]
pub struct Admitted {
    manifest: PluginManifest,
    admission: Admission,
}

/// How a plugin was admitted: the gate (its later versions pass the same one) and the check of its bytes.
#[derive(Clone)]
pub(crate) struct Admission {
    pub(crate) gate: Arc<Gate>,
    recheck: Option<Recheck>,
}

/// Why a plugin was not let in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin {plugin:?} refused: {cause}")]
pub struct AdmissionError {
    /// The plugin refused.
    pub plugin: String,
    /// Why, naming the folder.
    pub cause: String,
}

impl Gate {
    /// A gate checking plugins with `checks`.
    pub fn new(checks: impl Checks + 'static) -> Gate {
        Gate { checks: Box::new(checks) }
    }

    /// A gate that lets every folder in as it is: for tools and tests that vet folders themselves. A host's
    /// gate is the package checks (`package::gate`).
    pub fn unchecked() -> Gate {
        struct Unchecked;
        impl Checks for Unchecked {
            fn admit(&self, _: &mut PluginManifest) -> Result<Option<Recheck>, String> {
                Ok(None)
            }
        }
        Gate::new(Unchecked)
    }

    /// Checks `manifest` (as read from its folder) and narrows what it asks for to what it may have.
    pub fn admit(self: &Arc<Self>, mut manifest: PluginManifest) -> Result<Admitted, AdmissionError> {
        match self.checks.admit(&mut manifest) {
            Ok(recheck) => Ok(Admitted { manifest, admission: Admission { gate: self.clone(), recheck } }),
            Err(cause) => Err(AdmissionError { plugin: manifest.name, cause }),
        }
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted").field("manifest", &self.manifest).finish_non_exhaustive()
    }
}

impl Admitted {
    /// The manifest as admitted: what it asks for narrowed to what it may have.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// Checks the folder's bytes as the gate asked (a package's folder still packs to it): called right before
    /// its code is compiled.
    pub fn verify_contents(&self) -> Result<(), AdmissionError> {
        self.admission.verify_contents(&self.manifest)
    }

    /// Whether the gate left a check of the folder's bytes (its folder came from a package).
    pub fn is_checked(&self) -> bool {
        self.admission.recheck.is_some()
    }

    pub(crate) fn into_parts(self) -> (PluginManifest, Admission) {
        (self.manifest, self.admission)
    }

    /// A manifest the subsystem held, admitted when it came in, put back together.
    pub(crate) fn from_parts(manifest: PluginManifest, admission: Admission) -> Admitted {
        Admitted { manifest, admission }
    }
}

impl Admission {
    /// Whether the gate left a check of the folder's bytes (its folder came from a package).
    pub(crate) fn is_checked(&self) -> bool {
        self.recheck.is_some()
    }

    pub(crate) fn verify_contents(&self, manifest: &PluginManifest) -> Result<(), AdmissionError> {
        match &self.recheck {
            Some(recheck) => recheck(manifest).map_err(|cause| AdmissionError { plugin: manifest.name.clone(), cause }),
            None => Ok(()),
        }
    }
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<AdmissionError> for crate::error::Error {
    fn from(error: AdmissionError) -> crate::error::Error {
        let message = error.to_string();
        crate::error::Error::Refused { blame: crate::error::Blame::Plugin(error.plugin), message }
    }
}
