"""Queries about the plugin's world: its net mode, actors, classes and properties."""

from typing import List, Optional, TypeAlias, Union

from wit_world.imports import actors as _actors
from wit_world.imports import types as _types

from ._host import Value, call, from_wit, to_wit

NetMode: TypeAlias = _types.NetMode
NetRole: TypeAlias = _types.NetRole


def net_mode() -> "NetMode":
    return _actors.current_net_mode()


def name() -> str:
    return _actors.world_name()


def actor_class(actor: int) -> str:
    return call(_actors.actor_class, actor)


def is_a(actor: int, class_name: str) -> bool:
    return call(_actors.is_a, actor, class_name)


def actors_of_class(class_name: str) -> List[int]:
    return call(_actors.actors_of_class, class_name)


def has_authority(actor: int) -> bool:
    return call(_actors.has_authority, actor)


def local_role(actor: int) -> "NetRole":
    return call(_actors.local_role, actor)


def is_locally_controlled(actor: int) -> bool:
    return call(_actors.is_locally_controlled, actor)


def components_of(actor: int) -> List[str]:
    return call(_actors.components_of, actor)


def get_property(actor: int, component: str, name: str) -> Optional[Value]:
    """A component's property (`None` when unset)."""
    return from_wit(call(_actors.get_property, actor, component, name))


def set_property(actor: int, component: str, name: str, value: Value) -> None:
    """Writes a component's property; needs `write-properties` for the component class."""
    call(_actors.set_property, actor, component, name, to_wit(value))


def spawn_actor(class_name: str, receiver: bool = True) -> int:
    """Spawns an actor owned by this plugin; needs `spawn-actors`."""
    return call(_actors.spawn_actor, class_name, receiver)


def destroy_actor(actor: int) -> None:
    call(_actors.destroy_actor, actor)


def set_relevancy(actor: int, relevancy: Union[str, List[str]]) -> None:
    """Whom a server replicates `actor` to, besides its own player's client: `"always"` (the default),
    `"owner-only"`, or a list of groups (the players put in one of them with `set_player_groups`). Needs the
    `relevancy` permission."""
    wit: _actors.Relevancy
    if relevancy == "always":
        wit = _actors.Relevancy_Always()
    elif relevancy == "owner-only":
        wit = _actors.Relevancy_OwnerOnly()
    elif isinstance(relevancy, list):
        wit = _actors.Relevancy_Groups(relevancy)
    else:
        raise ValueError(f"relevancy is 'always', 'owner-only' or a list of groups, not {relevancy!r}")
    call(_actors.set_relevancy, actor, wit)


def set_player_groups(player: int, groups: List[str]) -> None:
    """Puts the player `player` belongs to (its pawn, controller or player state) in these relevancy groups, in
    place of those it was in. Needs the `relevancy` permission."""
    call(_actors.set_player_groups, player, groups)
