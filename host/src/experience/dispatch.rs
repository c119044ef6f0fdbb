//! Delivers a world's queued work to its plugin instances.
//!
//! Host calls never call back into Wasm (an instance cannot be re-entered while it runs); they queue
//! [`Work`] in the world instead, and [`Instances::pump`] delivers it once no plugin is running. Delivery is
//! FIFO: the queue is taken whole, each run of consecutive items of one kind for one instance becomes one
//! batched call, and whatever those calls queue is delivered in the next round, after everything before it.
//! Init-state chains are walked in lockstep: every chain of a run takes one step per round, so a thousand
//! pawns cost a handful of calls, and one batch never holds two chains of the same actor.

use std::collections::{BTreeMap, HashSet};

use crate::component::{OwnerId, Work};
use crate::feature::{
    within_refusal_budget, BatchNames, CallError, ChainBatch, ExtensionBatch, FeatureBatch, PluginInstance,
    StateChangeBatch,
};
use crate::timeline::{track, EventKind, Timeline};
use crate::world::{self, ActorId, SharedWorld, World};

/// Rounds after which a pump gives up: plugins that keep causing work for each other forever would otherwise
/// hang the world (Unreal caps plugin state transitions the same way).
pub const MAX_ROUNDS: usize = 10_000;

/// A plugin instance the dispatcher can deliver to.
pub struct LiveInstance {
    pub plugin: String,
    pub instance: Box<dyn PluginInstance>,
}

/// A delivery that failed: the instance refused or trapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFailure {
    pub owner: OwnerId,
    pub plugin: String,
    pub call: &'static str,
    pub error: CallError,
}

/// The live plugin instances of one world, by owner.
#[derive(Default)]
pub struct Instances {
    live: BTreeMap<OwnerId, LiveInstance>,
}

impl Instances {
    pub fn insert(&mut self, owner: OwnerId, instance: LiveInstance) {
        self.live.insert(owner, instance);
    }

    pub fn remove(&mut self, owner: OwnerId) -> Option<LiveInstance> {
        self.live.remove(&owner)
    }

    pub fn get_mut(&mut self, owner: OwnerId) -> Option<&mut LiveInstance> {
        self.live.get_mut(&owner)
    }

    pub fn contains(&self, owner: OwnerId) -> bool {
        self.live.contains_key(&owner)
    }

    /// Delivers queued work until none is left (or [`MAX_ROUNDS`] pass). A trapped instance is removed, its
    /// work discarded and everything it added to the world removed; failures are returned for the caller to
    /// report.
    pub fn pump(&mut self, world: &SharedWorld, timeline: &Timeline) -> Result<Vec<DeliveryFailure>, PumpOverflow> {
        let mut failures = Vec::new();
        for _ in 0..MAX_ROUNDS {
            let work = world::lock(world).take_work();
            if work.is_empty() {
                return Ok(failures);
            }
            for (owner, kinds) in by_owner(work) {
                for items in kinds.iter().filter(|items| !items.is_empty()) {
                    if let Err(failure) = self.deliver(world, timeline, owner, items) {
                        let mut w = world::lock(world);
                        w.remove_owner(owner);
                        w.discard_work(owner);
                        drop(w);
                        self.live.remove(&owner);
                        failures.push(failure);
                        break;
                    }
                }
            }
        }
        Err(PumpOverflow { rounds: MAX_ROUNDS, failures })
    }

    fn deliver(
        &mut self,
        world: &SharedWorld,
        timeline: &Timeline,
        owner: OwnerId,
        run: &[Work],
    ) -> Result<(), DeliveryFailure> {
        let Some(live) = self.live.get_mut(&owner) else {
            return Ok(()); // The host's own work, or an instance already gone.
        };
        let world_name = world::lock(world).name().to_string();
        let outcome = match &run[0] {
            Work::Extension { .. } => {
                let batch = extension_batch(&world::lock(world), run);
                call_batch(live, timeline, &world_name, "handle-extension-events", batch.actors.len(), |i| {
                    i.handle_extension_events(&batch)
                })
            }
            Work::InitStateChanged { .. } => {
                let batch = state_change_batch(&world::lock(world), run);
                call_batch(live, timeline, &world_name, "on-init-states-changed", batch.actors.len(), |i| {
                    i.on_init_states_changed(&batch)
                })
            }
            Work::CheckDefaultInitialization { .. } => {
                let batch = feature_batch(&world::lock(world), run);
                call_batch(live, timeline, &world_name, "check-default-initializations", batch.actors.len(), |i| {
                    i.check_default_initializations(&batch)
                })
            }
            Work::ContinueChain { .. } => {
                let live_chains: Vec<(ActorId, crate::component::Name)> = {
                    let w = world::lock(world);
                    let mut seen = HashSet::new();
                    run.iter()
                        .filter(|item| w.is_work_live(item))
                        .filter_map(|item| match item {
                            Work::ContinueChain { actor, feature, .. } => Some((*actor, *feature)),
                            _ => None,
                        })
                        .filter(|chain| seen.insert(*chain))
                        .collect()
                };
                waves(live_chains).iter().try_for_each(|wave| walk_chains(world, live, wave))
            }
        };
        outcome.map_err(|(call, error)| DeliveryFailure { owner, plugin: live.plugin.clone(), call, error })
    }
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
    timeline.record(track::instance(&live.plugin, world_name), EventKind::Call, format!("{call} ({entries})"));
    let outcome = send(live.instance.as_mut());
    within_refusal_budget(live.instance.as_mut(), entries, outcome).map_err(|e| (call, e))
}

/// The pump gave up after [`MAX_ROUNDS`] rounds of work causing more work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugins kept causing work for {rounds} rounds; delivery stopped")]
pub struct PumpOverflow {
    pub rounds: usize,
    pub failures: Vec<DeliveryFailure>,
}

