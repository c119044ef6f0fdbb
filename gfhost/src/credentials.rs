//! Credentials for a registry, found where Docker, podman, oras and every other OCI tool find them, so a
//! publisher who logged in once (`docker login`, `oras login`) publishes with gfhost too:
//!
//! 1. `GFHOST_REGISTRY_USERNAME` and `GFHOST_REGISTRY_PASSWORD` (CI secrets), for the registry
//!    `GFHOST_REGISTRY_HOST` names (`host[:port]`) and no other: a lock or mirror naming another registry never
//!    receives them;
//! 2. the `auths` entry of the registry in `$DOCKER_CONFIG/config.json`, or `~/.docker/config.json`
//!    (`auth` as base64 `user:password`, or `username` and `password`).
//!
//! Otherwise requests go anonymously, as for a public registry. Credential helpers (`credsStore`,
//! `credHelpers`) are not run, nor identity tokens (OAuth refresh tokens) exchanged: a registry kept that way is
//! named in a warning, and spoken to anonymously.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use base64::Engine;
use oci_client::secrets::RegistryAuth;

/// The variable naming the user to log in to registries as.
pub const USERNAME_VARIABLE: &str = "GFHOST_REGISTRY_USERNAME";
/// The variable holding that user's password or token.
pub const PASSWORD_VARIABLE: &str = "GFHOST_REGISTRY_PASSWORD";
/// The variable naming the one registry (`host[:port]`) those credentials are for.
pub const HOST_VARIABLE: &str = "GFHOST_REGISTRY_HOST";

/// Docker's configuration file, as far as credentials go.
#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, DockerAuth>,
    #[serde(default)]
    cred_helpers: BTreeMap<String, String>,
}

#[derive(Default, serde::Deserialize)]
struct DockerAuth {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    identitytoken: Option<String>,
}

/// Says once per registry that its credentials are kept where gfhost does not reach, and goes on anonymously.
fn anonymous_because(path: &Path, registry: &str, why: &str) -> RegistryAuth {
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.iter().any(|w| w == registry) {
        return RegistryAuth::Anonymous;
    }
    warned.push(registry.to_string());
    eprintln!(
        "warning: {}: the credentials for {registry} are {why}, which gfhost does not use; speaking to it \
         anonymously (set {USERNAME_VARIABLE}, {PASSWORD_VARIABLE} and {HOST_VARIABLE} to log in)",
        path.display()
    );
    RegistryAuth::Anonymous
}

/// The credentials to speak to `registry` (`host[:port]`) with.
pub fn for_registry(registry: &str) -> Result<RegistryAuth> {
    let variable = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (variable(USERNAME_VARIABLE), variable(PASSWORD_VARIABLE)) {
        (Some(user), Some(password)) => match variable(HOST_VARIABLE) {
            Some(host) if host == registry => return Ok(RegistryAuth::Basic(user, password)),
            Some(_) => {}
            None => bail!(
                "{USERNAME_VARIABLE} and {PASSWORD_VARIABLE} are set: set {HOST_VARIABLE} to the registry they are                  for (host[:port]), so that no other registry receives them"
            ),
        },
        (Some(_), None) | (None, Some(_)) => {
            bail!("set both {USERNAME_VARIABLE} and {PASSWORD_VARIABLE}, or neither")
        }
        (None, None) => {}
    }
    let Some(path) = docker_config_path() else { return Ok(RegistryAuth::Anonymous) };
    if !path.is_file() {
        return Ok(RegistryAuth::Anonymous);
    }
    from_docker_config(&path, registry)
}

/// `$DOCKER_CONFIG/config.json`, or `~/.docker/config.json`.
fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| PathBuf::from(home).join(".docker/config.json"))
}

/// The credentials the Docker configuration at `path` holds for `registry`.
fn from_docker_config(path: &Path, registry: &str) -> Result<RegistryAuth> {
    let text = gamefeature_host::files::read_text(path, 1 << 20)
        .with_context(|| format!("cannot read registry credentials from {}", path.display()))?;
    let config: DockerConfig =
        serde_json::from_str(&text).with_context(|| format!("{}: malformed Docker configuration", path.display()))?;
    // Keys are written as `host:port`, `https://host:port` or `https://host:port/v1/` by different tools.
    let entry = config.auths.iter().find(|(key, _)| registry_of(key) == registry).map(|(_, auth)| auth);
    let Some(entry) = entry else {
        // Docker Desktop names a store for every registry: a public one is still reached anonymously.
        if let Some(helper) = config.cred_helpers.get(registry) {
            return Ok(anonymous_because(path, registry, &format!("kept by docker-credential-{helper}")));
        }
        return Ok(RegistryAuth::Anonymous);
    };
    if entry.identitytoken.is_some() && entry.auth.is_none() && entry.username.is_none() {
        return Ok(anonymous_because(path, registry, "an identity token (an OAuth refresh token)"));
    }
    if let (Some(user), Some(password)) = (&entry.username, &entry.password) {
        return Ok(RegistryAuth::Basic(user.clone(), password.clone()));
    }
    let Some(encoded) = &entry.auth else { return Ok(RegistryAuth::Anonymous) };
    let bad = || format!("{}: the `auth` of {registry} is not base64 of user:password", path.display());
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).with_context(bad)?;
    let decoded = String::from_utf8(decoded).with_context(bad)?;
    let Some((user, password)) = decoded.split_once(':') else { bail!(bad()) };
    Ok(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

/// The registry (`host[:port]`) a Docker configuration key names.
fn registry_of(key: &str) -> &str {
    let key = key.strip_prefix("https://").or_else(|| key.strip_prefix("http://")).unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(auth: RegistryAuth) -> (String, String) {
        match auth {
            RegistryAuth::Basic(user, password) => (user, password),
            _ => panic!("not user and password"),
        }
    }

    #[test]
    fn credentials_are_read_from_a_docker_configuration_as_docker_login_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let encoded = base64::engine::general_purpose::STANDARD.encode("studio:s3cret");
        let config = serde_json::json!({
            "auths": {
                "https://registry.example.org/v1/": { "auth": encoded },
                "127.0.0.1:5000": { "username": "ci", "password": "token" },
                "tokens.example.org": { "identitytoken": "abc" },
                "empty.example.org": {},
            },
            "credHelpers": { "ecr.example.org": "ecr-login" },
        });
        std::fs::write(&path, config.to_string()).unwrap();
        assert_eq!(
            basic(from_docker_config(&path, "registry.example.org").unwrap()),
            ("studio".into(), "s3cret".into())
        );
        assert_eq!(basic(from_docker_config(&path, "127.0.0.1:5000").unwrap()), ("ci".into(), "token".into()));
        // An identity token, an empty entry, a registry not listed and one kept by a helper: anonymous (with a
        // warning where credentials exist that gfhost does not use).
        for anonymous in ["tokens.example.org", "empty.example.org", "elsewhere.org", "ecr.example.org"] {
            assert!(matches!(from_docker_config(&path, anonymous).unwrap(), RegistryAuth::Anonymous), "{anonymous}");
        }
        std::fs::write(&path, r#"{"auths": {"r.org": {"auth": "not base64!"}}}"#).unwrap();
        let bad = from_docker_config(&path, "r.org").unwrap_err().to_string();
        assert!(bad.contains("config.json: the `auth` of r.org is not base64 of user:password"), "{bad}");
    }
}
