//! How one round of a dispatch's work is laid out for delivery: grouped into runs, one batched call each, and
//! chain walks split into waves.
//!
//! A round can hold a hundred thousand items, and each pass over them reads them from memory again, so the
//! round is gathered in one pass: grouping, and noting who sent the work. What each plugin is charged is then
//! counted by run, not by item, and the game's actors each plugin hears of are marked as its runs are delivered
//! (see `heard`), where a run's items are read in order for one plugin.

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use crate::world::component_manager::{ChargedWork, Name, OwnerId, Work, WorkKind};
use crate::world::ActorId;

/// The most entries one batched call carries; more are delivered in further calls.
pub const MAX_BATCH: usize = 256;

/// Consecutive items of one kind for one instance, charged to one plugin (or the host): one batched call. Its
/// items stay in their round's work and are named by index: moving them into runs copied every item, and copied
/// each run again as it grew.
pub(super) struct Run {
    pub root: Option<OwnerId>,
    pub items: Vec<u32>,
}

/// A run's items, in queue order.
#[derive(Clone, Copy)]
pub(super) struct RunItems<'a> {
    work: &'a [Work],
    indices: &'a [u32],
}

impl<'a> RunItems<'a> {
    pub fn iter(self) -> impl Iterator<Item = &'a Work> + 'a {
        let work = self.work;
        self.indices.iter().map(move |i| &work[*i as usize])
    }

    pub fn first(self) -> Option<&'a Work> {
        self.iter().next()
    }

    pub fn len(self) -> usize {
        self.indices.len()
    }
}

/// One round's work, grouped.
pub(super) struct Round {
    /// The round's items, as queued.
    pub work: ChargedWork,
    /// Each instance's runs: instances in the order of their first item, then by kind in delivery order —
    /// extension events, init-state notifications, property changes, default-initialization checks, chain walks
    /// — each kind keeping the order its items were queued in, cut where the plugin charged changes and every
    /// [`MAX_BATCH`] entries (chain walks are cut into waves later). One instance's work of a round is then a
    /// handful of batched calls however many actors it concerns.
    pub groups: Vec<(OwnerId, Vec<Run>)>,
    /// The plugins whose host calls queued the round's work, in the order first seen.
    pub senders: Vec<OwnerId>,
}

/// Groups found by owner: a direct-mapped cache before the map. A round's items usually alternate between a
/// hundred instances (each actor's event, queued for every handler), so the last group alone rarely matches.
struct GroupIndex {
    recent: [(OwnerId, u32); 256],
    all: HashMap<OwnerId, usize>,
}

impl GroupIndex {
    fn new() -> Self {
        // An empty place names no group (`u32::MAX`), so it never answers for any owner.
        GroupIndex { recent: [(OwnerId(0), u32::MAX); 256], all: HashMap::default() }
    }

    /// The group of `owner`, made with `make` if it has none.
    fn get(&mut self, owner: OwnerId, make: impl FnOnce() -> usize) -> usize {
        let cached = &mut self.recent[owner.0 as usize % 256];
        if cached.0 == owner && cached.1 != u32::MAX {
            return cached.1 as usize;
        }
        let group = *self.all.entry(owner).or_insert_with(make);
        *cached = (owner, group as u32);
        group
    }
}

impl Round {
    /// Groups a round's work (see [`Round::groups`]) in one pass over it.
    pub fn gather(work: ChargedWork) -> Round {
        let mut groups: Vec<(OwnerId, [Vec<Run>; WorkKind::COUNT])> = Vec::new();
        let mut group_of = GroupIndex::new();
        let mut senders: Vec<OwnerId> = Vec::new();
        let mut index = 0u32;
        for (stretch, charge) in work.stretches() {
            if let Some(sender) = charge.sender {
                if senders.last() != Some(&sender) && !senders.contains(&sender) {
                    senders.push(sender);
                }
            }
            for item in stretch {
                let owner = item.owner();
                let group = group_of.get(owner, || {
                    groups.push((owner, Default::default()));
                    groups.len() - 1
                });
                let kind = item.kind();
                let runs = &mut groups[group].1[kind as usize];
                match runs.last_mut() {
                    Some(run)
                        if run.root == charge.root
                            && (kind == WorkKind::ContinueChain || run.items.len() < MAX_BATCH) =>
                    {
                        run.items.push(index)
                    }
                    _ => runs.push(Run { root: charge.root, items: vec![index] }),
                }
                index += 1;
            }
        }
        let groups = groups.into_iter().map(|(owner, kinds)| (owner, kinds.into_iter().flatten().collect())).collect();
        Round { work, groups, senders }
    }

