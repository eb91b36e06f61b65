"""Generated input to every AWS operation ``cfnrun serve`` answers, through boto3 with its checks off.

Hypothesis draws each operation's parameters from botocore's own model of it
(tests/shape_strategies.py): mostly well formed, now and then out of range, of the wrong type,
None, very long or odd unicode. One real serve (the note sample, its stacks kept in ``--state``)
answers them all. Every call must end in success or an error botocore parses, with a code and a
message, a 4xx where the caller is at fault; never a 5xx, never a traceback, never a hang (the
client's read timeout); and after each example the service still answers a plain call, and serve
has logged no unhandled error.

The default run is short and reproducible (a fixed number of examples, derandomized). The long
run: ``CFNRUN_API_FUZZ_EXAMPLES=300 CFNRUN_API_FUZZ_SEED=1 python -m pytest -q -n 2 tests/test_api_fuzz.py``
(a seed makes it random but repeatable; change it for other inputs).
"""
from __future__ import annotations

import io
import json
import os
import queue
import re
import shutil
import zipfile
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from hypothesis import HealthCheck, Phase, given, reject, seed, settings
from hypothesis import strategies as st

from conftest import LOCAL_STATE, SAMPLES, ServerProcess
from shape_strategies import strategy

EXAMPLES = int(os.environ.get("CFNRUN_API_FUZZ_EXAMPLES", "4"))
SEED = os.environ.get("CFNRUN_API_FUZZ_SEED")
READ_TIMEOUT_S = 30  # no call of these takes a second on a quiet machine: past this, serve hangs
INVOCATION_TIMEOUT_S = 10
NOTE = "Cfnrun::Sample::Note"
STACKS = ["fuzz-a", "fuzz-b", "fuzz-c"]
CHANGE_SETS = ["fuzz-changes", "other"]
FUNCTIONS = ["TypeFunction", "fuzz-function"]
CREDENTIALS = {"aws_access_key_id": "AKIDCFNRUNTEST", "aws_secret_access_key": "cfnrun-test-secret", "region_name": "us-east-1"}
LAMBDA_OPERATIONS = ["Invoke", "CreateFunction", "GetFunction", "ListFunctions", "DeleteFunction", "UpdateFunctionCode", "GetFunctionConfiguration"]
# Operations that start long work by design: a contract suite run takes minutes, not a robustness question
SKIPPED = {"cloudformation": {"TestType"}}
# A line serve logs when an exception escaped a request's handler (aiohttp's, or a traceback)
# A line a handler wrote (its request's id, then a bar): the handler's own tracebacks are what it logged, not serve's
HANDLER_OUTPUT = re.compile(r"^\s*[0-9a-f]{8} │ ")
UNHANDLED = ("Traceback", "Error handling request", "Unhandled exception", "Task exception was never retrieved")


def _note_template(title: str = "fuzzed") -> str:
    return json.dumps({"Resources": {"Note": {"Type": NOTE, "Properties": {"Title": title}}}})


TEMPLATES = [
    _note_template(),
    _note_template("changed"),
    json.dumps({"Parameters": {"P": {"Type": "String", "Default": "x"}}, "Resources": {"Note": {"Type": NOTE, "Properties": {"Title": {"Ref": "P"}}}},
                "Outputs": {"Id": {"Value": {"Ref": "Note"}, "Export": {"Name": "fuzz-export"}}}}),
    "Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties:\n      Title: yaml\n",
    json.dumps({"Resources": {"Bad": {"Type": NOTE, "Properties": {"Title": 5, "Nope": True}}}}),
    json.dumps({"Resources": {}}),
    "{",
]


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", source)
    return buffer.getvalue()


