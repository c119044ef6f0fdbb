//! Delivers a world's queued work to its plugin instances.
//!
//! Host calls never call back into Wasm (an instance cannot be re-entered while it runs); they queue
//! [`Work`] in the world instead, and [`Instances::pump`] delivers it once no plugin is running. Delivery is
//! FIFO: the queue is taken whole, each run of consecutive items of one kind for one instance becomes one
//! batched call (at most [`MAX_BATCH`] entries, so a call's deadline covers a bounded amount of work), and
//! whatever those calls queue is delivered in the next round, after everything before it. Init-state chains
//! are walked in lockstep: every chain of a run is asked about in one call per round, and goes as many steps as
//! its plugin takes, so a thousand pawns cost a handful of calls, and one batch never holds two chains of the
//! same actor.
//!
//! Work a plugin causes is charged to it (see [`Charge`]): a plugin whose work in one dispatch passes
//! [`DispatchLimits::work`] — however it spreads it over calls and other plugins' handlers — is quarantined
//! for flooding, and so are the plugins still sending work after [`DispatchLimits::loop_rounds`] rounds (an
//! endless ping-pong of events): the plugins flooded are never the ones punished.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::batch::{
    BatchNames, ChainBatch, ChainWalk, ExtensionBatch, FeatureBatch, PropertyBatch, ReplicatedBatch, StateChangeBatch,
};
use super::frame_budget::{FrameCost, FrameSpend};
use super::heard::HeardOf;
use super::held::Held;
use super::plugin_instance::{within_refusal_budget, CallError, PluginInstance};
use super::rounds::{Chain, Round, RunItems, WavePlanner, MAX_BATCH};
use super::run_batch::{index_of, RunBatch};
use crate::timeline::{track, EventKind, Timeline};
use crate::world::component_manager::{Name, OwnerId, Work};
use crate::world::{self, ActorId, Fired, Frame, SharedWorld, World};

/// What a quarantine over a frame budget names as the failed call.
pub const FRAME_BUDGET_CALL: &str = "frame budget";

/// Rounds after which a pump gives up: plugins that keep causing work for each other forever would otherwise
/// hang the world (Unreal caps plugin state transitions the same way).
pub const MAX_ROUNDS: usize = 10_000;

/// Rounds looked back over to find the plugins keeping a loop going.
const LOOP_WINDOW: usize = 4;

/// How much work one dispatch may do for each plugin that causes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchLimits {
    /// Entries delivered (to any plugin) in one dispatch that one plugin may cause, through its own calls and
    /// the calls of the handlers its work reaches.
    pub work: usize,
    /// Entries one plugin may cause, on top of `work`, for each actor it hears about in the game's own work
    /// of the dispatch (a level spawning twenty thousand players at once is the game's doing, and a plugin
    /// answering each causes work in proportion). Counted once per actor however many handlers or
    /// subscriptions the plugin holds; work that plugins caused grants nothing, so a flood or a loop between
    /// plugins is still stopped at `work`.
    pub per_game_actor: usize,
    /// Rounds after which the plugins still sending work are taken to be keeping a loop going.
    pub loop_rounds: usize,
}

impl Default for DispatchLimits {
    fn default() -> Self {
        DispatchLimits { work: 100_000, per_game_actor: 16, loop_rounds: 256 }
    }
}

/// A plugin instance the dispatcher can deliver to.
pub struct LiveInstance {
    /// The plugin the instance is of.
    pub plugin: String,
    /// The instance, behind the seam the runtime implements.
    pub instance: Box<dyn PluginInstance>,
    /// What its calls have cost in the current frame (see [`FrameCost`]).
    cost: FrameCost,
    /// What waits for its next frame because deliveries to it went over its frame budget in this one.
    held: Held,
    /// Whether its work is held once it is over budget: not while it leaves the world (its last events are
    /// its due), nor in a recorded world (see [`Instances::hold_over_budget`]).
    holds: bool,
}

impl LiveInstance {
    /// A live instance of `plugin`, nothing charged to it yet.
    pub fn new(plugin: impl Into<String>, instance: Box<dyn PluginInstance>) -> Self {
        LiveInstance { plugin: plugin.into(), instance, cost: FrameCost::default(), held: Held::default(), holds: true }
    }

    /// Makes one call into the instance, its CPU time charged to the instance's frame; returns what the call
    /// returned and how long it took in wall time (what the timeline shows). Every call into a live instance
    /// goes through here (or through the dispatcher's deliveries, which charge alike), so nothing a plugin's code
    /// costs escapes its frame budget.
    pub fn call<R>(&mut self, f: impl FnOnce(&mut dyn PluginInstance) -> R) -> (R, std::time::Duration) {
        self.measured(false, f)
    }

    /// As [`call`](Self::call), for a delivery: its cost also counts towards the in-frame hold (see
    /// [`over_budget`](Self::over_budget)).
    fn deliver<R>(&mut self, f: impl FnOnce(&mut dyn PluginInstance) -> R) -> (R, std::time::Duration) {
        self.measured(true, f)
    }

    fn measured<R>(
        &mut self,
        delivery: bool,
        f: impl FnOnce(&mut dyn PluginInstance) -> R,
    ) -> (R, std::time::Duration) {
        let cpu_before = crate::cpu_clock::thread_cpu_time();
        let started = std::time::Instant::now();
        let result = f(self.instance.as_mut());
        let took = started.elapsed();
        let used = cpu_before.zip(crate::cpu_clock::thread_cpu_time()).map(|(before, now)| now.saturating_sub(before));
        // Time parked in a WASI sleep uses no CPU, but the frame waited for it all the same.
        let used = used.unwrap_or(took).saturating_add(self.instance.take_waited());
        if delivery {
            self.cost.charge_delivery(used);
        } else {
            self.cost.charge(used);
        }
        self.cost.count_call();
        (result, took)
    }

    /// Whether what was delivered to it in the current frame cost more than its frame budget: then it gets no
    /// further delivery until its next frame, and what would have gone to it waits.
    pub fn over_budget(&self) -> bool {
        self.holds && self.instance.frame_budget().is_some_and(|budget| self.cost.over_budget(budget))
    }

    /// How many entries (work items, timers, replicated changes) wait for its next frame.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Charges work done for the instance outside its calls (its instantiation) to its current frame.
    pub fn charge(&mut self, used: std::time::Duration) {
        self.cost.charge(used);
    }
}

/// A delivery that failed: the instance refused or trapped, or it was quarantined for the work it caused
/// (then `call` names what it did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFailure {
    /// The instance that failed.
    pub owner: OwnerId,
    /// Its plugin.
    pub plugin: String,
    /// The export it failed in, or what it was quarantined for.
    pub call: &'static str,
    /// How it failed.
    pub error: CallError,
}

/// The live plugin instances of one world, by owner.
#[derive(Default)]
pub struct Instances {
    live: BTreeMap<OwnerId, LiveInstance>,
    limits: DispatchLimits,
    planner: WavePlanner,
    /// The game's actors each plugin heard about in the current dispatch.
    heard_of: HeardOf,
    /// The instances whose queued work waits for their next frame.
    holding_work: std::collections::BTreeSet<OwnerId>,
    /// Whether a plugin over its frame budget has its work held (see [`hold_over_budget`](Self::hold_over_budget)).
    holding: bool,
}

impl Instances {
    /// No instances yet, delivering within `limits`.
    pub fn with_limits(limits: DispatchLimits) -> Self {
        Instances {
            live: BTreeMap::new(),
            limits,
            planner: WavePlanner::default(),
            heard_of: HeardOf::default(),
            holding_work: Default::default(),
            holding: true,
        }
    }

