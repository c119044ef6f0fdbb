"""Write game-feature plugins for a gamefeature host in Python.

A plugin is a class deriving from `Plugin`, in the plugin's `plugin.py`; every hook has a default that does
nothing and succeeds, so a plugin overrides only what it needs::

    import gamefeature as gf
    from gamefeature import components, log

    class Hello(gf.Plugin):
        def on_activating(self, context: gf.ActivationContext) -> None:
            log.info(f"hello, {context.world_name}")
            self.heroes = components.add_extension_handler("Character", 1)

        def on_extension_event(self, handler: int, actor: int, event: str) -> None:
            log.info(f"{event} for actor {actor}")

`gfhost build` turns the folder into a component (componentize-py, with this library). The host creates one
instance of the plugin per world, so the plugin object's attributes are per-world state.

The host delivers callbacks in batches (parallel lists, for speed); this library fans each batch out into one
method call per event, per init-state step, per timer. Host calls that fail raise `HostError`, whose `case`
is the WIT error's case (`"denied"`, `"unknown-actor"`, ...). Handles (extension handlers, component
requests, subscriptions, watches, timers) are objects: keep them as attributes while they should apply, and
`release()` them (or drop the last reference) to undo. A fallible hook (`on_registering`, `on_loading`,
`on_activating`, `restore`) fails the plugin in that world when it raises; the message is shown in the report.

Every call has a deadline: never sleep or wait in a hook. `print` works (lines reach the plugin's log).
"""

from ._host import HostError, Handle, Value
from ._plugin import Plugin, DONE, PENDING
from wit_world.imports.types import ActivationContext, Frame, NetMode
from . import assets, components, init_states, log, timers, world

__all__ = [
    "Plugin",
    "HostError",
    "Handle",
    "Value",
    "DONE",
    "PENDING",
    "ActivationContext",
    "Frame",
    "NetMode",
    "assets",
    "components",
    "init_states",
    "log",
    "timers",
    "world",
]
