"""A worker (or a zygote) never outlives the process that started it, however that process ends."""
from __future__ import annotations

import os
import signal
import sys
import threading


def die_with_parent(lifeline: int) -> None:
    """End this worker when the process that started it ends.

    On Linux the kernel sends SIGKILL when the parent dies; everywhere, a watchdog thread
    waits on the lifeline pipe, whose write end only the parent holds, and at EOF kills the
    worker's process group (the worker leads it), taking what the handler started along.
    """
    os.set_inheritable(lifeline, False)
    killed_with_parent()
    # A parent that died before prctl took effect has closed the lifeline: the watchdog
    # sees EOF at once. (No getppid check: a --python wrapper may sit in between.)

    def watch() -> None:
        try:
            while os.read(lifeline, 1):
                pass
        except OSError:
            pass
        os.killpg(os.getpgrp(), signal.SIGKILL)  # the worker leads its group: it and what it started

    threading.Thread(target=watch, name="cfnrun-lifeline", daemon=True).start()


def killed_with_parent() -> None:
    """On Linux, ask the kernel for SIGKILL when the parent process ends."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass
