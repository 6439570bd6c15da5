"""Ctrl-C held back for the length of one Docker create call.

A KeyboardInterrupt raised while the Docker client waits for the engine's answer to "create this
network" (or container) abandons the request, not the creation: the engine goes on and makes it
after the cluster's clean-up has listed what to remove, and it is left behind. Seen on a real
cluster: `explore` stopped by Ctrl-C as its next run started left that run's network.
`held_interrupts()` records a SIGINT or SIGTERM that arrives inside the block and delivers it to
the handler in place once the block ends, so the interrupt comes when the object exists and the
clean-up finds it. Only the main thread receives signals; elsewhere the block runs as it is.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def held_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[tuple[int, FrameType | None]] = []
    previous = {s: signal.getsignal(s) for s in HELD}

    def hold(signum: int, frame: FrameType | None) -> None:
        arrived.append((signum, frame))

    for s in HELD:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for signum, frame in arrived[:1]:
            handler = previous[signum]
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)
