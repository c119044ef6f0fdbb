//! What the console's operator may do, and who may: reload, activate, deactivate, install, kick, end the match.
//!
//! An action is taken only with the console's token (`Authorization: Bearer`), from the console's own origin,
//! as JSON (which a cross-site form cannot send without the browser asking first, and the console never says
//! yes), within a rate: a page on another site can neither read the console nor act through it, and a guessed
//! token is tried a few times a second at most. Without a token the console is read-only, and so is a console
//! reachable from other machines without TLS, whatever its token: the token would cross the network in clear.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Something the operator asks of the world, carried out between frames.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// Hot-reloads a plugin from its files as they are now (compiled off the frame).
    Reload { plugin: String },
    /// Activates an installed plugin in this world.
    Activate { plugin: String },
    /// Deactivates a plugin in this world, leaving nothing of it behind.
    Deactivate { plugin: String },
    /// Installs the plugin folder or package at this path on the server's machine (through the host's checks:
    /// its trust policy, its grants).
    Install { path: String },
    /// Closes a client's connection (a server's).
    Kick { client: u32, reason: Option<String> },
    /// Ends play: clients told, plugins deactivated; an orchestrator then replaces the server.
    EndMatch { reason: Option<String> },
}

/// The longest path or reason an action takes.
pub const MAX_ACTION_TEXT: usize = 512;

impl Action {
    /// Whether the action's words can be carried out and logged as they are: plugin names as manifests name
    /// plugins, paths and reasons printable and short. What the log then says of it is one line, whoever sent it.
    pub fn check(&self) -> Result<(), String> {
        let plugin = |name: &str| match gamefeature_host::feature::is_valid_plugin_name(name) {
            true => Ok(()),
            false => Err("not a plugin name (lowercase letters, digits and '-')".to_string()),
        };
        let text = |what: &str, text: &str| match text.len() <= MAX_ACTION_TEXT
            && gamefeature_host::text::is_printable(text)
        {
            true => Ok(()),
            false => Err(format!("the {what} must be printable and at most {MAX_ACTION_TEXT} bytes")),
        };
        match self {
            Action::Reload { plugin: name }
            | Action::Activate { plugin: name }
            | Action::Deactivate { plugin: name } => plugin(name),
            Action::Install { path } => text("path", path),
            Action::Kick { reason, .. } | Action::EndMatch { reason } => {
                text("reason", reason.as_deref().unwrap_or(""))
            }
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |text: &str| gamefeature_host::text::shown(text, 120);
        match self {
            Action::Reload { plugin } => write!(f, "reload {}", shown(plugin)),
            Action::Activate { plugin } => write!(f, "activate {}", shown(plugin)),
            Action::Deactivate { plugin } => write!(f, "deactivate {}", shown(plugin)),
            Action::Install { path } => write!(f, "install {}", shown(path)),
            Action::Kick { client, reason } => {
                write!(f, "kick client {client} ({})", shown(reason.as_deref().unwrap_or("")))
            }
            Action::EndMatch { reason } => write!(f, "end the match ({})", shown(reason.as_deref().unwrap_or(""))),
        }
    }
}

/// Why an action was not taken, as the HTTP answer says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The console takes no action here; why.
    ReadOnly(String),
    /// No token, or the wrong one.
    Unauthorized,
    /// From another origin, or not JSON.
    Forbidden(String),
    /// Too many actions (or tries) lately.
    TooMany,
    /// The request does not say an action.
    BadRequest(String),
}

/// The console's token, kept as its SHA-256: compared in constant time (digests of equal length, so not even
/// its length shows), never shown.
pub struct Token([u8; 32]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The shortest token taken: one a person could guess is no protection.
    pub const MIN_LEN: usize = 16;

    /// A token from the text of a file or variable (surrounding whitespace ignored); refused when shorter
    /// than [`MIN_LEN`](Self::MIN_LEN).
    pub fn new(text: &str) -> Result<Token, String> {
        let token = text.trim();
        if token.len() < Self::MIN_LEN {
            return Err(format!(
                "the console's token is {} characters; at least {} are needed",
                token.len(),
                Self::MIN_LEN
            ));
        }
        Ok(Token(Sha256::digest(token.as_bytes()).into()))
    }

    fn matches(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.0.ct_eq(&presented).into()
    }
}

