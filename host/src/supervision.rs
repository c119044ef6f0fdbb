//! Supervised restarts: what happens to a plugin that faults while it plays (it traps, or is quarantined for its
//! frame budget, a flood, a loop), as Envoy's `FAIL_RELOAD` and Erlang's supervisors decide it.
//!
//! A plugin's [`RestartPolicy`] (`[restarts]` in `gfhost.toml`, `[restarts.<plugin>]` for one plugin) is
//! `never` — quarantine is final, as it always was — or `on-failure`: the plugin is started again after a
//! backoff, from its last good snapshot, at most `max-restarts` times in any `window-s`; one more fault in the
//! window and it stays out. [`RestartHistory`] applies the policy to one plugin's faults. Everything is in game
//! time (the world's clock), not the wall clock: a replay of a session restarts its plugins at the same frames.

use std::collections::VecDeque;
use std::time::Duration;

use serde::Deserialize;

/// When a plugin that faults while it plays is started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Whether it is restarted at all (`policy = "on-failure"`); `false` is `policy = "never"`.
    pub on_failure: bool,
    /// Restarts allowed within `window`; a fault past them keeps it out.
    pub max_restarts: u32,
    /// The span of game time restarts are counted over.
    pub window: Duration,
    /// Game time before the first restart in a window; each further one waits twice as long as the one before.
    pub backoff: Duration,
    /// The longest a restart waits, however many came before.
    pub max_backoff: Duration,
    /// How often the state of a plugin that may be restarted is kept (its `snapshot`), in game time.
    pub snapshot_every: Duration,
}

impl Default for RestartPolicy {
    /// `never`; with `on-failure`: 3 restarts in 60 s, the first after 250 ms, at most 30 s apart, a snapshot
    /// every 10 s.
    fn default() -> Self {
        RestartPolicy {
            on_failure: false,
            max_restarts: 3,
            window: Duration::from_secs(60),
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
            snapshot_every: Duration::from_secs(10),
        }
    }
}

/// `[restarts]` or `[restarts.<plugin>]`: the keys of a [`RestartPolicy`], each optional (left out, it keeps the
/// value it would have had).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RestartOverrides {
    /// `"never"` or `"on-failure"`.
    pub policy: Option<PolicyKind>,
    /// Restarts allowed within the window.
    pub max_restarts: Option<u32>,
    /// The window, in seconds of game time.
    pub window_s: Option<u64>,
    /// The first restart's wait, in milliseconds of game time.
    pub backoff_ms: Option<u64>,
    /// The longest wait, in milliseconds of game time.
    pub max_backoff_ms: Option<u64>,
    /// How often a snapshot is kept, in seconds of game time.
    pub snapshot_every_s: Option<u64>,
}

/// Whether a plugin is restarted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Quarantine is final.
    Never,
    /// Restarted after a fault, within the policy's limits.
    OnFailure,
}

impl RestartOverrides {
    /// `base` with these overrides applied; refused when a value would make no sense.
    pub fn apply_to(&self, base: RestartPolicy) -> Result<RestartPolicy, crate::Error> {
        let policy = RestartPolicy {
            on_failure: self.policy.map_or(base.on_failure, |kind| kind == PolicyKind::OnFailure),
            max_restarts: self.max_restarts.unwrap_or(base.max_restarts),
            window: self.window_s.map_or(base.window, Duration::from_secs),
            backoff: self.backoff_ms.map_or(base.backoff, Duration::from_millis),
            max_backoff: self.max_backoff_ms.map_or(base.max_backoff, Duration::from_millis),
            snapshot_every: self.snapshot_every_s.map_or(base.snapshot_every, Duration::from_secs),
        };
        if policy.window.is_zero() {
            return Err(crate::Error::refused(
                "window-s = 0 counts no restart: set max-restarts = 0 (or policy = \"never\")",
            ));
        }
        if policy.snapshot_every.is_zero() {
            return Err(crate::Error::refused(
                "snapshot-every-s = 0 would snapshot every frame; give it a number of seconds",
            ));
        }
        if policy.max_backoff < policy.backoff {
            return Err(crate::Error::refused("max-backoff-ms is shorter than backoff-ms"));
        }
        Ok(policy)
    }
}

/// Every plugin's policy: the default (`[restarts]`) and each plugin's own (`[restarts.<plugin>]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestartPolicies {
    /// The policy of a plugin without its own.
    pub default: RestartPolicy,
    /// Plugins with their own policy.
    pub plugins: std::collections::BTreeMap<String, RestartPolicy>,
}

impl RestartPolicies {
    /// The policy of `plugin`.
    pub fn of(&self, plugin: &str) -> RestartPolicy {
        self.plugins.get(plugin).copied().unwrap_or(self.default)
    }

    /// Reads `[restarts]`: its keys are the default, its tables each plugin's own (on top of the default).
    pub(crate) fn from_table(table: &toml::Table) -> Result<RestartPolicies, String> {
        let (plugins, keys): (toml::Table, toml::Table) =
            table.iter().map(|(k, v)| (k.clone(), v.clone())).partition(|(_, value)| value.is_table());
        let parse = |what: &str, value: toml::Table| {
            RestartOverrides::deserialize(toml::Value::Table(value))
                .map_err(|e| format!("{what}: {}", e.to_string().trim_end()))
        };
        let default =
            parse("[restarts]", keys)?.apply_to(RestartPolicy::default()).map_err(|e| format!("[restarts]: {e}"))?;
        let mut policies = RestartPolicies { default, plugins: Default::default() };
        for (plugin, value) in plugins {
            let what = format!("[restarts.{plugin}]");
            let toml::Value::Table(value) = value else { unreachable!("partitioned on tables") };
            let policy = parse(&what, value)?.apply_to(default).map_err(|e| format!("{what}: {e}"))?;
            policies.plugins.insert(plugin, policy);
        }
        Ok(policies)
    }
}

