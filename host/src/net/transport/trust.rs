//! Who a client trusts to be its server, and what the server shows to be trusted.
//!
//! A client hands its server a secret (a join token) and runs whatever experience it is told to play: it must
//! know it talks to the right server before it says anything. It trusts a server in one of three ways:
//! - **pinned**: the SHA-256 of the server's certificate, which a server prints at start (`certificate
//!   sha256: …`): any certificate, self-signed included, is trusted if and only if it is that one;
//! - **roots**: certificate authorities (PEM), against which the server's chain and name are verified, as a web
//!   browser does;
//! - **insecure, loopback only**: any certificate, for a development server on this machine. It cannot be used
//!   for any other address: a man in the middle needs a network to stand on.
//!
//! A server shows either a certificate and key of its own (PEM files, e.g. from a CA) or a self-signed one made
//! at start.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

/// The SHA-256 of a certificate (its DER bytes), as a client pins it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The fingerprint of a certificate, given as its DER bytes.
    pub fn of(certificate: &[u8]) -> Self {
        Fingerprint(Sha256::digest(certificate).into())
    }

    /// Reads a fingerprint written as 64 hex digits, with or without `:` between bytes (as `openssl x509
    /// -fingerprint -sha256` prints it).
    pub fn parse(text: &str) -> Result<Self, crate::Error> {
        let digits: String = text.trim().chars().filter(|c| *c != ':').collect();
        let refuse = || {
            let shown = crate::text::shown(text, 100);
            crate::Error::refused(format!("a certificate fingerprint is 64 hex digits (SHA-256), not {shown:?}"))
        };
        if digits.len() != 64 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(refuse());
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| refuse())?;
        }
        Ok(Fingerprint(bytes))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// How a client decides that the server it reached is the one it meant.
#[derive(Debug, Clone)]
pub enum ServerTrust {
    /// The server's certificate is exactly this one.
    Pinned(Fingerprint),
    /// The server's chain leads to one of these authorities, and its certificate is for this name.
    Roots {
        /// The certificate authorities trusted, as DER.
        roots: Vec<CertificateDer<'static>>,
        /// The name the server's certificate must be issued for, such as `game.example.org`.
        name: String,
    },
    /// Any certificate: a development server on this machine only (see [`ServerTrust::check_address`]).
    InsecureLoopback,
}

/// The certificates of a PEM file, at least one; an error names the file.
fn certificates_in(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!("{}: no certificate in it", path.display()));
    }
    Ok(certificates)
}

impl ServerTrust {
    /// Certificate authorities from a PEM file, for a server certified for `name`.
    pub fn roots_from_file(path: &Path, name: &str) -> Result<Self, crate::Error> {
        let roots = certificates_in(path).map_err(|message| crate::Error::bad_input(path, message))?;
        Ok(ServerTrust::Roots { roots, name: name.to_string() })
    }

    /// The name the client asks the server's certificate to be for.
    pub fn server_name(&self) -> &str {
        match self {
            ServerTrust::Roots { name, .. } => name,
            // A pinned or loopback server is known by its certificate, not its name.
            _ => "localhost",
        }
    }

    /// Refuses the insecure mode for an address that is not this machine's.
    pub fn check_address(&self, addr: SocketAddr) -> Result<(), crate::Error> {
        match self {
            ServerTrust::InsecureLoopback if !addr.ip().is_loopback() => Err(crate::Error::refused(format!(
                "{addr} is not a loopback address: the insecure mode trusts any certificate, so it is for a \
                 development server on this machine only; pin the server's certificate (its sha256, printed at \
                 its start) or give the authorities that signed it"
            ))),
            _ => Ok(()),
        }
    }

    /// The verifier rustls uses for it.
    pub(crate) fn verifier(&self, provider: Arc<CryptoProvider>) -> Result<Arc<dyn ServerCertVerifier>, String> {
        Ok(match self {
            ServerTrust::Pinned(pin) => Arc::new(ByFingerprint { pin: Some(*pin), provider }),
            ServerTrust::InsecureLoopback => Arc::new(ByFingerprint { pin: None, provider }),
            ServerTrust::Roots { roots, .. } => {
                let mut store = rustls::RootCertStore::empty();
                for root in roots {
                    store.add(root.clone()).map_err(|e| format!("a root certificate: {e}"))?;
                }
                rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider)
                    .build()
                    .map_err(|e| e.to_string())?
            }
        })
    }
}