    /// Adds an instance; work queued for `owner` is delivered to it from now on.
    pub fn insert(&mut self, owner: OwnerId, mut instance: LiveInstance) {
        instance.holds = self.holding;
        self.live.insert(owner, instance);
    }

    /// Whether a plugin over its frame budget has its further work held until its next frame (the default), or
    /// is judged at the frame's end only. A recorded world judges at the end only: whether work is held depends
    /// on the CPU time measured, which a replay (with loosened budgets) cannot measure alike, while a quarantine
    /// at a frame's end is on the tape and replayed at the same frame.
    pub fn hold_over_budget(&mut self, on: bool) {
        self.holding = on;
        for live in self.live.values_mut() {
            live.holds = on;
        }
    }

    /// `owner` is leaving the world (deactivated, reloaded, restarted): what it is still told (its handlers'
    /// last `ExtensionRemoved`) is not held back, and the events it sent that wait for others go.
    pub fn leaving(&mut self, owner: OwnerId) {
        if let Some(live) = self.live.get_mut(&owner) {
            live.holds = false;
        }
        for &holder in &self.holding_work {
            if let Some(live) = self.live.get_mut(&holder) {
                live.held.forget_sender(owner);
            }
        }
    }

    /// Takes an instance out (it is called no more); the events it sent that wait for others go with it.
    pub fn remove(&mut self, owner: OwnerId) -> Option<LiveInstance> {
        self.heard_of.forget(owner);
        self.holding_work.remove(&owner);
        for &holder in &self.holding_work {
            if let Some(live) = self.live.get_mut(&holder) {
                live.held.forget_sender(owner);
            }
        }
        self.live.remove(&owner)
    }

    /// The instance of `owner`, to call it directly.
    pub fn get_mut(&mut self, owner: OwnerId) -> Option<&mut LiveInstance> {
        self.live.get_mut(&owner)
    }

    /// Whether `owner` has a live instance.
    pub fn contains(&self, owner: OwnerId) -> bool {
        self.live.contains_key(&owner)
    }

    /// Delivers queued work until none is left (or [`MAX_ROUNDS`] pass). A trapped instance is removed, its
    /// work discarded and everything it added to the world removed, as is a plugin over its share of the
    /// dispatch's work; failures are returned for the caller to report.
    pub fn pump(&mut self, world: &SharedWorld, timeline: &Timeline) -> Result<Vec<DeliveryFailure>, PumpOverflow> {
        let mut failures = Vec::new();
        let mut charged: HashMap<OwnerId, usize> = HashMap::default();
        // What each plugin may cause beyond `work`, for the game's actors it heard about.
        let mut allowance: HashMap<OwnerId, usize> = HashMap::default();
        self.heard_of.clear();
        let mut quarantined: HashSet<OwnerId> = HashSet::default();
        // The plugins whose calls queued the work of the last few rounds: a loop alternates between its members.
        let mut recent_senders: VecDeque<Vec<OwnerId>> = VecDeque::new();
        for round in 0..MAX_ROUNDS {
            if round == self.limits.loop_rounds {
                let mut senders = world::lock(world).queued_work_senders();
                for sender in recent_senders.iter().flatten() {
                    if !senders.contains(sender) {
                        senders.push(*sender);
                    }
                }
                for sender in senders {
                    let cause =
                        format!("kept plugins busy for {round} rounds of one dispatch (an endless loop of work)");
                    failures.extend(self.quarantine(world, sender, "dispatch", cause));
                    quarantined.insert(sender);
                }
            }
            let mut work = world::lock(world).take_charged_work();
            self.release_held_work(&mut work);
            if work.is_empty() {
                world::lock(world).delivering_work_of(None);
                return Ok(failures);
            }
            let mut round = Round::gather(work);
            // What each plugin is charged, by run.
            for (_, items, root) in round.runs() {
                if let Some(root) = root.filter(|root| !quarantined.contains(root)) {
                    *charged.entry(root).or_default() += items.len();
                }
            }
            recent_senders.push_back(std::mem::take(&mut round.senders));
            if recent_senders.len() > LOOP_WINDOW {
                recent_senders.pop_front();
            }
            // The game's actors a plugin hears of are marked as its runs are delivered. A plugin over its budget
            // before this round's are counted hears of them now, so that the game's work of this very round
            // (events beside its timers' work, say) raises its allowance as before.
            let over = |o: &OwnerId, n: usize, allowance: &HashMap<OwnerId, usize>| {
                n > self.limits.work.saturating_add(allowance.get(o).copied().unwrap_or(0))
            };
            let candidates: Vec<OwnerId> =
                charged.iter().filter(|(o, n)| over(o, **n, &allowance)).map(|(o, _)| *o).collect();
            for owner in candidates {
                let game_runs = round.runs().filter(|(o, _, root)| *o == owner && root.is_none());
                let new: usize =
                    game_runs.map(|(_, items, _)| self.heard_of.hear_all(owner, items.iter().map(Work::actor))).sum();
                *allowance.entry(owner).or_default() += new * self.limits.per_game_actor;
            }
            let budget = |owner: &OwnerId| self.limits.work.saturating_add(allowance.get(owner).copied().unwrap_or(0));
            let flooders: Vec<(OwnerId, usize, usize)> =
                charged.iter().filter(|(o, n)| **n > budget(o)).map(|(o, n)| (*o, *n, budget(o))).collect();
            for (flooder, amount, budget) in flooders {
                charged.remove(&flooder);
                let cause = format!(
                    "flooded the world: its work reached {amount} deliveries in one dispatch, over its budget of \
                     {budget}"
                );
                failures.extend(self.quarantine(world, flooder, "dispatch", cause));
                quarantined.insert(flooder);
            }
            if !quarantined.is_empty() {
                round.discard(|owner| quarantined.contains(&owner));
            }
            let Round { work, groups, .. } = round;
            for (owner, runs) in groups {
                for run in runs {
                    let items = Round::items(work.items(), &run);
                    if let Some(live) = self.live.get_mut(&owner).filter(|live| live.over_budget()) {
                        live.held.hold_work(items.iter(), run.root);
                        self.holding_work.insert(owner);
                        continue;
                    }
                    if run.root.is_none() {
                        // The game's own work raises the plugin's allowance for each of the game's actors it hears
                        // of first in the dispatch: what it may cause answering them (actors it already heard of
                        // in the flood check above count once).
                        let new = self.heard_of.hear_all(owner, items.iter().map(Work::actor));
                        if new > 0 {
                            *allowance.entry(owner).or_default() += new * self.limits.per_game_actor;
                        }
                    }
                    world::lock(world).delivering_work_of(run.root);
                    match self.deliver(world, timeline, owner, items) {
                        Ok(left) => self.hold_chains(owner, &left, run.root),
                        Err(failure) => {
                            failures.push(self.remove_failed(world, owner, failure.call, failure.error));
                            break;
                        }
                    }
                }
            }
            failures.extend(self.quarantine_far_behind(world));
            let mut w = world::lock(world);
            w.delivering_work_of(None);
            w.recycle_work(work);
        }
        Err(PumpOverflow { rounds: MAX_ROUNDS, failures })
    }