/// What becomes of a plugin that faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its policy is `never`: it stays out.
    Never,
    /// It starts again at `at_us` of game time: its `attempt`-th restart in the window, of `of`.
    Restart {
        /// When, in microseconds of the world's game time.
        at_us: u64,
        /// Which restart in the window this is (from 1).
        attempt: u32,
        /// How many the window allows.
        of: u32,
    },
    /// It faulted again after all the restarts its window allows: it stays out.
    StaysOut {
        /// The restarts it had in the window.
        restarts: u32,
    },
}

/// One plugin's restarts in one world, in game time.
#[derive(Debug, Clone, Default)]
pub struct RestartHistory {
    /// When each restart within the current window was decided, oldest first.
    restarts_us: VecDeque<u64>,
}

impl RestartHistory {
    /// Decides what becomes of the plugin faulting at `now_us` under `policy`.
    pub fn fault(&mut self, policy: &RestartPolicy, now_us: u64) -> Verdict {
        if !policy.on_failure {
            return Verdict::Never;
        }
        let window = micros(policy.window);
        while self.restarts_us.front().is_some_and(|at| now_us.saturating_sub(*at) >= window) {
            self.restarts_us.pop_front();
        }
        let before = self.restarts_us.len() as u32;
        if before >= policy.max_restarts {
            return Verdict::StaysOut { restarts: before };
        }
        let wait = micros(policy.backoff).saturating_mul(1u64 << before.min(32)).min(micros(policy.max_backoff));
        self.restarts_us.push_back(now_us);
        Verdict::Restart { at_us: now_us.saturating_add(wait), attempt: before + 1, of: policy.max_restarts }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;
    const S: u64 = 1_000_000;

    fn on_failure() -> RestartPolicy {
        RestartPolicy { on_failure: true, ..RestartPolicy::default() }
    }

    #[test]
    fn restarts_wait_twice_as_long_each_time_and_stop_after_the_windows_allowance() {
        let mut history = RestartHistory::default();
        let policy = on_failure();
        assert_eq!(history.fault(&policy, 0), Verdict::Restart { at_us: 250 * MS, attempt: 1, of: 3 });
        assert_eq!(history.fault(&policy, S), Verdict::Restart { at_us: S + 500 * MS, attempt: 2, of: 3 });
        assert_eq!(history.fault(&policy, 2 * S), Verdict::Restart { at_us: 3 * S, attempt: 3, of: 3 });
        assert_eq!(history.fault(&policy, 4 * S), Verdict::StaysOut { restarts: 3 });
    }

    #[test]
    fn a_restart_older_than_the_window_no_longer_counts() {
        let mut history = RestartHistory::default();
        let policy = RestartPolicy { max_restarts: 1, ..on_failure() };
        assert!(matches!(history.fault(&policy, 0), Verdict::Restart { attempt: 1, .. }));
        assert_eq!(history.fault(&policy, 59 * S), Verdict::StaysOut { restarts: 1 });
        assert_eq!(history.fault(&policy, 60 * S), Verdict::Restart { at_us: 60 * S + 250 * MS, attempt: 1, of: 1 });
    }

    #[test]
    fn the_wait_is_capped_and_never_overflows() {
        let mut history = RestartHistory::default();
        let policy = RestartPolicy { max_restarts: 100, max_backoff: Duration::from_secs(1), ..on_failure() };
        for _ in 0..40 {
            let verdict = history.fault(&policy, u64::MAX - 1);
            assert!(matches!(verdict, Verdict::Restart { at_us: u64::MAX, .. }), "game time saturates: {verdict:?}");
        }
        let mut fresh = RestartHistory::default();
        let waits: Vec<u64> = (0..8)
            .map(|n| match fresh.fault(&policy, n) {
                Verdict::Restart { at_us, .. } => at_us - n,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(waits, [250 * MS, 500 * MS, S, S, S, S, S, S]);
    }

    #[test]
    fn never_is_the_default() {
        assert_eq!(RestartHistory::default().fault(&RestartPolicy::default(), 0), Verdict::Never);
    }

    #[test]
    fn reads_a_default_and_each_plugins_own_over_it() {
        let table: toml::Table = toml::from_str(
            "policy = \"on-failure\"\nmax-restarts = 5\n[score-keeper]\npolicy = \"never\"\n[hud]\nbackoff-ms = 10\n",
        )
        .unwrap();
        let policies = RestartPolicies::from_table(&table).unwrap();
        assert!(policies.of("announcer").on_failure && policies.of("announcer").max_restarts == 5);
        assert!(!policies.of("score-keeper").on_failure);
        let hud = policies.of("hud");
        assert!(hud.on_failure && hud.max_restarts == 5 && hud.backoff == Duration::from_millis(10));
        for (text, said) in [
            ("policy = \"sometimes\"", "[restarts]"),
            ("[hud]\nwindow-s = 0", "[restarts.hud]: window-s = 0"),
            ("retries = 1", "unknown field `retries`"),
            ("backoff-ms = 100\nmax-backoff-ms = 10", "max-backoff-ms is shorter"),
        ] {
            let error = RestartPolicies::from_table(&toml::from_str(text).unwrap()).unwrap_err();
            assert!(error.contains(said), "{text}: {error}");
        }
    }
}
