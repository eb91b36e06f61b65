"""``--moto``: an embedded moto server standing in for AWS, for the life of one command.

moto (an optional extra: ``pip install 'cfnrun[moto]'``) answers the AWS APIs from
memory. The server listens on 127.0.0.1 on a free port, in a thread of cfnrun's own
process, so it stops when the command ends and leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import logging
import queue
import threading
import warnings
from typing import TYPE_CHECKING, Iterator, Optional

from cfnrun.model.endpoint_url import check_endpoint_url
from cfnrun.model.errors import CfnrunError

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer

MOTO_START_S = 30.0
MOTO_MISSING = "--moto needs moto's server: pip install 'cfnrun[moto]' (or pip install 'moto[server]')"


def aws_endpoint_choice(aws_endpoint: Optional[str], moto: bool) -> None:
    """The two ways to reroute AWS calls exclude each other; a bad URL is refused before anything starts."""
    if aws_endpoint and moto:
        raise CfnrunError("--aws-endpoint and --moto both say where AWS calls go: pass one")
    if aws_endpoint:
        check_endpoint_url("--aws-endpoint", aws_endpoint, "http://127.0.0.1:5000")


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """Start moto's server on a free loopback port; yield its URL; stop it on the way out."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise CfnrunError(MOTO_MISSING) from None
    quiet_moto()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    url = _started(server)
    try:
        yield url
    finally:
        server.stop()


def quiet_moto() -> None:
    """moto's own output on serve's console, cut to what adds to cfnrun's: no access-log line per AWS call, no warning
    for a type its CloudFormation lacks (the resource's CREATE_FAILED says so), and a call it broke on told in one line
    (the exception and moto's line that raised it) rather than werkzeug's whole traceback."""
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.setLevel(logging.ERROR)
    if not any(isinstance(f, _OneLineErrors) for f in werkzeug.filters):
        werkzeug.addFilter(_OneLineErrors())
    logging.getLogger("moto").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"moto(\.|$)")


class _OneLineErrors(logging.Filter):
    """werkzeug's "Error on request:" record, its traceback cut to one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if text.startswith("Error on request:"):
            record.msg, record.args = broken_call_line(text), None
        return True


def broken_call_line(text: str) -> str:
    """One line for a traceback's text: its exception, and the last frame that raised it."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    frames = [line for line in lines if line.startswith("File ")]
    where = ""
    if frames:
        path, _, rest = frames[-1][len("File "):].partition(", line ")
        where = f" ({path.strip(chr(34)).rsplit('site-packages/', 1)[-1]}:{rest.split(',')[0]})"
    exception = lines[-1] if len(lines) > 1 else "an error"
    return f"moto server: broke answering an AWS call: {exception}{where}"


def _started(server: "ThreadedMotoServer") -> str:
    """Start ``server`` and return its URL; CfnrunError saying why when it does not start.

    moto builds its server on a thread of its own and ``start`` waits for it without a limit:
    if building fails there, ``start`` would wait forever. So it is started from a thread of
    ours, and an exception on any thread meanwhile, or MOTO_START_S without an answer, ends the wait.
    """
    failures: "queue.Queue[BaseException]" = queue.Queue()
    done = threading.Event()

    def start() -> None:
        try:
            server.start()
        except BaseException as error:  # noqa: B902 - handed to the waiting thread
            failures.put(error)
        done.set()

    previous_hook = threading.excepthook

    def hook(args: "threading.ExceptHookArgs") -> None:
        failures.put(args.exc_value or RuntimeError(str(args.exc_type)))
        done.set()

    threading.excepthook = hook
    try:
        threading.Thread(target=start, name="cfnrun-moto-start", daemon=True).start()
        done.wait(MOTO_START_S)
    finally:
        threading.excepthook = previous_hook
    if not failures.empty():
        error = failures.get()
        raise CfnrunError(f"--moto: moto's server did not start: {type(error).__name__}: {error}")
    if not done.is_set():
        raise CfnrunError(f"--moto: moto's server did not start within {MOTO_START_S:g} s")
    try:
        host, port = server.get_host_and_port()
    except Exception as error:  # noqa: B902 - anything moto says here means it is not serving
        raise CfnrunError(f"--moto: moto's server did not start: {type(error).__name__}: {error}") from None
    return f"http://{host}:{port}"