    /// Calls one instance's `on-timers` with what fired for it in `frame` (after what waited for it from
    /// earlier frames), at most [`MAX_BATCH`] timers per call like every other batch, each call recorded in the
    /// timeline. Once the plugin is over its frame budget in this frame it gets no further call: the timers left
    /// wait for its next frame, each once with its periods summed, so one plugin adds at most its budget and one
    /// call's deadline to a frame, however many timers it keeps due. An instance that fails is removed, as in
    /// [`pump`](Self::pump).
    pub fn fire_timers(
        &mut self,
        world: &SharedWorld,
        timeline: &Timeline,
        fired: &Fired,
        frame: &Frame,
    ) -> Result<(), DeliveryFailure> {
        let Some(live) = self.live.get_mut(&fired.owner) else {
            return Ok(());
        };
        let mut due = live.held.timers_due(&fired.timers);
        let world_name = world::lock(world).name().to_string();
        let mut delivered = 0;
        let mut outcome = Ok(());
        for chunk in due.chunks(MAX_BATCH) {
            if live.over_budget() {
                break;
            }
            outcome = call_batch(live, timeline, &world_name, "on-timers", chunk.len(), |i| i.on_timers(frame, chunk));
            if outcome.is_err() {
                break;
            }
            delivered += chunk.len();
        }
        live.held.hold_timers(due.split_off(delivered.min(due.len())));
        outcome.map_err(|(call, error)| self.remove_failed(world, fired.owner, call, error))
    }

    /// The instances with timers waiting from an earlier frame (see [`fire_timers`](Self::fire_timers)).
    pub fn with_held_timers(&self) -> Vec<OwnerId> {
        self.live.iter().filter(|(_, live)| live.held.has_timers()).map(|(owner, _)| *owner).collect()
    }

    /// Delivers what waits for instances from an earlier frame, other than timers and queued work (which go with
    /// [`fire_timers`](Self::fire_timers) and [`pump`](Self::pump)): replicated changes. Then quarantines the
    /// instances with more than 100,000 entries waiting.
    pub fn deliver_held(&mut self, world: &SharedWorld, timeline: &Timeline) -> Vec<DeliveryFailure> {
        let owners: Vec<OwnerId> =
            self.live.iter().filter(|(_, live)| live.held.has_replicated()).map(|(owner, _)| *owner).collect();
        let mut failures: Vec<DeliveryFailure> =
            owners.into_iter().filter_map(|owner| self.deliver_replicated(world, timeline, owner).err()).collect();
        failures.extend(self.quarantine_far_behind(world));
        failures
    }

    /// Puts the queued work waiting for instances no longer over budget before a round's `work`.
    fn release_held_work(&mut self, work: &mut crate::world::component_manager::ChargedWork) {
        if self.holding_work.is_empty() {
            return;
        }
        let mut released = crate::world::component_manager::ChargedWork::default();
        let live = &mut self.live;
        self.holding_work.retain(|owner| match live.get_mut(owner) {
            Some(instance) if instance.over_budget() => true,
            Some(instance) => {
                released.append(instance.held.take_work());
                false
            }
            None => false,
        });
        if !released.is_empty() {
            work.prepend(released);
        }
    }

    /// Holds the chains a delivery left to walk (its plugin went over budget) as work for its next frame.
    fn hold_chains(&mut self, owner: OwnerId, chains: &[Chain], root: Option<OwnerId>) {
        let Some(live) = self.live.get_mut(&owner).filter(|_| !chains.is_empty()) else {
            return;
        };
        let walks: Vec<Work> = chains
            .iter()
            .map(|(actor, feature)| Work::ContinueChain { owner, actor: *actor, feature: *feature })
            .collect();
        live.held.hold_work(walks.iter(), root);
        self.holding_work.insert(owner);
    }

    /// Quarantines the instances with more than [`Held::MOST`] entries waiting for their next frame.
    fn quarantine_far_behind(&mut self, world: &SharedWorld) -> Vec<DeliveryFailure> {
        let behind: Vec<(OwnerId, usize)> = self
            .live
            .iter()
            .filter(|(_, live)| live.held.len() > Held::MOST)
            .map(|(owner, live)| (*owner, live.held.len()))
            .collect();
        behind
            .into_iter()
            .filter_map(|(owner, waiting)| {
                let cause = format!(
                    "fell behind: {waiting} deliveries waited for it while it was over its frame budget, over the \
                     {} that may",
                    Held::MOST
                );
                self.quarantine(world, owner, FRAME_BUDGET_CALL, cause)
            })
            .collect()
    }

    /// Ends a frame: each instance's cost in it is held to its frame budget, and a plugin over budget
    /// [`FRAMES_OVER_BUDGET`](super::FRAMES_OVER_BUDGET) frames in a row is quarantined. Returns each
    /// instance's cost in the frame (by owner), and the failures.
    pub fn end_frame(&mut self, world: &SharedWorld) -> (Vec<(OwnerId, FrameSpend)>, Vec<DeliveryFailure>) {
        let mut costs = Vec::with_capacity(self.live.len());
        let mut overruns = Vec::new();
        for (owner, live) in self.live.iter_mut() {
            costs.push((*owner, live.cost.spent()));
            let Some(budget) = live.instance.frame_budget() else {
                live.cost = FrameCost::default();
                continue;
            };
            if let Some(overrun) = live.cost.end_frame(budget) {
                overruns.push((*owner, overrun));
            }
        }
        let failures = overruns
            .into_iter()
            .filter_map(|(owner, overrun)| self.quarantine(world, owner, FRAME_BUDGET_CALL, overrun.to_string()))
            .collect();
        (costs, failures)
    }

    /// Calls one instance's `on-replicated` (rep-notify) with a batch of replicated changes (after those waiting
    /// for it from earlier), at most [`MAX_BATCH`] a call, each recorded in the timeline. Once the plugin is over
    /// its frame budget the rest wait for its next frame. An instance that fails is removed, as in
    /// [`pump`](Self::pump), and one with more than 100,000 entries waiting is quarantined: the failures are
    /// returned.
    pub fn notify_replicated(
        &mut self,
        world: &SharedWorld,
        timeline: &Timeline,
        owner: OwnerId,
        batch: &ReplicatedBatch,
    ) -> Vec<DeliveryFailure> {
        let Some(live) = self.live.get_mut(&owner) else {
            return Vec::new();
        };
        live.held.hold_replicated(batch.chunks(MAX_BATCH));
        let mut failures: Vec<DeliveryFailure> =
            self.deliver_replicated(world, timeline, owner).err().into_iter().collect();
        failures.extend(self.quarantine_far_behind(world));
        failures
    }

    /// Delivers the replicated changes waiting for `owner`, oldest first, while it is within its frame budget.
    fn deliver_replicated(
        &mut self,
        world: &SharedWorld,
        timeline: &Timeline,
        owner: OwnerId,
    ) -> Result<(), DeliveryFailure> {
        let Some(live) = self.live.get_mut(&owner) else {
            return Ok(());
        };
        let world_name = world::lock(world).name().to_string();
        while !live.over_budget() {
            let Some(chunk) = live.held.next_replicated() else { break };
            let entries = chunk.actors.len();
            let outcome =
                call_batch(live, timeline, &world_name, "on-replicated", entries, |i| i.on_replicated(&chunk));
            if let Err((call, error)) = outcome {
                return Err(self.remove_failed(world, owner, call, error));
            }
        }
        Ok(())
    }

    /// Takes a failed instance out: what it added to the world goes, and its queued work.
    fn remove_failed(
        &mut self,
        world: &SharedWorld,
        owner: OwnerId,
        call: &'static str,
        error: CallError,
    ) -> DeliveryFailure {
        let mut w = world::lock(world);
        w.remove_owner(owner);
        w.discard_work(owner);
        drop(w);
        let plugin = self.remove(owner).map(|live| live.plugin).unwrap_or_default();
        DeliveryFailure { owner, plugin, call, error }
    }

    /// Stops a plugin for the work it caused: its instance goes, and everything it added to the world.
    /// Quarantines `owner`'s instance over its frame budget for `cause`, as [`end_frame`](Self::end_frame)
    /// does when it measures an overrun: what a replay does where its recording says one happened.
    pub fn quarantine_over_budget(
        &mut self,
        world: &SharedWorld,
        owner: OwnerId,
        cause: String,
    ) -> Option<DeliveryFailure> {
        self.quarantine(world, owner, FRAME_BUDGET_CALL, cause)
    }

