//! Work held for a plugin over its frame budget: once what was delivered to it in a frame cost more than its
//! budget, the rest of its work for that frame waits here and goes to it first in its next frame.
//!
//! Each kind waits in the form that keeps it bounded: queued work as it was queued (events, notifications,
//! property changes, default-initialization checks, and chains still to walk), each with the plugin it is
//! charged to; timers each once, the periods that passed summed, so a repeating timer fires at most once per
//! frame however long it waits; replicated changes in their batches. What waits counts against the plugin: past
//! [`Held::MOST`] entries it is quarantined (see `dispatch`), and it is quarantined anyway once it has been over
//! budget for [`FRAMES_OVER_BUDGET`](super::FRAMES_OVER_BUDGET) frames in a row.

use std::collections::VecDeque;

use super::batch::ReplicatedBatch;
use crate::world::component_manager::{Charge, ChargedWork, OwnerId, Work};

/// What waits for one plugin's next frame.
#[derive(Debug, Default)]
pub(super) struct Held {
    work: ChargedWork,
    /// Timers that fired while it was over budget, each once (the periods that passed summed), in the order they
    /// first fired.
    timers: Vec<(u32, u32)>,
    /// Replicated changes, in batches of at most a call's size, in the order they arrived.
    replicated: VecDeque<ReplicatedBatch>,
    replicated_changes: usize,
}

impl Held {
    /// The most entries that may wait for one plugin (work items, timers and replicated changes together): as
    /// much as one dispatch may deliver for it (`DispatchLimits::work`'s default).
    pub const MOST: usize = 100_000;

    /// Entries waiting.
    pub fn len(&self) -> usize {
        self.work.len() + self.timers.len() + self.replicated_changes
    }

    /// Holds queued work, each item charged to `root` (the plugin its delivery is charged to) as when it was
    /// queued.
    pub fn hold_work<'a>(&mut self, items: impl Iterator<Item = &'a Work>, root: Option<OwnerId>) {
        for item in items {
            self.work.push(item.clone(), Charge { sender: item.sender(), root });
        }
    }

    /// The queued work waiting, in the order it was held, to go before anything queued since.
    pub fn take_work(&mut self) -> ChargedWork {
        std::mem::take(&mut self.work)
    }

    /// Forgets the events `sender` sent (it is gone: its events die with it).
    pub fn forget_sender(&mut self, sender: OwnerId) {
        if !self.work.is_empty() {
            self.work.retain(|item| item.sender() != Some(sender));
        }
    }

    /// The timers due now: those waiting, then `fired` (a timer in both once, its periods summed).
    pub fn timers_due(&mut self, fired: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut due = std::mem::take(&mut self.timers);
        coalesce_timers(&mut due, fired);
        due
    }

    /// Holds timers that were due but not delivered.
    pub fn hold_timers(&mut self, timers: Vec<(u32, u32)>) {
        coalesce_timers(&mut self.timers, &timers);
    }

    /// Whether timers wait.
    pub fn has_timers(&self) -> bool {
        !self.timers.is_empty()
    }

    /// Holds replicated changes, after those already waiting.
    pub fn hold_replicated(&mut self, batches: impl IntoIterator<Item = ReplicatedBatch>) {
        for batch in batches {
            self.replicated_changes += batch.actors.len();
            self.replicated.push_back(batch);
        }
    }

    /// The oldest batch of replicated changes waiting.
    pub fn next_replicated(&mut self) -> Option<ReplicatedBatch> {
        let batch = self.replicated.pop_front()?;
        self.replicated_changes -= batch.actors.len();
        Some(batch)
    }

    /// Whether replicated changes wait.
    pub fn has_replicated(&self) -> bool {
        !self.replicated.is_empty()
    }
}

/// Adds `fired` to `due`: a timer already there has its periods added (saturating), a new one goes last.
fn coalesce_timers(due: &mut Vec<(u32, u32)>, fired: &[(u32, u32)]) {
    if due.is_empty() {
        due.extend_from_slice(fired);
        return;
    }
    let mut at: std::collections::HashMap<u32, usize> =
        due.iter().enumerate().map(|(i, (timer, _))| (*timer, i)).collect();
    for (timer, times) in fired {
        match at.get(timer) {
            Some(i) => due[*i].1 = due[*i].1.saturating_add(*times),
            None => {
                at.insert(*timer, due.len());
                due.push((*timer, *times));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::component_manager::Names;
    use crate::world::ActorId;

    #[test]
    fn timers_held_coalesce_with_those_fired_again() {
        let mut held = Held::default();
        held.hold_timers(vec![(1, 1), (2, 3)]);
        held.hold_timers(vec![(2, 1), (3, 1)]);
        assert_eq!(held.len(), 3, "each timer waits once");
        assert_eq!(held.timers_due(&[(3, 2), (4, 1), (1, u32::MAX)]), [(1, u32::MAX), (2, 4), (3, 3), (4, 1)]);
        assert_eq!(held.len(), 0);
    }

    #[test]
    fn held_work_keeps_its_order_and_charge_and_loses_a_gone_senders_events() {
        let mut names = Names::default();
        let name = names.intern("E");
        let (a, b) = (OwnerId(1), OwnerId(2));
        let event = |n: u64, sender: Option<OwnerId>| Work::Extension {
            owner: a,
            handler: crate::world::component_manager::HandlerId(1),
            number: 1,
            actor: ActorId::from_raw(n),
            event: name,
            final_event: false,
            sender,
        };
        let mut held = Held::default();
        let items = [event(1, None), event(2, Some(b)), event(3, None)];
        held.hold_work(items.iter(), Some(b));
        assert_eq!(held.len(), 3);
        held.forget_sender(b);
        let work = held.take_work();
        let kept: Vec<(u64, Charge)> = work.iter().map(|(w, c)| (w.actor().to_raw(), c)).collect();
        let charged = Charge { sender: None, root: Some(b) };
        assert_eq!(kept, [(1, charged), (3, charged)]);
        assert_eq!(held.len(), 0);
    }

    #[test]
    fn replicated_batches_wait_in_order_and_count_their_changes() {
        let batch = |actors: &[u64]| ReplicatedBatch { actors: actors.to_vec(), ..Default::default() };
        let mut held = Held::default();
        held.hold_replicated([batch(&[1, 2]), batch(&[3])]);
        assert_eq!(held.len(), 3);
        assert_eq!(held.next_replicated().unwrap().actors, [1, 2]);
        assert_eq!(held.len(), 1);
        assert_eq!(held.next_replicated().unwrap().actors, [3]);
        assert!(!held.has_replicated() && held.len() == 0);
    }
}
