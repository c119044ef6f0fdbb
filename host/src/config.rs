//! Host configuration (`gfhost.toml`): what each plugin is granted and the limits it runs under.
//!
//! ```toml
//! [sandbox]                      # defaults for every plugin
//! call-deadline-ms = 10          # CPU time one call into a plugin may use
//! instantiate-deadline-ms = 1000 # CPU time instantiating a plugin (its start-up code) may use
//! memory-mib = 64                # linear memory one instance may grow to
//! fuel = 50_000_000              # optional: a deterministic instruction budget per call
//! world-changes = 100_000        # events, requests, spawns, … one call may make before it counts as a flood
//! handles = 100_000              # requests, handlers and subscriptions one instance may hold
//! host-memory-mib = 16           # host memory the properties one plugin writes may hold
//! frame-budget-ms = 20           # CPU time all of one plugin's calls in one frame may use, frame after frame
//! data-quota-mib = 64            # what a plugin's data directory (fs.data) may hold
//! data-dir = "plugin-data"       # parent of the directories granted with fs.data (relative to this file)
//! work-per-dispatch = 100_000    # deliveries one plugin's work may reach in one dispatch, through any plugin
//!
//! [limits.big-simulation]        # per-plugin overrides of the limits above
//! call-deadline-ms = 40
//!
//! [grants.my-plugin]             # what a plugin may do beyond its sandbox (see `Permissions`)
//! spawn-actors = true
//! fs.data = true
//!
//! [publishers.lyra-team]         # a publisher whose packages this host installs and loads (see `TrustPolicy`)
//! key = "ed25519:…"
//! permissions = { send-events = true }  # optional: the most its plugins may be granted
//!
//! [packages]
//! allow-untrusted = false        # true accepts unsigned packages and unknown publishers: development only
//!
//! [mod-sync]                     # what a client fetches from the servers it joins (see `net::mod_sync`)
//! fetch = "trusted"              # "trusted" publishers' packages, "any", or "never"
//! permissions = {}               # the most a fetched plugin may be granted: nothing beyond the sandbox
//! max-package-mib = 256          # the largest package fetched
//! consent = "ask"                # show the server's plugins and ask (answers kept per server); "yes": don't ask
//!
//! [cache]
//! max-mib = 1024                 # the most the compile cache may take; the entries used least recently go
//!
//! [restarts]                     # a plugin that faults while it plays (see `supervision`)
//! policy = "on-failure"          # "never" (the default: quarantine is final) or "on-failure"
//! max-restarts = 3               # restarts allowed within window-s; one more fault and it stays out
//! window-s = 60                  # game time
//! backoff-ms = 250               # game time before the first restart, doubled for each one after it
//! max-backoff-ms = 30_000
//! snapshot-every-s = 10          # how often its state is kept, to restart it from
//!
//! [restarts.score-keeper]        # one plugin's own policy, over the one above
//! policy = "never"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::feature::{GrantPolicy, Permissions};
use crate::package::{FetchPolicy, TrustPolicy, TrustedPublisher};

/// Limits a plugin's instances run under; every field left out keeps the host's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LimitOverrides {
    /// CPU time one call into the plugin may use (`call-deadline-ms`).
    pub call_deadline_ms: Option<u64>,
    /// CPU time instantiation (the plugin's start-up code) may use.
    pub instantiate_deadline_ms: Option<u64>,
    /// The most linear memory an instance may have (`memory-mib`).
    pub memory_mib: Option<u64>,
    /// Fuel (wasmtime's instruction budget) one call may use; none by default.
    pub fuel: Option<u64>,
    /// World changes (events, requests, spawns, init-state changes…) one call may make.
    pub world_changes: Option<u32>,
    /// Handles (requests, handlers, subscriptions) one instance may hold.
    pub handles: Option<u32>,
    /// Host memory the properties a plugin writes may hold, in MiB.
    pub host_memory_mib: Option<u64>,
    /// CPU time all of the plugin's calls in one frame may use, in milliseconds.
    pub frame_budget_ms: Option<u64>,
    /// What the plugin's data directory may hold, in MiB.
    pub data_quota_mib: Option<u64>,
}

/// The CPU time one plugin's code may use per frame by default (`frame-budget-ms`): most of a 30 Hz frame's
/// 33 ms stays for the game and the other plugins.
pub const DEFAULT_FRAME_BUDGET: std::time::Duration = std::time::Duration::from_millis(20);

/// The longest call deadline accepted: a call this long already freezes a game for a minute.
pub const MAX_CALL_DEADLINE_MS: u64 = 60_000;

