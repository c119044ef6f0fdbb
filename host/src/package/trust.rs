//! Which packages a host accepts: those signed by a publisher it trusts, each publisher's plugins granted at
//! most what the host lets that publisher's plugins have.
//!
//! ```toml
//! [publishers.lyra-team]                 # in gfhost.toml
//! key = "ed25519:3q2+7w…"
//! permissions = { send-events = true }   # optional: the most its plugins may be granted
//!
//! [packages]
//! allow-untrusted = true                 # development only: accept unsigned and unknown publishers' packages
//! ```
//!
//! A signature that does not match its package is refused whatever the policy: that is a package tampered with.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{PackageSummary, PublisherKey, Signature, SignatureError};
use crate::feature::Permissions;

/// The publishers a host trusts, and whether it accepts packages from anyone else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustPolicy {
    /// Trusted publishers by the name the host knows them by.
    pub publishers: BTreeMap<String, TrustedPublisher>,
    /// Accept unsigned packages and packages of publishers not listed (development only).
    pub allow_untrusted: bool,
}

/// A publisher the host trusts (`[publishers.<name>]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TrustedPublisher {
    /// Its public key, `ed25519:<base64>`.
    pub key: PublisherKey,
    /// The most this publisher's plugins may be granted; without it, what the host's grants say.
    #[serde(default)]
    pub permissions: Option<Permissions>,
}

/// Which packages a client fetches from the servers it joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FetchPolicy {
    /// Nothing: every plugin must be installed already, in the version the server plays.
    Never,
    /// Packages signed by a publisher the client trusts.
    Trusted,
    /// Any package, signed or not (they still run in the sandbox, with the permissions the client gives).
    Any,
}

/// Why a package was accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Signed by this trusted publisher, whose plugins get at most `ceiling`.
    Trusted {
        /// The publisher's name in the trust list.
        publisher: String,
        /// The most its plugins may be granted.
        ceiling: Option<Permissions>,
    },
    /// Unsigned, or signed by a publisher not trusted, and accepted only because the policy allows that.
    AllowedUntrusted,
}

/// Why a package was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields: each variant's message says what they are
pub enum TrustError {
    /// Unsigned, and the host accepts only trusted publishers.
    #[error(
        "package {name} {version} is unsigned, and this host accepts only trusted publishers' packages \
             (sign it with `gfhost pack --key`, or set [packages] allow-untrusted = true to develop)"
    )]
    Unsigned { name: String, version: String },
    /// Signed by a key the host does not trust.
    #[error(
        "package {name} {version} is signed by {claimed:?} with key {key}, which this host does not trust \
             (add it under [publishers] in gfhost.toml to trust it)"
    )]
    Untrusted { name: String, version: String, claimed: String, key: String },
    /// The signature does not match the package.
    #[error("package {name} {version}: {cause}")]
    BadSignature { name: String, version: String, cause: SignatureError },
}

impl TrustPolicy {
    /// Whether to accept `package`, signed with `signature` (if any).
    pub fn check(&self, package: &PackageSummary, signature: Option<&Signature>) -> Result<Verdict, TrustError> {
        let Some(signature) = signature else {
            if self.allow_untrusted {
                return Ok(Verdict::AllowedUntrusted);
            }
            return Err(TrustError::Unsigned { name: package.name.clone(), version: package.version.clone() });
        };
        let key = signature.verify(package).map_err(|cause| TrustError::BadSignature {
            name: package.name.clone(),
            version: package.version.clone(),
            cause,
        })?;
        if let Some((name, publisher)) = self.publishers.iter().find(|(_, p)| p.key == key) {
            return Ok(Verdict::Trusted { publisher: name.clone(), ceiling: publisher.permissions.clone() });
        }
        if self.allow_untrusted {
            return Ok(Verdict::AllowedUntrusted);
        }
        Err(TrustError::Untrusted {
            name: package.name.clone(),
            version: package.version.clone(),
            claimed: signature.publisher.clone(),
            key: key.to_string(),
        })
    }
}

impl Verdict {
    /// The most the package's plugin may be granted (`None`: whatever the host grants).
    pub fn ceiling(&self) -> Option<&Permissions> {
        match self {
            Verdict::Trusted { ceiling, .. } => ceiling.as_ref(),
            Verdict::AllowedUntrusted => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::SecretKey;

    fn package() -> PackageSummary {
        PackageSummary { name: "lyra".into(), version: "1.0.0".into(), digest: "sha256:ab".into(), size: 3 }
    }

    #[test]
    fn only_trusted_publishers_pass_unless_development_allows_more_and_tampering_never_passes() {
        let team = SecretKey::generate();
        let stranger = SecretKey::generate();
        let ceiling = Permissions { send_events: true, ..Permissions::default() };
        let policy = TrustPolicy {
            publishers: BTreeMap::from([(
                "lyra-team".to_string(),
                TrustedPublisher { key: team.public_key(), permissions: Some(ceiling.clone()) },
            )]),
            allow_untrusted: false,
        };
        let signed = team.sign("lyra", &package());
        assert_eq!(
            policy.check(&package(), Some(&signed)),
            Ok(Verdict::Trusted { publisher: "lyra-team".into(), ceiling: Some(ceiling) })
        );
        assert!(matches!(policy.check(&package(), None), Err(TrustError::Unsigned { .. })));
        let by_stranger = stranger.sign("lyra-team", &package());
        let refused = policy.check(&package(), Some(&by_stranger)).unwrap_err();
        assert!(refused.to_string().contains("does not trust"), "{refused}");

        let tampered = PackageSummary { digest: "sha256:cd".into(), ..package() };
        let development = TrustPolicy { allow_untrusted: true, ..policy };
        assert_eq!(development.check(&package(), None), Ok(Verdict::AllowedUntrusted));
        assert_eq!(development.check(&package(), Some(&by_stranger)), Ok(Verdict::AllowedUntrusted));
        assert!(matches!(development.check(&tampered, Some(&signed)), Err(TrustError::BadSignature { .. })));
    }
}
