//! A dash, for the arena: when the game sends a pawn `Dash` (a bot's, or a player's key), the pawn's
//! `Movement.boost` — the factor the game multiplies its speed by — is 3 for a quarter of a second, then back to
//! 1; a pawn dashes again only after a cooldown. The game knows nothing of dashing: without this plugin, `Dash`
//! does nothing. Only the world with authority over the pawn dashes it (the server; the boost replicates as the
//! game's movement does).

use std::collections::HashMap;
use std::time::Duration;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::timers::{self, Timer};
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Frame, Plugin, Value};

const MOVEMENT: &str = "Movement";
const BOOST: f64 = 3.0;
const DASH: Duration = Duration::from_millis(250);
/// From the start of one dash to the next.
const COOLDOWN_US: u64 = 1_500_000;

#[derive(Default)]
struct Dash {
    pawns: Option<ExtensionHandler>,
    /// Each pawn's last dash, in world time (microseconds).
    last: HashMap<ActorId, u64>,
    /// The dashes under way: each timer's number, the pawn it ends the dash of.
    ending: HashMap<u32, (ActorId, Timer)>,
    next_timer: u32,
    dashes: u64,
}

impl Dash {
    fn dash(&mut self, pawn: ActorId) {
        if !world::has_authority(pawn).unwrap_or(false) {
            return;
        }
        let now = timers::now().time_us;
        if self.last.get(&pawn).is_some_and(|last| now < last + COOLDOWN_US) {
            return;
        }
        if let Err(e) = world::set_property(pawn, MOVEMENT, "boost", &Value::Float(BOOST)) {
            log::warn(&format!("pawn {pawn} cannot dash: {e:?}"));
            return;
        }
        self.next_timer = self.next_timer.wrapping_add(1);
        match timers::after(DASH, self.next_timer) {
            Ok(timer) => {
                self.ending.insert(self.next_timer, (pawn, timer));
            }
            Err(e) => log::warn(&format!("pawn {pawn}: {e:?}")),
        }
        self.last.insert(pawn, now);
        self.dashes += 1;
    }
}

impl Plugin for Dash {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.pawns = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?);
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, pawn: ActorId, event: &str) {
        match event {
            "Dash" => self.dash(pawn),
            events::RECEIVER_REMOVED | events::EXTENSION_REMOVED => {
                self.last.remove(&pawn);
                self.ending.retain(|_, (dashing, _)| *dashing != pawn);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, timer: u32, _times: u32, _frame: &Frame) {
        if let Some((pawn, _)) = self.ending.remove(&timer) {
            // The pawn may have gone meanwhile: nothing to undo then.
            let _ = world::set_property(pawn, MOVEMENT, "boost", &Value::Float(1.0));
        }
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> gamefeature_sdk::Deactivation {
        // Nothing to undo: the boosts this plugin wrote go with it (the host removes what a plugin wrote), so a
        // pawn mid-dash is back to the game's own speed.
        log::info(&format!("{} dash(es) in this match", self.dashes));
        gamefeature_sdk::Deactivation::Done
    }
}

export_plugin!(Dash);
