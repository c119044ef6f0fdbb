//! The host-call fuzz target's plugin: runs the program its `program` asset holds — an arbitrary list of calls
//! of every import of `gamefeature:plugin@0.2.0`, with arbitrary arguments, on its own actors and (when the
//! program says so) on everyone's, through handles it was given and handles it forges. A few instructions run
//! in every callback the host makes, so calls also come re-entrantly from events, init-state callbacks, timers,
//! property watches and deactivation.
//!
//! The program's first byte is its flags ([`program::OTHERS`], [`program::FORGE`], [`program::ANSWERS`]);
//! each instruction after it is an opcode byte followed by the bytes its arguments take (`program.rs`). Past
//! the program's end nothing more runs, and the plugin logs `program done: N calls of K kinds`. It logs nothing
//! else of its own: its log lines are the program's. `call-fuzzer-legacy` runs the same programs through the
//! 0.1.0 imports.

mod program;

use gamefeature_sdk::bindings::gamefeature::plugin::components::{
    self as components, AddFlags, ComponentRequest, ExtensionHandler, PropertyWatch,
};
use gamefeature_sdk::bindings::gamefeature::plugin::init_states::{self as init_states, ChainWork, Subscription};
use gamefeature_sdk::bindings::gamefeature::plugin::log::{self as host_log, Level};
use gamefeature_sdk::bindings::gamefeature::plugin::timers::{self, Timer};
use gamefeature_sdk::bindings::gamefeature::plugin::{actors, assets};
use gamefeature_sdk::world::ActorId;
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Frame, Plugin, Value};
use program::{Arg, Program, ANSWERS, FORGE};

/// Instructions run on activation, and in each later callback.
const ON_ACTIVATING: usize = 256;
const PER_CALLBACK: usize = 16;
/// Kinds of instruction: one per import (handle methods, drops and forgeries counted as one each).
const KINDS: u8 = 46;
const LEVELS: [Level; 5] = [Level::Trace, Level::Debug, Level::Info, Level::Warn, Level::Error];

#[derive(Default)]
struct CallFuzzer {
    program: Program,
    requests: Vec<ComponentRequest>,
    handlers: Vec<ExtensionHandler>,
    watches: Vec<PropertyWatch>,
    subscriptions: Vec<Subscription>,
    timers: Vec<Timer>,
}

fn value(arg: Arg) -> Value {
    match arg {
        Arg::Boolean(b) => Value::Boolean(b),
        Arg::Integer(i) => Value::Integer(i),
        Arg::Float(f) => Value::Float(f),
        Arg::Text(t) => Value::Text(t),
    }
}

impl CallFuzzer {
    /// Runs up to `budget` instructions.
    fn run(&mut self, budget: usize) {
        for _ in 0..budget {
            match self.program.next(KINDS) {
                Ok(opcode) => self.step(opcode),
                Err(done) => {
                    if let Some(line) = done {
                        log::info(&line);
                    }
                    return;
                }
            }
        }
    }

