//! The events the game hears: custom extension events sent to actors (a plugin's `BindInputsNow`, the game's own
//! `ControllerChanged`), kept for the game to take after each step, as an engine's gameplay code hears its
//! actors' events. Off until the
//! game asks ([`World::hear_events`](super::World::hear_events)); bounded, so a game that stops taking them
//! does not grow the host.

use std::collections::VecDeque;

use super::ActorId;

/// The most events kept for the game; past it the oldest go, counted.
pub const MOST_HEARD: usize = 65_536;

/// An event sent to an actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeardEvent {
    /// The actor it was sent to.
    pub actor: ActorId,
    /// The event's name.
    pub event: String,
}

/// The events kept for the game.
#[derive(Debug, Default)]
pub(super) struct Heard {
    on: bool,
    events: VecDeque<HeardEvent>,
    dropped: u64,
}

impl Heard {
    pub fn set(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.events.clear();
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    pub fn push(&mut self, event: HeardEvent) {
        if self.events.len() == MOST_HEARD {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(event);
    }

    /// The events kept since the last take, oldest first, and how many were dropped for want of room.
    pub fn take(&mut self) -> (Vec<HeardEvent>, u64) {
        (self.events.drain(..).collect(), std::mem::take(&mut self.dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_events_go_past_the_bound_and_are_counted() {
        let mut heard = Heard::default();
        heard.set(true);
        for n in 0..MOST_HEARD + 2 {
            heard.push(HeardEvent { actor: ActorId::from_raw(n as u64), event: "E".into() });
        }
        let (events, dropped) = heard.take();
        assert_eq!((events.len(), dropped), (MOST_HEARD, 2));
        assert_eq!(events[0].actor, ActorId::from_raw(2));
        assert_eq!(heard.take(), (Vec::new(), 0));
    }
}
