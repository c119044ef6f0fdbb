//! Delivery: how the work a world queued for plugins reaches them.
//!
//! A component instance cannot be re-entered while it runs, so the world queues what plugins must hear (the
//! component manager's [`Work`](crate::world::component_manager::Work): extension events, init-state
//! notifications, property changes, default-initialization checks, chain walks) and this module delivers it
//! after the call that caused it returns:
//! - `rounds`: one round's work grouped per instance into runs of one kind, one batched call each, and chain
//!   walks split into waves;
//! - `batch`: the batches, laid out as the WIT exports take them (parallel flat lists, each name once), and
//!   `reads`, the property reads a chain step's facts carry;
//! - `plugin_instance`: the seam to the code that runs plugins, [`PluginInstance`], with what one call may cost
//!   before its plugin is quarantined;
//! - `dispatch`: the live instances, the rounds, the batched calls built from the runs, and quarantine of an
//!   instance that traps or floods the world;
//! - `frame_budget`: what each plugin's calls cost in a frame, held to its budget;
//! - `heard`: which of the game's actors each plugin heard about in a dispatch, for its allowance of work;
//! - `held`: what waits for a plugin's next frame once deliveries to it went over its frame budget.
//!
//! Every call into a live instance goes through [`LiveInstance::call`], so nothing a plugin's code costs
//! escapes its frame budget.
//!
//! The queue itself is the world's: every change the world makes under its lock appends to it, as Unreal's
//! component manager owns its init-state queue, and this module sits above the world, reading it (the world
//! cannot use a module that uses it). The kinds of work are one enum (`WorkKind`, beside `Work`), whose order is
//! the order of delivery; grouping and charging follow from it, and every plain batch is built by one builder
//! (`run_batch`). Adding a kind of work delivered in batches touches, counted when property watches came:
//! 1. the WIT export;
//! 2. the world's queue: its `Work` variant and `WorkKind`;
//! 3. this folder: its batch type with its `RunBatch` (the export's name, how an item goes in, the call), its
//!    [`PluginInstance`] method, and one line of `dispatch` naming the batch for the kind;
//! 4. its export call in `runtime::instance`;
//! 5. each language's SDK.

mod batch;
mod dispatch;
mod frame_budget;
mod heard;
mod held;
mod plugin_instance;
mod reads;
mod rounds;
mod run_batch;

pub use batch::{
    BatchNames, ChainBatch, ChainFacts, ChainWalk, ExtensionBatch, FeatureBatch, PropertyBatch, ReplicatedBatch,
    StateChangeBatch,
};
pub use dispatch::{
    DeliveryFailure, DispatchLimits, Instances, LiveInstance, PumpOverflow, FRAME_BUDGET_CALL, MAX_ROUNDS,
};
pub use frame_budget::{FrameCost, FrameSpend, Overrun, FRAMES_OVER_BUDGET};
pub use plugin_instance::{
    within_refusal_budget, ActivationContext, CallError, Deactivation, PluginInstance, Refusals, REFUSED_CALLS_BUDGET,
    WORLD_CHANGES_PER_CALL, WORLD_CHANGES_PER_ENTRY,
};
pub use reads::{PropertyReads, ReadKind};
pub use rounds::MAX_BATCH;