/// The most linear memory a plugin may be given: all a 32-bit WebAssembly memory can address.
pub const MAX_MEMORY_MIB: u64 = 4096;

/// Checks a call deadline in milliseconds, as `[sandbox]`, `[limits.<plugin>]` and `--call-deadline-ms` take it.
pub fn check_call_deadline_ms(ms: u64) -> Result<u64, crate::Error> {
    match ms {
        0 => Err(crate::Error::refused("a call deadline of 0 ms would stop every call")),
        ms if ms > MAX_CALL_DEADLINE_MS => Err(crate::Error::refused(format!(
            "a call deadline of {ms} ms is longer than the {MAX_CALL_DEADLINE_MS} ms allowed"
        ))),
        ms => Ok(ms),
    }
}

impl LimitOverrides {
    /// Refuses limits that could not work: zero (nothing could run), or beyond what the runtime can honour.
    pub(crate) fn check(&self) -> Result<(), String> {
        for ms in [self.call_deadline_ms, self.instantiate_deadline_ms, self.frame_budget_ms].into_iter().flatten() {
            check_call_deadline_ms(ms).map_err(|e| e.to_string())?;
        }
        if let Some(mib) = self.memory_mib {
            if mib > MAX_MEMORY_MIB {
                return Err(format!("memory-mib = {mib} is more than the {MAX_MEMORY_MIB} MiB a plugin can address"));
            }
        }
        let zero = self.memory_mib == Some(0)
            || self.host_memory_mib == Some(0)
            || self.fuel == Some(0)
            || self.world_changes == Some(0)
            || self.handles == Some(0)
            || self.data_quota_mib == Some(0);
        if zero {
            return Err("a limit of 0 would stop every call; leave it out instead".into());
        }
        Ok(())
    }

    /// `call-deadline-ms` as a duration.
    pub fn call_deadline(&self) -> Option<Duration> {
        self.call_deadline_ms.map(Duration::from_millis)
    }

    /// `frame-budget-ms` as a duration.
    pub fn frame_budget(&self) -> Option<Duration> {
        self.frame_budget_ms.map(Duration::from_millis)
    }

    /// `instantiate-deadline-ms` as a duration.
    pub fn instantiate_deadline(&self) -> Option<Duration> {
        self.instantiate_deadline_ms.map(Duration::from_millis)
    }

    /// `memory-mib` in bytes.
    pub fn memory_bytes(&self) -> Option<usize> {
        self.memory_mib.map(|mib| (mib as usize).saturating_mul(1 << 20))
    }

    /// `data-quota-mib` in bytes.
    pub fn data_quota_bytes(&self) -> Option<u64> {
        self.data_quota_mib.map(|mib| mib.saturating_mul(1 << 20))
    }

    /// `host-memory-mib` in bytes.
    pub fn host_memory_bytes(&self) -> Option<usize> {
        self.host_memory_mib.map(|mib| (mib as usize).saturating_mul(1 << 20))
    }
}

/// A parsed host configuration file.
#[derive(Debug, Clone, Default)]
pub struct HostConfig {
    /// Which permissions each plugin is granted (`[grants.<plugin>]`).
    pub grants: GrantPolicy,
    /// Defaults for every plugin (`[sandbox]`).
    pub defaults: LimitOverrides,
    /// Per-plugin overrides (`[limits.<plugin>]`).
    pub limits: BTreeMap<String, LimitOverrides>,
    /// Where the directories of plugins granted `fs.data` live, resolved against the file's directory.
    pub data_dir: Option<PathBuf>,
    /// Deliveries one plugin's work may reach in one dispatch (`[sandbox] work-per-dispatch`).
    pub work_per_dispatch: Option<usize>,
    /// Which packages may be installed and loaded (`[publishers.<name>]`, `[packages]`).
    pub trust: TrustPolicy,
    /// What a client fetches from the servers it joins (`[mod-sync]`).
    pub mod_sync: ModSyncSection,
    /// The most bytes the compile cache may take (`[cache] max-mib`).
    pub cache_budget: Option<u64>,
    /// What happens to a plugin that faults while it plays (`[restarts]`, `[restarts.<plugin>]`).
    pub restarts: crate::supervision::RestartPolicies,
}

/// `[mod-sync]`: which packages a client fetches from the servers it joins, and what their plugins may do.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ModSyncSection {
    /// Which packages are fetched.
    #[serde(default = "trusted_only")]
    pub fetch: FetchPolicy,
    /// The most a fetched plugin may be granted.
    #[serde(default)]
    pub permissions: Permissions,
    /// The largest package fetched, in MiB.
    #[serde(default = "default_max_package_mib")]
    pub max_package_mib: u64,
    /// Whether the player is asked before the server's plugins are fetched and run.
    #[serde(default)]
    pub consent: ModConsent,
}