    fn step(&mut self, opcode: u8) {
        match opcode {
            0 => drop(actors::current_net_mode()),
            1 => drop(actors::world_name()),
            2 => drop(actors::actor_class(self.program.actor())),
            3 => drop(actors::is_a(self.program.actor(), &self.program.text())),
            4 => {
                if let Ok(found) = actors::actors_of_class(&self.program.text()) {
                    self.program.saw(&found);
                }
            }
            5 => drop(actors::has_authority(self.program.actor())),
            6 => drop(actors::local_role(self.program.actor())),
            7 => drop(actors::is_locally_controlled(self.program.actor())),
            8 => drop(actors::components_of(self.program.actor())),
            9 => drop(actors::get_property(self.program.actor(), &self.program.text(), &self.program.text())),
            10 => drop(actors::set_property(self.program.actor(), &self.program.text(), &self.program.text(), &value(self.program.value()))),
            11 => {
                if let Ok(actor) = actors::spawn_actor(&self.program.text(), self.program.flag()) {
                    self.program.own.push(actor);
                }
            }
            12 => drop(actors::destroy_actor(self.program.actor())),
            13 => drop(assets::read_asset(&self.program.text())),
            14 => {
                let flags = if self.program.flag() { AddFlags::ADD_UNIQUE } else { AddFlags::empty() };
                if let Ok(request) = components::add_component_request(&self.program.text(), &self.program.text(), flags) {
                    self.requests.push(request);
                }
            }
            15 => {
                if let Ok(handler) = components::add_extension_handler(&self.program.text(), self.program.id()) {
                    self.handlers.push(handler);
                }
            }
            16 => drop(components::event_name(self.program.id())),
            17 => drop(components::ensure_component(self.program.actor(), &self.program.text())),
            18 => {
                let (actor, component, name, id) = (self.program.actor(), self.program.text(), self.program.text(), self.program.id());
                if let Ok(watch) = components::watch_property(actor, &component, &name, id) {
                    self.watches.push(watch);
                }
            }
            19 => drop(components::send_extension_event(self.program.actor(), &self.program.text())),
            20 => {
                let actors = self.program.actors();
                let (names, events) = self.program.names_and_numbers(actors.len());
                drop(components::send_extension_events(&actors, &events, &names));
            }
            21 => drop(components::add_receiver(self.program.actor())),
            22 => drop(components::remove_receiver(self.program.actor())),
            23 => drop(init_states::states()),
            24 => drop(init_states::register_feature(self.program.actor(), &self.program.text(), &self.program.text())),
            25 => drop(init_states::unregister_feature(self.program.actor(), &self.program.text())),
            26 => drop(init_states::feature_state(self.program.actor(), &self.program.text())),
            27 => drop(init_states::has_feature_reached(self.program.actor(), &self.program.text(), &self.program.text())),
            28 => {
                let (actor, state, excluding) = (self.program.actor(), self.program.text(), self.program.maybe_text());
                drop(init_states::have_all_features_reached(actor, &state, excluding.as_deref()));
            }
            29 => drop(init_states::change_feature_state(self.program.actor(), &self.program.text(), &self.program.text())),
            30 | 31 => {
                let actor = if opcode == 30 { Some(self.program.actor()) } else { None };
                let class = self.program.text();
                let (feature, state) = (self.program.maybe_text(), self.program.maybe_text());
                let (call_if_reached, id) = (self.program.flag(), self.program.id());
                let subscribed = match actor {
                    Some(actor) => init_states::subscribe_actor(
                        actor,
                        feature.as_deref(),
                        state.as_deref(),
                        call_if_reached,
                        id,
                    ),
                    None => init_states::subscribe_class(&class, feature.as_deref(), state.as_deref(), call_if_reached, id),
                };
                if let Ok(subscription) = subscribed {
                    self.subscriptions.push(subscription);
                }
            }
            32 => drop(init_states::continue_init_state_chain(self.program.actor(), &self.program.text())),
            33 => drop(init_states::check_default_initialization_for_implementers(self.program.actor(), &self.program.text())),
            34 => {
                let actors = self.program.actors();
                let (names, features) = self.program.names_and_numbers(actors.len());
                let works: Vec<ChainWork> = (0..actors.len())
                    .map(|_| if self.program.flag() { ChainWork::ContinueChain } else { ChainWork::CheckOthersThenContinue })
                    .collect();
                drop(init_states::queue_chain_requests(&actors, &features, &works, &names));
            }
            35 => {
                let actors = self.program.actors();
                let (names, features) = self.program.names_and_numbers(actors.len());
                let implementers: Vec<u32> = (0..actors.len()).map(|_| u32::from(self.program.byte() % 5)).collect();
                drop(init_states::register_features(&actors, &features, &implementers, &names));
            }
            36 => {
                let (feature, component, property) = (self.program.maybe_text(), self.program.text(), self.program.text());
                drop(init_states::add_chain_read(feature.as_deref(), &component, &property));
            }
            37 => host_log::log(LEVELS[self.program.level()], &self.program.text()),
            38 => drop(host_log::enabled(LEVELS[self.program.level()])),
            39 => {
                let (period, repeating, id) = (u64::from(self.program.byte()) * 1000, self.program.flag(), self.program.id());
                if let Ok(timer) = timers::start_timer(period, repeating, id) {
                    self.timers.push(timer);
                }
            }
            40 => drop(timers::now()),
            41 => self.ask_a_handle(),
            42 => self.drop_a_handle(),
            43 => {
                let relevancy = match self.program.byte() % 3 {
                    0 => actors::Relevancy::Always,
                    1 => actors::Relevancy::OwnerOnly,
                    _ => actors::Relevancy::Groups(self.groups()),
                };
                drop(actors::set_relevancy(self.program.actor(), &relevancy));
            }
            44 => drop(actors::set_player_groups(self.program.actor(), &self.groups())),
            _ => self.forge_a_handle(),
        }
    }

