//! Join tickets: a player's identity, signed by whoever decides who may play (a matchmaker, a lobby), for one
//! match and for a while — instead of one token every player shares.
//!
//! A ticket is `gf1.<payload>.<mac>`: the payload (player id, display name, match id, expiry in Unix seconds)
//! as JSON, and its HMAC-SHA256 under a key the matchmaker and the server share, each in URL-safe base64
//! without padding, so a ticket travels in a URL, an environment variable or a file. The server checks the
//! MAC (in constant time), the expiry and the match before it lets the player in; it never needs to call the
//! matchmaker.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The shortest key accepted: HMAC-SHA256's own block of security.
pub const MIN_KEY_BYTES: usize = 32;

/// The longest ticket read: a ticket is a few hundred bytes.
const MAX_TICKET_BYTES: usize = 4096;

const PREFIX: &str = "gf1.";

/// Who a ticket lets in, where and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    /// The player's stable id (the matchmaker's).
    pub player: String,
    /// What the game shows of the player.
    pub name: String,
    /// The match (or server) it is for; `None`: any server sharing the key.
    #[serde(rename = "match")]
    pub match_id: Option<String>,
    /// Unix time (seconds) from which it is no longer accepted.
    pub expires: u64,
}

/// The secret a matchmaker signs tickets with and a server checks them with.
#[derive(Clone)]
pub struct TicketKey(Vec<u8>);

impl std::fmt::Debug for TicketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TicketKey(..)")
    }
}

/// Why a ticket was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TicketError {
    /// The text is not a ticket: the wrong prefix or encoding, longer than a ticket can be, or a payload that is not
    /// a ticket's.
    #[error("it is not a join ticket (gf1.<payload>.<signature>)")]
    Malformed,
    /// The ticket was not signed with this server's key, or was changed after it was signed.
    #[error("its signature does not verify: it was not signed with this server's key, or was changed")]
    BadSignature,
    /// The ticket's expiry has passed; how many seconds ago.
    #[error("it expired {0} s ago")]
    Expired(u64),
    /// The ticket names a match other than the one this server plays.
    #[error("it is for another match")]
    OtherMatch,
}

impl TicketKey {
    /// A key from its secret bytes; refused when shorter than [`MIN_KEY_BYTES`].
    pub fn new(secret: Vec<u8>) -> Result<Self, crate::Error> {
        if secret.len() < MIN_KEY_BYTES {
            let message = format!("a ticket key must be at least {MIN_KEY_BYTES} bytes, not {}", secret.len());
            return Err(crate::Error::refused(message));
        }
        Ok(TicketKey(secret))
    }

    /// A key from a file: its bytes, as they are (e.g. `head -c 32 /dev/urandom > ticket.key`).
    pub fn from_file(path: &std::path::Path) -> Result<Self, crate::Error> {
        let bad = |e: &dyn std::fmt::Display| crate::Error::bad_input(path, format!("{}: {e}", path.display()));
        let secret = crate::files::open(path)
            .and_then(|file| crate::files::read_regular(file, 64 << 10))
            .map_err(|e| bad(&e))?;
        Self::new(secret).map_err(|e| bad(&e))
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// Signs a ticket.
    pub fn mint(&self, ticket: &Ticket) -> String {
        let payload = serde_json::to_vec(ticket).expect("a ticket always serializes");
        let mut mac = self.mac();
        mac.update(&payload);
        let signature = mac.finalize().into_bytes();
        format!("{PREFIX}{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(signature))
    }

    /// The ticket `text` stands for, if it was signed with this key, has not expired at `now` (Unix seconds)
    /// and is for `match_id` (when the server has one).
    pub fn verify(&self, text: &str, now: u64, match_id: Option<&str>) -> Result<Ticket, TicketError> {
        if text.len() > MAX_TICKET_BYTES {
            return Err(TicketError::Malformed);
        }
        let rest = text.trim().strip_prefix(PREFIX).ok_or(TicketError::Malformed)?;
        let (payload, signature) = rest.split_once('.').ok_or(TicketError::Malformed)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| TicketError::Malformed)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| TicketError::Malformed)?;
        let mut mac = self.mac();
        mac.update(&payload);
        // Checked before the payload is read: nothing a forger wrote is parsed.
        mac.verify_slice(&signature).map_err(|_| TicketError::BadSignature)?;
        let ticket: Ticket = serde_json::from_slice(&payload).map_err(|_| TicketError::Malformed)?;
        if ticket.expires <= now {
            return Err(TicketError::Expired(now - ticket.expires));
        }
        if let (Some(wanted), Some(given)) = (match_id, ticket.match_id.as_deref()) {
            if wanted != given {
                return Err(TicketError::OtherMatch);
            }
        }
        Ok(ticket)
    }
}

/// Now, in Unix seconds.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> TicketKey {
        TicketKey::new(vec![byte; 32]).unwrap()
    }

    fn ada(expires: u64) -> Ticket {
        Ticket { player: "p-1".into(), name: "Ada".into(), match_id: Some("m-7".into()), expires }
    }

    #[test]
    fn a_ticket_verifies_under_its_key_until_it_expires_and_for_its_match() {
        let text = key(1).mint(&ada(1_000));
        assert!(text.starts_with("gf1."));
        assert_eq!(key(1).verify(&text, 999, Some("m-7")), Ok(ada(1_000)));
        assert_eq!(key(1).verify(&text, 999, None), Ok(ada(1_000)));
        assert_eq!(key(1).verify(&text, 1_005, Some("m-7")), Err(TicketError::Expired(5)));
        assert_eq!(key(1).verify(&text, 999, Some("m-8")), Err(TicketError::OtherMatch));
        assert_eq!(key(2).verify(&text, 999, Some("m-7")), Err(TicketError::BadSignature));
    }

    #[test]
    fn a_changed_or_garbled_ticket_is_refused() {
        let text = key(1).mint(&ada(1_000));
        // Another player's payload under Ada's signature.
        let forged_payload =
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&Ticket { player: "p-2".into(), ..ada(1_000) }).unwrap());
        let signature = text.rsplit('.').next().unwrap();
        assert_eq!(
            key(1).verify(&format!("gf1.{forged_payload}.{signature}"), 0, None),
            Err(TicketError::BadSignature)
        );
        for garbled in ["", "sesame", "gf1.", "gf1.a.b", "gf1.!!!.???", &"x".repeat(10_000)] {
            assert!(key(1).verify(garbled, 0, None).is_err(), "{garbled:.20}");
        }
        assert!(TicketKey::new(vec![0; 31]).unwrap_err().to_string().contains("at least 32 bytes"));
    }
}
