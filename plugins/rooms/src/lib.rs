//! Rooms, the way a server keeps its traffic to what each player needs: players are put in rooms of
//! `room-size` (an asset of the experience; two by default) in the order their pawns arrive, and each pawn is
//! replicated only to the players of its room (a relevancy group, as Unreal's replication graph groups
//! actors). Everything else — controllers aside, player states and their scores — still goes to everyone.
//! Only a server places players: on a client or a standalone game the feature has nothing to do. When the
//! feature is deactivated, every pawn it placed goes back to every client.

use std::collections::BTreeMap;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::world::{self, ActorId, Relevancy};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Error, NetMode, Plugin};

const DEFAULT_ROOM_SIZE: u64 = 2;

#[derive(Default)]
struct Rooms {
    handler: Option<ExtensionHandler>,
    room_size: u64,
    /// Players placed so far: the next one's room follows from it.
    placed: u64,
    /// The room of each pawn placed, until it goes.
    rooms: BTreeMap<ActorId, String>,
}

impl Plugin for Rooms {
    fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
        if !matches!(context.net_mode, NetMode::DedicatedServer | NetMode::ListenServer) {
            log::info("no clients here: nobody to place in rooms");
            return Ok(());
        }
        self.room_size = match world::read_asset_text("room-size") {
            Ok(text) => text.trim().parse().ok().filter(|size| *size > 0).ok_or(format!("room-size {text:?}"))?,
            Err(Error::UnknownAsset(_)) => DEFAULT_ROOM_SIZE,
            Err(e) => return Err(format!("reading room-size: {e:?}")),
        };
        log::info(&format!("rooms of {}", self.room_size));
        self.handler = Some(components::add_extension_handler("Pawn", 1).map_err(|e| format!("{e:?}"))?);
        Ok(())
    }

    fn on_extension_event(&mut self, _handler: u32, pawn: ActorId, event: &str) {
        match event {
            events::EXTENSION_ADDED | events::GAME_ACTOR_READY => self.place(pawn),
            events::RECEIVER_REMOVED => drop(self.rooms.remove(&pawn)),
            _ => {}
        }
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        for pawn in std::mem::take(&mut self.rooms).into_keys() {
            let _ = world::set_relevancy(pawn, &Relevancy::Always);
            let _ = world::set_player_groups(pawn, &[]);
        }
        self.handler = None;
        Deactivation::Done
    }
}

impl Rooms {
    /// Puts the player of `pawn` in the next room's seat, and the pawn in that room, once.
    fn place(&mut self, pawn: ActorId) {
        if self.rooms.contains_key(&pawn) || !world::has_authority(pawn).unwrap_or(false) {
            return;
        }
        let room = format!("room-{}", self.placed / self.room_size);
        match world::set_player_groups(pawn, &[&room]) {
            Ok(()) => {}
            // A pawn of no player (a bot, a vehicle) stays visible to everyone.
            Err(Error::Invalid(_)) => return,
            Err(e) => return log::warn(&format!("pawn {pawn}: cannot place its player: {e:?}")),
        }
        if let Err(e) = world::set_relevancy(pawn, &Relevancy::Groups(vec![room.clone()])) {
            return log::warn(&format!("pawn {pawn}: cannot keep it to {room}: {e:?}"));
        }
        log::info(&format!("pawn {pawn}: {room}"));
        self.placed += 1;
        self.rooms.insert(pawn, room);
    }
}

export_plugin!(Rooms);
