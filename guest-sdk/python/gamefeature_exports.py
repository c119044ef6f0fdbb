"""The component's exports, as componentize-py wants them: one class per exported WIT interface, each fanning
its batches out to the plugin's methods. The plugin is the one `gamefeature.Plugin` subclass defined in the
plugin's `plugin.py`, created at the first call (one instance per world: each world has its own component
instance)."""

import sys
import traceback

from componentize_py_types import Err

import wit_world.exports
from wit_world.imports import components as _host_components
from wit_world.exports import lifecycle as _lifecycle
from wit_world.exports.init_state_callbacks import ChainWalks as _ChainWalks

import gamefeature
from gamefeature import init_states, log
from gamefeature._host import from_wit

import plugin as _module

# print()'s lines reach the plugin's log as they are printed: stdout is not a terminal, so Python would buffer
# them in blocks, and a plugin never exits to flush them.
sys.stdout.reconfigure(line_buffering=True)
sys.stderr.reconfigure(line_buffering=True)

_plugin = None


def _plugin_class():
    found = [
        value
        for value in vars(_module).values()
        if isinstance(value, type)
        and issubclass(value, gamefeature.Plugin)
        and value is not gamefeature.Plugin
        and value.__module__ == _module.__name__
    ]
    if len(found) != 1:
        names = ", ".join(cls.__name__ for cls in found) or "none"
        raise TypeError(f"plugin.py must define exactly one subclass of gamefeature.Plugin (found: {names})")
    return found[0]


def _get():
    global _plugin
    if _plugin is None:
        _plugin = _plugin_class()()
    return _plugin


def _fallible(hook, *args):
    """A hook whose failure fails the plugin in this world: any exception becomes the WIT error string."""
    try:
        hook(*args)
    except Err:
        raise
    except Exception as error:
        log.error("".join(traceback.format_exception(error)).rstrip())
        raise Err(f"{type(error).__name__}: {error}")


def _sends_deferred(exports):
    """Every callback of `exports` sends the chain walks its hooks deferred when it returns
    (`init_states.defer_continue_chain`), in one host call."""

    def wrapped(method):
        def callback(self, *args):
            try:
                return method(self, *args)
            finally:
                init_states._send_deferred()

        callback.__name__ = method.__name__
        return callback

    for name, method in list(vars(exports).items()):
        if callable(method) and not name.startswith("_"):
            setattr(exports, name, wrapped(method))
    return exports


def _deactivation(answer):
    return _lifecycle.Deactivation.DONE if answer is None else answer


@_sends_deferred
class Lifecycle(wit_world.exports.Lifecycle):
    def on_registering(self):
        _fallible(lambda: _get().on_registering())

    def on_loading(self):
        _fallible(lambda: _get().on_loading())

    def on_activating(self, context):
        _fallible(lambda: _get().on_activating(context))

    def on_activated(self):
        _get().on_activated()

    def on_deactivating(self, context):
        return _deactivation(_get().on_deactivating(context))

    def poll_deactivation(self):
        return _deactivation(_get().poll_deactivation())

    def on_unloading(self):
        _get().on_unloading()

    def on_unregistering(self):
        _get().on_unregistering()

    def snapshot(self):
        state = _get().snapshot()
        if state is None or isinstance(state, bytes):
            return state
        if isinstance(state, (bytearray, memoryview)):
            return bytes(state)
        raise TypeError(f"snapshot() returns bytes or None, not {type(state).__name__}")

    def restore(self, state):
        _fallible(lambda: _get().restore(bytes(state)))


@_sends_deferred
class Handlers(wit_world.exports.Handlers):
    def handle_extension_events(self, handlers, actors, events, names):
        plugin = _get()
        for handler, actor, event in zip(handlers, actors, events):
            plugin.on_extension_event(handler, actor, names[event])

    def handle_extension_event(self, handler, actor, event):
        name = _event_names.get(event)
        if name is None:
            name = _host_components.event_name(event) or ""
            if len(_event_names) < _MAX_EVENT_NAMES:
                _event_names[event] = name
        _get().on_extension_event(handler, actor, name)


# Event names by the numbers single-event calls carry, asked of the host once each (as many as the host numbers
# for one instance).
_event_names = {}
_MAX_EVENT_NAMES = 4096


@_sends_deferred
class InitStateCallbacks(wit_world.exports.InitStateCallbacks):
    def try_change_init_states(self, actors, features, currents, desireds, names, facts):
        # The facts serve the Rust SDK's answers without host calls; Python hooks ask the host, which knows a step
        # only once it has applied it: each entry takes one step, and the host asks again about those that moved.
        plugin = _get()
        name = init_states.state_name
        steps, refused = [], []
        for i, (actor, feature, current, desired) in enumerate(zip(actors, features, currents, desireds)):
            # Unreal's TryToChangeInitState: the decision, then the work of an allowed step.
            args = (actor, names[feature], name(current), name(desired))
            allowed = bool(plugin.can_change_init_state(*args))
            if allowed:
                plugin.handle_change_init_state(*args)
            else:
                refused.append(i)
            steps.append(1 if allowed else 0)
        return _ChainWalks(bytes(steps), refused)

    def check_default_initializations(self, actors, features, names):
        plugin = _get()
        for actor, feature in zip(actors, features):
            plugin.check_default_initialization(actor, names[feature])

    def on_init_states_changed(self, ids, actors, features, states, names):
        plugin = _get()
        for subscription, actor, feature, state in zip(ids, actors, features, states):
            plugin.on_init_state_changed(subscription, actor, names[feature], init_states.state_name(state))


@_sends_deferred
class TimerCallbacks(wit_world.exports.TimerCallbacks):
    def on_timers(self, frame, ids, counts):
        plugin = _get()
        for timer, times in zip(ids, counts):
            plugin.on_timer(timer, times, frame)


@_sends_deferred
class ReplicationCallbacks(wit_world.exports.ReplicationCallbacks):
    def on_replicated(self, actors, components, properties, olds, news, names):
        plugin = _get()
        for actor, component, prop, old, new in zip(actors, components, properties, olds, news):
            plugin.on_replicated(actor, names[component], names[prop], from_wit(old), from_wit(new))


@_sends_deferred
class PropertyCallbacks(wit_world.exports.PropertyCallbacks):
    def on_properties_changed(self, ids, actors, olds, news):
        plugin = _get()
        for watch, actor, old, new in zip(ids, actors, olds, news):
            plugin.on_property_changed(watch, actor, from_wit(old), from_wit(new))