    /// Up to three relevancy groups.
    fn groups(&mut self) -> Vec<String> {
        (0..self.program.byte() % 4).map(|_| self.program.text()).collect()
    }

    /// Asks what a held handle is.
    fn ask_a_handle(&mut self) {
        match self.program.byte() % 5 {
            0 => {
                if let Some(at) = self.program.pick(self.requests.len()) {
                    drop((self.requests[at].receiver(), self.requests[at].component()));
                }
            }
            1 => {
                if let Some(at) = self.program.pick(self.handlers.len()) {
                    drop((self.handlers[at].receiver(), self.handlers[at].id()));
                }
            }
            2 => drop(self.program.pick(self.watches.len()).map(|at| self.watches[at].id())),
            3 => drop(self.program.pick(self.subscriptions.len()).map(|at| self.subscriptions[at].id())),
            _ => drop(self.program.pick(self.timers.len()).map(|at| self.timers[at].id())),
        }
    }

    /// Lets go of a held handle.
    fn drop_a_handle(&mut self) {
        match self.program.byte() % 5 {
            0 => self.program.drop_one(&mut self.requests),
            1 => self.program.drop_one(&mut self.handlers),
            2 => self.program.drop_one(&mut self.watches),
            3 => self.program.drop_one(&mut self.subscriptions),
            _ => self.program.drop_one(&mut self.timers),
        }
    }

    /// Drops a handle number it may never have been given (or has already dropped): the host must trap this
    /// instance, and only this one.
    fn forge_a_handle(&mut self) {
        let (kind, handle) = (self.program.byte() % 5, self.program.id());
        if !self.program.has(FORGE) {
            return;
        }
        // SAFETY: deliberately unsound — the host must refuse it.
        unsafe {
            match kind {
                0 => drop(ComponentRequest::from_handle(handle)),
                1 => drop(ExtensionHandler::from_handle(handle)),
                2 => drop(PropertyWatch::from_handle(handle)),
                3 => drop(Subscription::from_handle(handle)),
                _ => drop(Timer::from_handle(handle)),
            }
        }
    }
}

impl Plugin for CallFuzzer {
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        self.program = Program::new(assets::read_asset("program").map_err(|e| format!("no program: {e:?}"))?);
        self.run(ON_ACTIVATING);
        Ok(())
    }

    fn on_activated(&mut self) {
        self.run(PER_CALLBACK);
    }

    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        self.run(PER_CALLBACK);
        Deactivation::Done
    }

    fn on_extension_event(&mut self, _handler: u32, actor: ActorId, _event: &str) {
        self.program.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn can_change_init_state(&mut self, actor: ActorId, _feature: &str, _current: Option<&str>, _desired: &str) -> bool {
        self.program.saw(&[actor]);
        self.run(PER_CALLBACK);
        !self.program.has(ANSWERS) || self.program.flag()
    }

    fn handle_change_init_state(&mut self, _actor: ActorId, _feature: &str, _current: Option<&str>, _desired: &str) {
        self.run(PER_CALLBACK);
    }

    fn check_default_initialization(&mut self, actor: ActorId, _feature: &str) {
        self.program.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn on_init_state_changed(&mut self, _subscription: u32, actor: ActorId, _feature: &str, _state: &str) {
        self.program.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn on_timer(&mut self, _timer: u32, _times: u32, _frame: &Frame) {
        self.run(PER_CALLBACK);
    }

    fn on_property_changed(&mut self, _watch: u32, actor: ActorId, _old: Option<&Value>, _new: Option<&Value>) {
        self.program.saw(&[actor]);
        self.run(PER_CALLBACK);
    }
}

export_plugin!(CallFuzzer);
