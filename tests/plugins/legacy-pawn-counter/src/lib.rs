//! A plugin of the first API release, `gamefeature:plugin@0.1.0`, written against its raw bindings (not the
//! SDK, which follows the newest version): it asks for a `PawnTally` component on every pawn, counts the pawns
//! its extension handler hears of, and writes the count into each tally. Each tally is an init-state feature,
//! `Tally`, whose chain stops short of `GameplayReady`; each step it takes is logged. A host implementing later
//! versions must load and run it unchanged, beside plugins of the newest version.

use std::cell::RefCell;

wit_bindgen::generate!({
    world: "game-feature",
    path: "../../../wit/0.1.0",
});

use exports::gamefeature::plugin::handlers;
use exports::gamefeature::plugin::init_state_callbacks;
use exports::gamefeature::plugin::lifecycle::{self, Deactivation};
use gamefeature::plugin::actors;
use gamefeature::plugin::components::{self, AddFlags, ComponentRequest, ExtensionHandler};
use gamefeature::plugin::init_states;
use gamefeature::plugin::log::{log, Level};
use gamefeature::plugin::types::{ActivationContext, Value};

#[derive(Default)]
struct Counter {
    request: Option<ComponentRequest>,
    handler: Option<ExtensionHandler>,
    pawns: i64,
}

thread_local! {
    static COUNTER: RefCell<Counter> = RefCell::new(Counter::default());
}

struct Component;

impl lifecycle::Guest for Component {
    fn on_registering() -> Result<(), String> {
        Ok(())
    }

    fn on_loading() -> Result<(), String> {
        Ok(())
    }

    fn on_activating(context: ActivationContext) -> Result<(), String> {
        let request = components::add_component_request("Pawn", "PawnTally", AddFlags::empty())
            .map_err(|e| format!("requesting PawnTally: {e:?}"))?;
        let handler = components::add_extension_handler("Pawn", 7).map_err(|e| format!("adding handler: {e:?}"))?;
        COUNTER.with(|c| {
            let mut c = c.borrow_mut();
            c.request = Some(request);
            c.handler = Some(handler);
        });
        log(Level::Info, &format!("counting pawns in {} with the 0.1.0 API", context.world_name));
        Ok(())
    }

    fn on_activated() {}

    fn on_deactivating(_context: ActivationContext) -> Deactivation {
        let pawns = COUNTER.with(|c| c.borrow().pawns);
        log(Level::Info, &format!("counted {pawns} pawns"));
        COUNTER.with(|c| *c.borrow_mut() = Counter::default());
        Deactivation::Done
    }

    fn poll_deactivation() -> Deactivation {
        Deactivation::Done
    }

    fn on_unloading() {}

    fn on_unregistering() {}
}

impl handlers::Guest for Component {
    fn handle_extension_events(handlers: Vec<u32>, actors: Vec<u64>, events: Vec<u32>, names: Vec<String>) {
        for ((handler, actor), event) in handlers.iter().zip(&actors).zip(&events) {
            let event = names[*event as usize].as_str();
            if *handler != 7 || !matches!(event, "ReceiverAdded" | "ExtensionAdded") {
                continue;
            }
            let pawns = COUNTER.with(|c| {
                let mut c = c.borrow_mut();
                c.pawns += 1;
                c.pawns
            });
            if let Err(e) = actors::set_property(*actor, "PawnTally", "pawns-seen", &Value::Integer(pawns)) {
                log(Level::Warn, &format!("pawn {actor}: cannot write its tally: {e:?}"));
            }
            let walked = init_states::register_feature(*actor, "Tally", "PawnTally")
                .and_then(|_| init_states::continue_init_state_chain(*actor, "Tally"));
            if let Err(e) = walked {
                log(Level::Warn, &format!("pawn {actor}: cannot walk its tally: {e:?}"));
            }
        }
    }
}

impl init_state_callbacks::Guest for Component {
    /// Every step but the last (`GameplayReady`, the fourth state).
    fn can_change_init_states(
        _actors: Vec<u64>,
        _features: Vec<u32>,
        _currents: Vec<u8>,
        desireds: Vec<u8>,
        _names: Vec<String>,
    ) -> Vec<bool> {
        desireds.iter().map(|desired| *desired < 4).collect()
    }

    fn handle_change_init_states(
        actors: Vec<u64>,
        features: Vec<u32>,
        currents: Vec<u8>,
        desireds: Vec<u8>,
        names: Vec<String>,
    ) {
        for i in 0..actors.len() {
            let (actor, feature) = (actors[i], &names[features[i] as usize]);
            log(Level::Info, &format!("{feature} of {actor}: {} to {}", currents[i], desireds[i]));
        }
    }

    fn check_default_initializations(_actors: Vec<u64>, _features: Vec<u32>, _names: Vec<String>) {}

    fn on_init_states_changed(
        _ids: Vec<u32>,
        _actors: Vec<u64>,
        _features: Vec<u32>,
        _states: Vec<u8>,
        _names: Vec<String>,
    ) {
    }
}

export!(Component);
