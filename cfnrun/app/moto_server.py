"""``--moto``: an embedded moto server standing in for AWS, for the life of one command.

moto (an optional extra: ``pip install 'cfnrun[moto]'``) answers the AWS APIs from
memory. The server listens on 127.0.0.1 on a free port, in a thread of cfnrun's own
process, so it stops when the command ends and leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import queue
import sys
import threading
import time
import traceback
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional
from urllib.parse import unquote

from cfnrun.app.loaded_objects import no_collections_meanwhile
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
    one_botocore_loader()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    url = _started(server)
    wsgi = getattr(server, "_server", None)
    if wsgi is not None:  # moto's werkzeug server: its app answers a call it broke on as AWS answers an internal failure
        wsgi.app = AwsShapedFailures(wsgi.app)
    _EMBEDDED.append(url)
    try:
        yield url
    finally:
        _EMBEDDED.remove(url)
        server.stop()


_EMBEDDED: List[str] = []  # the URLs of the moto servers running in this process
_warming: List[threading.Thread] = []


def warm_cloudformation() -> None:
    """Have this process's embedded moto import its CloudFormation now, in a thread of its own, once.

    moto imports its CloudFormation (and with it most of its backends: about 2 s of CPU) at the first call, which
    a stack's first AWS resource then waited for. ``cfnrun stack test`` knows its template as it starts: where it
    has AWS resources, the import runs beside serve's start and the workers' (measured 2026-11-29: the sample
    stack's run 0.7 s shorter). serve's stacks call it as their first AWS resource goes to moto's CloudFormation
    (``app/stacks/aws_types.py``): that call then waits for this import, made without cyclic collections. Without
    an embedded moto (``--aws-endpoint``), nothing is done.
    """
    if not _EMBEDDED or _warming:
        return
    warming = threading.Thread(target=_import_cloudformation, name="cfnrun-moto-warm", daemon=True)
    _warming.append(warming)
    warming.start()


def _import_cloudformation() -> None:
    try:
        from moto.backends import get_backend

        with no_collections_meanwhile():
            get_backend("cloudformation")
    except Exception:  # noqa: B902 - moto's first call imports it again, and its failure is told there
        pass


def one_botocore_loader() -> None:
    """Every botocore session of this process reads botocore's data files through one loader, which keeps what it read.

    moto makes a new boto3 session for most backends it builds, and each new session's loader read and parsed
    botocore's service models and endpoint files again: building EC2's backend, which moto's CloudFormation imports,
    made three and parsed EC2's model each time, a third of the 3 s of CPU its first call took (measured 2026-11-29).
    One session already hands the same loaded data to each client it makes (and emits ``service-data-loaded`` on it
    each time), so sessions sharing a loader see what the clients of one session see. boto3 adds its own data folder
    to its session's loader: added once here. The provider's own processes are not touched.
    """
    import botocore.session

    made = getattr(botocore.session, "create_loader", None)
    if made is None or getattr(made, "cache_info", None) is not None:  # not botocore's as expected, or shared already
        return

    @functools.lru_cache(maxsize=None)  # keyed by the data path setting
    def one_loader(search_path_string: Optional[str] = None) -> Any:
        loader = made(search_path_string)
        if type(getattr(loader, "_search_paths", None)) is list:
            loader._search_paths = _FoldersOnce(loader._search_paths)
        return loader

    botocore.session.create_loader = one_loader


class _FoldersOnce(list):  # type: ignore[type-arg]
    """A loader's search folders, where a folder added again (by each new boto3 session) is not listed twice."""

    def append(self, folder: Any) -> None:
        if folder not in self:
            super().append(folder)


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


class AwsShapedFailures:
    """A WSGI app around moto's: a call moto broke on (an exception out of it) is answered as AWS answers an internal
    failure, a 500 ``InternalFailure`` whose message is the one console line (the exception and moto's line that raised
    it), in the caller's protocol, rather than werkzeug's HTML page, which no AWS client can read: so the caller (a
    handler, or an AWS::* resource's CREATE_FAILED) is told what broke."""

    REPEAT_S = 10.0  # the same line again within this long (the client's retries of the call) is not printed again

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self._last = ("", 0.0)
        self._lock = threading.Lock()

    def __call__(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            return self.app(environ, start_response)
        except Exception as error:  # noqa: B902 - whatever moto raised, the call is answered
            line = broken_call_line(_traceback_text(error))
            with self._lock:
                now = time.monotonic()
                repeated = self._last[0] == line and now - self._last[1] < self.REPEAT_S
                self._last = (line, now)
            if not repeated:
                logging.getLogger("werkzeug").error(line)
            message = "moto " + line[len("moto server: "):]
            if _reads_json(environ):
                body = json.dumps({"__type": "InternalFailure", "message": message}).encode()
                content_type = "application/x-amz-json-1.1"
            else:
                from xml.sax.saxutils import escape  # with urllib.request: only when moto fails a call, not in every command's start

                body = (
                    "<ErrorResponse><Error><Type>Receiver</Type><Code>InternalFailure</Code>"
                    f"<Message>{escape(message)}</Message></Error><RequestId>cfnrun-moto</RequestId></ErrorResponse>"
                ).encode()
                content_type = "text/xml"
            start_response("500 Internal Server Error", [
                ("Content-Type", content_type), ("Content-Length", str(len(body))), ("x-amzn-ErrorType", "InternalFailure"),
            ], sys.exc_info())
            return [body]


# The services whose REST calls are answered in XML (botocore's ``rest-xml`` protocol); any other REST call's in JSON.
REST_XML_SIGNING_NAMES = frozenset({"s3", "s3-outposts", "route53", "cloudfront"})


def _reads_json(environ: Dict[str, Any]) -> bool:
    """Does the caller read a JSON answer? A JSON call (``X-Amz-Target``, a JSON body), or a REST call (any but a POST to
    ``/``: the query protocol's form) to a service other than S3, Route 53 and CloudFront, by the service its signature
    names (API Gateway's GET of a deployment, Lambda's GET of a function)."""
    if "HTTP_X_AMZ_TARGET" in environ or "json" in str(environ.get("CONTENT_TYPE", "")):
        return True
    if environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO", "/") in ("", "/"):
        return False
    return _signing_name(environ) not in REST_XML_SIGNING_NAMES


def _signing_name(environ: Dict[str, Any]) -> str:
    """The service of the call's SigV4 credential scope (``Credential=AKID/20261129/us-east-1/apigateway/aws4_request``),
    from its Authorization header or a presigned URL's ``X-Amz-Credential``; "" when unsigned."""
    credential = str(environ.get("HTTP_AUTHORIZATION", "")).partition("Credential=")[2]
    if not credential:
        credential = unquote(str(environ.get("QUERY_STRING", "")).partition("X-Amz-Credential=")[2])
    scope = credential.split(",", 1)[0].split("&", 1)[0].split("/")
    return scope[3] if len(scope) > 3 else ""


def _traceback_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


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
