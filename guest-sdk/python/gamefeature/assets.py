"""The assets of the bundles the world loaded."""

from wit_world.imports import assets as _assets

from ._host import call


def read(name: str) -> bytes:
    """The bytes of a loaded asset, by the name its bundle gives it (`HostError` "unknown-asset" otherwise)."""
    return call(_assets.read_asset, name)


def read_text(name: str) -> str:
    return read(name).decode("utf-8")