/// Whether the console takes actions: with a token, on loopback (the console does not speak TLS itself; a TLS
/// proxy or an SSH tunnel in front of a loopback console carries it across machines).
pub fn policy(token: Option<Token>, bound: SocketAddr) -> Result<Token, String> {
    let token = token.ok_or("read-only: no token is set (--admin-token-file, or GFHOST_ADMIN_TOKEN)")?;
    if !bound.ip().is_loopback() {
        return Err(format!(
            "read-only: the console on {bound} is reachable from other machines without TLS, and the token would \
             cross the network in clear; serve it on loopback and reach it through an SSH tunnel or a TLS proxy"
        ));
    }
    Ok(token)
}

/// A token bucket: `burst` actions at once, then one every `every`. Failed tries spend it too.
pub struct Rate {
    burst: f64,
    tokens: f64,
    every: Duration,
    last: Instant,
}

impl Rate {
    pub fn new(burst: u32, every: Duration) -> Rate {
        Rate { burst: f64::from(burst), tokens: f64::from(burst), every, last: Instant::now() }
    }

    /// Takes one, at `now`, if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        let refill = now.saturating_duration_since(self.last).as_secs_f64() / self.every.as_secs_f64();
        self.tokens = (self.tokens + refill).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What the request brings: its headers as far as the checks go, and its body.
pub struct Asked<'a> {
    /// `Host`.
    pub host: Option<&'a str>,
    /// `Origin`, which browsers send with every POST.
    pub origin: Option<&'a str>,
    pub content_type: Option<&'a str>,
    pub authorization: Option<&'a str>,
    pub body: &'a [u8],
}

/// What actions and failed tries may cost: apart, so that someone guessing at the token cannot use up the
/// operator's actions (and a guess gets nowhere: the token has at least 16 characters).
pub struct Rates {
    pub actions: Rate,
    pub failures: Rate,
}

impl Default for Rates {
    /// Ten actions at once, then one every half second; the same for wrong tokens.
    fn default() -> Rates {
        Rates {
            actions: Rate::new(10, Duration::from_millis(500)),
            failures: Rate::new(10, Duration::from_millis(500)),
        }
    }
}

