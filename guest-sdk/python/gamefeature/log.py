"""Logging into the host's log; the host tags each line with the plugin's name."""

from typing import TypeAlias

from wit_world.imports import log as _log

Level: TypeAlias = _log.Level
_enabled = {}


def enabled(level: "Level") -> bool:
    """Whether the host keeps lines at `level` (asked once per level): check before formatting an expensive line."""
    if level not in _enabled:
        _enabled[level] = _log.enabled(level)
    return _enabled[level]


def trace(message: str) -> None:
    _log.log(Level.TRACE, message)


def debug(message: str) -> None:
    _log.log(Level.DEBUG, message)


def info(message: str) -> None:
    _log.log(Level.INFO, message)


def warn(message: str) -> None:
    _log.log(Level.WARN, message)


def error(message: str) -> None:
    _log.log(Level.ERROR, message)