    /// A run's items.
    pub fn items<'a>(work: &'a [Work], run: &'a Run) -> RunItems<'a> {
        RunItems { work, indices: &run.items }
    }

    /// Every run, with its instance.
    pub fn runs(&self) -> impl Iterator<Item = (OwnerId, RunItems<'_>, Option<OwnerId>)> + '_ {
        self.groups.iter().flat_map(move |(owner, runs)| {
            runs.iter().map(move |run| (*owner, Round::items(self.work.items(), run), run.root))
        })
    }

    /// Drops the work of quarantined plugins: what they were sent, and the events they sent others (as the
    /// queue's own `discard_owner` does for what is still queued).
    pub fn discard(&mut self, quarantined: impl Fn(OwnerId) -> bool) {
        let work = self.work.items();
        self.groups.retain(|(owner, _)| !quarantined(*owner));
        for (_, runs) in &mut self.groups {
            for run in runs.iter_mut() {
                run.items.retain(|i| work[*i as usize].sender().is_none_or(|sender| !quarantined(sender)));
            }
            runs.retain(|run| !run.items.is_empty());
        }
    }
}

/// A feature's chain on one actor.
pub(super) type Chain = (ActorId, Name);

/// Splits runs of chains into waves in which each actor appears once, keeping their order, of at most
/// [`MAX_BATCH`] chains each. A chain asked for twice in a run is walked once: its walk comes after both
/// requests, so it sees whatever either was made for.
///
/// Where each actor's chains went is kept by actor slot, and the table is kept from run to run: a run of ten
/// thousand chains then hashes and allocates nothing, and as its actors are mostly in slot order, the table is
/// read in order too. An actor with more chains in a run than a slot's entry holds, or sharing its slot with
/// another actor of the run, is placed through a map instead.
#[derive(Debug, Default)]
pub(super) struct WavePlanner {
    by_slot: Vec<Placed>,
    /// Numbers the runs planned: an entry of another run is empty.
    run: u32,
    /// The actors the slot table cannot hold: the first wave their next chain may join, and their features placed.
    overflow: HashMap<ActorId, (u32, SmallVec<[Name; 2]>)>,
}

/// Where one actor's chains of a run went.
#[derive(Debug, Clone, Copy, Default)]
struct Placed {
    run: u32,
    /// The first wave the actor's next chain may join (the one after its last).
    next: u32,
    actor: u64,
    features: [Option<Name>; 2],
    /// The actor had more chains than `features` holds: it is placed through the overflow map.
    moved: bool,
}

impl WavePlanner {
    /// The waves of one run's chains.
    pub fn waves(&mut self, chains: impl IntoIterator<Item = Chain>) -> Vec<Vec<Chain>> {
        self.run = self.run.wrapping_add(1);
        if self.run == 0 {
            self.by_slot.iter_mut().for_each(|placed| placed.run = 0);
            self.run = 1;
        }
        self.overflow.clear();
        let mut waves: Vec<Vec<Chain>> = Vec::new();
        // Every wave before this one is full.
        let mut first_open = 0;
        for (actor, feature) in chains {
            let Some(next) = self.place(actor, feature) else {
                continue;
            };
            let mut wave = (*next as usize).max(first_open);
            while waves.get(wave).is_some_and(|chains| chains.len() >= MAX_BATCH) {
                wave += 1;
            }
            if wave == waves.len() {
                waves.push(Vec::new());
            }
            waves[wave].push((actor, feature));
            *next = wave as u32 + 1;
            while waves.get(first_open).is_some_and(|chains| chains.len() >= MAX_BATCH) {
                first_open += 1;
            }
        }
        waves
    }