/// Checks a request for an action against `token` (the console's, or why it has none) and `rates`; the action
/// when it passes.
pub fn check(
    asked: &Asked<'_>,
    token: &Result<Token, String>,
    rates: &mut Rates,
    now: Instant,
) -> Result<Action, Refusal> {
    let token = token.as_ref().map_err(|why| Refusal::ReadOnly(why.clone()))?;
    if let Some(origin) = asked.origin {
        let own =
            asked.host.is_some_and(|host| origin == format!("http://{host}") || origin == format!("https://{host}"));
        if !own {
            return Err(Refusal::Forbidden(format!(
                "actions are taken from the console's own page only, not from {}",
                gamefeature_host::text::shown(origin, 100)
            )));
        }
    }
    let json = asked.content_type.is_some_and(|t| t.split(';').next().is_some_and(|t| t.trim() == "application/json"));
    if !json {
        return Err(Refusal::Forbidden("an action is sent as application/json".to_string()));
    }
    let presented = asked.authorization.and_then(|a| a.strip_prefix("Bearer ")).unwrap_or("");
    if !token.matches(presented) {
        return Err(if rates.failures.take(now) { Refusal::Unauthorized } else { Refusal::TooMany });
    }
    if !rates.actions.take(now) {
        return Err(Refusal::TooMany);
    }
    let action: Action =
        serde_json::from_slice(asked.body).map_err(|e| Refusal::BadRequest(format!("not an action: {e}")))?;
    action.check().map_err(Refusal::BadRequest)?;
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef-secret";

    fn asked<'a>(authorization: Option<&'a str>, origin: Option<&'a str>, body: &'a [u8]) -> Asked<'a> {
        Asked { host: Some("127.0.0.1:9100"), origin, content_type: Some("application/json"), authorization, body }
    }

    fn loopback() -> SocketAddr {
        "127.0.0.1:9100".parse().unwrap()
    }

    #[test]
    fn an_action_needs_the_token_and_the_console_s_own_origin() {
        let token = policy(Some(Token::new(TOKEN).unwrap()), loopback());
        let mut rate = Rates::default();
        let now = Instant::now();
        let body = br#"{"action":"reload","plugin":"hud"}"#;
        let bearer = format!("Bearer {TOKEN}");
        let ok = check(&asked(Some(&bearer), Some("http://127.0.0.1:9100"), body), &token, &mut rate, now);
        assert_eq!(ok, Ok(Action::Reload { plugin: "hud".into() }));
        assert_eq!(check(&asked(None, None, body), &token, &mut rate, now), Err(Refusal::Unauthorized));
        assert_eq!(check(&asked(Some("Bearer nope"), None, body), &token, &mut rate, now), Err(Refusal::Unauthorized));
        let elsewhere = check(&asked(Some(&bearer), Some("http://evil.example"), body), &token, &mut rate, now);
        assert!(matches!(elsewhere, Err(Refusal::Forbidden(_))), "{elsewhere:?}");
        let mut form = asked(Some(&bearer), None, body);
        form.content_type = Some("application/x-www-form-urlencoded");
        assert!(matches!(check(&form, &token, &mut rate, now), Err(Refusal::Forbidden(_))));
        let unknown = check(&asked(Some(&bearer), None, br#"{"action":"format-disk"}"#), &token, &mut rate, now);
        assert!(matches!(unknown, Err(Refusal::BadRequest(_))), "{unknown:?}");
    }

    #[test]
    fn without_a_token_or_off_loopback_the_console_is_read_only() {
        assert!(policy(None, loopback()).unwrap_err().contains("no token"));
        let exposed = policy(Some(Token::new(TOKEN).unwrap()), "0.0.0.0:9100".parse().unwrap());
        assert!(exposed.unwrap_err().contains("without TLS"));
        assert!(Token::new("short").is_err(), "a guessable token is refused");
        let mut rate = Rates::default();
        let refused = check(&asked(None, None, b"{}"), &policy(None, loopback()), &mut rate, Instant::now());
        assert!(matches!(refused, Err(Refusal::ReadOnly(_))));
    }

    #[test]
    fn tries_past_the_rate_are_refused_until_it_refills_and_guesses_leave_the_operator_s_actions_alone() {
        let token = policy(Some(Token::new(TOKEN).unwrap()), loopback());
        let mut rates =
            Rates { actions: Rate::new(2, Duration::from_secs(1)), failures: Rate::new(3, Duration::from_secs(1)) };
        let start = Instant::now();
        let guess = || asked(Some("Bearer guess"), None, b"{}");
        for _ in 0..3 {
            assert_eq!(check(&guess(), &token, &mut rates, start), Err(Refusal::Unauthorized));
        }
        assert_eq!(check(&guess(), &token, &mut rates, start), Err(Refusal::TooMany));
        let bearer = format!("Bearer {TOKEN}");
        let body = br#"{"action":"end-match"}"#;
        let operator = asked(Some(&bearer), None, body);
        assert!(check(&operator, &token, &mut rates, start).is_ok(), "the guesses spent their own allowance");
        assert!(check(&operator, &token, &mut rates, start).is_ok());
        assert_eq!(check(&operator, &token, &mut rates, start), Err(Refusal::TooMany));
        let later = start + Duration::from_secs(1);
        assert_eq!(check(&guess(), &token, &mut rates, later), Err(Refusal::Unauthorized));
    }

    #[test]
    fn an_action_s_words_are_names_and_printable_text() {
        let token = policy(Some(Token::new(TOKEN).unwrap()), loopback());
        let bearer = format!("Bearer {TOKEN}");
        let mut rates = Rates::default();
        for body in [
            r#"{"action":"reload","plugin":"hud\nconsole: forged"}"#,
            r#"{"action":"install","path":"/tmp/x\u001b[2J"}"#,
            r#"{"action":"kick","client":1,"reason":"bye\r\nforged"}"#,
        ] {
            let refused = check(&asked(Some(&bearer), None, body.as_bytes()), &token, &mut rates, Instant::now());
            assert!(matches!(refused, Err(Refusal::BadRequest(_))), "{body}: {refused:?}");
        }
    }
}