    fn quarantine(
        &mut self,
        world: &SharedWorld,
        owner: OwnerId,
        call: &'static str,
        cause: String,
    ) -> Option<DeliveryFailure> {
        let live = self.remove(owner)?;
        let mut w = world::lock(world);
        w.remove_owner(owner);
        w.discard_work(owner);
        Some(DeliveryFailure { owner, plugin: live.plugin, call, error: CallError::Trapped(cause) })
    }

    /// Delivers one run to its instance; returns the chains it left to walk, having gone over its frame budget
    /// between the calls of a chain walk.
    fn deliver(
        &mut self,
        world: &SharedWorld,
        timeline: &Timeline,
        owner: OwnerId,
        run: RunItems<'_>,
    ) -> Result<Vec<Chain>, DeliveryFailure> {
        let Some(live) = self.live.get_mut(&owner) else {
            return Ok(Vec::new()); // The host's own work, or an instance already gone.
        };
        let world_name = world::lock(world).name().to_string();
        let Some(first) = run.first() else {
            return Ok(Vec::new());
        };
        let mut left = Vec::new();
        let outcome = match first {
            Work::Extension { .. } => {
                // The world's lock must be released before the call: the plugin's host calls take it.
                let single = single_extension(&world::lock(world), run);
                match single {
                    Some((handler, actor, event, name)) => {
                        call_batch(live, timeline, &world_name, "handle-extension-event", 1, |i| {
                            i.handle_extension_event(handler, actor, event.number(), &name)
                        })
                    }
                    None => send_run::<ExtensionBatch>(world, live, timeline, &world_name, run),
                }
            }
            Work::InitStateChanged { .. } => send_run::<StateChangeBatch>(world, live, timeline, &world_name, run),
            Work::PropertyChanged { .. } => send_run::<PropertyBatch>(world, live, timeline, &world_name, run),
            Work::CheckDefaultInitialization { .. } => {
                send_run::<FeatureBatch>(world, live, timeline, &world_name, run)
            }
            Work::ContinueChain { .. } => {
                let waves = {
                    let w = world::lock(world);
                    self.planner.waves(run.iter().filter(|item| w.is_work_live(item)).filter_map(|item| match item {
                        Work::ContinueChain { actor, feature, .. } => Some((*actor, *feature)),
                        _ => None,
                    }))
                };
                let calls = Calls { timeline, world_name: &world_name };
                waves.iter().try_for_each(|wave| {
                    if live.over_budget() {
                        left.extend_from_slice(wave);
                        return Ok(());
                    }
                    left.extend(walk_chains(world, owner, live, wave, &calls)?);
                    Ok(())
                })
            }
        };
        outcome.map(|()| left).map_err(|(call, error)| DeliveryFailure {
            owner,
            plugin: live.plugin.clone(),
            call,
            error,
        })
    }
}

/// Builds the batch of a run's live items (under the world's lock, released before the call: the plugin's host
/// calls take it) and sends it.
fn send_run<B: RunBatch>(
    world: &SharedWorld,
    live: &mut LiveInstance,
    timeline: &Timeline,
    world_name: &str,
    run: RunItems<'_>,
) -> Result<(), (&'static str, CallError)> {
    let batch = B::from_run(&world::lock(world), run);
    call_batch(live, timeline, world_name, B::CALL, batch.entries(), |i| batch.send(i))
}

/// Makes one batched call — skipped when every item of the run went stale — recorded in the timeline and held
/// to the refusal budget.
fn call_batch(
    live: &mut LiveInstance,
    timeline: &Timeline,
    world_name: &str,
    call: &'static str,
    entries: usize,
    send: impl FnOnce(&mut dyn PluginInstance) -> Result<(), CallError>,
) -> Result<(), (&'static str, CallError)> {
    if entries == 0 {
        return Ok(());
    }
    let outcome = Calls { timeline, world_name }.timed(live, call, entries, send);
    within_refusal_budget(live.instance.as_mut(), entries, outcome).map_err(|e| (call, e))
}

/// The pump gave up after [`MAX_ROUNDS`] rounds of work causing more work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugins kept causing work for {rounds} rounds; delivery stopped")]
pub struct PumpOverflow {
    /// The rounds delivered before it gave up.
    pub rounds: usize,
    /// The deliveries that failed in them.
    pub failures: Vec<DeliveryFailure>,
}

/// Where batched calls are recorded: the timeline and the world's name.
struct Calls<'a> {
    timeline: &'a Timeline,
    world_name: &'a str,
}

impl Calls<'_> {
    /// Makes one call into the plugin, recorded with its duration.
    fn timed<R>(
        &self,
        live: &mut LiveInstance,
        call: &str,
        entries: usize,
        f: impl FnOnce(&mut dyn PluginInstance) -> R,
    ) -> R {
        let track = track::instance(&live.plugin, self.world_name);
        let recorded = self.timeline.record(track, EventKind::Call, format!("{call} ({entries})"));
        let (result, took) = live.deliver(f);
        self.timeline.set_duration(recorded, took);
        result
    }
}

/// Walks chains in lockstep: ask the plugin to walk every chain from its current state (it decides each step
/// and prepares each it allows, as far as it can, in one call), apply the steps taken, in order, and ask again
/// about the chains that went forward without being refused, until none can — or until the plugin is over its
/// frame budget: the chains still moving are returned, to be walked in its next frame.
fn walk_chains(
    world: &SharedWorld,
    owner: OwnerId,
    live: &mut LiveInstance,
    wave: &[Chain],
    calls: &Calls<'_>,
) -> Result<Vec<Chain>, (&'static str, CallError)> {
    let mut moving: Vec<Chain> = wave.to_vec();
    while !moving.is_empty() {
        if live.over_budget() {
            return Ok(moving);
        }
        let (steps, batch) = {
            let w = world::lock(world);
            let mut steps = Vec::with_capacity(moving.len());
            steps.extend(moving.iter().filter_map(|(actor, feature)| {
                w.next_chain_step(*actor, *feature).map(|step| (*actor, *feature, step))
            }));
            let batch = chain_question(&w, owner, &steps);
            (steps, batch)
        };
        if steps.is_empty() {
            return Ok(Vec::new());
        }
        let answers =
            calls.timed(live, "try-change-init-states", batch.actors.len(), |i| i.try_change_init_states(&batch));
        let answers = within_refusal_budget(live.instance.as_mut(), batch.actors.len(), answers)
            .map_err(|e| ("try-change-init-states", e))?;
        let mut w = world::lock(world);
        // Every answer is checked before any is applied: a plugin answering past the end of a chain is stopped
        // with none of its batch's steps taken, so nobody hears of states about to go with it.
        let reached = |(_, _, (current, _)): &ChainStep, walk: &ChainWalk| {
            current.checked_add(walk.steps).filter(|r| walk.steps == 0 || w.state_text(*r).is_some())
        };
        if let Some(((actor, feature, _), walk)) = steps.iter().zip(&answers).find(|(s, a)| reached(s, a).is_none()) {
            let (feature, steps) = (w.name_text(*feature), walk.steps);
            let error = format!("walked {feature} of actor {actor} {steps} steps on, past the last init state");
            return Err(("try-change-init-states", CallError::Trapped(error)));
        }
        moving.clear();
        for (step, walk) in steps.iter().zip(&answers) {
            let (actor, feature, (current, _)) = *step;
            // Checked above: the steps stay within the chain.
            for state in current + 1..=current + walk.steps {
                w.advance_feature(actor, feature, state);
            }
            if walk.goes_on() {
                moving.push((actor, feature));
            }
        }
    }
    Ok(Vec::new())
}

