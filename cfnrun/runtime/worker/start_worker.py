"""The worker process: a warm sandbox that imports a handler once and serves invocations.

Runs as a script (``python worker.py --code-dir DIR``; the handler comes in a frame), in the
provider's interpreter, using the standard library only, so it never drags cfnrun's own
dependencies into the provider's module namespace. Its ``HandlerHost``, ``LambdaContext`` and
``InitError`` are also what cfnrun's ``--in-process`` mode drives, so both run a handler
the same way.

Channels, all set up by the parent:
  * fd 0 is one end of a Unix socket pair: requests come in and replies go out on it,
    as length-prefixed JSON frames. The worker moves it to a private fd at once, so
    the handler's own reads of stdin see nothing.
  * fds 1 and 2 are the log pipe, behind both ``sys.stdout`` and ``sys.stderr``, so the
    parent sees print(), logging, C-level writes and crash dumps in the order they
    happened. The worker flushes its output before it replies, so whatever the pipe
    holds when the reply arrives belongs to that invocation.
  * ``--lifeline FD`` is the read end of a pipe only the parent can write to; EOF on it
    means the parent is gone, and the worker's group is killed (``_die_with_parent``).

Only the worker process itself answers: a child forked by a handler has the channel
closed under it and exits when it returns from the handler. A handler that breaks fds
1/2 or the channel retires its worker (``LogFds``, ``Channel.usable``).
"""
from __future__ import annotations

import faulthandler
import importlib
import importlib.util
import io
import json
import logging
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Set, TextIO, Tuple

from .code_imports import CodeFolderImports

FRAME_HEADER = struct.Struct(">I")
# Exit status of a worker whose handler closed or replaced the request/reply channel's fd:
# no reply can leave, so the parent explains the death by this status.
EXIT_CHANNEL_LOST = 86
_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one instance: json.dumps(separators=...) builds one per call


def _framed(body: bytes) -> bytes:
    return FRAME_HEADER.pack(len(body)) + body


def encode_frame(message: Dict[str, Any]) -> bytes:
    return _framed(encode_json(message))


def encode_call(invocation_id: int, request_id: str, deadline_ms: int, event_json: bytes) -> bytes:
    """One call's frame, with the event spliced in as the JSON text it already is."""
    head = f'{{"id":{invocation_id},"request_id":{_ENCODER.encode(request_id)},"deadline_ms":{deadline_ms},"event":'
    return _framed(head.encode("utf-8") + event_json + b"}")


def encode_json(value: Any) -> bytes:
    return _ENCODER.encode(value).encode("utf-8")


def function_arn(region: str, account_id: str, function_name: str) -> str:
    return f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"


def sandbox_identity(function_name: str, function_arn: str, memory_mb: int, log_stream_name: str) -> Dict[str, Any]:
    """The LambdaContext fields that stay the same for every call a sandbox serves."""
    return {
        "function_name": function_name,
        "invoked_function_arn": function_arn,
        "memory_limit_in_mb": memory_mb,
        "log_group_name": f"/aws/lambda/{function_name}",
        "log_stream_name": log_stream_name,
    }


def deadline_ms(timeout_s: float) -> int:
    """The wall-clock deadline of a call, as get_remaining_time_in_millis counts it."""
    return int((time.time() + timeout_s) * 1000)


class LambdaContext:
    """The context object AWS Lambda's Python runtime hands to a handler."""

    def __init__(self, identity: Dict[str, Any], aws_request_id: str, deadline_ms: int) -> None:
        self.function_name: str = identity["function_name"]
        self.function_version: str = "$LATEST"
        self.invoked_function_arn: str = identity["invoked_function_arn"]
        self.memory_limit_in_mb: str = str(identity["memory_limit_in_mb"])
        self.aws_request_id = aws_request_id
        self.log_group_name: str = identity["log_group_name"]
        self.log_stream_name: str = identity["log_stream_name"]
        self.identity = None
        self.client_context = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))


class RequestIdFilter(logging.Filter):
    request_id = ""

    def filter(self, record: logging.LogRecord) -> bool:
        record.aws_request_id = self.request_id
        return True


def configure_logging(level: str, stream: TextIO) -> RequestIdFilter:
    """The root logger as Lambda's runtime sets it up: one handler, each record tagged with the request id."""
    request_ids = RequestIdFilter()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        logging.Formatter(
            "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s",
            "%Y-%m-%dT%H:%M:%S",
        )
    )
    handler.formatter.converter = time.gmtime  # type: ignore[union-attr]
    handler.addFilter(request_ids)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    return request_ids


