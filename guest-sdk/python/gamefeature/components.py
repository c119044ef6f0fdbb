"""The component manager: component requests, extension handlers, extension events and property watches.

Requests, handlers and watches are handles: keep them while they should apply, `release()` them to undo.
Releasing the last request for a pair removes the components it added; releasing a handler delivers
`ExtensionRemoved` for each receiver. The host releases whatever a plugin still holds when it is deactivated.
"""

from wit_world.imports import components as _components

from . import init_states
from ._host import Handle, call

#: The built-in extension events.
RECEIVER_ADDED = "ReceiverAdded"
RECEIVER_REMOVED = "ReceiverRemoved"
EXTENSION_ADDED = "ExtensionAdded"
EXTENSION_REMOVED = "ExtensionRemoved"
GAME_ACTOR_READY = "GameActorReady"


class ExtensionHandler(Handle):
    @property
    def receiver(self) -> str:
        receiver: str = self._resource.receiver()
        return receiver


class ComponentRequest(Handle):
    """Known by its receiver and component class (it has no id)."""

    @property
    def receiver(self) -> str:
        receiver: str = self._resource.receiver()
        return receiver

    @property
    def component(self) -> str:
        component: str = self._resource.component()
        return component


class PropertyWatch(Handle):
    pass


def add_extension_handler(receiver: str, handler: int) -> ExtensionHandler:
    """Delivers events about receivers of class `receiver` (or a subclass) to `Plugin.on_extension_event`,
    tagged `handler`: `ExtensionAdded` at once for existing receivers, then `ReceiverAdded`, ..."""
    return ExtensionHandler(call(_components.add_extension_handler, receiver, handler))


def request_component(receiver: str, component: str, unique: bool = False) -> ComponentRequest:
    """Asks for a `component` on every actor of class `receiver` (or a subclass) while the handle lives."""
    flags = _components.AddFlags.ADD_UNIQUE if unique else _components.AddFlags(0)
    return ComponentRequest(call(_components.add_component_request, receiver, component, flags))


def ensure_component(actor: int, component: str) -> bool:
    """First use of a lazily created component: `True` when it was created now."""
    return call(_components.ensure_component, actor, component)


def watch_property(actor: int, component: str, name: str, watch: int) -> PropertyWatch:
    """Calls `Plugin.on_property_changed`, tagged `watch`, whenever the property changes."""
    return PropertyWatch(call(_components.watch_property, actor, component, name, watch))


def send_event(actor: int, event: str) -> None:
    """Sends a custom event to the handlers of the actor's class chain; needs `send-events`."""
    call(_components.send_extension_event, actor, event)


def defer_send_event(actor: int, event: str) -> None:
    """`send_event`, sent with one host call for every event deferred when the current callback returns (after
    the deferred registrations, before the deferred walks). The host queues an event for its handlers either
    way, so deferring changes only when in the callback it is queued, and how a refusal is told: logged as a
    warning, not raised. Cheaper for a callback sending an event about each actor of a batch."""
    init_states._defer_event(actor, event)


def add_receiver(actor: int) -> None:
    call(_components.add_receiver, actor)


def remove_receiver(actor: int) -> None:
    call(_components.remove_receiver, actor)