/// Groups a round's work by instance (instances in the order of their first item) and, per instance, by kind
/// in delivery order — extension events, init-state notifications, default-initialization checks, chain walks
/// — each kind keeping the order its items were queued in. One instance's work of a round is then a handful
/// of batched calls however many actors it concerns.
fn by_owner(work: Vec<Work>) -> Vec<(OwnerId, [Vec<Work>; 4])> {
    let mut groups: Vec<(OwnerId, [Vec<Work>; 4])> = Vec::new();
    for item in work {
        let owner = item.owner();
        let kind = match item {
            Work::Extension { .. } => 0,
            Work::InitStateChanged { .. } => 1,
            Work::CheckDefaultInitialization { .. } => 2,
            Work::ContinueChain { .. } => 3,
        };
        let index = match groups.iter().position(|(o, _)| *o == owner) {
            Some(index) => index,
            None => {
                groups.push((owner, Default::default()));
                groups.len() - 1
            }
        };
        groups[index].1[kind].push(item);
    }
    groups
}

/// Splits chains into waves in which each actor appears once, keeping their order.
fn waves(chains: Vec<(ActorId, crate::component::Name)>) -> Vec<Vec<(ActorId, crate::component::Name)>> {
    let mut waves: Vec<(HashSet<ActorId>, Vec<_>)> = Vec::new();
    for chain in chains {
        match waves.iter_mut().find(|(actors, _)| !actors.contains(&chain.0)) {
            Some((actors, wave)) => {
                actors.insert(chain.0);
                wave.push(chain);
            }
            None => waves.push((HashSet::from([chain.0]), vec![chain])),
        }
    }
    waves.into_iter().map(|(_, wave)| wave).collect()
}

/// Walks chains in lockstep: ask every chain's next step, let those allowed prepare it, apply them, repeat
/// with those that moved until none can.
fn walk_chains(
    world: &SharedWorld,
    live: &mut LiveInstance,
    wave: &[(ActorId, crate::component::Name)],
) -> Result<(), (&'static str, CallError)> {
    let mut moving: Vec<(ActorId, crate::component::Name)> = wave.to_vec();
    while !moving.is_empty() {
        let (steps, batch) = {
            let w = world::lock(world);
            let steps: Vec<_> = moving
                .iter()
                .filter_map(|(actor, feature)| w.next_chain_step(*actor, *feature).map(|step| (*actor, *feature, step)))
                .collect();
            let batch = chain_batch(&w, &steps);
            (steps, batch)
        };
        if steps.is_empty() {
            return Ok(());
        }
        let answers = live.instance.can_change_init_states(&batch);
        let answers = within_refusal_budget(live.instance.as_mut(), batch.actors.len(), answers)
            .map_err(|e| ("can-change-init-states", e))?;
        let allowed: Vec<_> = steps.iter().zip(&answers).filter(|(_, yes)| **yes).map(|(step, _)| *step).collect();
        if allowed.is_empty() {
            return Ok(());
        }
        let batch = chain_batch(&world::lock(world), &allowed);
        let outcome = live.instance.handle_change_init_states(&batch);
        within_refusal_budget(live.instance.as_mut(), batch.actors.len(), outcome)
            .map_err(|e| ("handle-change-init-states", e))?;
        let mut w = world::lock(world);
        for (actor, feature, (_, desired)) in &allowed {
            w.advance_feature(*actor, *feature, *desired);
        }
        moving = allowed.iter().map(|(actor, feature, _)| (*actor, *feature)).collect();
    }
    Ok(())
}

fn text(w: &World, name: crate::component::Name) -> impl FnOnce() -> String + '_ {
    move || w.name_text(name).to_string()
}

fn extension_batch(w: &World, run: &[Work]) -> ExtensionBatch {
    let mut names = BatchNames::default();
    let mut batch = ExtensionBatch::default();
    for item in run.iter().filter(|item| w.is_work_live(item)) {
        if let Work::Extension { number, actor, event, .. } = item {
            batch.handlers.push(*number);
            batch.actors.push(actor.to_raw());
            batch.events.push(names.index(*event, text(w, *event)));
        }
    }
    batch.names = names.names;
    batch
}

fn state_change_batch(w: &World, run: &[Work]) -> StateChangeBatch {
    let mut names = BatchNames::default();
    let mut batch = StateChangeBatch::default();
    for item in run.iter().filter(|item| w.is_work_live(item)) {
        if let Work::InitStateChanged { number, actor, feature, state, .. } = item {
            batch.ids.push(*number);
            batch.actors.push(actor.to_raw());
            batch.features.push(names.index(*feature, text(w, *feature)));
            batch.states.push(*state);
        }
    }
    batch.names = names.names;
    batch
}

fn feature_batch(w: &World, run: &[Work]) -> FeatureBatch {
    let mut names = BatchNames::default();
    let mut batch = FeatureBatch::default();
    for item in run.iter().filter(|item| w.is_work_live(item)) {
        if let Work::CheckDefaultInitialization { actor, feature, .. } = item {
            batch.actors.push(actor.to_raw());
            batch.features.push(names.index(*feature, text(w, *feature)));
        }
    }
    batch.names = names.names;
    batch
}

fn chain_batch(w: &World, steps: &[(ActorId, crate::component::Name, (u8, u8))]) -> ChainBatch {
    let mut names = BatchNames::default();
    let mut batch = ChainBatch::default();
    for (actor, feature, (current, desired)) in steps {
        batch.actors.push(actor.to_raw());
        batch.features.push(names.index(*feature, text(w, *feature)));
        batch.currents.push(*current);
        batch.desireds.push(*desired);
    }
    batch.names = names.names;
    batch
}
