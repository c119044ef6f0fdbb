//! `call-fuzzer` for the first API release: runs the same programs (its `program` asset; the reader is
//! `call-fuzzer/src/program.rs`) through every import of `gamefeature:plugin@0.1.0`, written against its raw
//! bindings, so the host's 0.1.0 adapters are fuzzed as the newest imports are. Its instructions are its own:
//! one per 0.1.0 import, then handle drops and forgeries. It logs `program done: N calls of K kinds` at the
//! program's end, and nothing else of its own.

use std::cell::RefCell;

wit_bindgen::generate!({
    world: "game-feature",
    path: "../../../wit/0.1.0",
});

// The batch calls it reads arguments for came with 0.2.0.
#[allow(dead_code)]
#[path = "../../call-fuzzer/src/program.rs"]
mod program;

use exports::gamefeature::plugin::handlers;
use exports::gamefeature::plugin::init_state_callbacks;
use exports::gamefeature::plugin::lifecycle::{self, Deactivation};
use gamefeature::plugin::components::{self, AddFlags, ComponentRequest, ExtensionHandler};
use gamefeature::plugin::init_states::{self, Subscription};
use gamefeature::plugin::log::{self as host_log, Level};
use gamefeature::plugin::types::{ActivationContext, Value};
use gamefeature::plugin::{actors, assets};
use program::{Arg, Program, ANSWERS, FORGE};

const ON_ACTIVATING: usize = 256;
const PER_CALLBACK: usize = 16;
/// Kinds of instruction: one per 0.1.0 import, a handle drop and a forgery.
const KINDS: u8 = 32;
const LEVELS: [Level; 5] = [Level::Trace, Level::Debug, Level::Info, Level::Warn, Level::Error];

#[derive(Default)]
struct Fuzzer {
    program: Program,
    requests: Vec<ComponentRequest>,
    handlers: Vec<ExtensionHandler>,
    subscriptions: Vec<Subscription>,
}

thread_local! {
    static FUZZER: RefCell<Fuzzer> = RefCell::new(Fuzzer::default());
}

fn value(arg: Arg) -> Value {
    match arg {
        Arg::Boolean(b) => Value::Boolean(b),
        Arg::Integer(i) => Value::Integer(i),
        Arg::Float(f) => Value::Float(f),
        Arg::Text(t) => Value::Text(t),
    }
}

/// Runs up to `budget` instructions of the program.
fn run(budget: usize) {
    FUZZER.with_borrow_mut(|fuzzer| {
        for _ in 0..budget {
            match fuzzer.program.next(KINDS) {
                Ok(opcode) => fuzzer.step(opcode),
                Err(done) => {
                    if let Some(line) = done {
                        host_log::log(Level::Info, &line);
                    }
                    return;
                }
            }
        }
    })
}

fn saw(actors: &[u64]) {
    FUZZER.with_borrow_mut(|fuzzer| fuzzer.program.saw(actors));
}

impl Fuzzer {
    fn step(&mut self, opcode: u8) {
        let p = &mut self.program;
        match opcode {
            0 => drop(actors::current_net_mode()),
            1 => drop(actors::world_name()),
            2 => drop(actors::actor_class(p.actor())),
            3 => drop(actors::is_a(p.actor(), &p.text())),
            4 => {
                if let Ok(found) = actors::actors_of_class(&p.text()) {
                    p.saw(&found);
                }
            }
            5 => drop(actors::has_authority(p.actor())),
            6 => drop(actors::components_of(p.actor())),
            7 => drop(actors::get_property(p.actor(), &p.text(), &p.text())),
            8 => drop(actors::set_property(p.actor(), &p.text(), &p.text(), &value(p.value()))),
            9 => {
                if let Ok(actor) = actors::spawn_actor(&p.text(), p.flag()) {
                    p.own.push(actor);
                }
            }
            10 => drop(actors::destroy_actor(p.actor())),
            11 => drop(assets::read_asset(&p.text())),
            12 => {
                let flags = if p.flag() { AddFlags::ADD_UNIQUE } else { AddFlags::empty() };
                if let Ok(request) = components::add_component_request(&p.text(), &p.text(), flags) {
                    self.requests.push(request);
                }
            }
            13 => {
                if let Ok(handler) = components::add_extension_handler(&p.text(), p.id()) {
                    self.handlers.push(handler);
                }
            }
            14 => drop(components::send_extension_event(p.actor(), &p.text())),
            15 => drop(components::add_receiver(p.actor())),
            16 => drop(components::remove_receiver(p.actor())),
            17 => drop(init_states::states()),
            18 => drop(init_states::register_feature(p.actor(), &p.text(), &p.text())),
            19 => drop(init_states::unregister_feature(p.actor(), &p.text())),
            20 => drop(init_states::feature_state(p.actor(), &p.text())),
            21 => drop(init_states::has_feature_reached(p.actor(), &p.text(), &p.text())),
            22 => {
                let (actor, state, excluding) = (p.actor(), p.text(), p.maybe_text());
                drop(init_states::have_all_features_reached(actor, &state, excluding.as_deref()));
            }
            23 => drop(init_states::change_feature_state(p.actor(), &p.text(), &p.text())),
            24 => {
                let (actor, feature, state) = (p.actor(), p.maybe_text(), p.maybe_text());
                let subscribed =
                    init_states::subscribe_actor(actor, feature.as_deref(), state.as_deref(), p.flag(), p.id());
                if let Ok(subscription) = subscribed {
                    self.subscriptions.push(subscription);
                }
            }
            25 => {
                let (class, feature, state) = (p.text(), p.text(), p.maybe_text());
                if let Ok(subscription) = init_states::subscribe_class(&class, &feature, state.as_deref(), p.flag(), p.id())
                {
                    self.subscriptions.push(subscription);
                }
            }
            26 => drop(init_states::continue_init_state_chain(p.actor(), &p.text())),
            27 => drop(init_states::check_default_initialization_for_implementers(p.actor(), &p.text())),
            28 => host_log::log(LEVELS[p.level()], &p.text()),
            29 => drop(host_log::enabled(LEVELS[p.level()])),
            30 => self.drop_a_handle(),
            _ => self.forge_a_handle(),
        }
    }