/// The one live extension event of a run that has exactly one: delivered with scalars rather than as a batch.
fn single_extension(w: &World, run: RunItems<'_>) -> Option<(u32, u64, Name, std::sync::Arc<str>)> {
    let mut live = run.iter().filter(|item| w.is_work_live(item));
    match (live.next(), live.next()) {
        (Some(Work::Extension { number, actor, event, .. }), None) => {
            Some((*number, actor.to_raw(), *event, w.name_shared(*event)))
        }
        _ => None,
    }
}

/// The question of a chain step, with the facts its answers need: the states of each actor's features and the
/// properties `owner` asked for about each entry's feature, as the host knows them now.
fn chain_question(w: &World, owner: OwnerId, steps: &[ChainStep]) -> ChainBatch {
    let mut names = BatchNames::default();
    let mut batch = chain_batch_named(w, steps, &mut names);
    let reads = w.chain_reads(owner);
    let facts = &mut batch.facts;
    facts.feature_starts.reserve_exact(steps.len());
    // Two features an actor is the usual case (Lyra's pawns); more only grows the lists once or twice.
    facts.feature_names.reserve(steps.len() * 2);
    facts.feature_states.reserve(steps.len() * 2);
    facts.read_starts.reserve_exact(steps.len());
    facts.reads.reserve(steps.len());
    for (actor, asked, _) in steps {
        facts.feature_starts.push(facts.feature_names.len() as u32);
        for (feature, state) in w.feature_states(*actor) {
            facts.feature_names.push(index_of(&mut names, feature, w));
            facts.feature_states.push(state);
        }
        facts.read_starts.push(facts.reads.len() as u32);
        for read in reads.iter().filter(|read| read.concerns(*asked)) {
            facts.reads.push(w.property_of(*actor, &read.component, &read.property));
        }
    }
    batch.names = names.names;
    batch
}

fn chain_batch_named(w: &World, steps: &[ChainStep], names: &mut BatchNames) -> ChainBatch {
    let mut batch = ChainBatch::with_capacity(steps.len());
    for (actor, feature, (current, desired)) in steps {
        batch.actors.push(actor.to_raw());
        batch.features.push(index_of(names, *feature, w));
        batch.currents.push(*current);
        batch.desireds.push(*desired);
    }
    batch
}

