"""The init-state system: features of an actor moving through one ordered list of states.

Implement `Plugin.can_change_init_state` and `Plugin.handle_change_init_state` for the features you register;
the host walks their chains when you call `continue_chain`, after your current call returns.
"""

from typing import List, Optional

from wit_world.imports import init_states as _init_states

from ._host import Handle, call

#: Lyra's init states, the host's default order.
SPAWNED = "InitState.Spawned"
DATA_AVAILABLE = "InitState.DataAvailable"
DATA_INITIALIZED = "InitState.DataInitialized"
GAMEPLAY_READY = "InitState.GameplayReady"


class Subscription(Handle):
    pass


_states: Optional[List[str]] = None


def states() -> List[str]:
    """The world's init states, first to last."""
    global _states
    if _states is None:
        _states = _init_states.states()
    return _states


def state_name(ordinal: int) -> Optional[str]:
    """The name of a state as the host numbers it in batches (0: none)."""
    return states()[ordinal - 1] if 0 < ordinal <= len(states()) else None


def register_feature(actor: int, feature: str, implementer: str) -> None:
    call(_init_states.register_feature, actor, feature, implementer)


def unregister_feature(actor: int, feature: str) -> None:
    call(_init_states.unregister_feature, actor, feature)


def feature_state(actor: int, feature: str) -> Optional[str]:
    return call(_init_states.feature_state, actor, feature)


def reached(actor: int, feature: str, state: str) -> bool:
    """Whether `feature` has reached `state` (False when the feature is unknown)."""
    try:
        return call(_init_states.has_feature_reached, actor, feature, state)
    except Exception:
        return False


def all_reached(actor: int, state: str, excluding: Optional[str] = None) -> bool:
    return call(_init_states.have_all_features_reached, actor, state, excluding)


def change_state(actor: int, feature: str, state: str) -> None:
    call(_init_states.change_feature_state, actor, feature, state)


def continue_chain(actor: int, feature: str) -> None:
    """Queues a walk of `feature`'s chain, as far as its `can_change_init_state` allows."""
    call(_init_states.continue_init_state_chain, actor, feature)


def check_default_initialization(actor: int, feature: str) -> None:
    """Unreal's default for a coordinating feature: move every other feature forward, then this one."""
    call(_init_states.check_default_initialization_for_implementers, actor, feature)
    call(_init_states.continue_init_state_chain, actor, feature)


def subscribe_actor(
    actor: int, subscription: int, feature: Optional[str] = None, state: Optional[str] = None, call_if_reached: bool = True
) -> Subscription:
    """Calls `Plugin.on_init_state_changed`, tagged `subscription`, when the actor's features change state."""
    return Subscription(call(_init_states.subscribe_actor, actor, feature, state, call_if_reached, subscription))


def subscribe_class(
    class_name: str, feature: str, subscription: int, state: Optional[str] = None, call_if_reached: bool = True
) -> Subscription:
    """Like `subscribe_actor`, for every actor of a class."""
    return Subscription(call(_init_states.subscribe_class, class_name, feature, state, call_if_reached, subscription))