/// A server's certificate chain and key.
pub struct ServerIdentity {
    /// The server's certificate first, then any intermediates that lead to an authority, as DER.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key of the server's certificate.
    pub key: PrivateKeyDer<'static>,
}

impl ServerIdentity {
    /// A self-signed certificate for `localhost`, made now: clients pin it.
    pub fn self_signed() -> Result<Self, crate::Error> {
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
            .map_err(|e| crate::Error::host(format!("cannot make a self-signed certificate: {e}")))?;
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der());
        Ok(ServerIdentity { chain: vec![certified.cert.der().clone()], key: key.into() })
    }

    /// A certificate chain and its key from PEM files (e.g. issued by a CA).
    pub fn from_files(chain: &Path, key: &Path) -> Result<Self, crate::Error> {
        let chain_certs = certificates_in(chain).map_err(|message| crate::Error::bad_input(chain, message))?;
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| crate::Error::bad_input(key, format!("{}: {e}", key.display())))?;
        Ok(ServerIdentity { chain: chain_certs, key })
    }

    /// What a client pins: the fingerprint of the server's own certificate.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(self.chain.first().map_or(&[][..], |c| c.as_ref()))
    }
}

/// Trusts exactly the pinned certificate, whoever signed it — or, without a pin (the insecure loopback mode),
/// any certificate. Either way the handshake must be signed by the certificate's key.
#[derive(Debug)]
struct ByFingerprint {
    pin: Option<Fingerprint>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for ByFingerprint {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        use subtle::ConstantTimeEq;
        let Some(pin) = self.pin else { return Ok(ServerCertVerified::assertion()) };
        let presented = Fingerprint::of(end_entity.as_ref());
        if bool::from(presented.0.ct_eq(&pin.0)) {
            return Ok(ServerCertVerified::assertion());
        }
        Err(rustls::Error::General(format!(
            "the server's certificate (sha256 {presented}) is not the one pinned (sha256 {pin})"
        )))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// Whether a secret a peer presented is the expected one, in time that does not depend on where they differ.
pub fn same_secret(expected: &str, presented: &str) -> bool {
    use subtle::ConstantTimeEq;
    // Digests first: equal lengths, so not even the secret's length shows in the time taken.
    let (expected, presented) = (Sha256::digest(expected.as_bytes()), Sha256::digest(presented.as_bytes()));
    bool::from(expected.ct_eq(&presented))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_reads_back_as_written_and_in_openssl_form() {
        let fingerprint = Fingerprint::of(b"a certificate");
        let written = fingerprint.to_string();
        assert_eq!(written.len(), 64);
        assert_eq!(Fingerprint::parse(&written), Ok(fingerprint));
        let colons: Vec<String> = fingerprint.0.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(Fingerprint::parse(&colons.join(":")), Ok(fingerprint));
        assert!(Fingerprint::parse("abc").unwrap_err().to_string().contains("64 hex digits"));
        assert!(Fingerprint::parse(&"g".repeat(64)).is_err());
    }

    #[test]
    fn the_insecure_mode_is_for_loopback_only() {
        let trust = ServerTrust::InsecureLoopback;
        assert!(trust.check_address("127.0.0.1:7777".parse().unwrap()).is_ok());
        assert!(trust.check_address("[::1]:7777".parse().unwrap()).is_ok());
        let refused = trust.check_address("203.0.113.5:7777".parse().unwrap()).unwrap_err().to_string();
        assert!(refused.contains("not a loopback address"), "{refused}");
        assert!(ServerTrust::Pinned(Fingerprint([0; 32])).check_address("203.0.113.5:7777".parse().unwrap()).is_ok());
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("sesame", "sesame"));
        assert!(!same_secret("sesame", "sesamE"));
        assert!(!same_secret("sesame", ""));
    }
}
