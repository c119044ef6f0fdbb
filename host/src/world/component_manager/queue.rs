//! The work queue: everything the component manager must tell plugins, in the order it happened.
//!
//! A component instance cannot be re-entered while it runs, so host calls never call back into Wasm: they
//! queue work here, and the world's dispatcher delivers it after the current call returns, FIFO. Work caused
//! while delivering is appended and delivered after everything queued before it — Unreal's init-state queue,
//! applied to every callback.

use super::names::Name;
use super::{HandlerId, OwnerId, SubscriptionId, WatchId};
use crate::world::{ActorId, Value};

/// One thing to tell one plugin.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// An extension event for a handler. `final_event` marks the `ExtensionRemoved` sent when the handler goes:
    /// it is delivered even though the handler is gone by then; other events for a removed handler are dropped.
    /// `sender` is the plugin that sent a custom event: its events die with it.
    Extension {
        /// The plugin instance the handler belongs to, which gets the event.
        owner: OwnerId,
        /// The handler the event is for.
        handler: HandlerId,
        /// The plugin's own number for the handler, echoed back with the event.
        number: u32,
        /// The receiver the event is about.
        actor: ActorId,
        /// The event's name: a built-in one (see [`events`](super::events)) or a custom one.
        event: Name,
        /// Whether this is the `ExtensionRemoved` a removed handler hears last.
        final_event: bool,
        /// The plugin that sent this custom event; `None` for built-in events and events the host sent.
        sender: Option<OwnerId>,
    },
    /// A subscription saw a feature reach a state (the state at the time of the change).
    InitStateChanged {
        /// The plugin instance that subscribed, which gets the notification.
        owner: OwnerId,
        /// The subscription that saw the change.
        subscription: SubscriptionId,
        /// The plugin's own number for the subscription, echoed back with the notification.
        number: u32,
        /// The actor whose feature changed state.
        actor: ActorId,
        /// The feature that changed state.
        feature: Name,
        /// The state it reached, as an ordinal of the world's init-state order.
        state: u8,
    },
    /// Walk a feature's init-state chain, asking its implementer.
    ContinueChain {
        /// The plugin instance implementing the feature, whose callbacks decide each step.
        owner: OwnerId,
        /// The actor whose feature is walked.
        actor: ActorId,
        /// The feature to walk.
        feature: Name,
    },
    /// Ask a feature's implementer to try to move it forward.
    CheckDefaultInitialization {
        /// The plugin instance implementing the feature, which is asked.
        owner: OwnerId,
        /// The actor whose feature it is.
        actor: ActorId,
        /// The feature to move forward.
        feature: Name,
    },
    /// A watched property changed (see `PropertyWatches`).
    PropertyChanged {
        /// The plugin instance that set up the watch, which hears the change.
        owner: OwnerId,
        /// The watch that saw the change.
        watch: WatchId,
        /// The plugin's own number for the watch, echoed back with the change.
        number: u32,
        /// The actor whose watched property changed.
        actor: ActorId,
        /// Boxed: the values would make every queued item (an event, a chain step) several times larger, and a
        /// round moves its items a few times.
        change: Box<ValueChange>,
    },
}

/// The kinds of work, in the order an instance's work of a round is delivered to it: extension events first
/// (a handler learns of its receivers before anything about them), chain walks last (they see everything the
/// round told the instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    /// [`Work::Extension`]: extension events for handlers.
    Extension,
    /// [`Work::InitStateChanged`]: init-state notifications for subscriptions.
    InitStateChanged,
    /// [`Work::PropertyChanged`]: changes of watched properties.
    PropertyChanged,
    /// [`Work::CheckDefaultInitialization`]: asks to move features forward.
    CheckDefaultInitialization,
    /// [`Work::ContinueChain`]: chain walks.
    ContinueChain,
}

impl WorkKind {
    /// How many kinds there are: `kind as usize` is below it.
    pub const COUNT: usize = 5;
}

impl Work {
    /// What kind of work this is.
    #[inline]
    pub fn kind(&self) -> WorkKind {
        match self {
            Work::Extension { .. } => WorkKind::Extension,
            Work::InitStateChanged { .. } => WorkKind::InitStateChanged,
            Work::PropertyChanged { .. } => WorkKind::PropertyChanged,
            Work::CheckDefaultInitialization { .. } => WorkKind::CheckDefaultInitialization,
            Work::ContinueChain { .. } => WorkKind::ContinueChain,
        }
    }

    /// The plugin whose call caused this work, when it is a custom event a plugin sent.
    #[inline]
    pub fn sender(&self) -> Option<OwnerId> {
        match self {
            Work::Extension { sender, .. } => *sender,
            _ => None,
        }
    }