def _provider_frames(frames: List[traceback.FrameSummary]) -> List[str]:
    """The traceback without the worker's and importlib's own frames."""
    here = os.path.abspath(__file__)
    kept = [
        frame
        for frame in frames
        if not frame.filename.startswith("<frozen")
        and os.path.abspath(frame.filename) != here
        and os.sep + "importlib" + os.sep not in frame.filename
    ]
    return traceback.format_list(kept)


def _user_frame(tb_frames: List[traceback.FrameSummary], code_dir: str) -> Optional[traceback.FrameSummary]:
    """The innermost traceback frame in the provider's own code, if any."""
    for frame in reversed(tb_frames):
        if os.path.abspath(frame.filename).startswith(code_dir + os.sep):
            return frame
    return None


def _where(filename: str, line: Optional[int]) -> str:
    path = os.path.relpath(os.path.abspath(filename), os.getcwd())
    return f"{path}:{line}" if line else path


def describe_import_failure(module_name: str, error: BaseException, code_dir: str) -> Dict[str, Any]:
    """Lambda-style init error, pointing at the file and line that broke."""
    stack = traceback.extract_tb(error.__traceback__)
    if isinstance(error, SyntaxError):
        where = _where(error.filename or "?", error.lineno)
        detail = f"{error.msg} ({where})"
        if error.text:
            detail += f"\n    {error.text.strip()}"
        return {
            "errorType": "Runtime.UserCodeSyntaxError",
            "errorMessage": f"Syntax error in module '{module_name}': {detail}",
            "location": where,
            "stackTrace": [],
        }
    frame = _user_frame(stack, code_dir)
    location = _where(frame.filename, frame.lineno) if frame else None
    message = f"Unable to import module '{module_name}': {type(error).__name__}: {error}"
    if location:
        message += f" ({location})"
    return {
        "errorType": "Runtime.ImportModuleError",
        "errorMessage": message,
        "location": location,
        "stackTrace": _provider_frames(stack),
    }


