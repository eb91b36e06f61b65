"""The contract checker: one misbehaving provider per rule, caught with the right rule id."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from cfnrun.contract.checker import ContractChecker
from cfnrun.contract.shape import ShapeValidator
from cfnrun.model.budgets import Budgets
from cfnrun.invoker.clock import RealClock, VirtualClock
from cfnrun.events.operation import OperationResult
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.payloads import Entrypoint, OperationRequest
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.project import handler_project
from cfnrun.model.protocol import Action
from cfnrun.model.schema import ResourceSchema
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.spec import RuntimeSettings, worker_spec
from conftest import FIXTURES, ROOT, cfnrun, events, result_of, violations_of

RULEBREAKER = FIXTURES / "rulebreaker"
SCHEMA = RULEBREAKER / "cfnrun-test-rulebreaker.json"
EXISTING = {"Id": "rb-1", "Name": "ok"}


def run_case(
    action: Action,
    desired: Dict[str, Any],
    previous: Optional[Dict[str, Any]] = None,
    budgets: Budgets = Budgets(),
    virtual: bool = False,
    strict: bool = False,
) -> OperationResult:
    project = handler_project("rulebreaker.handler", SCHEMA, RULEBREAKER)

    async def go() -> OperationResult:
        pool = FunctionPool(worker_spec(project, project.type_function(), RuntimeSettings()))
        try:
            request = OperationRequest(
                action=action,
                type_name=project.type_name,
                region="us-east-1",
                account_id="123456789012",
                entrypoint=Entrypoint.TYPE,
                operation=OperationInput(desired=desired, previous=previous),
            )
            operation = Operation(
                pool,
                request,
                project.schema,
                "TypeFunction",
                budgets=budgets,
                clock=VirtualClock() if virtual else RealClock(),
                checker=ContractChecker(project.schema, action, desired, previous),
                strict=strict,
            )
            return await operation.run()
        finally:
            await pool.close()

    return asyncio.run(go())


CASES = [
    # rule id, action, desired, previous, extra, where (pointer) or what (message fragment)
    ("status-valid", Action.CREATE, {"Name": "a", "Breaks": "status-valid"}, None, {}, "/status"),
    ("failed-error-code", Action.CREATE, {"Name": "a", "Breaks": "failed-error-code"}, None, {}, "/errorCode"),
    ("failed-message", Action.READ, {**EXISTING, "Breaks": "failed-message"}, None, {}, "/message"),
    ("in-progress-no-error-code", Action.CREATE, {"Name": "a", "Breaks": "in-progress-no-error-code"}, None, {}, "/errorCode"),
    ("in-progress-no-resource-models", Action.CREATE, {"Name": "a", "Breaks": "in-progress-no-resource-models"}, None, {}, "/resourceModels"),
    ("in-progress-set-so-far", Action.CREATE, {"Name": "a", "Breaks": "in-progress-set-so-far"}, None, {}, "/resourceModel/Size"),
    ("terminal-no-callback-delay", Action.CREATE, {"Name": "a", "Breaks": "terminal-no-callback-delay"}, None, {}, "/callbackDelaySeconds"),
    ("read-no-in-progress", Action.READ, {**EXISTING, "Breaks": "read-no-in-progress"}, None, {}, "/status"),
    ("list-no-in-progress", Action.LIST, {"Breaks": "list-no-in-progress"}, None, {}, "/status"),
    ("list-resource-models", Action.LIST, {"Breaks": "list-resource-models"}, None, {}, "/resourceModels"),
    ("list-primary-identifier", Action.LIST, {"Breaks": "list-primary-identifier"}, None, {}, "/resourceModels/0"),
    ("list-pagination-progress", Action.LIST, {"Breaks": "list-pagination-progress"}, None, {}, "same nextToken"),
    ("delete-success-no-model", Action.DELETE, {**EXISTING, "Breaks": "delete-success-no-model"}, None, {}, "/resourceModel"),
    ("primary-identifier-present", Action.CREATE, {"Name": "a", "Breaks": "primary-identifier-present"}, None, {}, "/properties/Id"),
    ("update-primary-identifier-unchanged", Action.UPDATE, {**EXISTING, "Breaks": "update-primary-identifier-unchanged"}, EXISTING, {}, "/resourceModel/Id"),
    ("model-shape", Action.CREATE, {"Name": "a", "Breaks": "model-shape"}, None, {}, "/resourceModel/Size"),
    ("success-matches-request", Action.CREATE, {"Name": "a", "Breaks": "success-matches-request"}, None, {}, "/resourceModel/Name"),
    ("read-only-present", Action.CREATE, {"Name": "a", "Breaks": "read-only-present"}, None, {}, "/properties/CreatedAt"),
    ("no-null-values", Action.CREATE, {"Name": "a", "Breaks": "no-null-values"}, None, {}, "/resourceModel/Description"),
    ("no-write-only-returned", Action.CREATE, {"Name": "a", "Secret": "hush", "Breaks": "no-write-only-returned"}, None, {}, "/resourceModel/Secret"),
    ("model-returned", Action.CREATE, {"Name": "a", "Breaks": "model-returned"}, None, {}, "/resourceModel"),
    ("response-within-budget", Action.CREATE, {"Name": "a", "Breaks": "response-within-budget"}, None, {"budgets": Budgets(invocation_timeout_s=0.3)}, "0.3 s"),
    ("operation-within-timeout", Action.CREATE, {"Name": "a", "Breaks": "operation-within-timeout"}, None, {"virtual": True}, "timeoutInMinutes = 2"),
    ("request-valid", Action.CREATE, {"Name": "a", "Size": 0}, None, {}, "/desiredResourceState/Size"),
    ("request-valid", Action.CREATE, {"Size": 3}, None, {}, "'Name' is a required property"),
    ("request-no-read-only", Action.CREATE, {"Name": "a", "Id": "mine"}, None, {}, "/desiredResourceState/Id"),
    ("update-create-only-unchanged", Action.UPDATE, {"Id": "rb-1", "Name": "renamed"}, EXISTING, {}, "replace the resource"),
    ("request-has-identifier", Action.READ, {"Name": "ok"}, None, {}, "set /properties/Id"),
]


# Every rule, well-behaved events and --contract strict are checked in milliseconds by
# tests/unit/test_contract_rules.py on these CASES; here only what needs a real worker.


@pytest.mark.parametrize("rule, action, desired, extra", [
    ("response-within-budget", Action.CREATE, {"Name": "a", "Breaks": "response-within-budget"}, {"budgets": Budgets(invocation_timeout_s=0.3)}),
    ("no-write-only-returned", Action.CREATE, {"Name": "a", "Secret": "hush", "Breaks": "no-write-only-returned"}, {}),
])
def test_rules_are_checked_on_real_workers(rule: str, action: Action, desired: Dict[str, Any], extra: Dict[str, Any]) -> None:
    result = run_case(action, desired, **extra)
    assert [v.rule.id for v in result.violations] == [rule]


def test_strict_fails_a_real_operation_on_a_must_violation() -> None:
    result = run_case(Action.CREATE, {"Name": "a", "Breaks": "success-matches-request"}, strict=True)
    assert (result.status, result.reason.value) == ("FAILED", "contract-violation")


@pytest.mark.parametrize("name", ["note", "cluster"])
def test_samples_have_no_violations_over_a_full_lifecycle(sample: Callable[[str], Path], tmp_path: Path, name: str) -> None:
    project = sample(name)
    flags = ["--json", "--virtual-clock", "--no-credentials", "--contract", "strict"]

    def run(action: str, desired: Optional[Dict[str, Any]] = None, previous: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        request = tmp_path / f"{action}.json"
        request.write_text(json.dumps({"desiredResourceState": desired or {}, "previousResourceState": previous}))
        completed = cfnrun("invoke", action, str(request), *flags, cwd=project)
        assert not violations_of(completed), completed.stdout
        result = result_of(completed)
        assert result["status"] == "SUCCESS", result
        return result

    created = run("CREATE", json.loads((project / "requests" / "create.json").read_text())["desiredResourceState"])["resourceModel"]
    identifier = {key: value for key, value in created.items() if key in ("NoteId", "ClusterId")}
    run("READ", identifier)
    changed = {**created, **({"Title": "Renamed"} if name == "note" else {"NodeCount": 5})}
    run("UPDATE", changed, created)
    run("LIST")
    run("DELETE", identifier)


def test_warn_reports_without_changing_the_exit_status_and_strict_does(tmp_path: Path) -> None:
    common = ["--handler", "rulebreaker.handler", "--schema", str(SCHEMA), "--code-dir", str(RULEBREAKER), "--no-credentials"]
    request = tmp_path / "null-value.json"
    request.write_text(json.dumps({"desiredResourceState": {"Name": "a", "Breaks": "no-null-values"}}))
    warn = cfnrun("invoke", "CREATE", str(request), *common)
    strict = cfnrun("invoke", "CREATE", str(request), *common, "--contract", "strict")
    off = cfnrun("invoke", "CREATE", str(request), *common, "--contract", "off", "--json")
    assert warn.returncode == 0 and "✗ contract [no-null-values] null value" in warn.stdout
    assert strict.returncode == 1 and "broke the contract (--contract strict)" in strict.stdout
    assert off.returncode == 0 and not violations_of(off)


def _handler_request(properties: Dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "action": "CREATE",
            "awsAccountId": "123456789012",
            "bearerToken": "token",
            "region": "us-east-1",
            "resourceType": "Cfnrun::Test::RuleBreaker",
            "requestData": {"resourceProperties": properties},
        }
    ).encode()


def test_serve_logs_violations_per_call_and_strict_answers_failed(serve: Callable[..., Any]) -> None:
    warn = serve(RULEBREAKER, "--no-reload")
    answer = json.loads(
        warn.client().invoke(FunctionName="TypeFunction", Payload=_handler_request({"Name": "a", "Secret": "x", "Breaks": "no-write-only-returned"}))["Payload"].read()
    )
    assert answer["status"] == "SUCCESS"
    assert "contract ✗ [no-write-only-returned] writeOnly property /properties/Secret returned" in warn.wait_for_line(r"contract ✗")

    strict = serve(RULEBREAKER, "--no-reload", "--contract", "strict")
    failed = json.loads(
        strict.client().invoke(FunctionName="TypeFunction", Payload=_handler_request({"Name": "a", "Breaks": "success-matches-request"}))["Payload"].read()
    )
    assert failed["status"] == "FAILED" and failed["errorCode"] == "InternalFailure"
    assert "[success-matches-request]" in failed["message"]


SMITHY_STYLE = FIXTURES / "schemas" / "smithy-style-widget.json"
GOOD_SCHEMA: Dict[str, Any] = {
    "typeName": "Org::Service::Thing",
    "description": "A schema that follows the rules; each broken case changes one thing.",
    "definitions": {"Tag": {"type": "object", "properties": {"Key": {"type": "string"}}, "additionalProperties": False}},
    "properties": {"Id": {"type": "string"}, "Tags": {"type": "array", "insertionOrder": False, "items": {"$ref": "#/definitions/Tag"}}},
    "additionalProperties": False,
    "primaryIdentifier": ["/properties/Id"],
    "readOnlyProperties": ["/properties/Id"],
    "handlers": {"create": {"permissions": [], "timeoutInMinutes": 30}},
    "tagging": {"taggable": False},
}
BROKEN_SCHEMAS = [
    ("type-name", {"typeName": "Org-Service-Thing"}, "/typeName", "Organization::Service::Resource"),
    ("not-draft-07", {"properties": {"Id": {"type": "strung"}}}, "/properties/Id/type", "not valid draft-07"),
    ("primary-identifier", {"primaryIdentifier": ["/properties/Name"]}, "/primaryIdentifier/0", "does not name a property"),
    ("read-only-list", {"readOnlyProperties": ["/properties/Tags/*/Value"]}, "/readOnlyProperties/0", "does not name a property"),
    ("timeout-low", {"handlers": {"create": {"permissions": [], "timeoutInMinutes": 1}}}, "/handlers/create/timeoutInMinutes", "from 2 to 2160"),
    ("timeout-high", {"handlers": {"delete": {"permissions": [], "timeoutInMinutes": 2161}}}, "/handlers/delete/timeoutInMinutes", "from 2 to 2160"),
    ("unknown-handler", {"handlers": {"remove": {"permissions": []}}}, "/handlers/remove", "unknown handler"),
    ("permissions", {"handlers": {"read": {}}}, "/handlers/read/permissions", "permissions"),
    ("top-additional", {"additionalProperties": True}, "/additionalProperties", "must be false"),
    (
        "nested-additional",
        {"definitions": {"Tag": {"type": "object", "properties": {"Key": {"type": "string"}}, "additionalProperties": True}}},
        "/definitions/Tag/additionalProperties",
        "patternProperties",
    ),
    ("if-then-else", {"properties": {"Id": {"type": "string", "if": {"minLength": 1}, "then": {}}}}, "/properties/Id/if", "conditional"),
    ("property-names", {"properties": {"Id": {"type": "object", "propertyNames": {"pattern": "^a"}}}}, "/properties/Id/propertyNames", "patternProperties"),
    ("description", {"description": ""}, "/description", "description"),
    ("read-and-write-only", {"writeOnlyProperties": ["/properties/Id"]}, "/writeOnlyProperties", "both readOnly and writeOnly"),
]


def test_validate_accepts_the_samples_and_a_smithy_style_schema(tmp_path: Path) -> None:
    for target in (Path("samples/note"), Path("samples/cluster"), SMITHY_STYLE):
        run = cfnrun("validate", str(target))
        assert run.returncode == 0, run.stdout + run.stderr
        # Smithy's converter leaves out tagging and insertionOrder: cfn validate's warnings, not errors
        warnings = "2 warning(s)" if target == SMITHY_STYLE else "0 warning(s)"
        assert run.stdout.strip().endswith(f"0 error(s), {warnings}")


@pytest.mark.parametrize("name, change, pointer, message", BROKEN_SCHEMAS, ids=[case[0] for case in BROKEN_SCHEMAS])
def test_validate_reports_each_problem_with_its_pointer(tmp_path: Path, name: str, change: Dict[str, Any], pointer: str, message: str) -> None:
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.model.schema_check import check_schema

    problems = check_schema(ResourceSchema({**GOOD_SCHEMA, **change}))
    assert any(p.pointer == pointer and message in p.message for p in problems), [p.line() for p in problems]
    assert check_schema(ResourceSchema(GOOD_SCHEMA)) == []


def test_validate_command_exit_status_and_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**GOOD_SCHEMA, "primaryIdentifier": ["/properties/Nope"], "additionalProperties": True}))
    run = cfnrun("validate", str(broken))
    assert run.returncode == 1
    assert f"{broken}: error: /primaryIdentifier/0: '/properties/Nope' does not name a property declared in /properties" in run.stdout
    assert run.stdout.strip().endswith("2 error(s), 0 warning(s)")
    unreadable = tmp_path / "nope.json"
    assert cfnrun("validate", str(tmp_path)).returncode == 2
    unreadable.write_text("{")
    assert "not valid JSON" in cfnrun("validate", str(unreadable)).stderr


def test_string_primitives_sends_template_values_as_strings(tmp_path: Path, sample: Callable[[str], Path]) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"desiredResourceState": {"do": "properties", "seconds": 2.5, "Flag": True, "Nested": [{"Count": 3}]}}))
    common = ["--handler", "behaviours.handler", "--schema", str(FIXTURES / "misbehaving" / "cfnrun-test-misbehaving.json")]
    common += ["--code-dir", str(FIXTURES / "misbehaving"), "--no-credentials", "--json", "--contract", "off"]
    plain = [e for e in events(cfnrun("invoke", "CREATE", str(request), *common)) if e["event"] == "invocation"][0]
    strings = [e for e in events(cfnrun("invoke", "CREATE", str(request), *common, "--string-primitives")) if e["event"] == "invocation"][0]
    assert plain["progressEvent"]["received"]["seconds"] == 2.5
    assert strings["progressEvent"]["received"] == {"do": "properties", "seconds": "2.5", "Flag": "true", "Nested": [{"Count": "3"}]}
    # The support library recasts the strings, so a provider built on it sees its own types.
    note = sample("note")
    created = result_of(cfnrun("invoke", "CREATE", "requests/create.json", "--json", "--string-primitives", "--no-credentials", cwd=note))
    assert created["status"] == "SUCCESS" and created["resourceModel"]["Priority"] == 2


def test_model_shape_verdicts_are_remembered_per_model_not_per_look() -> None:
    schema = ResourceSchema.load(ROOT / "samples" / "note" / "cfnrun-sample-note.json")
    shape = ShapeValidator(schema)
    model = {"NoteId": "note-0123456789ab", "Title": "t", "Priority": 2, "Tags": [{"Key": "team", "Value": "x"}]}
    assert shape.problems(model) == shape.problems(json.loads(json.dumps(model))) == []
    broken = json.loads(json.dumps(model))
    broken["Tags"][0]["Key"] = 7  # one nested value differs: a different model
    assert [pointer for pointer, _ in shape.problems(broken)] == ["/Tags/0/Key"]
    assert [pointer for pointer, _ in shape.problems(broken)] == ["/Tags/0/Key"]
    reordered = dict(reversed(list(broken.items())))
    assert shape.problems(reordered) == shape.problems(broken)
    assert shape.problems({**model, "Priority": 2.5}) != [] and shape.problems(model) == []


class _AwsStandIn:
    """Plays AWS for one test: an HTTPS proxy that notes where each connection was going, then drops it."""

    def __init__(self) -> None:
        import socket
        import threading

        self.destinations: List[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return
            with connection:
                first_line = connection.recv(4096).split(b"\r\n")[0].decode("latin-1")
                self.destinations.append(first_line.split(" ")[1] if first_line.startswith("CONNECT ") else first_line)

    def close(self) -> None:
        self._server.close()


def test_aws_flag_sends_cfn_tests_sts_calls_to_aws_with_your_credentials(sample: Callable[[str], Path]) -> None:
    pytest.importorskip("rpdk.core")
    project = sample("note")
    aws = _AwsStandIn()
    secret = "developer-secret-key-never-printed"
    env = {"HTTPS_PROXY": aws.url, "AWS_ACCESS_KEY_ID": "AKIADEVELOPER", "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": None}
    try:
        local = cfnrun("test", str(project), "--region", "eu-west-1", "--", "-k", "no_such_test", env=env, timeout=180)
        assert aws.destinations == [], local.stdout[-2000:]  # the stand-in STS answered; AWS was never asked
        assert "0 selected" in local.stdout, local.stdout[-2000:] + local.stderr[-2000:]
        real = cfnrun("test", str(project), "--region", "eu-west-1", "--aws", "--", "-k", "no_such_test", env=env, timeout=180)
    finally:
        aws.close()
    assert real.returncode != 0  # AWS (here: the stand-in that drops every connection) could not be reached
    assert "sts.eu-west-1.amazonaws.com:443" in aws.destinations
    assert secret not in local.stdout + local.stderr + real.stdout + real.stderr