/// One step of a feature's chain: the actor, the feature, and its (current, next) state ordinals.
type ChainStep = (ActorId, Name, (u8, u8));

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::delivery::{ActivationContext, Deactivation};
    use crate::world::component_manager::{RequestFlags, MAX_CHAIN_READS};
    use crate::world::{NetMode, Value, WorldError};

    /// What a scripted instance was called with, in order.
    #[derive(Debug, Clone, PartialEq)]
    enum Seen {
        Events(Vec<(u64, String)>),
        /// One event by the scalar path: actor, the name's number, and its name.
        Single(u64, u32, String),
        Notifications(Vec<(u64, String, u8)>),
        TryChange(Vec<u64>),
        Timers(Vec<(u32, u32)>),
        Replicated(Vec<u64>),
    }

    /// What a scripted instance does with the world on each extension event it hears.
    type Reaction = Box<dyn FnMut(&mut World, ActorId, &str) + Send>;

    /// A plugin instance that records its batches and, on each extension event, runs `react` on the world as
    /// itself (the host calls a real plugin would make during its call).
    struct Scripted {
        seen: Arc<Mutex<Vec<Seen>>>,
        world: SharedWorld,
        owner: OwnerId,
        react: Reaction,
        /// How far each chain entry asked about goes, in order; one step each once these run out.
        walks: Arc<Mutex<std::collections::VecDeque<ChainWalk>>>,
        /// When set, what each call costs (charged as time parked, so exactly) and the frame budget.
        metered: Arc<Mutex<Option<(Duration, Duration)>>>,
    }

    impl PluginInstance for Scripted {
        fn on_registering(&mut self) -> Result<(), CallError> {
            Ok(())
        }
        fn on_loading(&mut self) -> Result<(), CallError> {
            Ok(())
        }
        fn on_activating(&mut self, _: &ActivationContext) -> Result<(), CallError> {
            Ok(())
        }
        fn on_activated(&mut self) -> Result<(), CallError> {
            Ok(())
        }
        fn on_deactivating(&mut self, _: &ActivationContext) -> Result<Deactivation, CallError> {
            Ok(Deactivation::Done)
        }
        fn poll_deactivation(&mut self) -> Result<Deactivation, CallError> {
            Ok(Deactivation::Done)
        }
        fn on_unloading(&mut self) -> Result<(), CallError> {
            Ok(())
        }
        fn on_unregistering(&mut self) -> Result<(), CallError> {
            Ok(())
        }
        fn handle_extension_events(&mut self, b: &ExtensionBatch) -> Result<(), CallError> {
            let events: Vec<(u64, String)> =
                b.actors.iter().zip(&b.events).map(|(a, e)| (*a, b.names[*e as usize].clone())).collect();
            self.seen.lock().unwrap().push(Seen::Events(events.clone()));
            let mut w = world::lock(&self.world);
            for (actor, event) in events {
                w.acting_as(self.owner, |w| (self.react)(w, ActorId::from_raw(actor), &event));
            }
            Ok(())
        }
        fn handle_extension_event(&mut self, _: u32, actor: u64, event: u32, name: &str) -> Result<(), CallError> {
            self.seen.lock().unwrap().push(Seen::Single(actor, event, name.to_string()));
            world::lock(&self.world).acting_as(self.owner, |w| (self.react)(w, ActorId::from_raw(actor), name));
            Ok(())
        }
        fn try_change_init_states(&mut self, b: &ChainBatch) -> Result<Vec<ChainWalk>, CallError> {
            self.seen.lock().unwrap().push(Seen::TryChange(b.actors.clone()));
            let mut walks = self.walks.lock().unwrap();
            Ok(b.actors.iter().map(|_| walks.pop_front().unwrap_or(ChainWalk::one_step(true))).collect())
        }
        fn check_default_initializations(&mut self, _: &FeatureBatch) -> Result<(), CallError> {
            Ok(())
        }
        fn on_init_states_changed(&mut self, b: &StateChangeBatch) -> Result<(), CallError> {
            let seen = (0..b.actors.len()).map(|i| (b.actors[i], b.names[b.features[i] as usize].clone(), b.states[i]));
            self.seen.lock().unwrap().push(Seen::Notifications(seen.collect()));
            Ok(())
        }
        fn on_timers(&mut self, _: &Frame, timers: &[(u32, u32)]) -> Result<(), CallError> {
            self.seen.lock().unwrap().push(Seen::Timers(timers.to_vec()));
            Ok(())
        }
        fn on_replicated(&mut self, batch: &ReplicatedBatch) -> Result<(), CallError> {
            self.seen.lock().unwrap().push(Seen::Replicated(batch.actors.clone()));
            Ok(())
        }
        fn take_waited(&mut self) -> Duration {
            self.metered.lock().unwrap().map(|(per_call, _)| per_call).unwrap_or_default()
        }
        fn frame_budget(&self) -> Option<Duration> {
            self.metered.lock().unwrap().map(|(_, budget)| budget)
        }
    }

    struct Fixture {
        world: SharedWorld,
        instances: Instances,
        owner: OwnerId,
        seen: Arc<Mutex<Vec<Seen>>>,
        walks: Arc<Mutex<std::collections::VecDeque<ChainWalk>>>,
        metered: Arc<Mutex<Option<(Duration, Duration)>>>,
    }

    fn fixture(react: impl FnMut(&mut World, ActorId, &str) + Send + 'static) -> Fixture {
        fixture_with(DispatchLimits::default(), react)
    }

    fn fixture_with(limits: DispatchLimits, react: impl FnMut(&mut World, ActorId, &str) + Send + 'static) -> Fixture {
        let world: SharedWorld = Arc::new(Mutex::new(World::new("w", NetMode::Standalone)));
        let owner = world::lock(&world).register_owner("scripted");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let walks = Arc::new(Mutex::new(Default::default()));
        let metered = Arc::new(Mutex::new(None));
        let react = Box::new(react);
        let instance = Scripted {
            seen: seen.clone(),
            world: world.clone(),
            owner,
            react,
            walks: walks.clone(),
            metered: metered.clone(),
        };
        let mut instances = Instances::with_limits(limits);
        instances.insert(owner, LiveInstance::new("scripted", Box::new(instance)));
        Fixture { world, instances, owner, seen, walks, metered }
    }

    impl Fixture {
        fn pump(&mut self) -> Vec<Seen> {
            let failures = self.instances.pump(&self.world, &Timeline::new()).unwrap();
            assert_eq!(failures, []);
            std::mem::take(&mut self.seen.lock().unwrap())
        }
    }

    /// Each call costs 1 ms, and the frame budget is 2.5 ms: the third call of a frame puts the plugin over it.
    fn meter(f: &Fixture) {
        *f.metered.lock().unwrap() = Some((Duration::from_millis(1), Duration::from_micros(2500)));
    }

    /// Ends the frame as a tick does.
    fn end_frame(f: &mut Fixture) {
        let (_, failures) = f.instances.end_frame(&f.world);
        assert_eq!(failures, []);
    }

    fn events(seen: &[Seen]) -> Vec<(u64, String)> {
        let each = |s: &Seen| match s {
            Seen::Events(e) => e.clone(),
            Seen::Single(actor, _, name) => vec![(*actor, name.clone())],
            _ => vec![],
        };
        seen.iter().flat_map(each).collect()
    }

    #[test]
    fn a_chain_question_carries_each_actors_feature_states_and_the_properties_asked_for() {
        let f = fixture(|_, _, _| {});
        let mut w = world::lock(&f.world);
        let _hero = w.add_component_request(f.owner, "Pawn", "Hero", RequestFlags::default()).unwrap();
        let (a, b) = (w.spawn("Pawn").unwrap(), w.spawn("Pawn").unwrap());
        w.register_feature(f.owner, a, "Hero", "Hero").unwrap();
        w.register_feature(f.owner, a, "Input", "Hero").unwrap();
        w.register_feature(f.owner, b, "Hero", "Hero").unwrap();
        w.change_feature_state(a, "Input", 2).unwrap();
        w.set_property(b, "Hero", "level", Value::Integer(3)).unwrap();
        w.add_chain_read(f.owner, None, "Hero", "level").unwrap();
        w.add_chain_read(f.owner, Some("Input"), "Hero", "level").unwrap(); // for Input's questions only
        w.add_chain_read(f.owner, None, "Missing", "x").unwrap();
        w.add_chain_read(f.owner, None, "Hero", "level").unwrap(); // asked again: nothing changes
        let (hero, input) = (w.intern("Hero"), w.intern("Input"));
        let question = chain_question(&w, f.owner, &[(a, hero, (0, 1)), (b, hero, (0, 1))]);
        let facts = &question.facts;
        let named = |i: usize| question.names[facts.feature_names[i] as usize].as_str();
        assert_eq!(facts.feature_starts, [0, 2]);
        assert_eq!(
            (0..3).map(|i| (named(i), facts.feature_states[i])).collect::<Vec<_>>(),
            [("Hero", 0), ("Input", 2), ("Hero", 0)]
        );
        let no_component = |actor| Err(WorldError::NoSuchComponent { actor, component: "Missing".into() });
        assert_eq!(facts.read_starts, [0, 2]);
        assert_eq!(facts.reads.decoded(), [Ok(None), no_component(a), Ok(Some(Value::Integer(3))), no_component(b)]);
        // A question about Input carries the read asked for it too, in the order asked.
        let question = chain_question(&w, f.owner, &[(b, input, (0, 1)), (a, input, (2, 3))]);
        let level = Ok(Some(Value::Integer(3)));
        assert_eq!(question.facts.read_starts, [0, 3]);
        assert_eq!(question.facts.reads.decoded()[..3], [level.clone(), level, no_component(b)]);
        for i in 0..MAX_CHAIN_READS - 3 {
            w.add_chain_read(f.owner, None, "Hero", &format!("p{i}")).unwrap();
        }
        assert!(matches!(w.add_chain_read(f.owner, None, "Hero", "one-too-many"), Err(WorldError::Invalid(_))));
        w.remove_owner(f.owner);
        assert_eq!(w.chain_reads(f.owner), []);
    }

    /// A walk the plugin takes several steps in is applied step by step, each notified in order; the host asks
    /// again about a walk that went on unrefused, and stops one refused; a walk past the last state is a trap.
    #[test]
    fn the_steps_of_a_walk_are_applied_in_order_and_none_past_the_last_state() {
        let mut f = fixture(|_, _, _| {});
        let pawn = {
            let mut w = world::lock(&f.world);
            let _hero = w.add_component_request(f.owner, "Pawn", "Hero", RequestFlags::default()).unwrap();
            let pawn = w.spawn("Pawn").unwrap();
            w.register_feature(f.owner, pawn, "Hero", "Hero").unwrap();
            w.subscribe_actor(f.owner, pawn, None, None, false, 1).unwrap();
            pawn
        };
        f.pump();
        // Two steps, then asked again: one more, then refused.
        let two_then_refused = [ChainWalk { steps: 2, refused: false }, ChainWalk { steps: 1, refused: true }];
        f.walks.lock().unwrap().extend(two_then_refused);
        world::lock(&f.world).continue_init_state_chain(pawn, "Hero").unwrap();
        let seen = f.pump();
        let asked = seen.iter().filter(|s| matches!(s, Seen::TryChange(_))).count();
        assert_eq!(asked, 2, "{seen:?}");
        let hero = |state| (pawn.to_raw(), "Hero".to_string(), state);
        let notified = seen.iter().filter_map(|s| if let Seen::Notifications(n) = s { Some(n) } else { None });
        assert_eq!(notified.flatten().cloned().collect::<Vec<_>>(), [hero(1), hero(2), hero(3)]);
        assert_eq!(world::lock(&f.world).feature_state(pawn, "Hero"), Ok(3));
        // From state 3 of 4, two steps would pass the last state: nothing of the batch is applied or notified.
        f.walks.lock().unwrap().push_back(ChainWalk { steps: 2, refused: false });
        world::lock(&f.world).continue_init_state_chain(pawn, "Hero").unwrap();
        let failures = f.instances.pump(&f.world, &Timeline::new()).unwrap();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].call, "try-change-init-states");
        assert!(matches!(&failures[0].error, CallError::Trapped(c) if c.contains("past the last init state")));
        assert_eq!(world::lock(&f.world).live_features(), 0, "the trapped plugin's features went with it");
    }

    /// A plugin answering each of the game's own events with a few of its own is not a flooder however many
    /// the game sends at once; one answering with more than its share per actor is, and holding more handlers
    /// does not raise its share.
    #[test]
    fn the_games_own_work_lets_a_plugin_answer_it_in_proportion() {
        let limits = DispatchLimits { work: 50, per_game_actor: 4, ..DispatchLimits::default() };
        // The game's events about 100 actors grant 400 deliveries beyond the 50. Each answer reaches every
        // handler: 100 actors x handlers (hearing the event) x answers x handlers (hearing each answer).
        for (handlers, answers, flooded) in [(1, 3, false), (1, 6, true), (2, 1, false), (2, 2, true)] {
            let mut f = fixture_with(limits, move |w, actor, event| {
                if event == "Spawned" {
                    (0..answers).for_each(|_| w.send_extension_event(actor, "Answer").unwrap());
                }
            });
            let pawns: Vec<ActorId> = (0..100).map(|_| world::lock(&f.world).spawn("Pawn").unwrap()).collect();
            for number in 0..handlers {
                world::lock(&f.world).add_extension_handler(f.owner, "Pawn", number).unwrap();
            }
            f.pump();
            pawns.iter().for_each(|pawn| world::lock(&f.world).send_extension_event(*pawn, "Spawned").unwrap());
            let failures = f.instances.pump(&f.world, &Timeline::new()).unwrap();
            let case = format!("{handlers} handlers, {answers} answers: {failures:?}");
            assert_eq!(failures.len(), usize::from(flooded), "{case}");
            if flooded {
                assert!(
                    matches!(&failures[0].error, CallError::Trapped(c) if c.contains("flooded the world")),
                    "{case}"
                );
            }
        }
    }

    #[test]
    fn the_games_work_in_a_round_counts_for_the_plugins_own_work_beside_it() {
        // As when a plugin's timers queued work in a frame that also brings the game's events: both are in the
        // dispatch's first round, and the game's events raise the plugin's allowance for that round already.
        let limits = DispatchLimits { work: 50, per_game_actor: 4, ..DispatchLimits::default() };
        for (own, flooded) in [(400, false), (460, true)] {
            let mut f = fixture_with(limits, |_, _, _| {});
            let pawns: Vec<ActorId> = (0..100).map(|_| world::lock(&f.world).spawn("Pawn").unwrap()).collect();
            world::lock(&f.world).add_extension_handler(f.owner, "Pawn", 0).unwrap();
            f.pump();
            {
                let mut w = world::lock(&f.world);
                // The game's: 100 actors heard of, 400 deliveries allowed beyond the 50.
                pawns.iter().for_each(|pawn| w.send_extension_event(*pawn, "Spawned").unwrap());
                let owner = f.owner;
                w.acting_as(owner, |w| {
                    (0..own).for_each(|i| w.send_extension_event(pawns[i % 100], "Own").unwrap());
                });
            }
            let failures = f.instances.pump(&f.world, &Timeline::new()).unwrap();
            assert_eq!(failures.len(), usize::from(flooded), "{own} of its own: {failures:?}");
        }
    }

    #[test]
    fn a_lone_event_takes_the_scalar_path_numbered_by_its_name_and_several_take_a_batch() {
        let mut f = fixture(|_, _, _| {});
        let pawn = world::lock(&f.world).spawn("Pawn").unwrap();
        world::lock(&f.world).add_extension_handler(f.owner, "Pawn", 1).unwrap();
        f.pump();
        world::lock(&f.world).send_extension_event(pawn, "Ping").unwrap();
        let ping = world::lock(&f.world).intern("Ping").number();
        assert_eq!(f.pump(), [Seen::Single(pawn.to_raw(), ping, "Ping".into())]);
        {
            let mut w = world::lock(&f.world);
            w.send_extension_event(pawn, "Ping").unwrap();
            w.send_extension_event(pawn, "Pong").unwrap();
        }
        let raw = pawn.to_raw();
        assert_eq!(f.pump(), [Seen::Events(vec![(raw, "Ping".into()), (raw, "Pong".into())])]);
    }

    #[test]
    fn an_event_sent_before_its_handler_is_dropped_in_the_same_call_is_heard_before_extension_removed() {
        let mut f = fixture(|_, _, _| {});
        let pawn = world::lock(&f.world).spawn("Pawn").unwrap();
        let handler = world::lock(&f.world).add_extension_handler(f.owner, "Pawn", 1).unwrap();
        f.pump();
        // One plugin call: send, then drop the handler.
        {
            let mut w = world::lock(&f.world);
            w.send_extension_event(pawn, "Ping").unwrap();
            w.remove_extension_handler(handler);
        }
        let raw = pawn.to_raw();
        assert_eq!(events(&f.pump()), [(raw, "Ping".to_string()), (raw, "ExtensionRemoved".to_string())]);
    }

    #[test]
    fn a_change_before_its_subscription_is_dropped_in_the_same_call_is_notified() {
        let mut f = fixture(|_, _, _| {});
        let mut w = world::lock(&f.world);
        let pawn = w.spawn("Pawn").unwrap();
        let _hero = w.add_component_request(f.owner, "Pawn", "Hero", RequestFlags::default()).unwrap();
        w.register_feature(f.owner, pawn, "Hero", "Hero").unwrap();
        let subscription = w.subscribe_actor(f.owner, pawn, None, None, false, 7).unwrap();
        w.change_feature_state(pawn, "Hero", 1).unwrap();
        w.unsubscribe(subscription);
        drop(w);
        let seen = f.pump();
        assert!(seen.contains(&Seen::Notifications(vec![(pawn.to_raw(), "Hero".into(), 1)])), "{seen:?}");
    }

    #[test]
    fn handlers_hearing_receiver_removed_can_still_query_the_destroyed_actor() {
        let queried = Arc::new(Mutex::new(Vec::new()));
        let answers = queried.clone();
        let mut f = fixture(move |w, actor, event| {
            if event == "ReceiverRemoved" {
                let answer =
                    w.actor(actor).map(|a| a.components.iter().map(|c| c.class.to_string()).collect::<Vec<_>>());
                answers.lock().unwrap().push(answer);
            }
        });
        let pawn = {
            let mut w = world::lock(&f.world);
            w.add_extension_handler(f.owner, "Pawn", 1).unwrap();
            let pawn = w.spawn("Pawn").unwrap();
            w.attach_native_component(pawn, "Mesh").unwrap();
            pawn
        };
        f.pump();
        world::lock(&f.world).destroy(pawn).unwrap();
        assert!(world::lock(&f.world).actors_of_class("Pawn").unwrap().is_empty(), "an ending actor is unlisted");
        f.pump();
        assert_eq!(*queried.lock().unwrap(), [Ok(vec!["Mesh".to_string()])]);
        assert!(world::lock(&f.world).actor(pawn).is_err(), "gone once its handlers heard it");
    }

    #[test]
    fn an_actor_nobody_hears_about_goes_at_once() {
        let f = fixture(|_, _, _| {});
        let mut w = world::lock(&f.world);
        let pawn = w.spawn("Pawn").unwrap();
        w.destroy(pawn).unwrap();
        assert!(w.actor(pawn).is_err());
    }

    #[test]
    fn chain_batches_hold_one_entry_per_actor_notification_batches_may_hold_several() {
        let mut f = fixture(|_, _, _| {});
        let pawns: Vec<ActorId> = {
            let mut w = world::lock(&f.world);
            let _hero = w.add_component_request(f.owner, "Pawn", "Hero", RequestFlags::default()).unwrap();
            let pawns: Vec<ActorId> = (0..3).map(|_| w.spawn("Pawn").unwrap()).collect();
            for pawn in &pawns {
                w.register_feature(f.owner, *pawn, "Hero", "Hero").unwrap();
                w.register_feature(f.owner, *pawn, "Input", "Hero").unwrap();
                w.subscribe_actor(f.owner, *pawn, None, None, false, 1).unwrap();
                w.continue_init_state_chain(*pawn, "Hero").unwrap();
                w.continue_init_state_chain(*pawn, "Input").unwrap();
            }
            pawns
        };
        let seen = f.pump();
        for batch in &seen {
            if let Seen::TryChange(actors) = batch {
                let unique: HashSet<_> = actors.iter().collect();
                assert_eq!(unique.len(), actors.len(), "a chain batch named an actor twice: {actors:?}");
            }
        }
        let most = seen
            .iter()
            .filter_map(|s| if let Seen::Notifications(n) = s { Some(n) } else { None })
            .map(|n| n.iter().filter(|(actor, _, _)| *actor == pawns[0].to_raw()).count())
            .max();
        assert!(most > Some(1), "notifications of one actor's two features share a batch: {seen:?}");
        let w = world::lock(&f.world);
        assert!(pawns
            .iter()
            .all(|p| w.feature_state(*p, "Hero").unwrap() == 4 && w.feature_state(*p, "Input").unwrap() == 4));
    }

    /// A plugin over its budget gets no further batch in the frame: its events wait, in order, for its next
    /// frame, and go to it before what was queued since; nothing is lost or repeated.
    #[test]
    fn events_for_a_plugin_over_its_frame_budget_wait_for_its_next_frame_in_order() {
        // What the plugin hears in two frames, metered or not: the game spawns pawns, then one more next frame.
        let heard = |metered: bool| {
            let mut f = fixture(|_, _, _| {});
            world::lock(&f.world).add_extension_handler(f.owner, "Pawn", 1).unwrap();
            if metered {
                meter(&f);
            }
            {
                let mut w = world::lock(&f.world);
                (0..5 * MAX_BATCH).for_each(|_| assert!(w.spawn("Pawn").is_ok()));
            }
            let mut seen = f.pump();
            let (calls, held) = (seen.len(), f.instances.get_mut(f.owner).unwrap().held());
            assert_eq!(f.pump(), [], "nothing more in this frame, whatever is pumped");
            end_frame_within_limits(&mut f);
            world::lock(&f.world).spawn("Pawn").unwrap();
            for _ in 0..10 {
                seen.extend(f.pump());
                end_frame_within_limits(&mut f);
            }
            assert_eq!(f.instances.get_mut(f.owner).unwrap().held(), 0);
            (calls, held, events(&seen))
        };
        let (calls, held, metered) = heard(true);
        assert_eq!(calls, 3, "three calls of 1 ms, then over the 2.5 ms budget");
        assert!(held > 0);
        let (_, none_held, unmetered) = heard(false);
        assert_eq!(none_held, 0);
        assert_eq!(metered, unmetered, "each event once, in order, the held ones before the one queued since");
    }

    /// Chains still moving when their plugin goes over budget are walked from where they stopped in its next
    /// frame; every pawn gets to the end.
    #[test]
    fn chains_left_by_a_plugin_over_its_frame_budget_are_walked_in_its_next_frame() {
        let mut f = fixture(|_, _, _| {});
        let pawns: Vec<ActorId> = {
            let mut w = world::lock(&f.world);
            let _hero = w.add_component_request(f.owner, "Pawn", "Hero", RequestFlags::default()).unwrap();
            let pawns: Vec<ActorId> = (0..3 * MAX_BATCH).map(|_| w.spawn("Pawn").unwrap()).collect();
            for pawn in &pawns {
                w.register_feature(f.owner, *pawn, "Hero", "Hero").unwrap();
            }
            pawns
        };
        f.pump();
        meter(&f);
        {
            let mut w = world::lock(&f.world);
            pawns.iter().for_each(|pawn| w.continue_init_state_chain(*pawn, "Hero").unwrap());
        }
        let asked = |seen: &[Seen]| seen.iter().filter(|s| matches!(s, Seen::TryChange(_))).count();
        let mut frames = 0;
        loop {
            let seen = f.pump();
            assert!(asked(&seen) <= 3, "at most three calls of 1 ms a frame: {}", asked(&seen));
            if seen.is_empty() {
                break;
            }
            frames += 1;
            end_frame_within_limits(&mut f);
        }
        assert!(frames > 1, "the walk took more than one frame");
        let w = world::lock(&f.world);
        assert!(pawns.iter().all(|p| w.feature_state(*p, "Hero") == Ok(4)));
    }

    /// Ends the frame without the budget's quarantine: the plugin's frames-over count starts again.
    fn end_frame_within_limits(f: &mut Fixture) {
        let metered = f.metered.lock().unwrap().take();
        end_frame(f);
        *f.metered.lock().unwrap() = metered;
    }

    /// Timers and replicated changes wait like queued work: the timers each once, the changes in order.
    #[test]
    fn timers_and_replicated_changes_wait_for_the_next_frame_of_a_plugin_over_budget() {
        let mut f = fixture(|_, _, _| {});
        meter(&f);
        let timeline = Timeline::new();
        let frame = Frame::default();
        let fired = world::Fired { owner: f.owner, timers: (0..4 * MAX_BATCH as u32).map(|t| (t, 1)).collect() };
        f.instances.fire_timers(&f.world, &timeline, &fired, &frame).unwrap();
        let batch = replicated(MAX_BATCH as u64 + 1);
        assert_eq!(f.instances.notify_replicated(&f.world, &timeline, f.owner, &batch), []);
        let seen = std::mem::take(&mut *f.seen.lock().unwrap());
        assert_eq!(seen.len(), 3, "three calls of timers, then over budget: {}", seen.len());
        assert_eq!(f.instances.with_held_timers(), [f.owner]);
        end_frame_within_limits(&mut f);
        assert_eq!(f.instances.deliver_held(&f.world, &timeline), []);
        let again = world::Fired { owner: f.owner, timers: vec![(0, 1), (4 * MAX_BATCH as u32 - 1, 1)] };
        f.instances.fire_timers(&f.world, &timeline, &again, &frame).unwrap();
        let seen = std::mem::take(&mut *f.seen.lock().unwrap());
        let replicated: Vec<u64> =
            seen.iter().flat_map(|s| if let Seen::Replicated(actors) = s { actors.clone() } else { vec![] }).collect();
        assert_eq!(replicated, batch.actors, "the changes in order, each once");
        let Seen::Timers(timers) = &seen[2] else { panic!("{seen:?}") };
        assert_eq!(timers.len(), MAX_BATCH);
        assert_eq!(timers.last(), Some(&(4 * MAX_BATCH as u32 - 1, 2)), "fired again while waiting: once, twice over");
    }

    /// A batch of `n` replicated changes.
    fn replicated(n: u64) -> ReplicatedBatch {
        let n_usize = n as usize;
        ReplicatedBatch {
            actors: (0..n).collect(),
            components: vec![0; n_usize],
            properties: vec![1; n_usize],
            olds: vec![None; n_usize],
            news: vec![Value::Integer(1); n_usize],
            names: vec!["C".into(), "p".into()],
        }
    }

    /// A plugin with more waiting than may wait is quarantined, and what it sent others goes with it.
    #[test]
    fn a_plugin_too_far_behind_is_quarantined() {
        let mut f = fixture(|_, _, _| {});
        *f.metered.lock().unwrap() = Some((Duration::from_millis(1), Duration::ZERO));
        let timeline = Timeline::new();
        let fired = world::Fired { owner: f.owner, timers: vec![(0, 1)] };
        f.instances.fire_timers(&f.world, &timeline, &fired, &Frame::default()).unwrap();
        let batch = replicated(super::Held::MOST as u64 + 1);
        let failure = f.instances.notify_replicated(&f.world, &timeline, f.owner, &batch).remove(0);
        assert_eq!(failure.call, FRAME_BUDGET_CALL);
        assert!(matches!(&failure.error, CallError::Trapped(c) if c.contains("fell behind")), "{failure:?}");
        assert!(!f.instances.contains(f.owner));
    }
}
