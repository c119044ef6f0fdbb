//! The component manager: component requests, extension handlers and extension events.
//!
//! Requests and handlers are handles: keep them (in your plugin struct) for as long as they should apply, and
//! drop them to undo — dropping the last request for a pair removes the components it added; dropping a
//! handler delivers `ExtensionRemoved` for each receiver. The host drops whatever a plugin still holds when it
//! is deactivated.

pub use crate::bindings::gamefeature::plugin::components::{
    add_component_request, add_receiver, ensure_component, remove_receiver, send_extension_event, watch_property,
    AddFlags, ComponentRequest, ExtensionHandler, PropertyWatch,
};
use crate::world::ActorId;
use crate::Error;

/// The built-in extension events.
pub mod events {
    /// A receiver appeared after the handler was added.
    pub const RECEIVER_ADDED: &str = "ReceiverAdded";
    /// A receiver went away.
    pub const RECEIVER_REMOVED: &str = "ReceiverRemoved";
    /// The handler was added while the receiver existed.
    pub const EXTENSION_ADDED: &str = "ExtensionAdded";
    /// The handler was dropped (by the plugin, or by the host at deactivation).
    pub const EXTENSION_REMOVED: &str = "ExtensionRemoved";
    /// A modular actor began play.
    pub const GAME_ACTOR_READY: &str = "GameActorReady";
}

/// Asks for a `component` on every actor of class `receiver` (or a subclass) while the handle lives.
pub fn request_component(receiver: &str, component: &str) -> Result<ComponentRequest, Error> {
    add_component_request(receiver, component, AddFlags::empty())
}

/// Starts delivering events about receivers of class `receiver` to
/// [`Plugin::on_extension_event`](crate::Plugin::on_extension_event), tagged with `handler`.
pub fn add_extension_handler(receiver: &str, handler: u32) -> Result<ExtensionHandler, Error> {
    crate::bindings::gamefeature::plugin::components::add_extension_handler(receiver, handler)
}

/// Sends a custom event to the handlers of an actor's class chain.
pub fn send_event(actor: ActorId, event: &str) -> Result<(), Error> {
    send_extension_event(actor, event)
}