    /// The actor this work is about.
    #[inline]
    pub fn actor(&self) -> ActorId {
        match self {
            Work::Extension { actor, .. }
            | Work::InitStateChanged { actor, .. }
            | Work::ContinueChain { actor, .. }
            | Work::CheckDefaultInitialization { actor, .. }
            | Work::PropertyChanged { actor, .. } => *actor,
        }
    }

    /// The plugin instance this work is for.
    #[inline]
    pub fn owner(&self) -> OwnerId {
        match self {
            Work::Extension { owner, .. }
            | Work::InitStateChanged { owner, .. }
            | Work::ContinueChain { owner, .. }
            | Work::CheckDefaultInitialization { owner, .. }
            | Work::PropertyChanged { owner, .. } => *owner,
        }
    }
}

/// A property's value before and after a change (`None`: unset, or its component absent).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueChange {
    /// The property's value before the change; `None` when it was unset or its component did not exist.
    pub old: Option<Value>,
    /// Its value after the change; `None` when the change removed it, or its component.
    pub new: Option<Value>,
}

/// Who a queued item is charged to. Both are `None` for work the host's own code caused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Charge {
    /// The plugin whose host call queued it.
    pub sender: Option<OwnerId>,
    /// The plugin everything it leads to is charged to: the sender — or, when the sender was handling work
    /// another plugin caused, that plugin. A plugin flooding the world through others pays for all of it.
    pub root: Option<OwnerId>,
}

/// Work in queue order, each item with its [`Charge`]. A charge is kept where it changes rather than beside
/// every item: consecutive items mostly share one (a call's events, the game's own frame), and a frame's work can
/// be a hundred thousand items, each read twice as it is delivered, so an item is its work alone (40 bytes, not
/// 56).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ChargedWork {
    items: Vec<Work>,
    /// Where each stretch of items charged alike starts, with its charge, in order: the first starts at 0.
    stretches: Vec<(u32, Charge)>,
}

impl ChargedWork {
    /// No work, with room for `items` items.
    pub fn with_capacity(items: usize) -> Self {
        ChargedWork { items: Vec::with_capacity(items), stretches: Vec::new() }
    }

    /// Appends `work`, charged to `charge`. Always inlined: called per item from the queue's own `push`, and
    /// an item handed down by pointer is read back from the stack as it is copied in (a stall per item).
    #[inline(always)]
    pub fn push(&mut self, work: Work, charge: Charge) {
        if self.stretches.last().is_none_or(|(_, last)| *last != charge) {
            self.stretches.push((self.items.len() as u32, charge));
        }
        self.items.push(work);
    }

    /// Appends every item of `work`, all charged to `charge`: the charge is looked at once, not per item.
    #[inline(always)]
    pub fn extend(&mut self, charge: Charge, work: impl Iterator<Item = Work>) {
        let start = self.items.len();
        self.items.extend(work);
        if self.items.len() > start && self.stretches.last().is_none_or(|(_, last)| *last != charge) {
            self.stretches.push((start as u32, charge));
        }
    }

    /// Appends every item of `later`, each with its charge.
    pub fn append(&mut self, later: ChargedWork) {
        let offset = self.items.len() as u32;
        for (start, charge) in later.stretches {
            if self.stretches.last().is_none_or(|(_, last)| *last != charge) {
                self.stretches.push((start + offset, charge));
            }
        }
        self.items.extend(later.items);
    }

    /// Puts every item of `earlier`, each with its charge, before the items there are.
    pub fn prepend(&mut self, earlier: ChargedWork) {
        let later = std::mem::replace(self, earlier);
        self.append(later);
    }

    /// The items, in order.
    pub fn items(&self) -> &[Work] {
        &self.items
    }

