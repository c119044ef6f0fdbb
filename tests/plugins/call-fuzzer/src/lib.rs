//! The host-call fuzz target's plugin: runs the program its `program` asset holds — an arbitrary list of calls
//! of every import of `gamefeature:plugin@0.2.0`, with arbitrary arguments, on its own actors and (when the
//! program says so) on everyone's, through handles it was given and handles it forges. A few instructions run
//! in every callback the host makes, so calls also come re-entrantly from events, init-state callbacks, timers,
//! property watches and deactivation.
//!
//! The program's first byte is its flags ([`OTHERS`], [`FORGE`], [`ANSWERS`]); each instruction after it is
//! an opcode byte followed by the bytes its arguments take. Past the program's end nothing more runs, and the
//! plugin logs `program done: N calls of K kinds`. It logs nothing else of its own: its log lines are the program's.

use gamefeature_sdk::bindings::gamefeature::plugin::components::{
    self as components, AddFlags, ComponentRequest, ExtensionHandler, PropertyWatch,
};
use gamefeature_sdk::bindings::gamefeature::plugin::init_states::{self as init_states, ChainWork, Subscription};
use gamefeature_sdk::bindings::gamefeature::plugin::log::{self as host_log, Level};
use gamefeature_sdk::bindings::gamefeature::plugin::timers::{self, Timer};
use gamefeature_sdk::bindings::gamefeature::plugin::{actors, assets};
use gamefeature_sdk::world::ActorId;
use gamefeature_sdk::{export_plugin, log, ActivationContext, Deactivation, Frame, Plugin, Value};

/// Flag: the program may name any actor (else only actors it spawned, or ids no actor has).
pub const OTHERS: u8 = 1;
/// Flag: the program may drop handles it was never given.
pub const FORGE: u8 = 2;
/// Flag: the program answers `can-change-init-state` (else the plugin always says yes).
pub const ANSWERS: u8 = 4;

/// Instructions run on activation, and in each later callback.
const ON_ACTIVATING: usize = 256;
const PER_CALLBACK: usize = 16;
/// Kinds of instruction: one per import (handle methods, drops and forgeries counted as one each).
const KINDS: u8 = 44;
/// Ids no actor has: what an actor id becomes when the program may not name others' actors.
const NOBODY: u64 = 0xf000_0000_0000_0000;

/// Names the program picks from (classes, components, features, states, properties, events, assets), so that
/// calls reach past "unknown" refusals; any other text can be built too.
const WORDS: &[&str] = &[
    "Character",
    "Pawn",
    "Controller",
    "PlayerState",
    "Actor",
    "FuzzThing",
    "HeroComponent",
    "PawnExtensionComponent",
    "Health",
    "Armor",
    "Possession",
    "Hero",
    "PawnExtension",
    "Fuzz",
    "InitState.Spawned",
    "InitState.DataAvailable",
    "InitState.DataInitialized",
    "InitState.GameplayReady",
    "hp",
    "value",
    "Ping",
    "ReceiverAdded",
    "GameActorReady",
    "program",
    "",
];

#[derive(Default)]
struct CallFuzzer {
    program: Vec<u8>,
    at: usize,
    flags: u8,
    calls: u64,
    /// The kinds of instruction run, a bit each.
    kinds: u64,
    done: bool,
    own: Vec<ActorId>,
    seen: Vec<ActorId>,
    requests: Vec<ComponentRequest>,
    handlers: Vec<ExtensionHandler>,
    watches: Vec<PropertyWatch>,
    subscriptions: Vec<Subscription>,
    timers: Vec<Timer>,
}

