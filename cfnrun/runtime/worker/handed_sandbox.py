"""``--await-sandbox``: a worker whose interpreter started before its function was known (``runtime/waiting_worker.py``).

The first frame on its channel (fd 0) is its sandbox: ``{"type": "sandbox", "cwd": FOLDER,
"environment": {NAME: VALUE}, "options": [...]}``. The worker moves to that folder, makes
``os.environ`` exactly that environment (so the C library's too, and every process the handler
starts), and goes on with those options as if it had been started with them. Nothing of the
provider is imported before: the variables read only as a process starts are the ones it started
with (the parent hands it no sandbox where they differ). Only that frame is read here: the load
frame behind it stays on the channel for the worker's own reading.
"""
from __future__ import annotations

import os
from typing import List, Optional

from .protocol import FRAME_HEADER, decode_frame


def take_sandbox(fd: int = 0) -> Optional[List[str]]:
    """Wait for the sandbox frame on ``fd`` and take its folder and environment; its options. None: the parent left first."""
    header = _read_exactly(fd, FRAME_HEADER.size)
    body = _read_exactly(fd, FRAME_HEADER.unpack(header)[0]) if header is not None else None
    if body is None:
        return None
    sandbox = decode_frame(body)
    os.chdir(sandbox["cwd"])
    environment = sandbox["environment"]
    for name in [name for name in os.environ if name not in environment]:
        del os.environ[name]
    for name, value in environment.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
    return list(sandbox["options"])


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    """``size`` bytes from ``fd`` and not one more; None at EOF (or a reset) before them."""
    read = bytearray()
    while len(read) < size:
        try:
            chunk = os.read(fd, size - len(read))
        except OSError:
            return None
        if not chunk:
            return None
        read += chunk
    return bytes(read)
