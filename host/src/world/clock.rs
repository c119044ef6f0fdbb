//! Game time: a world advances in frames, and plugins' timers fire as it does.
//!
//! Time here is game time, moved on by whoever runs the world ([`World::advance`](super::World::advance)): a
//! server's fixed-rate loop, a client's frames, or a test stepping it. Nothing reads the wall clock, so a test
//! that advances a world by 10 frames of 33 ms sees exactly the firings a 330 ms game would.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use crate::world::component_manager::OwnerId;

/// Where a world is in time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    /// Frames since the world began; the first is 1 (0 before the world has advanced).
    pub number: u64,
    /// Game time at this frame, in microseconds since the world began.
    pub time_us: u64,
    /// Game time since the previous frame, in microseconds.
    pub delta_us: u64,
}

/// A running timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerId(u64);

#[derive(Debug)]
struct Timer {
    owner: OwnerId,
    number: u32,
    period_us: u64,
    repeating: bool,
    due_us: u64,
}

/// One owner's timers that fired in a frame: each timer's number and how many times it fired, in start order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    /// The plugin instance whose timers fired.
    pub owner: OwnerId,
    /// Each timer that fired, as (the plugin's own number for it, how many periods passed), in start order.
    pub timers: Vec<(u32, u32)>,
}

/// A world's frame counter and its plugins' timers.
#[derive(Debug, Default)]
pub struct Clock {
    frame: Frame,
    // Ids grow, so iterating in id order is iterating in start order.
    timers: BTreeMap<TimerId, Timer>,
    // Each owner's timers, so that one leaving costs its own timers, not a scan of everyone's.
    by_owner: HashMap<OwnerId, BTreeSet<TimerId>>,
    next: u64,
}

impl Clock {
    /// The frame the world is at: the one the last [`advance`](Self::advance) moved to (frame 0 before any).
    pub fn now(&self) -> Frame {
        self.frame
    }

    /// Starts a timer that fires every `period_us` of game time (every frame when 0), first one period from now.
    pub fn start(&mut self, owner: OwnerId, period_us: u64, repeating: bool, number: u32) -> TimerId {
        let id = TimerId(self.next);
        self.next += 1;
        let due_us = self.frame.time_us.saturating_add(period_us);
        self.timers.insert(id, Timer { owner, number, period_us, repeating, due_us });
        self.by_owner.entry(owner).or_default().insert(id);
        id
    }

