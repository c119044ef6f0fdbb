//! Credentials for a registry, found where Docker, podman, oras and every other OCI tool find them, so a
//! publisher who logged in once (`docker login`, `oras login`) publishes with gfhost too:
//!
//! 1. `GFHOST_REGISTRY_USERNAME` and `GFHOST_REGISTRY_PASSWORD` (CI secrets), for any registry;
//! 2. the `auths` entry of the registry in `$DOCKER_CONFIG/config.json`, or `~/.docker/config.json`
//!    (`auth` as base64 `user:password`, or `username` and `password`, or an `identitytoken`).
//!
//! Otherwise requests go anonymously, as for a public registry. Credential helpers (`credsStore`,
//! `credHelpers`) are not run: a registry configured for one is named in the error, with the variables to use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use base64::Engine;
use oci_client::secrets::RegistryAuth;

/// The variable naming the user to log in to registries as.
pub const USERNAME_VARIABLE: &str = "GFHOST_REGISTRY_USERNAME";
/// The variable holding that user's password or token.
pub const PASSWORD_VARIABLE: &str = "GFHOST_REGISTRY_PASSWORD";

/// Docker's configuration file, as far as credentials go.
#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, DockerAuth>,
    #[serde(default)]
    creds_store: Option<String>,
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

/// The credentials to speak to `registry` (`host[:port]`) with.
pub fn for_registry(registry: &str) -> Result<RegistryAuth> {
    let variable = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (variable(USERNAME_VARIABLE), variable(PASSWORD_VARIABLE)) {
        (Some(user), Some(password)) => return Ok(RegistryAuth::Basic(user, password)),
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
    let helper = config.cred_helpers.get(registry).or(config.creds_store.as_ref());
    let Some(entry) = entry else {
        if let Some(helper) = helper {
            bail!(
                "{}: the credentials for {registry} are kept by the credential helper docker-credential-{helper}, \
                 which gfhost does not run; set {USERNAME_VARIABLE} and {PASSWORD_VARIABLE} instead",
                path.display()
            );
        }
        return Ok(RegistryAuth::Anonymous);
    };
    if let Some(token) = &entry.identitytoken {
        return Ok(RegistryAuth::Bearer(token.clone()));
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
            },
            "credHelpers": { "ecr.example.org": "ecr-login" },
        });
        std::fs::write(&path, config.to_string()).unwrap();
        assert_eq!(
            basic(from_docker_config(&path, "registry.example.org").unwrap()),
            ("studio".into(), "s3cret".into())
        );
        assert_eq!(basic(from_docker_config(&path, "127.0.0.1:5000").unwrap()), ("ci".into(), "token".into()));
        assert!(
            matches!(from_docker_config(&path, "tokens.example.org").unwrap(), RegistryAuth::Bearer(t) if t == "abc")
        );
        assert!(matches!(from_docker_config(&path, "elsewhere.org").unwrap(), RegistryAuth::Anonymous));
        let helper = from_docker_config(&path, "ecr.example.org").unwrap_err().to_string();
        assert!(helper.contains("docker-credential-ecr-login, which gfhost does not run"), "{helper}");
        std::fs::write(&path, r#"{"auths": {"r.org": {"auth": "not base64!"}}}"#).unwrap();
        let bad = from_docker_config(&path, "r.org").unwrap_err().to_string();
        assert!(bad.contains("config.json: the `auth` of r.org is not base64 of user:password"), "{bad}");
    }
}
