"""Tracebacks as the provider should read them: its own frames, not the worker's or importlib's."""
from __future__ import annotations

import os
import traceback
from typing import List, Optional

# Every module of the worker lives here: their frames (the host's call, the serialization
# watch's wrapper, the handler's import) are cfnrun's, never the provider's.
_WORKER_FOLDER = os.path.dirname(os.path.abspath(__file__))


def provider_frames(frames: List[traceback.FrameSummary]) -> List[str]:
    """The traceback without the worker's and importlib's own frames."""
    kept = [
        frame
        for frame in frames
        if not frame.filename.startswith("<frozen")
        and os.path.dirname(os.path.abspath(frame.filename)) != _WORKER_FOLDER
        and os.sep + "importlib" + os.sep not in frame.filename
    ]
    return traceback.format_list(kept)


def user_frame(tb_frames: List[traceback.FrameSummary], code_dir: str) -> Optional[traceback.FrameSummary]:
    """The innermost traceback frame in the provider's own code, if any."""
    for frame in reversed(tb_frames):
        if os.path.abspath(frame.filename).startswith(code_dir + os.sep):
            return frame
    return None


def where(filename: str, line: Optional[int]) -> str:
    """``path:line``, the path relative to the current folder (the project's)."""
    path = os.path.relpath(os.path.abspath(filename), os.getcwd())
    return f"{path}:{line}" if line else path