def load_handler(handler: str, code_dir: str) -> Callable[..., Any]:
    module_name, _, attribute = handler.rpartition(".")
    if not module_name:
        raise InitError(
            {
                "errorType": "Runtime.MalformedHandlerName",
                "errorMessage": f"Bad handler '{handler}': expected 'module.attribute', e.g. pkg.handlers.resource",
            }
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise InitError(
                {
                    "errorType": "Runtime.ImportModuleError",
                    "errorMessage": f"Unable to import module '{module_name}': no module named "
                    f"'{error.name}' under {code_dir}",
                }
            ) from None
        raise InitError(describe_import_failure(module_name, error, code_dir)) from None
    except BaseException as error:  # noqa: B902 - any import-time failure is the user's
        raise InitError(describe_import_failure(module_name, error, code_dir)) from None
    target = getattr(module, attribute, None)
    if not callable(target):
        what = "missing on" if target is None else "is not callable in"
        raise InitError(
            {
                "errorType": "Runtime.HandlerNotFound",
                "errorMessage": f"Handler '{attribute}' {what} module '{module_name}' "
                f"({_where(getattr(module, '__file__', '?') or '?', None)})",
            }
        )
    return target


class InitError(Exception):
    """The handler cannot be loaded; ``details`` is Lambda's init error body."""

    def __init__(self, details: Dict[str, Any]) -> None:
        super().__init__(details["errorMessage"])
        self.details = details


def _unserializable_path(value: Any, path: str) -> Optional[str]:
    """Where in a ProgressEvent the first value JSON cannot carry sits, if anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            found = _unserializable_path(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _unserializable_path(item, f"{path}[{index}]")
            if found:
                return found
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return None
    if hasattr(value, "_serialize") or hasattr(value, "isoformat"):
        return None
    return f"{path} (a {type(value).__name__})"


def watch_support_library_serialization(handler: Callable[..., Any]) -> None:
    """Explain the support library's silent serialization failures.

    ``cloudformation_cli_python_lib`` turns a ProgressEvent it cannot serialize (a model
    holding a ``set``, say) into FAILED InternalFailure with an empty message and no log
    line. Wrapping the resource's ``_invoke_handler`` lets the worker say what happened.
    """
    resource = getattr(handler, "__self__", handler)
    original = getattr(resource, "_invoke_handler", None)
    if original is None or not hasattr(resource, "_handlers"):
        return

    def checked(*args: Any, **kwargs: Any) -> Any:
        progress = original(*args, **kwargs)
        serialize = getattr(progress, "_serialize", None)
        if serialize is not None:
            try:
                where = _unserializable_path(serialize(), "")
            except Exception as error:  # noqa: B902 - the library would fail the same way
                where = f"({type(error).__name__}: {error})"
            if where:
                print(
                    f"cfnrun: the handler returned a ProgressEvent that cannot be serialized to "
                    f"JSON: {where}. The support library reports this as FAILED InternalFailure "
                    "with an empty message.",
                    file=sys.stderr,
                )
        return progress

    resource._invoke_handler = checked  # type: ignore[union-attr]


class ChannelDisabled(Exception):
    """This process is a fork of the worker: only the worker itself may use the channel."""


class Channel:
    """The worker's end of the request/reply socket (blocking).

    Only the worker process itself talks on it. A handler that forks leaves a child
    holding a copy of the socket; in that child the channel is disabled at once (its fd
    closed), so the child can neither take the next request nor send a reply frame.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._requests: BinaryIO = sock.makefile("rb")  # buffered: a read returns all it asked for
        self.owner = os.getpid()
        self.identity = _fd_identity(sock.fileno())
        os.register_at_fork(after_in_child=self._disable)

    @property
    def fileno(self) -> int:
        return self._sock.fileno()

    def _disable(self) -> None:
        if os.getpid() == self.owner:
            return
        fd = self._sock.fileno()
        self._sock.detach()  # the fd's number may be reused later in the child; close it exactly once
        try:
            os.close(fd)
        except OSError:
            pass

    def usable(self) -> bool:
        """Still the worker's own socket: not forked away, not closed or replaced by the handler."""
        return os.getpid() == self.owner and _fd_identity(self.fileno) == self.identity

    def read_frame(self) -> Dict[str, Any]:
        """The next request; EOFError when the parent has closed its end."""
        if os.getpid() != self.owner:
            raise ChannelDisabled
        header = self._requests.read(FRAME_HEADER.size)
        if len(header) < FRAME_HEADER.size:
            raise EOFError
        (size,) = FRAME_HEADER.unpack(header)
        body = self._requests.read(size)
        if len(body) < size:
            raise EOFError
        return json.loads(body)

    def write_frame(self, frame: bytes) -> None:
        if os.getpid() != self.owner:
            raise ChannelDisabled
        self._sock.sendall(frame)


def _fd_identity(fd: int) -> Optional["tuple[int, int]"]:
    """What an fd refers to (device, inode); None when it is closed."""
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


class LogFds:
    """The worker's fds 1 and 2 as they were at start: the parent's log pipe."""

    def __init__(self) -> None:
        self.identity = {fd: _fd_identity(fd) for fd in (1, 2)}

    def broken(self) -> List[str]:
        """The names of the log fds the handler closed or pointed elsewhere."""
        names = {1: "stdout (fd 1)", 2: "stderr (fd 2)"}
        return [names[fd] for fd, identity in self.identity.items() if _fd_identity(fd) != identity]


def function_error(error: BaseException) -> Dict[str, Any]:
    """Lambda's body for an exception the handler raised."""
    return {
        "errorType": type(error).__name__,
        "errorMessage": str(error),
        "stackTrace": _provider_frames(traceback.extract_tb(error.__traceback__)),
    }


def _sibling(name: str) -> Any:
    """Load ``name``.py from next to this package by its path: the provider's interpreter may not have cfnrun installed."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"cfnrun_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install_faults(rules_json: Optional[str]) -> Any:
    """``--inject``: load fault_hook.py (botocore) and install the rules, if any were given."""
    if not rules_json:
        return None
    try:
        module = _sibling("fault_hook")
    except ImportError as error:
        print(f"cfnrun: --inject needs botocore in the provider's environment ({error}); no faults are injected", file=sys.stderr)
        return None
    return module.install(json.loads(rules_json))


class HandlerHost:
    """A provider's handler as Lambda's Python runtime holds it: imported once, called per event.

    The worker process and cfnrun's in-process mode both drive one; they differ only in
    where the reply goes and what surrounds the call.
    """

    def __init__(self, code_dir: str, log_level: str, log_stream: TextIO) -> None:
        self.code_dir = os.path.abspath(code_dir)
        self.handler: Optional[Callable[..., Any]] = None
        self.dependencies: List[str] = []  # modules the load imported from outside the code folder
        self._request_ids = configure_logging(log_level, log_stream)
        self.faults = install_faults(os.environ.get("CFNRUN_INJECT"))
        self._imports = CodeFolderImports(self.code_dir)
        self._imports.install()  # a reload runs the code as saved, even two saves within one second

    def release(self) -> None:
        """Undo what this host changed in the process for the handler: the code folder's imports, injected faults."""
        self.unload()
        self._imports.uninstall()
        if self.faults is not None:
            self.faults.uninstall()

    def fired_faults(self) -> List[Dict[str, Any]]:
        """The injected faults that fired since the last ask (``--inject``)."""
        return self.faults.drain() if self.faults is not None else []

    def load(self, handler: str) -> None:
        """Import ``module.attribute`` from the code folder; InitError (Lambda's body) if it cannot."""
        before = set(sys.modules)
        self.handler = load_handler(handler, self.code_dir)
        own = self.provider_modules()
        self.dependencies = [name for name in sys.modules if name not in before and name not in own]
        watch_support_library_serialization(self.handler)

    def provider_modules(self) -> Set[str]:
        """Names of the imported modules that live in the code folder."""
        return {
            name
            for name, module in list(sys.modules.items())
            if (getattr(module, "__file__", None) or "").startswith(self.code_dir + os.sep)
        }

    def unload(self) -> None:
        """Forget the handler and the provider's modules, so the next load reads them from disk."""
        for name in self.provider_modules():
            del sys.modules[name]
        self.handler = None

    def call(self, event: Any, context: LambdaContext) -> Tuple[str, bytes]:
        """Run the handler once: ``("result", JSON)``, or ``("error", Lambda's error body as JSON)``.

        An exception the handler raises is its error; a value JSON cannot carry is
        Runtime.MarshalError. SystemExit and KeyboardInterrupt are left to the caller.
        """
        assert self.handler is not None, "call() before load()"
        self._request_ids.request_id = context.aws_request_id
        try:
            try:
                result = self.handler(event, context)
            except Exception as error:  # noqa: B902 - reported to the caller like Lambda does
                return "error", encode_json(function_error(error))
            try:
                return "result", encode_json(result)
            except (TypeError, ValueError) as error:
                marshal = {"errorType": "Runtime.MarshalError", "errorMessage": f"Unable to marshal response: {error}", "stackTrace": []}
                return "error", encode_json(marshal)
        finally:
            self._request_ids.request_id = ""


def encode_reply(invocation_id: int, kind: str, body: bytes, faults: Optional[List[Dict[str, Any]]] = None) -> bytes:
    """A call's reply frame, with the already encoded result or error spliced in (and the faults injected into it)."""
    extra = f'"faults":{_ENCODER.encode(faults)},' if faults else ""
    return _framed(f'{{"type":"{kind}","id":{invocation_id},{extra}"{kind}":'.encode("utf-8") + body + b"}")


class Worker:
    def __init__(
        self,
        host: HandlerHost,
        identity: Dict[str, Any],
        channel: Channel,
        before_call: Optional[Callable[[], None]] = None,
    ) -> None:
        self.host = host
        self.identity = identity
        self.before_call = before_call
        self.channel = channel
        self.log_fds = LogFds()

    def serve(self) -> None:
        ready = {"type": "ready", "pid": os.getpid(), "modules": self.host.dependencies}
        self.channel.write_frame(encode_frame(ready))
        while True:
            try:
                request = self.channel.read_frame()
            except (EOFError, ConnectionError):
                return
            reply = self.invoke(request)
            if not self.channel.usable():
                if os.getpid() != self.channel.owner:
                    os._exit(0)  # a forked child returned from the handler: it has nobody to answer
                os._exit(EXIT_CHANNEL_LOST)
            broken = self.log_fds.broken()
            if broken:
                self.channel.write_frame(encode_frame(_unusable_reply(request["id"], broken)))
                return
            self.channel.write_frame(reply)

    def invoke(self, request: Dict[str, Any]) -> bytes:
        """Run the handler once; the encoded reply frame, ready to send."""
        context = LambdaContext(self.identity, request["request_id"], request["deadline_ms"])
        if self.before_call is not None:
            self.before_call()
        kind, body = self.host.call(request["event"], context)
        sys.stdout.flush()  # all of this call's output is in the log pipe before the reply leaves
        sys.stderr.flush()
        return encode_reply(request["id"], kind, body, self.host.fired_faults())


def _unusable_reply(invocation_id: int, broken: List[str]) -> Dict[str, Any]:
    return {
        "type": "error",
        "id": invocation_id,
        "unusable": True,
        "error": {
            "errorType": "Runtime.ExitError",
            "errorMessage": f"the handler closed or replaced the worker's {' and '.join(broken)}; "
            "this sandbox cannot serve another call and is replaced",
            "stackTrace": [],
        },
    }


def _die_with_parent(lifeline: int) -> None:
    """End this worker when the process that started it ends, however it ends.

    On Linux the kernel sends SIGKILL when the parent dies; everywhere, a watchdog thread
    waits on the lifeline pipe, whose write end only the parent holds, and at EOF kills the
    worker's process group (the worker leads it), taking what the handler started along.
    """
    os.set_inheritable(lifeline, False)
    _killed_with_parent()
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


def _killed_with_parent() -> None:
    """On Linux, ask the kernel for SIGKILL when the parent process ends."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass


def _take_over_fds() -> Channel:
    """Keep the protocol on a private fd; leave fd 0 reading nothing."""
    channel = Channel(socket.socket(fileno=os.dup(0)))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
    return channel


def _preload(modules: List[str]) -> None:
    """Import the provider's dependencies ahead of its code, so loading new code is quick."""
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: B902 - a dependency that fails here fails again, visibly, on load
            pass


def _breakpoint_without_terminal(*args: Any, **kwargs: Any) -> None:
    """breakpoint() in a worker: pdb has no terminal here, so say how to debug instead of failing the call."""
    caller = sys._getframe(1)
    print(
        f"cfnrun: breakpoint() at {_where(caller.f_code.co_filename, caller.f_lineno)} skipped: a worker process has no "
        "terminal for pdb. Use --in-process to stop there in pdb, or --debug-port to attach an IDE debugger.",
        file=sys.stderr,
    )


def _start_debugger(port: int, wait: bool) -> Optional[Callable[[], None]]:
    """Listen for a debugger; with ``wait``, what to call before each invocation."""
    try:
        import debugpy  # type: ignore[import-not-found]
    except ImportError:
        print("cfnrun: --debug-port needs debugpy in the provider's environment: pip install debugpy", file=sys.stderr)
        return None
    debugpy.listen(("127.0.0.1", port))
    if sys.breakpointhook is _breakpoint_without_terminal:
        sys.breakpointhook = debugpy.breakpoint  # breakpoint() pauses in the attached IDE
    if not wait:
        return None

    def wait_for_debugger() -> None:
        if not debugpy.is_client_connected():
            print(f"cfnrun: waiting for a debugger on 127.0.0.1:{port}", file=sys.stderr, flush=True)
            debugpy.wait_for_client()

    return wait_for_debugger


def _option(argv: List[str], name: str) -> Optional[str]:
    return argv[argv.index(name) + 1] if name in argv else None


def main(argv: List[str]) -> int:
    """Start, optionally preload dependencies, load the handler, then serve invocations.

    Startup frames from the parent: an optional ``{"type": "preload", "modules": [...]}``
    (answered ``preloaded``), then ``{"type": "load", "handler": "pkg.mod.attr",
    "identity": {...}}`` (answered ``ready`` or ``init_error``); then one
    ``{"id", "request_id", "deadline_ms", "event"}`` frame per call. A standby worker sits between the two until
    new code needs a home. With ``--zygote`` the process forks workers instead (``_serve_forks``).
    """
    code_dir = os.path.abspath(argv[argv.index("--code-dir") + 1])
    # Run as a script (python worker.py), this file's folder is first on sys.path; the provider must not see it.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [code_dir] + [p for p in sys.path if os.path.abspath(p or ".") != here]
    if "--zygote" in argv:
        return _serve_forks(code_dir, argv)
    lifeline = _option(argv, "--lifeline")
    if lifeline is not None:
        _die_with_parent(int(lifeline))
    return _run(code_dir, argv, _take_over_fds())


def _run(code_dir: str, argv: List[str], channel: Channel) -> int:
    """A worker's life once its channel and log fds are in place: load the handler, serve calls."""
    faulthandler.enable(sys.stderr)
    if not os.environ.get("PYTHONBREAKPOINT"):  # the developer's own choice of debugger wins
        sys.breakpointhook = _breakpoint_without_terminal
    debug_port = _option(argv, "--debug-port")
    before_call = _start_debugger(int(debug_port), "--debug-wait" in argv) if debug_port else None

    try:
        command = channel.read_frame()
        if command["type"] == "preload":
            _preload(command["modules"])
            channel.write_frame(encode_frame({"type": "preloaded"}))
            command = channel.read_frame()
    except (EOFError, ConnectionError):
        return 0
    host = HandlerHost(code_dir, os.environ.get("CFNRUN_LOG_LEVEL", "INFO"), sys.stdout)
    try:
        host.load(command["handler"])
    except InitError as error:
        sys.stdout.flush()
        channel.write_frame(encode_frame({"type": "init_error", "error": error.details}))
        return 3
    try:
        Worker(host, command["identity"], channel, before_call).serve()
    except ChannelDisabled:
        os._exit(0)  # a forked child left the handler: it ends quietly, without serving
    return 0


# -- the zygote: a process with the dependencies imported that forks new workers -------------------
#
# ``--zygote``: fd 0 is a SOCK_SEQPACKET socket to the parent, one JSON message per packet. The
# parent sends ``{"type": "preload", "modules": [...]}`` (answered ``{"type": "preloaded",
# "threads": N}``: forking is only safe while N is 1), then any number of ``{"type": "fork",
# "marker": TOKEN}`` messages, each carrying three fds (the new worker's channel socket, its log
# pipe's write end, its lifeline's read end). Each is answered ``{"type": "forked", "pid": P}``;
# when a forked worker ends, ``{"type": "exited", "pid": P, "returncode": R}`` follows (the zygote
# is its parent, so only the zygote can reap it). EOF on fd 0 ends the zygote; the kernel then
# kills the workers it forked (parent-death signal), as it kills the zygote when cfnrun ends.

ZYGOTE_FDS = 3
_PACKET = 65536


def _serve_forks(code_dir: str, argv: List[str]) -> int:
    _killed_with_parent()
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    request = json.loads(control.recv(_PACKET) or b"{}")
    if request.get("type") != "preload":
        return 0
    _preload(request["modules"])
    control.send(encode_json({"type": "preloaded", "threads": _thread_count()}))
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)

    while True:
        ready, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 4096)
            _report_exits(control)
        if control.fileno() not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, _PACKET, ZYGOTE_FDS)
        if not message:
            return 0
        fork = json.loads(message)
        if len(fds) != ZYGOTE_FDS:
            for fd in fds:
                os.close(fd)
            control.send(encode_json({"type": "refused", "reason": f"{len(fds)} fds came with the fork request"}))
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _become_worker(code_dir, argv, fork["marker"], fds, [control.fileno(), wake_read, wake_write])
        for fd in fds:
            os.close(fd)
        control.send(encode_json({"type": "forked", "pid": pid}))


