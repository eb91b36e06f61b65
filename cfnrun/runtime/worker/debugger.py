"""breakpoint() and IDE debuggers in a worker, which has no terminal for pdb."""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from .tracebacks import where


def breakpoint_without_terminal(*args: Any, **kwargs: Any) -> None:
    """breakpoint() in a worker: pdb has no terminal here, so say how to debug instead of failing the call."""
    caller = sys._getframe(1)
    print(
        f"cfnrun: breakpoint() at {where(caller.f_code.co_filename, caller.f_lineno)} skipped: a worker process has no "
        "terminal for pdb. Use --in-process to stop there in pdb, or --debug-port to attach an IDE debugger.",
        file=sys.stderr,
    )


def start_debugger(port: int, wait: bool) -> Optional[Callable[[], None]]:
    """``--debug-port``: listen for a debugger (debugpy); with ``wait``, what to call before each invocation."""
    try:
        import debugpy  # type: ignore[import-not-found]
    except ImportError:
        print("cfnrun: --debug-port needs debugpy in the provider's environment: pip install debugpy", file=sys.stderr)
        return None
    debugpy.listen(("127.0.0.1", port))
    if sys.breakpointhook is breakpoint_without_terminal:
        sys.breakpointhook = debugpy.breakpoint  # breakpoint() pauses in the attached IDE
    if not wait:
        return None

    def wait_for_debugger() -> None:
        if not debugpy.is_client_connected():
            print(f"cfnrun: waiting for a debugger on 127.0.0.1:{port}", file=sys.stderr, flush=True)
            debugpy.wait_for_client()

    return wait_for_debugger
