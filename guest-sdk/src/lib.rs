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

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

/// The raw bindings generated from the WIT package, for what the typed API does not cover.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "game-feature",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "__export_game_feature",
        default_bindings_module: "gamefeature_sdk::bindings",
    });
}

pub mod log;
pub mod world;

pub use bindings::exports::gamefeature::plugin::lifecycle::Deactivation;
pub use bindings::gamefeature::plugin::types::{ActivationContext, Error, NetMode, Value};

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
}

thread_local! {
    // A component instance runs one call at a time on one thread, so a thread-local cell is the plugin's home.
    static INSTANCE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` on this instance's plugin value, creating it on first use.
fn with_plugin<P: Plugin, R>(f: impl FnOnce(&mut P) -> R) -> R {
    INSTANCE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let plugin = slot.get_or_insert_with(|| Box::new(P::default()));
        let plugin = plugin.downcast_mut::<P>().expect("one plugin type per component");
        f(plugin)
    })
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
