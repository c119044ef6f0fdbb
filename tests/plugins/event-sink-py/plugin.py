"""event-sink in Python: counts extension events and sums their actor ids (the least work a handler can do,
so benchmarks measure delivery; an event named `Log:...` is logged by name), and carries both across a hot reload in event-sink's own state format."""

import struct

import gamefeature as gf
from gamefeature import components, log

MASK = (1 << 64) - 1


class EventSink(gf.Plugin):
    def __init__(self):
        self.events = 0
        self.checksum = 0

    def on_activating(self, context):
        self.handler = components.add_extension_handler("Pawn", 1)
        print("sink active")  # standard output reaches the plugin's log, a line at a time

    def on_extension_event(self, handler, actor, event):
        self.events += 1
        self.checksum = (self.checksum + actor) & MASK
        if event.startswith("Log:"):
            log.info(event)

    def snapshot(self):
        return bytes([1]) + struct.pack("<QQ", self.events, self.checksum)

    def restore(self, state):
        if state[:1] != b"\x01":
            raise ValueError(f"unknown state format {state[:1]!r}")
        if len(state) < 17:
            raise ValueError(f"state of {len(state)} bytes is truncated")
        self.events, self.checksum = struct.unpack("<QQ", state[1:17])
        log.info(f"restored a count of {self.events} events")

    def on_deactivating(self, context):
        log.info(f"received {self.events} events")
        return gf.DONE