impl CallFuzzer {
    fn byte(&mut self) -> u8 {
        let byte = self.program.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// A small number, or (rarely) any.
    fn id(&mut self) -> u32 {
        match self.byte() {
            255 => self.u32(),
            small => u32::from(small),
        }
    }

    fn text(&mut self) -> String {
        match self.byte() {
            pick @ 0..0xc0 => WORDS[usize::from(pick) % WORDS.len()].to_string(),
            0xff => "x".repeat(usize::from(self.byte()) * 1024),
            _ => {
                let length = usize::from(self.byte() % 64);
                let bytes: Vec<u8> = (0..length).map(|_| self.byte()).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
        }
    }

    fn maybe_text(&mut self) -> Option<String> {
        self.flag().then(|| self.text())
    }

    fn value(&mut self) -> Value {
        match self.byte() % 4 {
            0 => Value::Boolean(self.flag()),
            1 => Value::Integer(self.u64() as i64),
            2 => Value::Float(f64::from_bits(self.u64())),
            _ => Value::Text(self.text()),
        }
    }

    fn actor(&mut self) -> ActorId {
        let pick = |from: &[ActorId], at: u8| from.get(usize::from(at) % from.len().max(1)).copied();
        let (kind, at) = (self.byte() % 4, self.byte());
        let found = match kind {
            0 => pick(&self.own, at),
            1 if self.flags & OTHERS != 0 => pick(&self.seen, at),
            2 => Some(self.u64()),
            _ => None,
        };
        let actor = found.unwrap_or(u64::from(at));
        match self.flags & OTHERS != 0 || self.own.contains(&actor) {
            true => actor,
            false => actor | NOBODY,
        }
    }

    fn actors(&mut self) -> Vec<ActorId> {
        let count = self.byte() % 8;
        (0..count).map(|_| self.actor()).collect()
    }

    fn level(&mut self) -> Level {
        [Level::Trace, Level::Debug, Level::Info, Level::Warn, Level::Error][usize::from(self.byte() % 5)]
    }

    fn saw(&mut self, actors: &[ActorId]) {
        if self.flags & OTHERS != 0 {
            for actor in actors {
                if self.seen.len() < 256 && !self.seen.contains(actor) {
                    self.seen.push(*actor);
                }
            }
        }
    }

    /// Names for the batch calls, and numbers into them (some past the end).
    fn names_and_numbers(&mut self, count: usize) -> (Vec<String>, Vec<u32>) {
        let names: Vec<String> = (0..self.byte() % 4).map(|_| self.text()).collect();
        let numbers = (0..count).map(|_| u32::from(self.byte() % 5)).collect();
        (names, numbers)
    }

    /// Runs up to `budget` instructions.
    fn run(&mut self, budget: usize) {
        for _ in 0..budget {
            if self.at >= self.program.len() {
                if !self.done {
                    self.done = true;
                    log::info(&format!("program done: {} calls of {} kinds", self.calls, self.kinds.count_ones()));
                }
                return;
            }
            let opcode = self.byte() % KINDS;
            self.calls += 1;
            self.kinds |= 1 << opcode;
            self.step(opcode);
        }
    }

    fn step(&mut self, opcode: u8) {
        match opcode {
            0 => drop(actors::current_net_mode()),
            1 => drop(actors::world_name()),
            2 => drop(actors::actor_class(self.actor())),
            3 => drop(actors::is_a(self.actor(), &self.text())),
            4 => {
                if let Ok(found) = actors::actors_of_class(&self.text()) {
                    self.saw(&found);
                }
            }
            5 => drop(actors::has_authority(self.actor())),
            6 => drop(actors::local_role(self.actor())),
            7 => drop(actors::is_locally_controlled(self.actor())),
            8 => drop(actors::components_of(self.actor())),
            9 => drop(actors::get_property(self.actor(), &self.text(), &self.text())),
            10 => drop(actors::set_property(self.actor(), &self.text(), &self.text(), &self.value())),
            11 => {
                if let Ok(actor) = actors::spawn_actor(&self.text(), self.flag()) {
                    self.own.push(actor);
                }
            }
            12 => drop(actors::destroy_actor(self.actor())),
            13 => drop(assets::read_asset(&self.text())),
            14 => {
                let flags = if self.flag() { AddFlags::ADD_UNIQUE } else { AddFlags::empty() };
                if let Ok(request) = components::add_component_request(&self.text(), &self.text(), flags) {
                    self.requests.push(request);
                }
            }
            15 => {
                if let Ok(handler) = components::add_extension_handler(&self.text(), self.id()) {
                    self.handlers.push(handler);
                }
            }
            16 => drop(components::event_name(self.id())),
            17 => drop(components::ensure_component(self.actor(), &self.text())),
            18 => {
                let (actor, component, name, id) = (self.actor(), self.text(), self.text(), self.id());
                if let Ok(watch) = components::watch_property(actor, &component, &name, id) {
                    self.watches.push(watch);
                }
            }
            19 => drop(components::send_extension_event(self.actor(), &self.text())),
            20 => {
                let actors = self.actors();
                let (names, events) = self.names_and_numbers(actors.len());
                drop(components::send_extension_events(&actors, &events, &names));
            }
            21 => drop(components::add_receiver(self.actor())),
            22 => drop(components::remove_receiver(self.actor())),
            23 => drop(init_states::states()),
            24 => drop(init_states::register_feature(self.actor(), &self.text(), &self.text())),
            25 => drop(init_states::unregister_feature(self.actor(), &self.text())),
            26 => drop(init_states::feature_state(self.actor(), &self.text())),
            27 => drop(init_states::has_feature_reached(self.actor(), &self.text(), &self.text())),
            28 => {
                let (actor, state, excluding) = (self.actor(), self.text(), self.maybe_text());
                drop(init_states::have_all_features_reached(actor, &state, excluding.as_deref()));
            }
            29 => drop(init_states::change_feature_state(self.actor(), &self.text(), &self.text())),
            30 | 31 => {
                let actor = if opcode == 30 { Some(self.actor()) } else { None };
                let class = self.text();
                let (feature, state) = (self.maybe_text(), self.maybe_text());
                let (call_if_reached, id) = (self.flag(), self.id());
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
            32 => drop(init_states::continue_init_state_chain(self.actor(), &self.text())),
            33 => drop(init_states::check_default_initialization_for_implementers(self.actor(), &self.text())),
            34 => {
                let actors = self.actors();
                let (names, features) = self.names_and_numbers(actors.len());
                let works: Vec<ChainWork> = (0..actors.len())
                    .map(|_| if self.flag() { ChainWork::ContinueChain } else { ChainWork::CheckOthersThenContinue })
                    .collect();
                drop(init_states::queue_chain_requests(&actors, &features, &works, &names));
            }
            35 => {
                let actors = self.actors();
                let (names, features) = self.names_and_numbers(actors.len());
                let implementers: Vec<u32> = (0..actors.len()).map(|_| u32::from(self.byte() % 5)).collect();
                drop(init_states::register_features(&actors, &features, &implementers, &names));
            }
            36 => {
                let (feature, component, property) = (self.maybe_text(), self.text(), self.text());
                drop(init_states::add_chain_read(feature.as_deref(), &component, &property));
            }
            37 => host_log::log(self.level(), &self.text()),
            38 => drop(host_log::enabled(self.level())),
            39 => {
                let (period, repeating, id) = (u64::from(self.byte()) * 1000, self.flag(), self.id());
                if let Ok(timer) = timers::start_timer(period, repeating, id) {
                    self.timers.push(timer);
                }
            }
            40 => drop(timers::now()),
            41 => self.ask_a_handle(),
            42 => self.drop_a_handle(),
            _ => self.forge_a_handle(),
        }
    }

    /// Asks what a held handle is.
    fn ask_a_handle(&mut self) {
        let (kind, at) = (self.byte() % 5, usize::from(self.byte()));
        match kind {
            0 => {
                if let Some(request) = self.requests.get(at % self.requests.len().max(1)) {
                    drop((request.receiver(), request.component()));
                }
            }
            1 => {
                if let Some(handler) = self.handlers.get(at % self.handlers.len().max(1)) {
                    drop((handler.receiver(), handler.id()));
                }
            }
            2 => drop(self.watches.get(at % self.watches.len().max(1)).map(PropertyWatch::id)),
            3 => drop(self.subscriptions.get(at % self.subscriptions.len().max(1)).map(Subscription::id)),
            _ => drop(self.timers.get(at % self.timers.len().max(1)).map(Timer::id)),
        }
    }

    /// Lets go of a held handle.
    fn drop_a_handle(&mut self) {
        fn take<T>(from: &mut Vec<T>, at: u8) {
            if !from.is_empty() {
                from.swap_remove(usize::from(at) % from.len());
            }
        }
        let (kind, at) = (self.byte() % 5, self.byte());
        match kind {
            0 => take(&mut self.requests, at),
            1 => take(&mut self.handlers, at),
            2 => take(&mut self.watches, at),
            3 => take(&mut self.subscriptions, at),
            _ => take(&mut self.timers, at),
        }
    }

    /// Drops a handle number it may never have been given (or has already dropped): the host must trap this
    /// instance, and only this one.
    fn forge_a_handle(&mut self) {
        let (kind, handle) = (self.byte() % 5, self.id());
        if self.flags & FORGE == 0 {
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
        self.program = assets::read_asset("program").map_err(|e| format!("no program: {e:?}"))?;
        self.flags = self.byte();
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
        self.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn can_change_init_state(&mut self, actor: ActorId, _feature: &str, _current: Option<&str>, _desired: &str) -> bool {
        self.saw(&[actor]);
        self.run(PER_CALLBACK);
        self.flags & ANSWERS == 0 || self.flag()
    }

    fn handle_change_init_state(&mut self, _actor: ActorId, _feature: &str, _current: Option<&str>, _desired: &str) {
        self.run(PER_CALLBACK);
    }

    fn check_default_initialization(&mut self, actor: ActorId, _feature: &str) {
        self.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn on_init_state_changed(&mut self, _subscription: u32, actor: ActorId, _feature: &str, _state: &str) {
        self.saw(&[actor]);
        self.run(PER_CALLBACK);
    }

    fn on_timer(&mut self, _timer: u32, _times: u32, _frame: &Frame) {
        self.run(PER_CALLBACK);
    }

    fn on_property_changed(&mut self, _watch: u32, actor: ActorId, _old: Option<&Value>, _new: Option<&Value>) {
        self.saw(&[actor]);
        self.run(PER_CALLBACK);
    }
}

export_plugin!(CallFuzzer);
