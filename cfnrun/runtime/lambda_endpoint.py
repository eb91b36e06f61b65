"""``--lambda-endpoint``: a function behind any Lambda Invoke API, as a target like the local workers.

sam local start-lambda, LocalStack, another ``cfnrun serve`` or AWS itself: the invoker sends
the same requests there and gets the same outcomes back. Lambda answers a function's own
failure with HTTP 200 and ``X-Amz-Function-Error``; its error body says which kind
(``Sandbox.Timedout``, ``Runtime.ExitError``, ``Runtime.ImportModuleError``...), and that
decides the outcome. A call that outlasts the invoker's budget is abandoned here (the
function may still run there). The Invoke API itself failing (unreachable, no such function,
refused credentials) is not the handler's doing: it ends the command with a CfnrunError.

boto3's lambda client signs the calls (AWS needs that; local endpoints ignore it) and runs
in a daemon thread, one call at a time, with its read timeout set to the call's budget; a
daemon, so Ctrl-C during a long call ends cfnrun at once instead of waiting for the answer.
"""
from __future__ import annotations

import asyncio
import base64
import json
import math
import threading
import time
import uuid
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

from cfnrun.model.errors import CfnrunError, unreadable
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.process import WorkerInitError

PLACEHOLDER_KEYS = {"aws_access_key_id": "cfnrun-placeholder", "aws_secret_access_key": "cfnrun-placeholder"}
INIT_ERROR_TYPES = ("Runtime.ImportModuleError", "Runtime.UserCodeSyntaxError", "Runtime.HandlerNotFound", "Runtime.MalformedHandlerName")
SANDBOX_GONE_TYPES = ("Runtime.ExitError", "Runtime.OutOfMemory")
LOG_FRAME = ("START RequestId:", "END RequestId:", "REPORT RequestId:")


def outcome_kind(error: LambdaError) -> OutcomeKind:
    """What a function error from a Lambda Invoke API stands for."""
    error_type, message = error.error_type, error.message
    if error_type == "Sandbox.Timedout" or "Task timed out after" in message:
        return OutcomeKind.TIMED_OUT
    if error_type in INIT_ERROR_TYPES or error_type.startswith("Runtime.Init"):
        return OutcomeKind.INIT_ERROR
    if error_type in SANDBOX_GONE_TYPES or "Runtime exited" in message:
        return OutcomeKind.WORKER_DIED
    return OutcomeKind.FUNCTION_ERROR


def handler_logs(log_result: Optional[str]) -> str:
    """The handler's lines of ``X-Amz-Log-Result`` (the last 4 KB of the call's log), without Lambda's framing."""
    if not log_result:
        return ""
    text = base64.b64decode(log_result).decode("utf-8", errors="replace")
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(LOG_FRAME))


class LambdaEndpointFunction:
    """A function NAME on the Lambda Invoke API at URL (a FunctionTarget)."""

    def __init__(self, url: str, function_name: str, region: str, profile: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.function_name = function_name
        session = boto3.Session(profile_name=profile, region_name=region)
        self._credentials: Dict[str, str] = {} if session.get_credentials() is not None else dict(PLACEHOLDER_KEYS)
        self._session = session
        self._clients: Dict[float, Any] = {}
        self._lock = asyncio.Lock()  # one call at a time, like the single local worker

    def _client(self, timeout_s: float) -> Any:
        """A client whose read timeout is the call's budget (rounded up to 0.1 s, so clients are reused)."""
        seconds = max(0.1, math.ceil(timeout_s * 10) / 10)
        client = self._clients.get(seconds)
        if client is None:
            config = Config(read_timeout=seconds, connect_timeout=10, retries={"total_max_attempts": 1})
            client = self._session.client("lambda", endpoint_url=self.url, config=config, **self._credentials)
            self._clients[seconds] = client
        return client

    async def warm(self) -> None:
        """Nothing to start: the function runs wherever the endpoint runs it."""

    async def reload(self) -> Optional[WorkerInitError]:
        return None

    async def close(self) -> None:
        self._clients.clear()

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        async with self._lock:
            started = time.perf_counter()
            try:
                answer = await _in_daemon_thread(lambda: self._call(event, timeout_s))
            except ReadTimeoutError:
                duration = (time.perf_counter() - started) * 1000.0
                return InvocationOutcome(
                    OutcomeKind.TIMED_OUT, request_id or "", duration, timeout_s=timeout_s,
                    note=f"no answer from {self.url} within {timeout_s:g} s: cfnrun stopped waiting; the function may still be running there",
                )
            duration = (time.perf_counter() - started) * 1000.0
        return self._outcome(answer, duration, timeout_s)

    def _call(self, event: Any, timeout_s: float) -> Dict[str, Any]:
        try:
            answer: Dict[str, Any] = self._client(timeout_s).invoke(
                FunctionName=self.function_name, Payload=json.dumps(event).encode("utf-8"), LogType="Tail"
            )
            answer["Body"] = answer["Payload"].read()
            return answer
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            raise CfnrunError(f"--lambda-endpoint {self.url}: invoking {self.function_name} failed: {code}: {error}") from None
        except ReadTimeoutError:
            raise
        except BotoCoreError as error:
            raise CfnrunError(f"--lambda-endpoint {self.url}: {error}") from None

    def _outcome(self, answer: Dict[str, Any], duration: float, timeout_s: float) -> InvocationOutcome:
        request_id = answer.get("ResponseMetadata", {}).get("RequestId") or str(uuid.uuid4())
        logs = handler_logs(answer.get("LogResult"))
        body, problem = _json(answer["Body"])
        if not answer.get("FunctionError"):
            if problem is not None:
                error = LambdaError("Runtime.MarshalError", f"the function's answer is not JSON: {problem}")
                return InvocationOutcome(OutcomeKind.FUNCTION_ERROR, request_id, duration, logs, error=error)
            return InvocationOutcome(OutcomeKind.RETURNED, request_id, duration, logs, result=body)
        error = LambdaError.from_wire(body)
        kind = outcome_kind(error)
        return InvocationOutcome(
            kind, request_id, duration, logs, error=error, timeout_s=timeout_s if kind is OutcomeKind.TIMED_OUT else None
        )


T = TypeVar("T")


async def _in_daemon_thread(work: Callable[[], T]) -> T:
    """``work()`` in a thread of its own that never holds up the interpreter's exit."""
    loop = asyncio.get_running_loop()
    done: "asyncio.Future[T]" = loop.create_future()

    def settle(result: Any, error: Optional[BaseException]) -> None:
        if done.done():  # the caller was cancelled meanwhile
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as raised:  # noqa: B902 - handed to the awaiting coroutine
            result, error = None, raised
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting any more

    threading.Thread(target=run, name="cfnrun-lambda-invoke", daemon=True).start()
    return await done


def _json(body: bytes) -> Tuple[Any, Optional[str]]:
    try:
        return json.loads(body or b"null"), None
    except ValueError as error:  # not UTF-8, not JSON, or a number too long to read
        return body.decode("utf-8", errors="replace"), unreadable(error)