    /// Notes `feature` of `actor` placed in this run: where the actor's next wave is kept, or `None` when the
    /// chain was placed already.
    fn place(&mut self, actor: ActorId, feature: Name) -> Option<&mut u32> {
        let slot = actor.slot();
        if slot >= self.by_slot.len() {
            self.by_slot.resize(slot + 1, Placed::default());
        }
        let (run, placed) = (self.run, &mut self.by_slot[slot]);
        if placed.run != run {
            *placed = Placed { run, next: 0, actor: actor.to_raw(), features: [Some(feature), None], moved: false };
            return Some(&mut placed.next);
        }
        if placed.actor == actor.to_raw() && !placed.moved {
            if placed.features.contains(&Some(feature)) {
                return None;
            }
            if let Some(free) = placed.features.iter_mut().find(|f| f.is_none()) {
                *free = Some(feature);
                return Some(&mut placed.next);
            }
            placed.moved = true;
            let features = placed.features.iter().flatten().copied().collect();
            self.overflow.insert(actor, (placed.next, features));
        }
        let (next, features) = self.overflow.entry(actor).or_default();
        if features.contains(&feature) {
            return None;
        }
        features.push(feature);
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use rustc_hash::FxHashSet as HashSet;

    use super::*;
    use crate::world::component_manager::Charge;

    /// A round's work is grouped as it is delivered: by instance (in the order of its first item), then by
    /// kind, each in queue order, cut where the plugin charged changes and every `MAX_BATCH` entries (chain
    /// walks only where the charge changes).
    #[test]
    fn a_rounds_work_goes_into_runs_by_instance_kind_and_charge() {
        let mut names = crate::world::component_manager::Names::default();
        let (event, feature) = (names.intern("Tick"), names.intern("Hero"));
        let (a, b) = (OwnerId(1), OwnerId(2));
        let actor = |n: u64| ActorId::from_raw(n);
        let tick = |owner, n| Work::Extension {
            owner,
            handler: crate::world::component_manager::HandlerId(1),
            number: 1,
            actor: actor(n),
            event,
            final_event: false,
            sender: None,
        };
        let walk = |owner, n| Work::ContinueChain { owner, actor: actor(n), feature };
        let charged = |root: Option<OwnerId>| Charge { sender: root, root };
        let mut work = Vec::new();
        // Instance a: MAX_BATCH + 3 events charged to nobody, then 2 charged to b, then 1 to nobody again; walks
        // interleaved, charged to a then b.
        for n in 0..MAX_BATCH as u64 + 3 {
            work.push((tick(a, n), charged(None)));
            work.push((walk(a, n), charged(Some(a))));
        }
        work.push((tick(b, 1), charged(None)));
        work.extend([(tick(a, 900), charged(Some(b))), (tick(a, 901), charged(Some(b)))]);
        work.push((walk(a, 902), charged(Some(b))));
        work.push((tick(a, 903), charged(None)));
        let round = Round::gather(work.into_iter().collect());
        let grouped = &round.groups;
        let item = |i: u32| &round.work.items()[i as usize];

        let owners: Vec<OwnerId> = grouped.iter().map(|(owner, _)| *owner).collect();
        assert_eq!(owners, [a, b], "instances in the order of their first item");
        let runs: Vec<(Option<OwnerId>, usize, u64, &'static str)> = grouped[0]
            .1
            .iter()
            .map(|run| {
                let kind = if matches!(item(run.items[0]), Work::Extension { .. }) { "events" } else { "walks" };
                (run.root, run.items.len(), item(run.items[0]).actor().to_raw(), kind)
            })
            .collect();
        let batch = MAX_BATCH;
        assert_eq!(
            runs,
            [
                (None, batch, 0, "events"),
                (None, 3, batch as u64, "events"),
                (Some(b), 2, 900, "events"),
                (None, 1, 903, "events"),
                (Some(a), batch + 3, 0, "walks"),
                (Some(b), 1, 902, "walks"),
            ]
        );
        let in_order: Vec<u64> =
            grouped[0].1[..2].iter().flat_map(|run| &run.items).map(|i| item(*i).actor().to_raw()).collect();
        assert_eq!(in_order, (0..batch as u64 + 3).collect::<Vec<_>>(), "queue order within a kind");
        assert_eq!(grouped[1].1.len(), 1);
    }

    #[test]
    fn chain_waves_keep_order_name_each_actor_once_walk_a_repeated_chain_once_and_stay_within_a_batch() {
        let mut names = crate::world::component_manager::Names::default();
        let (hero, input) = (names.intern("Hero"), names.intern("Input"));
        let actor = ActorId::from_raw;
        // Two chains of actor 1, a repeat of its first, then enough other actors to fill more than one batch.
        let mut chains = vec![(actor(1), hero), (actor(1), input), (actor(1), hero)];
        chains.extend((2..=MAX_BATCH as u64 + 1).map(|n| (actor(n), hero)));
        let waves = WavePlanner::default().waves(chains.clone());
        assert!(waves.iter().all(|wave| wave.len() <= MAX_BATCH));
        for wave in &waves {
            let actors: HashSet<ActorId> = wave.iter().map(|(a, _)| *a).collect();
            assert_eq!(actors.len(), wave.len(), "an actor twice in one wave");
        }
        let walked: Vec<Chain> = waves.concat();
        assert_eq!(walked.len(), chains.len() - 1, "the repeated chain is walked once");
        assert_eq!(walked.iter().filter(|c| **c == (actor(1), hero)).count(), 1);
        // Each wave keeps the order the chains were asked for in; actor 1's second chain waits a wave.
        for wave in &waves {
            let positions: Vec<usize> = wave.iter().map(|c| chains.iter().position(|x| x == c).unwrap()).collect();
            assert!(positions.windows(2).all(|p| p[0] < p[1]), "{positions:?}");
        }
        let wave_of = |chain: Chain| waves.iter().position(|w| w.contains(&chain)).unwrap();
        assert_eq!(wave_of((actor(1), hero)), 0);
        assert_eq!(wave_of((actor(1), input)), 1);
        // The first wave is full, so the last actor joins the second.
        assert_eq!(waves[0].len(), MAX_BATCH);
        assert_eq!(wave_of((actor(MAX_BATCH as u64 + 1), hero)), 1);
    }

    /// The senders of a round are listed once each, in the order first seen; a quarantined plugin's work goes,
    /// and so do the events it sent to others, while the rest stays in its runs.
    #[test]
    fn a_quarantined_plugins_work_and_the_events_it_sent_go_with_it() {
        let mut names = crate::world::component_manager::Names::default();
        let (event, feature) = (names.intern("Ping"), names.intern("Hero"));
        let (a, b, q) = (OwnerId(1), OwnerId(2), OwnerId(3));
        let event_for = |owner, sender: Option<OwnerId>, n: u64| Work::Extension {
            owner,
            handler: crate::world::component_manager::HandlerId(1),
            number: 1,
            actor: ActorId::from_raw(n),
            event,
            final_event: false,
            sender,
        };
        let sent_by = |sender: Option<OwnerId>| Charge { sender, root: sender };
        let work = vec![
            (event_for(a, Some(q), 1), sent_by(Some(q))),
            (event_for(a, None, 2), sent_by(None)),
            (Work::ContinueChain { owner: q, actor: ActorId::from_raw(3), feature }, sent_by(Some(q))),
            (event_for(b, Some(a), 4), sent_by(Some(a))),
            (event_for(b, Some(q), 5), sent_by(Some(q))),
        ];
        let mut round = Round::gather(work.into_iter().collect());
        assert_eq!(round.senders, [q, a]);
        round.discard(|owner| owner == q);
        let left: Vec<(OwnerId, Vec<u64>)> = round
            .groups
            .iter()
            .map(|(owner, runs)| {
                let items = runs.iter().flat_map(|r| &r.items);
                (*owner, items.map(|i| round.work.items()[*i as usize].actor().to_raw()).collect())
            })
            .collect();
        assert_eq!(left, [(a, vec![2]), (b, vec![4])]);
        assert!(round.runs().all(|(_, items, _)| items.len() > 0), "no run is left empty");
    }

    /// Past what a slot's entry holds — a third chain of one actor, another actor in the same slot — chains are
    /// placed as before; and a planner used again forgets the runs before.
    #[test]
    fn chain_waves_hold_for_many_features_of_an_actor_and_actors_sharing_a_slot_run_after_run() {
        let mut names = crate::world::component_manager::Names::default();
        let features: Vec<Name> = ["A", "B", "C", "D"].iter().map(|f| names.intern(f)).collect();
        let (first, reused) = (ActorId::new(5, 0), ActorId::new(5, 1));
        let mut planner = WavePlanner::default();
        for _ in 0..3 {
            let mut chains: Vec<Chain> = features.iter().map(|f| (first, *f)).collect();
            chains.push((first, features[2]));
            chains.extend(features[..3].iter().map(|f| (reused, *f)));
            chains.push((reused, features[0]));
            let waves = planner.waves(chains);
            let expected: Vec<Vec<Chain>> = vec![
                vec![(first, features[0]), (reused, features[0])],
                vec![(first, features[1]), (reused, features[1])],
                vec![(first, features[2]), (reused, features[2])],
                vec![(first, features[3])],
            ];
            assert_eq!(waves, expected, "one chain of each actor per wave, each chain once, in order");
        }
    }
}
