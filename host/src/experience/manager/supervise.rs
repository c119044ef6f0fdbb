//! Supervised restarts in one world (see [`crate::supervision`]): after each frame, a plugin that faulted while
//! it played is judged by its policy — left out, or started again after its backoff, from the last snapshot kept
//! of it (or fresh, when it keeps none), its actions applied again to the world as it is, so its actors get
//! their components and its handlers their receivers. While a restartable plugin plays, its state is kept every
//! `snapshot-every-s` of game time. Each restart, and each plugin left out for good, is said on the instance's
//! track (as [`EventKind::Restart`], which a recording keeps beside what plugins say) and in the log; all of it
//! runs on game time, so a replay restarts at the same frames, and says so if it does not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ExperienceManager;
use crate::assets::Assets;
use crate::supervision::{RestartHistory, Verdict};
use crate::timeline::{track, EventKind};
use crate::world::component_manager::OwnerId;
use crate::world::Frame;

/// What a world keeps to restart its plugins.
#[derive(Default)]
pub(super) struct Supervision {
    histories: HashMap<String, RestartHistory>,
    /// The instances whose fault was judged already.
    judged: HashSet<OwnerId>,
    pending: Vec<PendingRestart>,
    snapshots: HashMap<String, KeptState>,
    restarts: u64,
}

struct PendingRestart {
    plugin: String,
    at_us: u64,
    /// The bundles its instance read, for the next one.
    assets: Arc<Assets>,
}

/// The last state kept of a plugin: its snapshot's bytes (`None`: it keeps no state), and when it was taken.
struct KeptState {
    bytes: Option<Vec<u8>>,
    frame: u64,
    taken_us: u64,
}

impl ExperienceManager {
    /// Plugin restarts carried out in this world since it was created.
    pub fn restart_count(&self) -> u64 {
        self.supervision.restarts
    }

    /// The end of a frame's supervision: faults judged, restarts that came due carried out, states kept.
    pub(super) fn supervise(&mut self, frame: &Frame) {
        let faulted: Vec<(String, OwnerId, Arc<Assets>)> = self
            .in_world
            .iter()
            .filter(|f| f.playing && !self.instances.contains(f.owner) && !self.supervision.judged.contains(&f.owner))
            .map(|f| (f.name.clone(), f.owner, f.assets.clone()))
            .collect();
        for (plugin, owner, assets) in faulted {
            self.supervision.judged.insert(owner);
            self.judge(&plugin, frame, assets);
        }
        let (due, waiting) = std::mem::take(&mut self.supervision.pending)
            .into_iter()
            .partition::<Vec<_>, _>(|pending| pending.at_us <= frame.time_us);
        self.supervision.pending = waiting;
        for pending in due {
            self.restart(pending, frame);
        }
        self.keep_states(frame);
    }

    /// Forgets what supervision kept (play ended).
    pub(super) fn end_supervision(&mut self) {
        self.supervision = Supervision::default();
    }

    /// Forgets the state kept of `plugin` and its pending restart: it left the world, or a new version replaced
    /// it (whose state is its own from now on).
    pub(super) fn forget_supervised(&mut self, plugin: &str) {
        self.supervision.snapshots.remove(plugin);
        self.supervision.pending.retain(|pending| pending.plugin != plugin);
    }

    /// Decides what becomes of `plugin`, which just faulted (the last failure listed for it says how).
    fn judge(&mut self, plugin: &str, frame: &Frame, assets: Arc<Assets>) {
        let policy = self.options.restarts.of(plugin);
        let history = self.supervision.histories.entry(plugin.to_string()).or_default();
        let track = track::instance(plugin, &self.world_name);
        match history.fault(&policy, frame.time_us) {
            Verdict::Never => {}
            Verdict::Restart { at_us, attempt, of } => {
                let wait_ms = (at_us - frame.time_us) / 1000;
                let note = format!("restart {attempt} of {of} in {wait_ms} ms of game time");
                tracing::warn!(plugin, world = %self.world_name, "{note}");
                self.timeline.record(track, EventKind::Restart, note);
                self.supervision.pending.push(PendingRestart { plugin: plugin.to_string(), at_us, assets });
            }
            Verdict::StaysOut { restarts } => {
                let line = format!(
                    "stays out: it faulted again after {restarts} restart(s) within {} s of game time \
                     ([restarts] max-restarts); reload it to bring it back",
                    policy.window.as_secs()
                );
                tracing::warn!(plugin, world = %self.world_name, "{line}");
                self.timeline.record(track, EventKind::Restart, line);
            }
        }
    }