/// `[mod-sync] consent`: whether a player is asked before a client fetches and runs a server's plugins (see
/// `net::consent`). Either way the list is shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModConsent {
    /// Ask, unless an answer about this server (by its certificate) stands for what it offers now.
    #[default]
    Ask,
    /// Go on without asking, within the fetch policy (bots, test clients, a kiosk).
    Yes,
}

impl Default for ModSyncSection {
    fn default() -> Self {
        ModSyncSection {
            fetch: trusted_only(),
            permissions: Permissions::default(),
            max_package_mib: default_max_package_mib(),
            consent: ModConsent::Ask,
        }
    }
}

fn trusted_only() -> FetchPolicy {
    FetchPolicy::Trusted
}

fn default_max_package_mib() -> u64 {
    crate::files::MAX_COMPONENT_BYTES >> 20
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    sandbox: SandboxSection,
    #[serde(default)]
    limits: BTreeMap<String, LimitOverrides>,
    #[serde(default)]
    grants: BTreeMap<String, Permissions>,
    #[serde(default)]
    publishers: BTreeMap<String, TrustedPublisher>,
    #[serde(default)]
    packages: PackagesSection,
    #[serde(default, rename = "mod-sync")]
    mod_sync: ModSyncSection,
    #[serde(default)]
    cache: CacheSection,
    #[serde(default)]
    restarts: toml::Table,
}

/// `[cache]`: how much disk the compile cache may take.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct CacheSection {
    max_mib: Option<u64>,
}

/// `[packages]`: how packages from publishers not trusted are treated.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct PackagesSection {
    #[serde(default)]
    allow_untrusted: bool,
}

/// `[sandbox]`: the limits of [`LimitOverrides`] plus the data directory. (Spelled out rather than a
/// `#[serde(flatten)]` of `LimitOverrides`, which serde cannot combine with `deny_unknown_fields`.)
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct SandboxSection {
    call_deadline_ms: Option<u64>,
    instantiate_deadline_ms: Option<u64>,
    memory_mib: Option<u64>,
    fuel: Option<u64>,
    world_changes: Option<u32>,
    handles: Option<u32>,
    host_memory_mib: Option<u64>,
    frame_budget_ms: Option<u64>,
    data_quota_mib: Option<u64>,
    data_dir: Option<PathBuf>,
    work_per_dispatch: Option<usize>,
}

/// A host configuration file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

impl HostConfig {
    /// Reads a host configuration file. Plugins it does not list under `[grants]` are granted nothing.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let error = |problem: String| ConfigError { path: path.to_path_buf(), problem };
        let text = crate::files::read_text(path, crate::files::MAX_TEXT_FILE_BYTES)
            .map_err(|e| error(format!("cannot read it: {e}")))?;
        Self::parse(&text, path.parent().unwrap_or(Path::new("."))).map_err(error)
    }

    /// Parses a configuration whose relative paths are relative to `base`.
    pub(crate) fn parse(text: &str, base: &Path) -> Result<Self, String> {
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| format!("malformed TOML: {}", e.to_string().trim_end()))?;
        let sandbox = file.sandbox;
        let defaults = LimitOverrides {
            call_deadline_ms: sandbox.call_deadline_ms,
            instantiate_deadline_ms: sandbox.instantiate_deadline_ms,
            memory_mib: sandbox.memory_mib,
            fuel: sandbox.fuel,
            world_changes: sandbox.world_changes,
            handles: sandbox.handles,
            host_memory_mib: sandbox.host_memory_mib,
            frame_budget_ms: sandbox.frame_budget_ms,
            data_quota_mib: sandbox.data_quota_mib,
        };
        for (plugin, limits) in std::iter::once(("[sandbox]", &defaults))
            .chain(file.limits.iter().map(|(name, limits)| (name.as_str(), limits)))
        {
            limits.check().map_err(|problem| format!("limits of {plugin}: {problem}"))?;
        }
        Ok(HostConfig {
            grants: GrantPolicy::Explicit(file.grants),
            defaults,
            limits: file.limits,
            data_dir: sandbox.data_dir.map(|dir| base.join(dir)),
            trust: TrustPolicy { publishers: file.publishers, allow_untrusted: file.packages.allow_untrusted },
            mod_sync: file.mod_sync,
            cache_budget: match file.cache.max_mib {
                Some(0) => {
                    return Err("[cache] max-mib = 0 would remove every entry but the last: to compile every \
                                time, run with --no-cache"
                        .into())
                }
                mib => mib.map(|mib| mib.saturating_mul(1 << 20)),
            },
            restarts: crate::supervision::RestartPolicies::from_table(&file.restarts)?,
            work_per_dispatch: match sandbox.work_per_dispatch {
                Some(0) => return Err("[sandbox] work-per-dispatch = 0 would stop every plugin".into()),
                work => work,
            },
        })
    }
}

