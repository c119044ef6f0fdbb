//! Lyra's character initialisation, as two init-state features of every character:
//!
//! - **PawnExtension** coordinates: `Spawned` needs the pawn; `DataAvailable` needs pawn data and a
//!   controller; `DataInitialized` needs every other feature at `DataAvailable`; `GameplayReady` is free. It
//!   listens to every feature of its pawn and tries again whenever another one reaches `DataAvailable`.
//! - **Hero** is the player-facing part: `DataAvailable` needs the player state; `DataInitialized` needs the
//!   pawn extension at `DataInitialized`, and on that step it binds input by sending `BindInputsNow`. It
//!   listens only to the pawn extension.
//!
//! The game tells the pawn when its controller or player state arrives (`ControllerChanged`,
//! `PlayerStateReplicated`), as Lyra's character does from `PossessedBy` and `OnRep_PlayerState`. The
//! controller and player state are read from the pawn's `Possession` component.
//!
//! Every chain walk it starts is deferred (`defer_continue_chain`): the walks run after the current callback
//! either way, and a callback handling a batch of pawns then sends all of them in one host call.

use std::collections::HashMap;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::init_state::{self, Subscription, DATA_AVAILABLE, DATA_INITIALIZED, GAMEPLAY_READY, SPAWNED};
use gamefeature_sdk::log::Level;
use gamefeature_sdk::world::{self, ActorId};
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Plugin, Value};

const PAWN_EXTENSION: &str = "PawnExtension";
const HERO: &str = "Hero";
const CHARACTERS: u32 = 1;
const ALL_FEATURES: u32 = 1;
const PAWN_EXTENSION_ONLY: u32 = 2;

/// What the plugin holds for one pawn: its two subscriptions.
struct Pawn {
    _all_features: Subscription,
    _pawn_extension: Subscription,
}

#[derive(Default)]
struct LyraCharacter {
    handler: Option<ExtensionHandler>,
    pawns: HashMap<ActorId, Pawn>,
}

/// Passes `ready` through, logging (at debug level) what the pawn still waits for when it is not.
fn waits_unless(ready: bool, pawn: ActorId, waiting: &str) -> bool {
    if !ready && log::enabled(Level::Debug) {
        log::debug(&format!("pawn {pawn}: {waiting}"));
    }
    ready
}

fn possession(pawn: ActorId, what: &str) -> bool {
    matches!(world::get_property(pawn, "Possession", what), Ok(Some(Value::Integer(_))))
}

impl LyraCharacter {
    /// Lyra's OnRegister and BeginPlay for both components: register the features, listen, try to start.
    fn set_up(&mut self, pawn: ActorId) {
        if self.pawns.contains_key(&pawn) {
            return;
        }
        let registered = init_state::register_feature(pawn, PAWN_EXTENSION, "PawnExtensionComponent")
            .and_then(|_| init_state::register_feature(pawn, HERO, "HeroComponent"))
            .and_then(|_| {
                let all = init_state::subscribe_actor(pawn, None, None, false, ALL_FEATURES)?;
                let pawn_extension =
                    init_state::subscribe_actor(pawn, Some(PAWN_EXTENSION), None, false, PAWN_EXTENSION_ONLY)?;
                Ok(Pawn { _all_features: all, _pawn_extension: pawn_extension })
            });
        match registered {
            Ok(subscriptions) => {
                self.pawns.insert(pawn, subscriptions);
                init_state::defer_check_default_initialization(pawn, PAWN_EXTENSION);
                init_state::defer_continue_chain(pawn, HERO);
            }
            Err(e) => log::warn(&format!("cannot set up pawn {pawn}: {e:?}")),
        }
    }
}

impl Plugin for LyraCharacter {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.handler = Some(components::add_extension_handler("Character", CHARACTERS).map_err(|e| format!("{e:?}"))?);
        // The decisions read these: they come with every chain-step question, so deciding makes no host call.
        for what in ["controller", "player-state"] {
            init_state::add_chain_read("Possession", what).map_err(|e| format!("{e:?}"))?;
        }
        Ok(())
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        self.handler = None;
        self.pawns.clear();
        Deactivation::Done
    }

    fn on_extension_event(&mut self, _handler: u32, pawn: ActorId, event: &str) {
        match event {
            events::EXTENSION_ADDED | events::GAME_ACTOR_READY => self.set_up(pawn),
            events::EXTENSION_REMOVED | events::RECEIVER_REMOVED => {
                self.pawns.remove(&pawn);
            }
            "ControllerChanged" | "PlayerStateReplicated" => {
                if log::enabled(Level::Debug) {
                    log::debug(&format!("pawn {pawn}: {event}, checking initialization"));
                }
                init_state::defer_check_default_initialization(pawn, PAWN_EXTENSION);
            }
            _ => {}
        }
    }

    fn can_change_init_state(&mut self, pawn: ActorId, feature: &str, current: Option<&str>, desired: &str) -> bool {
        match (feature, desired) {
            (_, SPAWNED) => current.is_none(),
            (PAWN_EXTENSION, DATA_AVAILABLE) => {
                waits_unless(possession(pawn, "controller"), pawn, "PawnExtension waits for its controller")
            }
            (PAWN_EXTENSION, DATA_INITIALIZED) => waits_unless(
                init_state::have_all_features_reached(pawn, DATA_AVAILABLE, Some(PAWN_EXTENSION)).unwrap_or(false),
                pawn,
                "PawnExtension waits for every feature to reach DataAvailable",
            ),
            (HERO, DATA_AVAILABLE) => {
                waits_unless(possession(pawn, "player-state"), pawn, "Hero waits for its player state")
            }
            (HERO, DATA_INITIALIZED) => init_state::reached(pawn, PAWN_EXTENSION, DATA_INITIALIZED),
            (_, GAMEPLAY_READY) => true,
            _ => false,
        }
    }

    fn handle_change_init_state(&mut self, pawn: ActorId, feature: &str, _current: Option<&str>, desired: &str) {
        if feature == HERO && desired == DATA_INITIALIZED {
            if log::enabled(Level::Debug) {
                log::debug(&format!("pawn {pawn}: Hero initializes abilities and asks for input bindings"));
            }
            if let Err(e) = components::send_event(pawn, "BindInputsNow") {
                log::warn(&format!("BindInputsNow: {e:?}"));
            }
        }
    }

    fn check_default_initialization(&mut self, pawn: ActorId, feature: &str) {
        // The hero only walks its own chain; the pawn extension also nudges every other feature first.
        match feature {
            PAWN_EXTENSION => init_state::defer_check_default_initialization(pawn, PAWN_EXTENSION),
            _ => init_state::defer_continue_chain(pawn, feature),
        }
    }

    fn on_init_state_changed(&mut self, subscription: u32, pawn: ActorId, feature: &str, state: &str) {
        match subscription {
            // The pawn extension re-checks when another feature reaches DataAvailable.
            ALL_FEATURES if feature != PAWN_EXTENSION && state == DATA_AVAILABLE => {
                init_state::defer_continue_chain(pawn, PAWN_EXTENSION);
            }
            // The hero moves on once the pawn extension has initialized its data.
            PAWN_EXTENSION_ONLY if state == DATA_INITIALIZED => {
                init_state::defer_continue_chain(pawn, HERO);
            }
            _ => {}
        }
    }
}

export_plugin!(LyraCharacter);
