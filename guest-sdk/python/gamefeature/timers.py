"""Work as game time passes: timers fire in the world's frames and reach `Plugin.on_timer`.

Keep the `Timer` while it should run; `release()` stops it. Times are in seconds of game time.
"""

from wit_world.imports import timers as _timers
from wit_world.imports.types import Frame

from ._host import Handle, call


class Timer(Handle):
    pass


def _micros(seconds: float) -> int:
    return max(0, int(seconds * 1_000_000))


def every(seconds: float, timer: int) -> Timer:
    """A timer tagged `timer` firing every `seconds`, first one period from now."""
    return Timer(call(_timers.start_timer, _micros(seconds), True, timer))


def every_frame(timer: int) -> Timer:
    return Timer(call(_timers.start_timer, 0, True, timer))


def after(seconds: float, timer: int) -> Timer:
    """A timer tagged `timer` firing once, `seconds` from now."""
    return Timer(call(_timers.start_timer, _micros(seconds), False, timer))


def now() -> Frame:
    """The current frame: `number`, `time_us`, `delta_us`."""
    return _timers.now()