    /// Starts a plugin again in place of its faulted instance (or of one that failed to come up at its last
    /// restart), from the last state kept of it. A plugin this world no longer wants, or that came back
    /// otherwise (a reload), is left as it is.
    fn restart(&mut self, pending: PendingRestart, frame: &Frame) {
        let PendingRestart { plugin, assets, .. } = pending;
        let plugin = plugin.as_str();
        let dead =
            self.in_world.iter().position(|f| f.name == plugin && f.playing && !self.instances.contains(f.owner));
        let gone =
            !self.in_world.iter().any(|f| f.name == plugin) && self.wanted_features().iter().any(|f| f == plugin);
        if dead.is_none() && !gone {
            return;
        }
        let (Some(code), Some(manifest)) = (self.features.code(plugin), self.features.manifest(plugin)) else {
            return;
        };
        if let Some(index) = dead {
            let dead = self.in_world.remove(index);
            self.remove_from_world(dead);
        }
        let kept = self.supervision.snapshots.get(plugin);
        let from = match kept {
            Some(KeptState { bytes: Some(bytes), frame, .. }) => {
                self.carried.insert(plugin.to_string(), bytes.clone());
                format!("from its state kept at frame {frame} ({} bytes)", bytes.len())
            }
            Some(KeptState { bytes: None, .. }) => "fresh (it keeps no state)".to_string(),
            None => "fresh (no state was kept of it yet)".to_string(),
        };
        let failures_before = self.report.failures.len();
        self.start_feature(plugin, code, &manifest, assets.clone());
        self.carried.remove(plugin);
        self.pump();
        self.report.active = self.live_features();
        let track = track::instance(plugin, &self.world_name);
        if self.in_world.iter().any(|f| f.name == plugin && self.instances.contains(f.owner)) {
            self.supervision.restarts += 1;
            self.features.recover(plugin);
            let note = format!("restarted {from}");
            tracing::warn!(plugin, world = %self.world_name, "{note}");
            self.timeline.record(track, EventKind::Restart, note);
            return;
        }
        // It did not come up: that is one more fault.
        let cause = self.report.last_cause_of(plugin, failures_before);
        self.timeline.record(track, EventKind::Restart, format!("restart {from} failed: {cause}"));
        // Judged now, once: an instance that came up and faulted at once is not judged again next frame.
        let owners: Vec<OwnerId> = self.in_world.iter().filter(|f| f.name == plugin).map(|f| f.owner).collect();
        self.supervision.judged.extend(owners);
        self.judge(plugin, frame, assets);
    }

    /// Keeps the state of each restartable plugin that plays, every `snapshot-every-s` of game time.
    fn keep_states(&mut self, frame: &Frame) {
        let due: Vec<(String, OwnerId)> = self
            .in_world
            .iter()
            .filter(|f| f.playing && self.instances.contains(f.owner))
            .filter(|f| {
                let policy = self.options.restarts.of(&f.name);
                let every = u64::try_from(policy.snapshot_every.as_micros()).unwrap_or(u64::MAX);
                policy.on_failure
                    && self
                        .supervision
                        .snapshots
                        .get(&f.name)
                        .is_none_or(|kept| frame.time_us.saturating_sub(kept.taken_us) >= every)
            })
            .map(|f| (f.name.clone(), f.owner))
            .collect();
        for (plugin, owner) in due {
            match self.call(owner, "snapshot", |i| i.snapshot().map(|state| state.map(super::in_world::Carried))) {
                Some(Ok(state)) => {
                    let bytes = state.map(|carried| carried.0);
                    let kept = KeptState { bytes, frame: frame.number, taken_us: frame.time_us };
                    self.supervision.snapshots.insert(plugin, kept);
                }
                // A snapshot refused keeps the one before; one that trapped is a fault, judged next frame, and
                // what the plugin added to the world goes with it now.
                Some(Err(e)) => {
                    if matches!(e, crate::delivery::CallError::Trapped(_)) {
                        let mut w = crate::world::lock(&self.world);
                        w.remove_owner(owner);
                        w.discard_work(owner);
                    }
                    self.fail_feature(&plugin, crate::feature::Phase::Playing, format!("snapshot: {e}"));
                }
                None => {}
            }
        }
        self.pump();
    }
}
