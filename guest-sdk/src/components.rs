//! The component manager: component requests, extension handlers and extension events.
//!
//! Requests and handlers are handles: keep them (in your plugin struct) for as long as they should apply, and
//! drop them to undo — dropping the last request for a pair removes the components it added; dropping a
//! handler delivers `ExtensionRemoved` for each receiver. The host drops whatever a plugin still holds when it
//! is deactivated.

use crate::bindings::gamefeature::plugin::components as host;
pub use crate::bindings::gamefeature::plugin::components::{
    send_extension_event, watch_property, AddFlags, ComponentRequest, ExtensionHandler, PropertyWatch,
};
use std::cell::RefCell;
use std::rc::Rc;

use crate::world::ActorId;
use crate::Error;

thread_local! {
    /// Event names by the numbers single-event calls carry, asked of the host once each.
    static EVENT_NAMES: RefCell<Vec<Option<Rc<str>>>> = const { RefCell::new(Vec::new()) };
}

/// Numbers below this are cached in a flat table (a world numbers its names densely from 0).
const CACHED_EVENT_NUMBERS: u32 = 1 << 16;

/// The name of event number `event`, as a single-event call numbered it (asked of the host the first time).
pub(crate) fn event_name(event: u32) -> Rc<str> {
    let cached = EVENT_NAMES.with_borrow(|names| names.get(event as usize).cloned().flatten());
    if let Some(name) = cached {
        return name;
    }
    let name: Rc<str> = host::event_name(event).unwrap_or_default().into();
    if event < CACHED_EVENT_NUMBERS {
        EVENT_NAMES.with_borrow_mut(|names| {
            if names.len() <= event as usize {
                names.resize(event as usize + 1, None);
            }
            names[event as usize] = Some(name.clone());
        });
    }
    name
}

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

// The calls below add or remove components: a chain walk's facts (the property reads it brought) no longer hold
// once they run, so they drop them, and a walk under way stops for the host to ask again.

/// Asks for a `component` on every actor of class `receiver` (or a subclass) while the handle lives, with
/// `flags`.
pub fn add_component_request(receiver: &str, component: &str, flags: AddFlags) -> Result<ComponentRequest, Error> {
    crate::facts::forget();
    host::add_component_request(receiver, component, flags)
}

/// Makes `actor` a receiver: the components requested for its class are added, and handlers hear of it.
pub fn add_receiver(actor: ActorId) -> Result<(), Error> {
    crate::facts::forget();
    host::add_receiver(actor)
}

/// Stops `actor` being a receiver: the components requests added to it go.
pub fn remove_receiver(actor: ActorId) -> Result<(), Error> {
    crate::facts::forget();
    host::remove_receiver(actor)
}

/// First use of a lazily created component: true when it was created now.
pub fn ensure_component(actor: ActorId, component: &str) -> Result<bool, Error> {
    crate::facts::forget();
    host::ensure_component(actor, component)
}

/// Asks for a `component` on every actor of class `receiver` (or a subclass) while the handle lives.
pub fn request_component(receiver: &str, component: &str) -> Result<ComponentRequest, Error> {
    add_component_request(receiver, component, AddFlags::empty())
}

/// Starts delivering events about receivers of class `receiver` to
/// [`Plugin::on_extension_event`](crate::Plugin::on_extension_event), tagged with `handler`.
pub fn add_extension_handler(receiver: &str, handler: u32) -> Result<ExtensionHandler, Error> {
    host::add_extension_handler(receiver, handler)
}

/// Sends a custom event to the handlers of an actor's class chain.
pub fn send_event(actor: ActorId, event: &str) -> Result<(), Error> {
    send_extension_event(actor, event)
}

/// [`send_event`], sent with one host call for every event deferred when the current callback returns (after
/// the deferred feature registrations, before the deferred chain walks). The host queues an event for its
/// handlers either way, so deferring changes only when in the callback it is queued, and how a refusal is told:
/// logged as a warning, not returned. Cheaper for a callback sending an event about each actor of a batch.
pub fn defer_send_event(actor: ActorId, event: &str) {
    crate::deferred::event(actor, event);
}