/// For `?` into the error a game matches on: the blame, and the text as it is.
impl From<ConfigError> for crate::error::Error {
    fn from(error: ConfigError) -> crate::error::Error {
        let message = error.to_string();
        crate::error::Error::BadInput { file: error.path, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_defaults_overrides_grants_and_a_data_dir_relative_to_the_file() {
        let text = r#"
            [sandbox]
            call-deadline-ms = 12
            data-dir = "data"
            [limits.sim]
            fuel = 1000
            memory-mib = 8
            [grants.sim]
            fs.data = true
        "#;
        let config = HostConfig::parse(text, Path::new("/etc/game")).unwrap();
        assert_eq!(config.defaults.call_deadline(), Some(Duration::from_millis(12)));
        assert_eq!(config.limits["sim"].fuel, Some(1000));
        assert_eq!(config.limits["sim"].memory_bytes(), Some(8 << 20));
        assert_eq!(config.data_dir, Some(PathBuf::from("/etc/game/data")));
        let declared = Permissions { fs: crate::feature::FsPermissions { data: true }, ..Permissions::default() };
        assert!(config.grants.effective("sim", &declared).fs.data);
        assert!(!config.grants.effective("other", &declared).fs.data);
    }

    #[test]
    fn reads_trusted_publishers_with_their_permission_ceilings() {
        let key = crate::package::SecretKey::generate().public_key();
        let text = format!("[publishers.team]\nkey = \"{key}\"\npermissions = {{ send-events = true }}\n");
        let config = HostConfig::parse(&text, Path::new(".")).unwrap();
        assert_eq!(config.trust.publishers["team"].key, key);
        assert!(config.trust.publishers["team"].permissions.as_ref().unwrap().send_events);
        assert!(!config.trust.allow_untrusted);
        let bad = HostConfig::parse("[publishers.team]\nkey = \"ed25519:nope\"\n", Path::new(".")).unwrap_err();
        assert!(bad.contains("ed25519:nope"), "{bad}");
        let open = HostConfig::parse("[packages]\nallow-untrusted = true\n", Path::new(".")).unwrap();
        assert!(open.trust.allow_untrusted);
        assert_eq!(open.mod_sync.fetch, FetchPolicy::Trusted, "clients fetch only trusted publishers' packages");
        assert_eq!(open.cache_budget, None, "the compile cache's default budget");
        let cache = HostConfig::parse("[cache]\nmax-mib = 300\n", Path::new(".")).unwrap();
        assert_eq!(cache.cache_budget, Some(300 << 20));
        let none = HostConfig::parse("[cache]\nmax-mib = 0\n", Path::new(".")).unwrap_err();
        assert!(none.contains("--no-cache"), "{none}");
        let sync = HostConfig::parse("[mod-sync]\nfetch = \"never\"\n", Path::new(".")).unwrap().mod_sync;
        assert_eq!(sync.fetch, FetchPolicy::Never);
        assert!(HostConfig::parse("[mod-sync]\nfetch = \"sometimes\"\n", Path::new(".")).is_err());
    }

    #[test]
    fn refuses_unknown_keys_and_zero_limits() {
        assert!(HostConfig::parse("[sandbox]\ncall-deadline = 3\n", Path::new(".")).unwrap_err().contains("unknown"));
        assert!(HostConfig::parse("[limits.x]\nfuel = 0\n", Path::new(".")).unwrap_err().contains("limits of x"));
    }

    #[test]
    fn refuses_limits_the_runtime_cannot_honour() {
        for text in [
            "[sandbox]\ncall-deadline-ms = 18446744073709551615\n",
            "[limits.x]\ncall-deadline-ms = 60001\n",
            "[sandbox]\ncall-deadline-ms = 0\n",
            "[limits.x]\nmemory-mib = 1000000\n",
        ] {
            assert!(HostConfig::parse(text, Path::new(".")).is_err(), "{text}");
        }
        assert_eq!(check_call_deadline_ms(60_000), Ok(60_000));
    }
}
