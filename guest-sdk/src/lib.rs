//! Write game-feature plugins for a gamefeature host in Rust.
//!
//! A plugin is a WebAssembly component implementing the `gamefeature:plugin/game-feature` world. This crate
//! generates the bindings for that world and hides them behind one trait, [`Plugin`], whose hooks all have
//! defaults, so a plugin implements only what it needs and keeps compiling when later API versions add hooks.
//!
//! ```ignore
//! use gamefeature_sdk::{export_plugin, log, ActivationContext, Plugin};
//!
//! #[derive(Default)]
//! struct Hello;
//!
//! impl Plugin for Hello {
//!     fn on_activating(&mut self, context: &ActivationContext) -> Result<(), String> {
//!         log::info(&format!("hello, {}", context.world_name));
//!         Ok(())
//!     }
//! }
//!
//! export_plugin!(Hello);
//! ```
//!
//! Build it as a `cdylib` with `cargo build --release --target wasm32-wasip2` and put the `.wasm` next to the
//! plugin's `plugin.toml`.
//!
//! The host creates one instance of the plugin per world, so the value of your plugin type is per-world state:
//! keep it there rather than in globals.
//!
//! The sandbox: [`log`] is the way to talk to the host's log, but `println!` and `eprintln!` work too (each
//! line becomes an `info` or `warn` line of the plugin; a panic's message is logged before the host stops the
//! plugin). There is no filesystem unless the plugin's `plugin.toml` declares `fs.data = true` under
//! `[permissions]` and the host grants it: then `std::fs` reaches a private directory at `/data`, and nothing
//! else. Every call has a deadline (10 ms by default): never sleep or wait in a hook.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

/// The raw bindings generated from the WIT package, for what the typed API does not cover.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "game-feature",
        path: "../wit/0.2.0",
        pub_export_macro: true,
        export_macro_name: "__export_game_feature",
        default_bindings_module: "gamefeature_sdk::bindings",
    });
}

pub mod components;
mod deferred;
mod facts;
pub mod init_state;
pub mod log;
// Only a plugin's own memcmp: a native build (the SDK's tests) keeps its platform's.
#[cfg(any(all(target_arch = "wasm32", target_os = "wasi"), test))]
mod memcmp;
mod names;
pub mod timers;
pub mod world;

pub use bindings::exports::gamefeature::plugin::lifecycle::Deactivation;
pub use bindings::gamefeature::plugin::types::{ActivationContext, Error, Frame, NetMode, NetRole, Value};

