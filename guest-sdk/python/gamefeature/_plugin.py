"""The `Plugin` base class: one method per lifecycle step and per event, each with a default."""

from typing import Optional

from wit_world.exports.lifecycle import Deactivation
from wit_world.imports.types import ActivationContext, Frame

from . import init_states
from ._host import Value

#: What `on_deactivating` and `poll_deactivation` return: deactivation finished, or still under way.
DONE = Deactivation.DONE
PENDING = Deactivation.PENDING


class Plugin:
    """A game feature. Derive from it in `plugin.py`; the host makes one instance per world.

    Lifecycle, in order: `on_registering`, `on_loading`, `on_activating`, `on_activated`; at end of play
    `on_deactivating` (and `poll_deactivation` while it returns `PENDING`), `on_unloading`, `on_unregistering`.
    """

    def on_registering(self) -> None:
        """The plugin is being registered with the world's experience. Raise to refuse."""

    def on_loading(self) -> None:
        """The plugin is being loaded: read assets and build tables here. Raise to fail."""

    def on_activating(self, context: ActivationContext) -> None:
        """The plugin is being activated in a world (`context.world_name`, `context.net_mode`): start
        extending it here. Raise to fail."""

    def on_activated(self) -> None:
        """Activation finished."""

    def on_deactivating(self, context: ActivationContext) -> Deactivation:
        """End of play: undo what activation did. Return `PENDING` to hold deactivation open until
        `poll_deactivation` returns `DONE`."""
        return DONE

    def poll_deactivation(self) -> Deactivation:
        return DONE

    def on_unloading(self) -> None:
        pass

    def on_unregistering(self) -> None:
        pass

    def snapshot(self) -> Optional[bytes]:
        """Hot reload: the state to hand to the plugin's next version (`None`: start it fresh)."""
        return None

    def restore(self, state: bytes) -> None:
        """Hot reload: what the previous version's `snapshot` returned. Raise to refuse the new version."""

    def on_extension_event(self, handler: int, actor: int, event: str) -> None:
        """An extension event (see `components`) for the handler you numbered `handler`."""

    def can_change_init_state(self, actor: int, feature: str, current: Optional[str], desired: str) -> bool:
        """May `feature` of `actor` move from `current` to `desired`?"""
        return True

    def handle_change_init_state(self, actor: int, feature: str, current: Optional[str], desired: str) -> None:
        """`feature` of `actor` is about to move from `current` to `desired`: do the transition's work."""

    def check_default_initialization(self, actor: int, feature: str) -> None:
        """Try to move `feature` forward; by default, walk its chain (deferred: a batch of checks makes one host
        call)."""
        init_states.defer_continue_chain(actor, feature)

    def on_init_state_changed(self, subscription: int, actor: int, feature: str, state: str) -> None:
        """Subscription `subscription` saw `feature` of `actor` reach `state`."""

    def on_timer(self, timer: int, times: int, frame: Frame) -> None:
        """Timer `timer` fired `times` times since it last reached you, in `frame`."""

    def on_property_changed(self, watch: int, actor: int, old: Optional[Value], new: Optional[Value]) -> None:
        """A watched property went from `old` to `new` (`None`: no value)."""

    def on_replicated(
        self, actor: int, component: str, property: str, old: Optional[Value], new: Value
    ) -> None:
        """Rep-notify, on a client: a replicated property you declared went from `old` to `new`."""
