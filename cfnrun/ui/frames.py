"""The handler's tracebacks as the user should read them: without cfnrun's own frames."""
from __future__ import annotations

import os
import re
from typing import List, Optional

CFNRUN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FRAME = re.compile(r'^(\s*)File "([^"]+)", line \d+, in ')


def without_cfnrun_frames(text: str) -> str:
    """Handler output with the traceback frames of cfnrun's own code (the worker's wrappers) left out."""
    if CFNRUN_DIR not in text:
        return text
    kept: List[str] = []
    skipping_deeper_than: Optional[int] = None
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if skipping_deeper_than is not None and indent > skipping_deeper_than and line.strip():
            continue  # the frame's source line and its ^^^ marker
        skipping_deeper_than = None
        frame = _FRAME.match(line)
        if frame and frame.group(2).startswith(CFNRUN_DIR):
            skipping_deeper_than = len(frame.group(1))
            continue
        kept.append(line)
    return "\n".join(kept)
