//! Delivery: how the work a world queued for plugins reaches them.
//!
//! A component instance cannot be re-entered while it runs, so the world queues what plugins must hear (the
//! component manager's `Work`: extension events, init-state notifications, property changes, default-
//! initialization checks, chain walks) and this module delivers it after the call that caused it returns:
//! - `rounds`: one round's work grouped per instance into runs of one kind, one batched call each, and chain
//!   walks split into waves;
//! - `dispatch`: the live instances, the rounds, the batched calls (built from the runs into
//!   `feature::batch`'s flat lists), and quarantine of an instance that traps or floods the world;
//! - `frame_budget`: what each plugin's calls cost in a frame, held to its budget;
//! - `heard`: which of the game's actors each plugin heard about in a dispatch, for its allowance of work.
//!
//! Every call into a live instance goes through [`LiveInstance::call`], so nothing a plugin's code costs
//! escapes its frame budget.
//!
//! The kinds of work are one enum (`WorkKind`, beside `Work`), whose order is the order of delivery; grouping
//! and charging follow from it. Adding a kind of work still touches seven places: the WIT; `Work` and
//! `WorkKind`; its batch type (`feature::batch`); its `PluginInstance` method (`feature::plugin`); its export
//! call (`runtime::instance`); its delivery here (`dispatch`); and each language's SDK.

mod dispatch;
mod frame_budget;
mod heard;
mod rounds;

pub use dispatch::{
    DeliveryFailure, DispatchLimits, Instances, LiveInstance, PumpOverflow, FRAME_BUDGET_CALL, MAX_ROUNDS,
};
pub use frame_budget::{FrameCost, FrameSpend, Overrun, FRAMES_OVER_BUDGET};
pub use rounds::MAX_BATCH;