    /// Stops a timer; `false` when it had already stopped (a one-shot timer that fired).
    pub fn stop(&mut self, id: TimerId) -> bool {
        let Some(timer) = self.timers.remove(&id) else { return false };
        if let Some(ids) = self.by_owner.get_mut(&timer.owner) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_owner.remove(&timer.owner);
            }
        }
        true
    }

    /// Stops every timer of an owner; how many there were.
    pub fn remove_owner(&mut self, owner: OwnerId) -> usize {
        let ids = self.by_owner.remove(&owner).unwrap_or_default();
        for id in &ids {
            self.timers.remove(id);
        }
        ids.len()
    }

    /// Timers running.
    pub fn timers(&self) -> usize {
        self.timers.len()
    }

    /// Moves to the next frame, `delta` later, and fires the timers that came due: grouped by owner (owners in
    /// the order of their first due timer), each timer once with the number of periods that passed. A period-0
    /// timer fires once per frame.
    pub fn advance(&mut self, delta: Duration) -> (Frame, Vec<Fired>) {
        let delta_us = u64::try_from(delta.as_micros()).unwrap_or(u64::MAX);
        self.frame =
            Frame { number: self.frame.number + 1, time_us: self.frame.time_us.saturating_add(delta_us), delta_us };
        let now = self.frame.time_us;
        let mut fired: Vec<Fired> = Vec::new();
        let mut finished = Vec::new();
        for (id, timer) in self.timers.iter_mut() {
            // A period-0 timer started during this frame's time is due at the next frame, not this one.
            let due = if timer.period_us == 0 { timer.due_us < now || delta_us == 0 } else { timer.due_us <= now };
            if !due {
                continue;
            }
            let times = match (timer.repeating, timer.period_us) {
                (true, period) if period > 0 => 1 + (now - timer.due_us) / period,
                _ => 1,
            };
            if timer.repeating {
                // Saturating: game time itself saturates (a frame delta can be anything a recording says).
                let next = timer.due_us.saturating_add(times.saturating_mul(timer.period_us));
                timer.due_us = if timer.period_us == 0 { now } else { next };
            } else {
                finished.push(*id);
            }
            let times = u32::try_from(times).unwrap_or(u32::MAX);
            match fired.iter_mut().find(|f| f.owner == timer.owner) {
                Some(owner) => owner.timers.push((timer.number, times)),
                None => fired.push(Fired { owner: timer.owner, timers: vec![(timer.number, times)] }),
            }
        }
        for id in finished {
            self.stop(id);
        }
        (self.frame, fired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Duration = Duration::from_micros(33_333);

    fn tags(fired: &[Fired]) -> Vec<(u32, u32, u32)> {
        fired.iter().flat_map(|f| f.timers.iter().map(move |(number, n)| (f.owner.0, *number, *n))).collect()
    }

    #[test]
    fn frames_count_from_one_and_carry_game_time() {
        let mut clock = Clock::default();
        assert_eq!(clock.now().number, 0);
        clock.advance(FRAME);
        let (frame, _) = clock.advance(FRAME);
        assert_eq!(frame, Frame { number: 2, time_us: 66_666, delta_us: 33_333 });
    }

    #[test]
    fn frames_of_any_length_saturate_game_time_and_never_overflow_a_timer() {
        let mut clock = Clock::default();
        clock.start(OwnerId(1), 3, true, 1);
        for _ in 0..4 {
            let (frame, fired) = clock.advance(Duration::MAX);
            assert_eq!(frame.time_us, u64::MAX);
            assert!(tags(&fired).iter().all(|(_, _, times)| *times >= 1));
        }
        assert_eq!(clock.timers(), 1);
    }

    #[test]
    fn a_period_zero_timer_ticks_every_frame_from_the_next_one() {
        let mut clock = Clock::default();
        clock.advance(FRAME);
        clock.start(OwnerId(1), 0, true, 7);
        for _ in 0..3 {
            assert_eq!(tags(&clock.advance(FRAME).1), [(1, 7, 1)]);
        }
    }

    #[test]
    fn a_timer_shorter_than_a_frame_fires_with_a_count_and_keeps_its_phase() {
        let mut clock = Clock::default();
        clock.start(OwnerId(1), 10_000, true, 1);
        assert_eq!(tags(&clock.advance(FRAME).1), [(1, 1, 3)]); // due at 10, 20, 30 ms
        assert_eq!(tags(&clock.advance(FRAME).1), [(1, 1, 3)]); // 40, 50, 60 ms (66.666 ms now)
        assert_eq!(tags(&clock.advance(FRAME).1), [(1, 1, 3)]); // 70, 80, 90 ms (99.999 ms now)
        assert_eq!(tags(&clock.advance(FRAME).1), [(1, 1, 4)]); // 100, 110, 120, 130 ms
    }

    #[test]
    fn a_one_shot_timer_fires_once_and_stops() {
        let mut clock = Clock::default();
        let id = clock.start(OwnerId(2), 50_000, false, 3);
        assert!(clock.advance(FRAME).1.is_empty());
        assert_eq!(tags(&clock.advance(FRAME).1), [(2, 3, 1)]);
        assert!(clock.advance(FRAME).1.is_empty());
        assert!(!clock.stop(id), "it stopped by itself");
    }

    #[test]
    fn firings_are_grouped_by_owner_in_start_order_and_owners_can_be_removed() {
        let mut clock = Clock::default();
        clock.start(OwnerId(2), 0, true, 1);
        clock.start(OwnerId(1), 0, true, 2);
        clock.start(OwnerId(2), 0, true, 3);
        let (_, fired) = clock.advance(FRAME);
        assert_eq!(fired.iter().map(|f| f.owner.0).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(fired[0].timers, [(1, 1), (3, 1)]);
        assert_eq!(clock.remove_owner(OwnerId(2)), 2);
        assert_eq!(tags(&clock.advance(FRAME).1), [(1, 2, 1)]);
    }
}