    /// Lets go of a held handle.
    fn drop_a_handle(&mut self) {
        match self.program.byte() % 3 {
            0 => self.program.drop_one(&mut self.requests),
            1 => self.program.drop_one(&mut self.handlers),
            _ => self.program.drop_one(&mut self.subscriptions),
        }
    }

    /// Drops a handle number it may never have been given: the host must trap this instance, and only this one.
    fn forge_a_handle(&mut self) {
        let (kind, handle) = (self.program.byte() % 3, self.program.id());
        if !self.program.has(FORGE) {
            return;
        }
        // SAFETY: deliberately unsound — the host must refuse it.
        unsafe {
            match kind {
                0 => drop(ComponentRequest::from_handle(handle)),
                1 => drop(ExtensionHandler::from_handle(handle)),
                _ => drop(Subscription::from_handle(handle)),
            }
        }
    }
}

struct Component;

impl lifecycle::Guest for Component {
    fn on_registering() -> Result<(), String> {
        Ok(())
    }

    fn on_loading() -> Result<(), String> {
        Ok(())
    }

    fn on_activating(_context: ActivationContext) -> Result<(), String> {
        let bytes = assets::read_asset("program").map_err(|e| format!("no program: {e:?}"))?;
        FUZZER.with_borrow_mut(|fuzzer| fuzzer.program = Program::new(bytes));
        run(ON_ACTIVATING);
        Ok(())
    }

    fn on_activated() {
        run(PER_CALLBACK);
    }

    fn on_deactivating(_context: ActivationContext) -> Deactivation {
        run(PER_CALLBACK);
        Deactivation::Done
    }

    fn poll_deactivation() -> Deactivation {
        Deactivation::Done
    }

    fn on_unloading() {}

    fn on_unregistering() {}
}

impl handlers::Guest for Component {
    fn handle_extension_events(_handlers: Vec<u32>, actors: Vec<u64>, _events: Vec<u32>, _names: Vec<String>) {
        saw(&actors);
        run(PER_CALLBACK);
    }
}

impl init_state_callbacks::Guest for Component {
    fn can_change_init_states(
        actors: Vec<u64>,
        _features: Vec<u32>,
        _currents: Vec<u8>,
        _desireds: Vec<u8>,
        _names: Vec<String>,
    ) -> Vec<bool> {
        saw(&actors);
        run(PER_CALLBACK);
        FUZZER.with_borrow_mut(|fuzzer| {
            let program = &mut fuzzer.program;
            actors.iter().map(|_| !program.has(ANSWERS) || program.flag()).collect()
        })
    }

    fn handle_change_init_states(
        _actors: Vec<u64>,
        _features: Vec<u32>,
        _currents: Vec<u8>,
        _desireds: Vec<u8>,
        _names: Vec<String>,
    ) {
        run(PER_CALLBACK);
    }

    fn check_default_initializations(actors: Vec<u64>, _features: Vec<u32>, _names: Vec<String>) {
        saw(&actors);
        run(PER_CALLBACK);
    }

    fn on_init_states_changed(
        _ids: Vec<u32>,
        actors: Vec<u64>,
        _features: Vec<u32>,
        _states: Vec<u8>,
        _names: Vec<String>,
    ) {
        saw(&actors);
        run(PER_CALLBACK);
    }
}

export!(Component);
