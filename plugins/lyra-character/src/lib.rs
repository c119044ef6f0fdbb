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
//! It watches its pawns with two class subscriptions, made once when it activates, rather than two per pawn:
//! every feature of every character reaching `DataAvailable` (for the pawn extension), and the pawn extension
//! of every character reaching `DataInitialized` (for the hero).
//!
//! Setting a pawn up registers its two features and starts their chains, and the hero's `BindInputsNow` is
//! sent, all deferred (`defer_register_feature`, `defer_continue_chain`, `defer_send_event`): they take effect
//! after the current callback either way, and a callback handling a batch of pawns then sends all of them in a
//! host call per kind.

use std::collections::HashSet;

use gamefeature_sdk::components::{self, events, ExtensionHandler};
use gamefeature_sdk::init_state::{
    self, ChainRead, Subscription, DATA_AVAILABLE, DATA_INITIALIZED, GAMEPLAY_READY, SPAWNED,
};
use gamefeature_sdk::log::Level;
use gamefeature_sdk::world::ActorId;
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Plugin, Value};

const PAWN_EXTENSION: &str = "PawnExtension";
const HERO: &str = "Hero";
const CHARACTER: &str = "Character";
const CHARACTERS: u32 = 1;
const ALL_FEATURES: u32 = 1;
const PAWN_EXTENSION_ONLY: u32 = 2;

#[derive(Default)]
struct LyraCharacter {
    handler: Option<ExtensionHandler>,
    subscriptions: Vec<Subscription>,
    /// The pawns set up (a pawn hears both `ExtensionAdded` and `GameActorReady`).
    pawns: HashSet<ActorId>,
    /// The pawn's controller and player state, as the decisions read them (they come with the questions).
    controller: Option<ChainRead>,
    player_state: Option<ChainRead>,
}

/// Passes `ready` through, logging (at debug level) what the pawn still waits for when it is not.
fn waits_unless(ready: bool, pawn: ActorId, waiting: &str) -> bool {
    if !ready && log::enabled(Level::Debug) {
        log::debug(&format!("pawn {pawn}: {waiting}"));
    }
    ready
}

/// Whether the pawn's `Possession` holds the actor `read` reads.
fn possesses(read: &Option<ChainRead>, pawn: ActorId) -> bool {
    read.as_ref().is_some_and(|read| matches!(read.get(pawn), Ok(Some(Value::Integer(_)))))
}

impl LyraCharacter {
    /// Lyra's OnRegister and BeginPlay for both components: register the features, try to start.
    fn set_up(&mut self, pawn: ActorId) {
        if !self.pawns.insert(pawn) {
            return;
        }
        init_state::defer_register_feature(pawn, PAWN_EXTENSION, "PawnExtensionComponent");
        init_state::defer_register_feature(pawn, HERO, "HeroComponent");
        init_state::defer_check_default_initialization(pawn, PAWN_EXTENSION);
        init_state::defer_continue_chain(pawn, HERO);
    }
}

impl Plugin for LyraCharacter {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        let fail = |e| format!("{e:?}");
        // The pawn extension listens to every feature of its pawn and the hero only to the pawn extension, each
        // from the state it acts on.
        self.subscriptions = vec![
            init_state::subscribe_class(CHARACTER, None, Some(DATA_AVAILABLE), false, ALL_FEATURES).map_err(fail)?,
            init_state::subscribe_class(
                CHARACTER,
                Some(PAWN_EXTENSION),
                Some(DATA_INITIALIZED),
                false,
                PAWN_EXTENSION_ONLY,
            )
            .map_err(fail)?,
        ];
        self.handler = Some(components::add_extension_handler(CHARACTER, CHARACTERS).map_err(fail)?);
        // The decisions read these: they come with the chain-step questions of the feature that reads each, so
        // deciding makes no host call.
        self.controller = Some(ChainRead::new(Some(PAWN_EXTENSION), "Possession", "controller").map_err(fail)?);
        self.player_state = Some(ChainRead::new(Some(HERO), "Possession", "player-state").map_err(fail)?);
        Ok(())
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        self.handler = None;
        self.subscriptions.clear();
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
                waits_unless(possesses(&self.controller, pawn), pawn, "PawnExtension waits for its controller")
            }
            (PAWN_EXTENSION, DATA_INITIALIZED) => waits_unless(
                init_state::have_all_features_reached(pawn, DATA_AVAILABLE, Some(PAWN_EXTENSION)).unwrap_or(false),
                pawn,
                "PawnExtension waits for every feature to reach DataAvailable",
            ),
            (HERO, DATA_AVAILABLE) => {
                waits_unless(possesses(&self.player_state, pawn), pawn, "Hero waits for its player state")
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
            // Sent with the batch's other events when the callback returns: the host queues it either way.
            components::defer_send_event(pawn, "BindInputsNow");
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
