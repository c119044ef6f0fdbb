"""What every wrapper shares: host errors as exceptions, property values as Python values, handles."""

from typing import Any, Callable, Optional, TypeVar, Union

from componentize_py_types import Err
from wit_world.imports import types

#: A property value: `bool`, `int` (64-bit signed), `float` or `str`.
Value = Union[bool, int, float, str]

_ERROR_CASES = {
    types.Error_UnknownActor: "unknown-actor",
    types.Error_UnknownClass: "unknown-class",
    types.Error_UnknownAsset: "unknown-asset",
    types.Error_UnknownState: "unknown-state",
    types.Error_Denied: "denied",
    types.Error_Invalid: "invalid",
}


class HostError(Exception):
    """A host call refused: `case` is the WIT error's case, `detail` what it carries (an actor id or a text)."""

    def __init__(self, case: str, detail: object) -> None:
        super().__init__(f"{case}: {detail}")
        self.case = case
        self.detail = detail


T = TypeVar("T")


def call(function: Callable[..., T], *args: Any) -> T:
    """Calls a host function, raising `HostError` for the WIT error it returns."""
    try:
        return function(*args)
    except Err as error:
        raise host_error(error.value)


def host_error(error: object) -> HostError:
    """The `HostError` for a WIT error value."""
    return HostError(_ERROR_CASES.get(type(error), "error"), getattr(error, "value", error))


def to_wit(value: Value) -> types.Value:
    if isinstance(value, bool):
        return types.Value_Boolean(value)
    if isinstance(value, int):
        return types.Value_Integer(value)
    if isinstance(value, float):
        return types.Value_Float(value)
    if isinstance(value, str):
        return types.Value_Text(value)
    raise TypeError(f"a property value is a bool, int, float or str, not {type(value).__name__}")


H = TypeVar("H", bound="Handle")


def from_wit(value: Optional[types.Value]) -> Optional[Value]:
    return None if value is None else value.value


class Handle:
    """A host handle you keep while it should apply: `release()` undoes it (as does dropping the last
    reference). Also a context manager, released on exit."""

    def __init__(self, resource: Any) -> None:
        # One of the WIT resources the host hands out (each a class of the bindings): numbered by the plugin,
        # dropped by `__exit__`.
        self._resource: Any = resource

    @property
    def id(self) -> int:
        """The number the plugin gave it, which tags its callbacks."""
        if self._resource is None:
            raise ValueError(f"{self!r} has no number any more")
        number: int = self._resource.id()
        return number

    @property
    def released(self) -> bool:
        return self._resource is None

    def release(self) -> None:
        """Undoes what the handle holds; releasing twice does nothing."""
        resource, self._resource = self._resource, None
        if resource is not None:
            resource.__exit__(None, None, None)

    def __enter__(self: H) -> H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {'released' if self._resource is None else 'held'}>"
