"""The init-state system: features of an actor moving through one ordered list of states.

Implement `Plugin.can_change_init_state` and `Plugin.handle_change_init_state` for the features you register;
the host walks their chains when you call `continue_chain`, after your current call returns. A callback that
sets up or continues many features (one per pawn of a batch) can defer them instead (`defer_register_feature`,
`defer_continue_chain`, and `components.defer_send_event`): the registrations go in one host call when it returns,
then the events, then the walks.
"""

from typing import Any, Dict, List, Optional, Tuple

from wit_world.imports import components as _components
from wit_world.imports import init_states as _init_states

from . import log
from ._host import Handle, HostError, call, host_error

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


# Registrations, events and chain walks deferred until the current callback returns, each name kept once; as the
# parallel lists the batch imports take (registration i: feature names[features[i]] of actors[i], implemented by
# names[implementers[i]]; event i: names[events[i]] about actors[i]; request i: works[i] for feature
# names[features[i]] of actors[i]).
def _nothing_deferred() -> Dict[str, Any]:
    return {
        "registrations": {"actors": [], "features": [], "implementers": []},
        "events": {"actors": [], "events": []},
        "requests": {"actors": [], "features": [], "works": []},
        "names": [],
    }


_deferred: Dict[str, Any] = _nothing_deferred()


def defer_register_feature(actor: int, feature: str, implementer: str) -> None:
    """`register_feature`, sent with one host call for every registration deferred when the current callback
    returns, before the deferred walks (which may then walk the features registered). A refusal is logged as a
    warning, not raised. For a callback setting up a batch of actors: each of their components registers its
    feature, as Unreal's components do in `OnRegister`, at the cost of one host call for all of them."""
    _check_actor(actor)
    feature_index, implementer_index = _deferred_name(feature), _deferred_name(implementer, "class name")
    registrations = _deferred["registrations"]
    registrations["actors"].append(actor)
    registrations["features"].append(feature_index)
    registrations["implementers"].append(implementer_index)


def defer_continue_chain(actor: int, feature: str) -> None:
    """`continue_chain`, sent with one host call for everything deferred when the current callback returns.
    The walk runs after the callback either way, so deferring changes only when it is queued (after what the
    callback queued itself) and how a refusal is told: logged as a warning, not raised. Cheaper when a callback
    handling a batch continues many chains."""
    _defer(actor, feature, _init_states.ChainWork.CONTINUE_CHAIN)


def defer_check_default_initialization(actor: int, feature: str) -> None:
    """`check_default_initialization`, deferred as `defer_continue_chain` is."""
    _defer(actor, feature, _init_states.ChainWork.CHECK_OTHERS_THEN_CONTINUE)


def _defer_event(actor: int, event: str) -> None:
    """`components.defer_send_event`: kept with the other deferred calls, sent after the registrations and before
    the walks."""
    _check_actor(actor)
    event_index = _deferred_name(event, "event name")
    events = _deferred["events"]
    events["actors"].append(actor)
    events["events"].append(event_index)


def _defer(actor: int, feature: str, work: _init_states.ChainWork) -> None:
    _check_actor(actor)
    feature_index = _deferred_name(feature)
    requests = _deferred["requests"]
    requests["actors"].append(actor)
    requests["features"].append(feature_index)
    requests["works"].append(work)


# Arguments are checked when deferred, so a bad one raises in the hook that passed it rather than when the
# deferred calls are sent.
def _check_actor(actor: int) -> None:
    if not isinstance(actor, int) or not 0 <= actor < 1 << 64:
        raise ValueError(f"{actor!r} is not an actor id (0 to 2**64 - 1)")


def _deferred_name(name: str, what: str = "feature name") -> int:
    """The index of `name` among the deferred names, added if new."""
    if not isinstance(name, str):
        raise TypeError(f"a {what} is a str, not {type(name).__name__}")
    names: List[str] = _deferred["names"]
    try:
        return names.index(name)
    except ValueError:
        names.append(name)
        return len(names) - 1


def _first_refused(refused: List[Tuple[int, Any]], what: str) -> Tuple[int, HostError, str]:
    """The first refused entry's index, why, and how many more were refused: one warning line however many
    were, since each line is a host call."""
    index, error = refused[0]
    others = "" if len(refused) == 1 else f" (and {len(refused) - 1} more deferred {what} refused)"
    return index, host_error(error), others


def _send_deferred() -> None:
    """Sends the deferred registrations, then the deferred events, then the deferred chain walks (the SDK calls
    it when a callback returns)."""
    global _deferred
    registrations, events, requests = _deferred["registrations"], _deferred["events"], _deferred["requests"]
    names = _deferred["names"]
    if not registrations["actors"] and not events["actors"] and not requests["actors"]:
        return
    _deferred = _nothing_deferred()
    if registrations["actors"]:
        actors, features = registrations["actors"], registrations["features"]
        refused = _init_states.register_features(actors, features, registrations["implementers"], names)
        if refused:
            index, error, others = _first_refused(refused, "registrations")
            log.warn(f"could not register {names[features[index]]} on actor {actors[index]}: {error}{others}")
    if events["actors"]:
        actors, sent = events["actors"], events["events"]
        refused = _components.send_extension_events(actors, sent, names)
        if refused:
            index, error, others = _first_refused(refused, "events")
            log.warn(f"could not send {names[sent[index]]} about actor {actors[index]}: {error}{others}")
    if requests["actors"]:
        actors, features, works = requests["actors"], requests["features"], requests["works"]
        refused = _init_states.queue_chain_requests(actors, features, works, names)
        if refused:
            index, error, others = _first_refused(refused, "walks")
            what = (
                "continue the chain of"
                if works[index] == _init_states.ChainWork.CONTINUE_CHAIN
                else "check the default initialization of"
            )
            log.warn(f"could not {what} {names[features[index]]} on actor {actors[index]}: {error}{others}")


def subscribe_actor(
    actor: int, subscription: int, feature: Optional[str] = None, state: Optional[str] = None, call_if_reached: bool = True
) -> Subscription:
    """Calls `Plugin.on_init_state_changed`, tagged `subscription`, when the actor's features change state."""
    return Subscription(call(_init_states.subscribe_actor, actor, feature, state, call_if_reached, subscription))


def subscribe_class(
    class_name: str,
    feature: Optional[str],
    subscription: int,
    state: Optional[str] = None,
    call_if_reached: bool = True,
) -> Subscription:
    """Like `subscribe_actor`, for every actor of a class (every feature when `feature` is None)."""
    return Subscription(call(_init_states.subscribe_class, class_name, feature, state, call_if_reached, subscription))
