//! Publisher keys and package signatures (ed25519).
//!
//! A publisher signs what a package is — its name, version and digest, and the publisher name it claims —
//! with its secret key. Anyone with the public key checks it; which public keys a host believes is its
//! [`TrustPolicy`](super::TrustPolicy). Keys are written as OCI and SSH users expect: the secret key as a
//! PKCS#8 PEM file, the public key as one line of text, `ed25519:<base64>`, to paste into a configuration.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::PackageSummary;

/// What every signature signs before the package's own fields, so that a signature made for anything else
/// is never a package signature.
const CONTEXT: &[u8] = b"gamefeature package signature v1\0";

/// The text before a public key.
const KEY_PREFIX: &str = "ed25519:";

/// A publisher's public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublisherKey(VerifyingKey);

/// A publisher's secret key.
pub struct SecretKey(SigningKey);

/// A publisher's signature of one package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The name the publisher signs as (it is signed too; a host names publishers by its own trust list).
    pub publisher: String,
    /// The public key that checks it, as `ed25519:<base64>`.
    pub key: String,
    /// The ed25519 signature, base64.
    pub signature: String,
}

/// A signature that does not check out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields: each variant's message says what they are
pub enum SignatureError {
    /// A public key that is not one.
    #[error("public key {0:?} is not `ed25519:` and 32 bytes of base64")]
    BadKey(String),
    /// A signature that is not one.
    #[error("the signature is not 64 bytes of base64")]
    Malformed,
    /// The key did not sign this package (tampered with, or signed for another).
    #[error("the signature by {publisher:?} does not match the package (tampered with, or signed for another)")]
    Mismatch { publisher: String },
    /// A secret key file that is not one.
    #[error("secret key file: {0}")]
    BadSecretKey(String),
}

impl SecretKey {
    /// A new random key.
    pub fn generate() -> SecretKey {
        let mut seed = [0u8; ed25519_dalek::SECRET_KEY_LENGTH];
        rand::Rng::fill(&mut rand::rng(), &mut seed);
        SecretKey(SigningKey::from_bytes(&seed))
    }

    /// The key as a PKCS#8 PEM file's text: version 1 (RFC 8410's plain private key, without the public key
    /// beside it), the form OpenSSL, Python's `cryptography` and every other tool read.
    pub fn to_pem(&self) -> String {
        let plain = ed25519_dalek::pkcs8::KeypairBytes { secret_key: self.0.to_bytes(), public_key: None };
        let pem = plain.to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF);
        pem.expect("an ed25519 key always encodes").to_string()
    }

    /// A key from a PKCS#8 PEM file's text.
    pub fn from_pem(text: &str) -> Result<SecretKey, SignatureError> {
        SigningKey::from_pkcs8_pem(text)
            .map(SecretKey)
            .map_err(|e| SignatureError::BadSecretKey(format!("not an ed25519 PKCS#8 PEM key ({e})")))
    }

    /// The public key that checks this key's signatures.
    pub fn public_key(&self) -> PublisherKey {
        PublisherKey(self.0.verifying_key())
    }

    /// Signs `package` as `publisher`.
    pub fn sign(&self, publisher: &str, package: &PackageSummary) -> Signature {
        let signature = self.0.sign(&statement(publisher, package));
        Signature {
            publisher: publisher.to_string(),
            key: self.public_key().to_string(),
            signature: base64::engine::general_purpose::STANDARD.encode(signature.to_bytes()),
        }
    }
}

impl Signature {
    /// Checks the signature against `package`: the key it names signed exactly this name, version and digest.
    /// Returns that key (whether the host trusts it is the trust policy's question).
    pub fn verify(&self, package: &PackageSummary) -> Result<PublisherKey, SignatureError> {
        let key: PublisherKey = self.key.parse()?;
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(&self.signature).map_err(|_| SignatureError::Malformed)?;
        let bytes: [u8; ed25519_dalek::SIGNATURE_LENGTH] = bytes.try_into().map_err(|_| SignatureError::Malformed)?;
        let signature = ed25519_dalek::Signature::from_bytes(&bytes);
        key.0
            .verify_strict(&statement(&self.publisher, package), &signature)
            .map_err(|_| SignatureError::Mismatch { publisher: self.publisher.clone() })?;
        Ok(key)
    }
}

/// The bytes a signature signs: each field NUL-terminated after the context.
fn statement(publisher: &str, package: &PackageSummary) -> Vec<u8> {
    let mut bytes = CONTEXT.to_vec();
    for field in [publisher, &package.name, &package.version, &package.digest] {
        bytes.extend_from_slice(field.as_bytes());
        bytes.push(0);
    }
    bytes
}

impl fmt::Display for PublisherKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{KEY_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(self.0.as_bytes()))
    }
}

impl fmt::Debug for PublisherKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for PublisherKey {
    type Err = SignatureError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || SignatureError::BadKey(crate::text::shown(text, 80));
        let encoded = text.trim().strip_prefix(KEY_PREFIX).ok_or_else(bad)?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| bad())?;
        let bytes: [u8; ed25519_dalek::PUBLIC_KEY_LENGTH] = bytes.try_into().map_err(|_| bad())?;
        VerifyingKey::from_bytes(&bytes).map(PublisherKey).map_err(|_| bad())
    }
}

impl<'de> Deserialize<'de> for PublisherKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(version: &str) -> PackageSummary {
        PackageSummary { name: "lyra".into(), version: version.into(), digest: "sha256:00".into(), size: 1 }
    }

    #[test]
    fn a_signature_checks_only_what_was_signed_and_keys_survive_their_text_forms() {
        let key = SecretKey::generate();
        let signature = key.sign("lyra-team", &summary("1.0.0"));
        assert_eq!(signature.verify(&summary("1.0.0")), Ok(key.public_key()));
        assert!(matches!(signature.verify(&summary("1.0.1")), Err(SignatureError::Mismatch { .. })));
        let renamed = Signature { publisher: "someone-else".into(), ..signature.clone() };
        assert!(matches!(renamed.verify(&summary("1.0.0")), Err(SignatureError::Mismatch { .. })));
        let other = SecretKey::generate();
        let swapped = Signature { key: other.public_key().to_string(), ..signature };
        assert!(matches!(swapped.verify(&summary("1.0.0")), Err(SignatureError::Mismatch { .. })));

        let again = SecretKey::from_pem(&key.to_pem()).unwrap();
        assert_eq!(again.public_key(), key.public_key());
        assert_eq!(key.public_key().to_string().parse::<PublisherKey>().unwrap(), key.public_key());
        assert!(matches!("ed25519:AAAA".parse::<PublisherKey>(), Err(SignatureError::BadKey(_))));
        assert!(SecretKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").is_err());
    }

    /// The key file is one other tools read: OpenSSL derives the same public key from it.
    #[test]
    fn openssl_reads_the_key_file() {
        let key = SecretKey::generate();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("studio.pem");
        std::fs::write(&path, key.to_pem()).unwrap();
        let output = match std::process::Command::new("openssl")
            .args(["pkey", "-pubout", "-outform", "DER", "-in"])
            .arg(&path)
            .output()
        {
            Ok(output) => output,
            Err(_) => return eprintln!("openssl is not installed: not checked"),
        };
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let der = output.stdout;
        let raw = key.public_key().0.to_bytes();
        assert_eq!(&der[der.len() - 32..], raw.as_slice(), "the public key OpenSSL derives is the key's own");
    }
}
