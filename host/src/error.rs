//! The error a game embedding the host matches on: what kind of failure it was, and whose fault.
//!
//! Each part of the library has its own error (a `ReloadError`, a `FeatureError`, a `ConfigError`...) that says
//! exactly what went wrong there; every one converts into [`Error`] (each beside its own type, so this module
//! depends on none of them), so a game can use `?` across them and
//! decide what to do from [`Error`]'s variant and its [`blame`](Error::blame) — never from the text, which is
//! for people and may change between versions.
//!
//! ```
//! use gamefeature_host::error::{Blame, Error};
//!
//! fn react(error: &Error) -> &'static str {
//!     match (error, error.blame()) {
//!         (Error::NotFound { .. }, _) => "check the name",
//!         (_, Blame::Plugin(_)) => "the plugin is at fault: the game plays on without it",
//!         (_, Blame::Caller) => "fix the request",
//!         (_, Blame::Host) => "the host failed: stop",
//!     }
//! }
//! let error = Error::from_call("hud", gamefeature_host::delivery::CallError::Trapped("unreachable".into()));
//! assert_eq!(react(&error), "the plugin is at fault: the game plays on without it");
//! ```

use std::path::PathBuf;

/// Whose fault a failure is: what a game needs to decide whether to blame a mod, fix its own request, or stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blame {
    /// The plugin named: its code trapped or refused, or its new version did not compile or activate. The host and
    /// the other plugins are unharmed.
    Plugin(String),
    /// Whoever asked: a name that is not there, a file that does not read, a request the world refuses.
    Caller,
    /// The host itself: a file it could not write, an engine it could not start.
    Host,
}

/// A failed request to the host. The text (`Display`) is for people; match on the variant and
/// [`blame`](Self::blame). New variants may come in minor versions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Refused: the world, a policy or a plugin said no, and nothing changed (a plugin whose new version was
    /// refused plays on in its old one).
    #[error("{message}")]
    Refused {
        /// Whose fault it is.
        blame: Blame,
        /// Why, for people.
        message: String,
    },
    /// A plugin's code trapped (a panic, a bad memory access, a limit reached): that instance is never called
    /// again, and the plugin is out of play until it is restarted or reloaded.
    #[error("{message}")]
    Trapped {
        /// The plugin.
        plugin: String,
        /// What its code did, for people.
        message: String,
    },
    /// The plugin was taken out of play earlier (a trap, a frame budget overrun), so it cannot do this.
    #[error("{message}")]
    Quarantined {
        /// The plugin.
        plugin: String,
        /// Why it was taken out, for people.
        message: String,
    },
    /// Nothing of this name is there: a plugin not installed or not in this world, an actor gone, a class never
    /// declared.
    #[error("{message}")]
    NotFound {
        /// The name asked for.
        name: String,
        /// What was looked for and where, for people.
        message: String,
    },
    /// A file given to the host cannot be used: a configuration, an experience, a manifest, a package, a lock.
    #[error("{message}")]
    BadInput {
        /// The file (or folder) at fault.
        file: PathBuf,
        /// What is wrong with it, naming the file, for people.
        message: String,
    },
    /// The host failed on its own account (a file it could not write, an engine it could not start).
    #[error("{0}")]
    Host(String),
}

impl Error {
    /// Whose fault the failure is.
    pub fn blame(&self) -> Blame {
        match self {
            Error::Refused { blame, .. } => blame.clone(),
            Error::Trapped { plugin, .. } | Error::Quarantined { plugin, .. } => Blame::Plugin(plugin.clone()),
            Error::NotFound { .. } | Error::BadInput { .. } => Blame::Caller,
            Error::Host(_) => Blame::Host,
        }
    }

    /// The plugin at fault, if a plugin is.
    pub fn plugin(&self) -> Option<String> {
        match self.blame() {
            Blame::Plugin(plugin) => Some(plugin),
            _ => None,
        }
    }

    /// A request the caller got wrong.
    pub(crate) fn refused(message: impl Into<String>) -> Error {
        Error::Refused { blame: Blame::Caller, message: message.into() }
    }

    /// A file that cannot be used, with the message naming it.
    pub(crate) fn bad_input(file: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::BadInput { file: file.into(), message: message.into() }
    }

    /// The host failing on its own account.
    pub(crate) fn host(message: impl Into<String>) -> Error {
        Error::Host(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigError;
    use crate::delivery::CallError;
    use crate::experience::ReloadError;
    use crate::feature::FeatureError;

    #[test]
    fn a_trap_blames_its_plugin_and_keeps_the_plugins_own_words() {
        let error = Error::from_call("hud", CallError::Trapped("wasm `unreachable` executed".into()));
        assert_eq!(error.blame(), Blame::Plugin("hud".into()));
        assert!(matches!(&error, Error::Trapped { plugin, .. } if plugin == "hud"));
        assert_eq!(error.to_string(), "wasm `unreachable` executed");
    }

    #[test]
    fn a_reload_of_a_plugin_not_in_the_world_is_not_found_and_keeps_its_text() {
        let reload = ReloadError::NotInWorld("hud".into());
        let error = Error::from(reload.clone());
        assert!(matches!(&error, Error::NotFound { name, .. } if name == "hud"));
        assert_eq!(error.blame(), Blame::Caller);
        assert_eq!(error.to_string(), reload.to_string());
    }

    #[test]
    fn a_refused_new_version_is_the_plugins_fault() {
        let error = Error::from(ReloadError::Refused { plugin: "hud".into(), cause: "does not compile".into() });
        assert_eq!(error.plugin().as_deref(), Some("hud"));
    }

    #[test]
    fn a_bad_file_is_named() {
        let file = PathBuf::from("/games/x/host.toml");
        let error = Error::from(ConfigError { path: file.clone(), problem: "malformed TOML".into() });
        assert_eq!(error, Error::BadInput { file, message: "/games/x/host.toml: malformed TOML".into() });
        assert_eq!(error.blame(), Blame::Caller);
    }

    #[test]
    fn a_dependency_on_a_missing_plugin_names_the_manifest_listing_it() {
        let manifest = PathBuf::from("plugins/hud/plugin.toml");
        let error = Error::from(FeatureError::UnknownDependency {
            plugin: "hud".into(),
            dependency: "base".into(),
            manifest: manifest.clone(),
        });
        assert!(matches!(error, Error::BadInput { file, .. } if file == manifest));
    }
}