def _json_text(document: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    return document.map(json.dumps)


NOTE_PROPERTIES = st.fixed_dictionaries({"Title": st.text(max_size=20)}, optional={"Priority": st.integers(), "Content": st.text(max_size=20)})
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


def _or_text(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, strategy, strategy, st.text(max_size=30))


HINTS: Dict[str, st.SearchStrategy[Any]] = {
    "StackName": _or_text(st.sampled_from(STACKS)),
    "ChangeSetName": _or_text(st.sampled_from(CHANGE_SETS)),
    "TemplateBody": _or_text(st.sampled_from(TEMPLATES)),
    "TypeName": _or_text(st.sampled_from([NOTE, "AWS::S3::Bucket", "Cfnrun::Sample::Nope"])),
    "DesiredState": _or_text(_json_text(NOTE_PROPERTIES) | _json_text(JSON_VALUES)),
    "PatchDocument": _or_text(_json_text(st.lists(st.fixed_dictionaries({"op": st.sampled_from(["add", "replace", "remove", "move"]), "path": st.sampled_from(["/Title", "/Priority", "/x", ""])}, optional={"value": JSON_VALUES}), max_size=3))),
    "ResourceModel": _or_text(_json_text(NOTE_PROPERTIES)),
    "FunctionName": _or_text(st.sampled_from(FUNCTIONS)),
    "Payload": st.one_of(_json_text(JSON_VALUES).map(str.encode), st.binary(max_size=64)),
    "ZipFile": st.one_of(st.just(_zip("def handler(event, context):\n    return event\n")), st.binary(max_size=64)),
    "Runtime": _or_text(st.sampled_from(["python3.12", "python3.9", "nodejs20.x"])),
    "Handler": _or_text(st.just("index.handler")),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("fuzz")
    note = root / "note"
    shutil.copytree(SAMPLES / "note", note, ignore=LOCAL_STATE)
    process = ServerProcess(note, "--no-reload", "--state", str(root / "state"), "--invocation-timeout", str(INVOCATION_TIMEOUT_S))
    yield process
    process.stop()


def _client(server: ServerProcess, service: str, validated: bool = False) -> Any:
    import boto3

    config = Config(parameter_validation=validated, retries={"max_attempts": 0}, read_timeout=READ_TIMEOUT_S, connect_timeout=10)
    return boto3.client(service, endpoint_url=server.url, config=config, **CREDENTIALS)


class Caller:
    """Sends one operation through a client with its checks off and judges the answer."""

    def __init__(self, server: ServerProcess, service: str) -> None:
        self.server = server
        self.service = service
        self.client = _client(server, service)
        self.checked = _client(server, service, validated=True)
        self.sent = False
        self.body = b""
        events = self.client.meta.events
        events.register("before-send", self._sending)
        events.register("before-parse", self._answered)

    def _sending(self, **_: Any) -> None:
        self.sent = True

    def _answered(self, response_dict: Dict[str, Any], **_: Any) -> None:
        body = response_dict.get("body")
        self.body = body if isinstance(body, bytes) else b""

    def call(self, operation: str, params: Dict[str, Any]) -> None:
        self.sent, self.body = False, b""
        method = getattr(self.client, _snake(self.client, operation))
        shown = f"{self.service}.{operation}({_shown(params)})"
        try:
            answer = method(**params)
        except ClientError as error:
            status = error.response["ResponseMetadata"].get("HTTPStatusCode", 0)
            code, message = error.response["Error"].get("Code"), error.response["Error"].get("Message")
            assert code and message, f"{shown}: an error without a code or message: {error.response}"
            assert 400 <= status < 500, f"{shown}: answered {status} {code}: {message}"
        except BotoCoreError as error:
            if not self.sent:  # botocore's serializer refused the value: nothing reached serve
                reject()
            if "Invalid header value" in str(error):  # the HTTP client refused to send a header with a line break in it
                reject()
            raise AssertionError(f"{shown}: {type(error).__name__}: {error}") from None
        except (TypeError, ValueError, AttributeError, OverflowError, KeyError):
            if not self.sent:
                reject()
            raise
        else:
            if operation == "Invoke":
                answer["Payload"].read()
        assert b"Traceback" not in self.body, f"{shown}: {self.body[:2000]!r}"
        self._still_serving()

    def _still_serving(self) -> None:
        health = {"cloudformation": ("describe_stacks", {}), "cloudcontrol": ("list_resource_requests", {}), "lambda": ("list_functions", {})}
        name, params = health[self.service]
        getattr(self.checked, name)(**params)
        logged = _drain(self.server)
        serve_own = [line for line in logged if not HANDLER_OUTPUT.match(line)]
        assert not [line for line in serve_own if any(mark in line for mark in UNHANDLED)], "\n".join(logged[-60:])


def _snake(client: Any, operation: str) -> str:
    return next(name for name, api in client.meta.method_to_api_mapping.items() if api == operation)


def _shown(params: Dict[str, Any]) -> str:
    text = repr(params)
    return text if len(text) < 600 else text[:600] + "..."


def _drain(server: ServerProcess) -> List[str]:
    lines: List[str] = []
    while True:
        try:
            line = server._lines.get_nowait()
        except queue.Empty:
            return lines
        if line is None:
            server._lines.put(None)
            raise AssertionError("serve exited:\n" + "\n".join(server.output[-60:]))
        server.output.append(line)
        lines.append(line)


def _operations(service: str, only: Optional[List[str]] = None) -> List[str]:
    import botocore.session

    names = only or botocore.session.get_session().get_service_model(service).operation_names
    return [name for name in names if name not in SKIPPED.get(service, set())]


def _fuzz(server: ServerProcess, service: str, operation: str, tidy: Callable[[Any], None]) -> None:
    import botocore.session

    model = botocore.session.get_session().get_service_model(service).operation_model(operation)
    params = strategy(model.input_shape, HINTS) if model.input_shape is not None else st.just({})
    caller = Caller(server, service)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
              phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if SEED else []),
              suppress_health_check=list(HealthCheck))
    @given(params)
    def example(values: Dict[str, Any]) -> None:
        caller.call(operation, values)
        tidy(caller.checked)

    if SEED is not None:
        example = seed(int(SEED))(example)
    example()


def _delete_strays(cloudformation: Any) -> None:
    """Stacks made under names outside the pool are deleted, so a long run keeps a bounded number."""
    for stack in cloudformation.describe_stacks()["Stacks"]:
        if stack["StackName"] not in STACKS and not stack["StackStatus"].endswith("IN_PROGRESS"):
            cloudformation.delete_stack(StackName=stack["StackId"])


def _delete_made_functions(functions: Any) -> None:
    for function in functions.list_functions()["Functions"]:
        if function["FunctionName"] not in FUNCTIONS:
            functions.delete_function(FunctionName=function["FunctionName"])


@pytest.mark.parametrize("operation", _operations("cloudformation"))
def test_cloudformation_answers_any_input(server: ServerProcess, operation: str) -> None:
    _fuzz(server, "cloudformation", operation, _delete_strays)


@pytest.mark.parametrize("operation", _operations("cloudcontrol"))
def test_cloud_control_answers_any_input(server: ServerProcess, operation: str) -> None:
    _fuzz(server, "cloudcontrol", operation, lambda _: None)


@pytest.mark.parametrize("operation", LAMBDA_OPERATIONS)
def test_lambda_answers_any_input(server: ServerProcess, operation: str) -> None:
    _fuzz(server, "lambda", operation, _delete_made_functions)