def _report_exits(control: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        control.send(encode_json({"type": "exited", "pid": pid, "returncode": os.waitstatus_to_exitcode(status)}))


def _thread_count() -> int:
    """Threads in this process, C-level ones included where /proc tells."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _become_worker(code_dir: str, argv: List[str], marker: str, fds: List[int], zygote_fds: List[int]) -> None:
    """In a forked child: drop the zygote's fds, take the worker's, become a sandbox of its own; never returns."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in zygote_fds:
            os.close(fd)
        os.setsid()  # its own session and process group, as a spawned worker has
        channel_fd, log_fd, lifeline = fds
        os.dup2(channel_fd, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(channel_fd)
        os.close(log_fd)
        _take_marker(marker)
        _die_with_parent(lifeline)
        status = _run(code_dir, argv, _take_over_fds())
    except BaseException:  # noqa: B902 - a forked child must never return into the zygote's loop
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _take_marker(marker: str) -> None:
    """Carry ``marker`` as CFNRUN_SANDBOX instead of the zygote's, also where /proc/PID/environ shows it.

    /proc shows the environment block the process started with, which a fork copies: the
    zygote's marker is overwritten there in place (the parent makes both the same length),
    then set the usual way for the processes the handler starts.
    """
    name = "CFNRUN_SANDBOX"
    old = os.environ.get(name, "")
    if sys.platform.startswith("linux") and old and len(old) == len(marker):
        import ctypes

        try:
            environ = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
            entry = f"{name}={old}".encode()
            index = 0
            while environ[index]:
                address = environ[index]
                if ctypes.string_at(address) == entry:
                    ctypes.memmove(address + len(name) + 1, marker.encode(), len(marker))
                    break
                index += 1
        except (OSError, ValueError):
            pass
    os.environ[name] = marker


if __name__ == "__main__":
    sys.exit(main(sys.argv))
