"""How cfnrun's processes end: as ``sys.exit(code)`` would, minus the interpreter's teardown (``cfnrun`` itself, and
the process running cloudformation-cli's suite, ``app/cfn_offline.py``)."""
import sys
from typing import NoReturn


def leave(code: object) -> NoReturn:
    """End the process once the command is done, as ``sys.exit(code)`` would, minus the interpreter's teardown.

    Exit handlers still run, threads are joined and output is flushed; what is skipped is
    freeing every module the command loaded (pydantic, botocore, aiohttp...), ~50 ms of a
    one-shot ``invoke`` for nothing. An exception the command did not handle never gets here.
    """
    import atexit
    import os
    import threading

    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (``| head``) or a closed stream
            status = status or 120  # what Python itself exits with when its final flush fails
    os._exit(status)