    /// The items in stretches charged alike, in order: each stretch's items and their charge.
    pub fn stretches(&self) -> impl Iterator<Item = (&[Work], Charge)> + '_ {
        let ends = self.stretches.iter().skip(1).map(|(start, _)| *start as usize).chain([self.items.len()]);
        self.stretches.iter().zip(ends).map(|((start, charge), end)| (&self.items[*start as usize..end], *charge))
    }

    /// Every item with its charge, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Work, Charge)> + '_ {
        self.stretches().flat_map(|(items, charge)| items.iter().map(move |item| (item, charge)))
    }

    /// Keeps the items `keep` is true of, and their charges.
    pub fn retain(&mut self, mut keep: impl FnMut(&Work) -> bool) {
        let stretches = std::mem::take(&mut self.stretches);
        let (mut stretch, mut index, mut kept) = (0, 0u32, 0u32);
        let stretches_ref = &mut self.stretches;
        // `Vec::retain` visits every item once, in order: each item's charge is found by walking the old stretches
        // beside it, and the kept items' stretches are written afresh.
        self.items.retain(|item| {
            while stretches.get(stretch + 1).is_some_and(|(start, _)| *start <= index) {
                stretch += 1;
            }
            index += 1;
            if !keep(item) {
                return false;
            }
            let charge = stretches[stretch].1;
            if stretches_ref.last().is_none_or(|(_, last)| *last != charge) {
                stretches_ref.push((kept, charge));
            }
            kept += 1;
            true
        });
    }

    /// Charges each item to what `charge` says, given the item and its charge now. The items stay where they are;
    /// only the stretches are written again.
    pub fn recharge(&mut self, mut charge: impl FnMut(&Work, Charge) -> Charge) {
        let stretches = std::mem::take(&mut self.stretches);
        let ends = stretches.iter().skip(1).map(|(start, _)| *start as usize).chain([self.items.len()]);
        for ((start, now), end) in stretches.iter().zip(ends) {
            for index in *start as usize..end {
                let charge = charge(&self.items[index], *now);
                if self.stretches.last().is_none_or(|(_, last)| *last != charge) {
                    self.stretches.push((index as u32, charge));
                }
            }
        }
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl FromIterator<(Work, Charge)> for ChargedWork {
    fn from_iter<I: IntoIterator<Item = (Work, Charge)>>(items: I) -> Self {
        let items = items.into_iter();
        let mut work = ChargedWork::with_capacity(items.size_hint().0);
        for (item, charge) in items {
            work.push(item, charge);
        }
        work
    }
}

/// Work waiting for delivery, each item with its [`Charge`].
#[derive(Debug, Default)]
pub struct WorkQueue {
    // Not a deque: items are only ever appended, and a round takes all of them at once, so taking is handing the
    // buffer over rather than moving every item.
    items: ChargedWork,
    /// A delivered round's buffer, emptied and handed back (`recycle`): the next take starts with it rather than
    /// with fresh memory, so a busy world's frames allocate no queue.
    spare: ChargedWork,
    /// What new work is charged to: the plugin whose host call is running, if one is.
    acting: Charge,
    /// The plugin whose work is being delivered, if a plugin caused it: the root of the work its handlers make.
    delivering: Option<OwnerId>,
}

impl WorkQueue {
    /// The most items a take reserves room for (5 MiB): past it, the queue grows as it fills.
    const MOST_RESERVED: usize = 1 << 17;

    /// Queues `work`, charged to the plugin whose host call is running, or to the plugin whose work is being
    /// delivered, or to nobody when the game caused it.
    #[inline]
    pub fn push(&mut self, work: Work) {
        let charge = self.charge();
        self.items.push(work, charge);
    }

    /// Queues every item of `work` as [`push`](Self::push) would, one after the other (an event for each of a
    /// class's handlers, say).
    #[inline]
    pub fn push_all(&mut self, work: impl Iterator<Item = Work>) {
        let charge = self.charge();
        self.items.extend(charge, work);
    }

    /// What work queued now is charged to.
    #[inline]
    fn charge(&self) -> Charge {
        // Work the host does itself while delivering a plugin's work (walking the chains it continued, say) is
        // that plugin's too: only work the game started is charged to nobody.
        match self.acting.sender {
            Some(_) => self.acting,
            None => Charge { sender: None, root: self.delivering },
        }
    }

    /// Charges the work queued from now on to `owner`'s host call (`None`: to the host).
    pub fn act_as(&mut self, owner: Option<OwnerId>) {
        self.acting = Charge { sender: owner, root: owner.map(|owner| self.delivering.unwrap_or(owner)) };
    }

    /// Says whose work is being delivered (`None`: the host's, or none).
    pub fn delivering(&mut self, root: Option<OwnerId>) {
        self.delivering = root;
    }

    /// Takes everything queued so far; work queued while it is delivered waits for the next take.
    pub fn take(&mut self) -> Vec<Work> {
        self.take_charged().items
    }

    /// As [`take`](Self::take), with what each item is charged to. The work the taken items cause is usually
    /// about as much (a batch of ten thousand spawns answered by ten thousand chain walks), so the queue starts
    /// again at their number rather than doubling its way up from nothing, copying every item and touching
    /// fresh memory at each step.
    pub fn take_charged(&mut self) -> ChargedWork {
        if self.items.is_empty() {
            // Nothing to hand over: the queue keeps its buffer, and the spare stays spare.
            return ChargedWork::default();
        }
        let expected = self.items.len().min(Self::MOST_RESERVED);
        let next = if self.spare.items.capacity() >= expected {
            std::mem::take(&mut self.spare)
        } else {
            ChargedWork::with_capacity(expected)
        };
        std::mem::replace(&mut self.items, next)
    }

    /// Takes back the buffer of work that was delivered, emptied, for a later take to start with. Of two
    /// buffers the larger is kept, and none of room for more than twice the items a take reserves: a world keeps
    /// at most its queue's buffer and this one (10 MiB of room each at most), which a busy world's every frame
    /// uses again.
    pub fn recycle(&mut self, mut delivered: ChargedWork) {
        if delivered.items.capacity() > self.spare.items.capacity()
            && delivered.items.capacity() <= 2 * Self::MOST_RESERVED
        {
            delivered.items.clear();
            delivered.stretches.clear();
            self.spare = delivered;
        }
    }

    /// The charges of the work still queued: each once per stretch of items charged alike, in order (a charge can
    /// come again after another).
    pub fn charges(&self) -> impl Iterator<Item = Charge> + '_ {
        self.items.stretches().map(|(_, charge)| charge)
    }

    /// Forgets every item for `owner` (a plugin being deactivated or quarantined), and the events it sent.
    pub fn discard_owner(&mut self, owner: OwnerId) {
        self.items.retain(|w| w.owner() != owner && w.sender() != Some(owner));
    }

    /// How many items are queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::component_manager::names::Names;

    #[test]
    fn charged_work_keeps_each_items_charge_through_retain_and_recharge() {
        let (a, b) = (OwnerId(1), OwnerId(2));
        let walk = |n: u64| Work::ContinueChain {
            owner: a,
            actor: ActorId::from_raw(n),
            feature: Names::default().intern("F"),
        };
        let by = |owner: Option<OwnerId>| Charge { sender: owner, root: owner };
        let charges = [by(None), by(None), by(Some(a)), by(Some(a)), by(Some(b)), by(None)];
        let all: Vec<(Work, Charge)> = charges.iter().enumerate().map(|(n, c)| (walk(n as u64), *c)).collect();
        let mut work: ChargedWork = all.iter().cloned().collect();
        assert_eq!(work.stretches().count(), 4, "a charge is kept where it changes");
        assert_eq!(work.iter().map(|(w, c)| (w.clone(), c)).collect::<Vec<_>>(), all);
        // Dropping the items charged to `a` joins the stretches on either side.
        work.retain(|w| !matches!(w.actor().to_raw(), 2 | 3));
        assert_eq!(
            work.iter().map(|(w, c)| (w.actor().to_raw(), c)).collect::<Vec<_>>(),
            [(0, by(None)), (1, by(None)), (4, by(Some(b))), (5, by(None))]
        );
        work.recharge(|w, now| if w.actor().to_raw() == 5 { by(Some(b)) } else { now });
        assert_eq!(
            work.stretches().map(|(items, c)| (items.len(), c)).collect::<Vec<_>>(),
            [(2, by(None)), (2, by(Some(b)))]
        );
        // Held work put back before a round's: each item keeps its charge, and like charges meeting join.
        let mut earlier: ChargedWork = [(walk(7), by(Some(a))), (walk(8), by(None))].into_iter().collect();
        earlier.append(ChargedWork::default());
        work.prepend(earlier);
        assert_eq!(
            work.iter().map(|(w, c)| (w.actor().to_raw(), c)).collect::<Vec<_>>(),
            [(7, by(Some(a))), (8, by(None)), (0, by(None)), (1, by(None)), (4, by(Some(b))), (5, by(Some(b)))]
        );
        assert_eq!(work.stretches().count(), 3);
    }

    #[test]
    fn a_recycled_buffer_comes_back_empty_and_is_used_again() {
        let feature = Names::default().intern("F");
        let walk = |n: u64| Work::ContinueChain { owner: OwnerId(1), actor: ActorId::from_raw(n), feature };
        let mut queue = WorkQueue::default();
        queue.push_all((0..100).map(walk));
        let first = queue.take_charged();
        assert_eq!(first.len(), 100);
        let capacity = first.items.capacity();
        queue.recycle(first);
        queue.push(walk(500));
        // The queue's buffer is handed over; the recycled one, emptied, takes its place.
        let second = queue.take_charged();
        assert_eq!(second.items(), [walk(500)]);
        assert!(queue.items.is_empty() && queue.items.items.capacity() >= capacity);
        assert!(queue.take_charged().is_empty(), "an empty take hands nothing over");
    }

    #[test]
    fn discarding_an_owner_drops_its_work_and_the_events_it_sent() {
        let mut names = Names::default();
        let event = names.intern("Flood");
        let (sender, receiver) = (OwnerId(1), OwnerId(2));
        let extension = |sender| Work::Extension {
            owner: receiver,
            handler: HandlerId(7),
            number: 1,
            actor: ActorId::from_raw(1),
            event,
            final_event: false,
            sender,
        };
        let mut queue = WorkQueue::default();
        queue.push(extension(Some(sender)));
        queue.push(extension(None));
        queue.push(Work::ContinueChain { owner: sender, actor: ActorId::from_raw(1), feature: event });
        queue.discard_owner(sender);
        assert_eq!(queue.take(), vec![extension(None)]);
    }
}
