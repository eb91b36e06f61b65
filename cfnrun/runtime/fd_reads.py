"""Reading what a non-blocking fd has ready, from an event loop callback: the log pipe's and the channel's one loop."""
from __future__ import annotations

from typing import Callable, Optional


def read_ready(
    read_into: Callable[[memoryview], int], buffer: memoryview, deliver: Callable[[memoryview], None], chunks: Optional[int]
) -> bool:
    """Read into ``buffer`` what the fd has ready, handing each chunk to ``deliver`` (a view of ``buffer``:
    copy what you keep), at most ``chunks`` of them (None: all), so a flood never starves the loop.

    False when the fd is at its end (EOF, or a read error, which ends it too); True otherwise.
    A short read means the fd is empty for now: no further read to learn that from EAGAIN.
    """
    count = 0
    while chunks is None or count < chunks:
        try:
            size = read_into(buffer)
        except BlockingIOError:
            return True
        except OSError:
            size = 0
        if not size:
            return False
        deliver(buffer[:size])
        if size < len(buffer):
            return True
        count += 1
    return True