/// A game feature. Every hook has a default that does nothing and succeeds.
///
/// The hooks follow the feature's lifecycle in one world, in this order: [`on_registering`](Plugin::on_registering),
/// [`on_loading`](Plugin::on_loading), [`on_activating`](Plugin::on_activating),
/// [`on_activated`](Plugin::on_activated); then, at end of play, [`on_deactivating`](Plugin::on_deactivating)
/// (and [`poll_deactivation`](Plugin::poll_deactivation) while it reports [`Deactivation::Pending`]),
/// [`on_unloading`](Plugin::on_unloading), [`on_unregistering`](Plugin::on_unregistering).
///
/// An `Err` from a fallible hook stops the plugin's lifecycle in that world and shows the message in the host's
/// report; the rest of the experience carries on without it.
pub trait Plugin: Default + 'static {
    /// The plugin is being registered with the world's experience.
    fn on_registering(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// The plugin is being loaded: read assets and build tables here.
    fn on_loading(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// The plugin is being activated in a world: start extending it here.
    fn on_activating(&mut self, _context: &ActivationContext) -> Result<(), String> {
        Ok(())
    }

    /// Activation finished.
    fn on_activated(&mut self) {}

    /// End of play: undo what activation did. Return [`Deactivation::Pending`] to hold deactivation open until
    /// [`poll_deactivation`](Plugin::poll_deactivation) reports [`Deactivation::Done`].
    fn on_deactivating(&mut self, _context: &ActivationContext) -> Deactivation {
        Deactivation::Done
    }

    /// Asked repeatedly while deactivation is pending.
    fn poll_deactivation(&mut self) -> Deactivation {
        Deactivation::Done
    }

    /// The plugin is being unloaded from the world.
    fn on_unloading(&mut self) {}

    /// The last call the instance receives.
    fn on_unregistering(&mut self) {}

    /// Hot reload: the state to hand to the new version of this plugin, asked before this instance is
    /// deactivated for a reload. `None` (the default) starts the new version fresh. The bytes are yours to
    /// format; version them, since they may reach an older or a newer build of the plugin.
    fn snapshot(&mut self) -> Option<Vec<u8>> {
        None
    }

    /// Hot reload: the bytes the previous version's [`snapshot`](Plugin::snapshot) returned, given after
    /// [`on_loading`](Plugin::on_loading) and before [`on_activating`](Plugin::on_activating). An `Err`
    /// refuses the new version; the old one runs on with its state.
    fn restore(&mut self, _state: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// An extension event for the handler you numbered `handler` (see
    /// [`components::add_extension_handler`]); `event` is one of [`components::events`] or a custom name.
    fn on_extension_event(&mut self, _handler: u32, _actor: world::ActorId, _event: &str) {}

    /// May `feature` of `actor` move from `current` to `desired`? Asked for each next state in turn while the
    /// chain is walked, until it answers no (Unreal's `CanChangeInitState`).
    fn can_change_init_state(
        &mut self,
        _actor: world::ActorId,
        _feature: &str,
        _current: Option<&str>,
        _desired: &str,
    ) -> bool {
        true
    }

    /// `feature` of `actor` is about to move from `current` to `desired`: do the transition's work. Called right
    /// after [`can_change_init_state`](Self::can_change_init_state) allowed the step, in the same host call, before
    /// the next step is asked. The host applies the steps when the walk ends; work that changes the world through
    /// the SDK (a property written, a component added or removed, a feature registered or changed, an actor
    /// spawned or destroyed) ends the walk there, and the host asks again once it has applied the steps. Dropping
    /// a [`ComponentRequest`](components::ComponentRequest) while walking is not seen: drop it after.
    fn handle_change_init_state(
        &mut self,
        _actor: world::ActorId,
        _feature: &str,
        _current: Option<&str>,
        _desired: &str,
    ) {
    }

    /// Try to move `feature` forward; by default, walk its chain (deferred: one host call for the batch).
    fn check_default_initialization(&mut self, actor: world::ActorId, feature: &str) {
        init_state::defer_continue_chain(actor, feature);
    }

    /// Subscription `subscription` saw `feature` of `actor` reach `state`.
    fn on_init_state_changed(&mut self, _subscription: u32, _actor: world::ActorId, _feature: &str, _state: &str) {}

    /// The timer you tagged `timer` (see [`timers`]) fired `times` times since it last reached you (more than
    /// once when its period is shorter than a frame), in `frame`.
    fn on_timer(&mut self, _timer: u32, _times: u32, _frame: &Frame) {}

    /// A property you watch (see [`components::watch_property`]) went from `old` to `new` (`None`: no value).
    fn on_property_changed(&mut self, _watch: u32, _actor: world::ActorId, _old: Option<&Value>, _new: Option<&Value>) {
    }

    /// Rep-notify, on a client: a replicated property you declared (`[components.replicated]` in your
    /// `plugin.toml`) went from `old` (`None` when this client had no value yet) to `new`.
    fn on_replicated(
        &mut self,
        _actor: world::ActorId,
        _component: &str,
        _property: &str,
        _old: Option<&Value>,
        _new: &Value,
    ) {
    }
}

thread_local! {
    // A component instance runs one call at a time on one thread, so a thread-local cell is the plugin's home.
    static INSTANCE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` on this instance's plugin value, creating it on first use; then sends what it deferred (feature
/// registrations, events, chain walks).
fn with_plugin<P: Plugin, R>(f: impl FnOnce(&mut P) -> R) -> R {
    let result = INSTANCE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let plugin = slot.get_or_insert_with(|| {
            say_panics_plainly();
            Box::new(P::default())
        });
        let plugin = plugin.downcast_mut::<P>().expect("one plugin type per component");
        f(plugin)
    });
    deferred::send();
    result
}

/// Makes a panic print its message and where it happened, and nothing else, on standard error (the host shows it
/// as the plugin's error log, beside the trap that quarantines it): Rust's default hook adds a thread name and a
/// note on `RUST_BACKTRACE`, which a plugin cannot act on.
fn say_panics_plainly() {
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
}

/// Adapts a [`Plugin`] to the generated export traits. Used by [`export_plugin!`].
#[doc(hidden)]
pub struct Exports<P>(PhantomData<P>);

impl<P: Plugin> bindings::exports::gamefeature::plugin::lifecycle::Guest for Exports<P> {
    fn on_registering() -> Result<(), String> {
        with_plugin(P::on_registering)
    }
    fn on_loading() -> Result<(), String> {
        with_plugin(P::on_loading)
    }
    fn on_activating(context: ActivationContext) -> Result<(), String> {
        with_plugin(|p: &mut P| p.on_activating(&context))
    }
    fn on_activated() {
        with_plugin(P::on_activated)
    }
    fn on_deactivating(context: ActivationContext) -> Deactivation {
        with_plugin(|p: &mut P| p.on_deactivating(&context))
    }
    fn poll_deactivation() -> Deactivation {
        with_plugin(P::poll_deactivation)
    }
    fn on_unloading() {
        with_plugin(P::on_unloading)
    }
    fn on_unregistering() {
        with_plugin(P::on_unregistering)
    }
    fn snapshot() -> Option<Vec<u8>> {
        with_plugin(P::snapshot)
    }
    fn restore(state: Vec<u8>) -> Result<(), String> {
        with_plugin(|p: &mut P| p.restore(&state))
    }
}

impl<P: Plugin> bindings::exports::gamefeature::plugin::handlers::Guest for Exports<P> {
    fn handle_extension_events(handlers: Vec<u32>, actors: Vec<u64>, events: Vec<u32>, names: Vec<String>) {
        with_plugin(|p: &mut P| {
            debug_assert!(
                handlers.len() == actors.len() && actors.len() == events.len(),
                "a batch's lists differ in length"
            );
            let len = handlers.len().min(actors.len()).min(events.len());
            let deliver = |p: &mut P, handler: u32, actor: u64, event: u32| {
                p.on_extension_event(handler, actor, &names[event as usize])
            };
            // Four events a turn of the loop: wasmtime checks the call's deadline at every turn (its epoch check),
            // which is then paid once per four events rather than once per event.
            let (mut handlers4, mut actors4, mut events4) =
                (handlers[..len].chunks_exact(4), actors[..len].chunks_exact(4), events[..len].chunks_exact(4));
            for ((h, a), e) in (&mut handlers4).zip(&mut actors4).zip(&mut events4) {
                deliver(p, h[0], a[0], e[0]);
                deliver(p, h[1], a[1], e[1]);
                deliver(p, h[2], a[2], e[2]);
                deliver(p, h[3], a[3], e[3]);
            }
            let rest = handlers4.remainder().iter().zip(actors4.remainder()).zip(events4.remainder());
            for ((handler, actor), event) in rest {
                deliver(p, *handler, *actor, *event);
            }
        })
    }

    fn handle_extension_event(handler: u32, actor: u64, event: u32) {
        let name = components::event_name(event);
        with_plugin(|p: &mut P| p.on_extension_event(handler, actor, &name))
    }
}

use bindings::exports::gamefeature::plugin::init_state_callbacks::ChainWalks;

/// Unreal's `ContinueInitStateChain` for one entry of a batch, from its `current` state: `TryToChangeInitState` for
/// each next state — the decision, then the work of an allowed step — until a step is refused or the chain ends.
/// The walk stops early, to be asked again, once the plugin's work changed the world: the host must apply the
/// steps taken before the next decision can ask it. Returns the steps taken, and whether a step was refused.
fn walk_chain<P: Plugin>(p: &mut P, entry: usize, actor: u64, feature: &str, current: u8) -> (u8, bool) {
    let states = init_state::known_states();
    let name = |ordinal: u8| init_state::name_among(states, ordinal);
    let mut steps = 0;
    let mut at = current;
    while let Some(desired) = at.checked_add(1).and_then(name) {
        let from = name(at);
        if !p.can_change_init_state(actor, feature, from, desired) {
            return (steps, true);
        }
        p.handle_change_init_state(actor, feature, from, desired);
        (at, steps) = (at + 1, steps + 1);
        if !facts::advance(entry, at) {
            break;
        }
    }
    (steps, false)
}

impl<P: Plugin> bindings::exports::gamefeature::plugin::init_state_callbacks::Guest for Exports<P> {
    fn try_change_init_states(
        actors: Vec<u64>,
        features: Vec<u32>,
        currents: Vec<u8>,
        // Each walk's first step: the state after its current one.
        _desireds: Vec<u8>,
        names: Vec<String>,
        chain_facts: bindings::exports::gamefeature::plugin::init_state_callbacks::ChainFacts,
    ) -> ChainWalks {
        let names = std::rc::Rc::new(names);
        facts::answering(facts::Facts::new(&actors, &features, names.clone(), chain_facts), || {
            with_plugin(|p: &mut P| {
                let mut walks = ChainWalks { steps: Vec::with_capacity(actors.len()), refused: Vec::new() };
                for i in 0..actors.len() {
                    facts::deciding(i);
                    let (actor, feature) = (actors[i], &names[features[i] as usize]);
                    let (steps, refused) = walk_chain(p, i, actor, feature, currents[i]);
                    walks.steps.push(steps);
                    if refused {
                        walks.refused.push(i as u32);
                    }
                }
                walks
            })
        })
    }

    fn check_default_initializations(actors: Vec<u64>, features: Vec<u32>, names: Vec<String>) {
        with_plugin(|p: &mut P| {
            for (actor, feature) in actors.iter().zip(&features) {
                p.check_default_initialization(*actor, &names[*feature as usize]);
            }
        })
    }

    fn on_init_states_changed(
        ids: Vec<u32>,
        actors: Vec<u64>,
        features: Vec<u32>,
        states: Vec<u8>,
        names: Vec<String>,
    ) {
        let known = init_state::known_states();
        with_plugin(|p: &mut P| {
            for i in 0..ids.len() {
                let state = init_state::name_among(known, states[i]).unwrap_or_default();
                p.on_init_state_changed(ids[i], actors[i], &names[features[i] as usize], state);
            }
        })
    }
}

impl<P: Plugin> bindings::exports::gamefeature::plugin::timer_callbacks::Guest for Exports<P> {
    fn on_timers(frame: Frame, ids: Vec<u32>, counts: Vec<u32>) {
        with_plugin(|p: &mut P| {
            for (id, times) in ids.iter().zip(&counts) {
                p.on_timer(*id, *times, &frame);
            }
        })
    }
}

impl<P: Plugin> bindings::exports::gamefeature::plugin::replication_callbacks::Guest for Exports<P> {
    fn on_replicated(
        actors: Vec<u64>,
        components: Vec<u32>,
        properties: Vec<u32>,
        olds: Vec<Option<Value>>,
        news: Vec<Value>,
        names: Vec<String>,
    ) {
        with_plugin(|p: &mut P| {
            for i in 0..actors.len() {
                let (component, property) = (&names[components[i] as usize], &names[properties[i] as usize]);
                p.on_replicated(actors[i], component, property, olds[i].as_ref(), &news[i]);
            }
        })
    }
}

impl<P: Plugin> bindings::exports::gamefeature::plugin::property_callbacks::Guest for Exports<P> {
    fn on_properties_changed(ids: Vec<u32>, actors: Vec<u64>, olds: Vec<Option<Value>>, news: Vec<Option<Value>>) {
        with_plugin(|p: &mut P| {
            for i in 0..ids.len() {
                p.on_property_changed(ids[i], actors[i], olds[i].as_ref(), news[i].as_ref());
            }
        })
    }
}

/// Exports a type implementing [`Plugin`] as this component's game feature.
///
/// Use it once per plugin crate, at the crate root.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[doc(hidden)]
        type __GamefeaturePluginExports = $crate::Exports<$plugin>;
        $crate::bindings::__export_game_feature!(
            __GamefeaturePluginExports with_types_in $crate::bindings
        );
    };
}
