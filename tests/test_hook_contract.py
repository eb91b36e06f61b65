"""The hook contract rules of the one checker: a misbehaving hook per rule, run in a real worker."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import pytest
from conftest import FIXTURES, cfnrun, result_of, violations_of

from cfnrun.contract.checker import ContractChecker, check_call
from cfnrun.contract.shape import ShapeValidator
from cfnrun.contract.violations import ALL_RULES
from cfnrun.invoker.clock import VirtualClock
from cfnrun.events.operation import OperationResult
from cfnrun.invoker.hook_payloads import HookOperationRequest
from cfnrun.invoker.operation import Operation
from cfnrun.invoker.payloads import Entrypoint
from cfnrun.invoker.request_files import OperationInput
from cfnrun.model.hook_targets import hook_target, target_schemas
from cfnrun.model.project import handler_project
from cfnrun.model.protocol import Action
from cfnrun.model.seen_call import SeenCall
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.spec import RuntimeSettings, worker_spec

HOOKBREAKER = FIXTURES / "hookbreaker"
SCHEMA = HOOKBREAKER / "cfnrun-test-hookbreaker.json"
BUCKET = "AWS::S3::Bucket"


def run_hook(point: Action, target: str, desired: Dict[str, Any], previous: Optional[Dict[str, Any]] = None, strict: bool = False) -> OperationResult:
    project = handler_project("hookbreaker.handler", SCHEMA, HOOKBREAKER)

    async def go() -> OperationResult:
        pool = FunctionPool(worker_spec(project, project.type_function(), RuntimeSettings()))
        try:
            request = HookOperationRequest(
                action=point,
                type_name=project.type_name,
                region="us-east-1",
                account_id="123456789012",
                entrypoint=Entrypoint.TYPE,
                operation=OperationInput(desired=desired, previous=previous, target_name=target),
            )
            checker = ContractChecker(
                project.schema, point, desired, previous, target=hook_target(project.root, project.schema, point, target)
            )
            operation = Operation(
                pool, request, project.schema, "TypeFunction", clock=VirtualClock(), checker=checker, strict=strict
            )
            return await operation.run()
        finally:
            await pool.close()

    return asyncio.run(go())


def breaks(rule: str) -> Dict[str, Any]:
    return {"BucketName": "cfnrun-demo", "Breaks": rule}


HOOK_CASES = [
    # rule id, invocation point, target, desired, where (pointer) or what (message fragment)
    ("hook-status-valid", Action.CREATE_PRE_PROVISION, BUCKET, breaks("hook-status-valid"), "/hookStatus"),
    ("hook-success-clean", Action.CREATE_PRE_PROVISION, BUCKET, breaks("hook-success-clean"), "/errorCode"),
    ("failed-error-code", Action.CREATE_PRE_PROVISION, BUCKET, breaks("failed-error-code"), "/errorCode"),
    ("failed-message", Action.CREATE_PRE_PROVISION, BUCKET, breaks("failed-message"), "/message"),
    ("terminal-no-callback-delay", Action.CREATE_PRE_PROVISION, BUCKET, breaks("terminal-no-callback-delay"), "/callbackDelaySeconds"),
    ("in-progress-no-error-code", Action.CREATE_PRE_PROVISION, BUCKET, breaks("in-progress-no-error-code"), "/errorCode"),
    ("hook-in-progress-no-result", Action.CREATE_PRE_PROVISION, BUCKET, breaks("hook-in-progress-no-result"), "/result"),
    ("hook-unsupported-target", Action.CREATE_PRE_PROVISION, "AWS::SQS::Queue", {"QueueName": "q"}, "answered SUCCESS"),
    ("hook-target-model-valid", Action.CREATE_PRE_PROVISION, BUCKET, {"BucketName": "Not_A_Bucket"}, "/requestData/targetModel/resourceProperties/BucketName"),
]


@pytest.mark.parametrize("rule, point, target, desired, where", HOOK_CASES, ids=[case[0] for case in HOOK_CASES])
def test_each_hook_rule_catches_its_misbehaviour(rule: str, point: Action, target: str, desired: Dict[str, Any], where: str) -> None:
    result = run_hook(point, target, desired)
    caught = [v for v in result.violations if v.rule.id == rule]
    assert caught, f"{rule} not reported; got {[v.line() for v in result.violations]}"
    assert any(where in (v.pointer or "") or where in v.message for v in caught), [v.line() for v in caught]


def test_every_hook_rule_has_a_misbehaving_case() -> None:
    assert {rule.id for rule in ALL_RULES if rule.id.startswith("hook-")} <= {case[0] for case in HOOK_CASES}


def test_a_well_behaved_hook_and_a_wildcard_target_have_no_violations() -> None:
    assert run_hook(Action.CREATE_PRE_PROVISION, BUCKET, {"BucketName": "cfnrun-demo"}).violations == []
    # preUpdate declares AWS::S3::*: a bucket policy is one of its targets, with no target schema in the project
    updated = run_hook(Action.UPDATE_PRE_PROVISION, "AWS::S3::BucketPolicy", {"Bucket": "b"}, {"Bucket": "b"})
    assert updated.status == "SUCCESS" and updated.violations == []


def test_strict_refuses_an_invalid_target_model_before_invoking() -> None:
    result = run_hook(Action.CREATE_PRE_PROVISION, BUCKET, {"BucketName": "Not_A_Bucket"}, strict=True)
    assert result.invocations == 0 and "[hook-target-model-valid]" in result.message


def test_target_schemas_come_from_the_project_folder_and_target_info(tmp_path: Path) -> None:
    (tmp_path / "target-schemas").mkdir()
    (tmp_path / "target-schemas" / "a.json").write_text(json.dumps({"typeName": "AWS::S3::Bucket", "properties": {}}))
    (tmp_path / "target-info.json").write_text(json.dumps({"AWS::SQS::Queue": {"TargetName": "AWS::SQS::Queue", "Schema": {"properties": {}}}}))
    assert sorted(target_schemas(tmp_path)) == ["AWS::S3::Bucket", "AWS::SQS::Queue"]


def test_serve_checks_hook_calls_by_their_wire_format() -> None:
    project = handler_project("hookbreaker.handler", SCHEMA, HOOKBREAKER)
    call = {
        "actionInvocationPoint": "CREATE_PRE_PROVISION",
        "requestContext": {"invocation": 1},
        "requestData": {"targetName": BUCKET, "targetModel": {"resourceProperties": {"BucketName": "Not_A_Bucket"}}},
    }
    found = check_call(ShapeValidator(project.schema), SeenCall.parse(call), {"hookStatus": "FAILED", "errorCode": "NonCompliant"}, target_schemas(HOOKBREAKER))
    assert sorted(v.rule.id for v in found) == ["failed-message", "hook-target-model-valid"]
    test_event = {
        "actionInvocationPoint": "CREATE_PRE_PROVISION",
        "request": {"clientRequestToken": "t", "hookContext": {"targetName": "AWS::SQS::Queue", "targetModel": {}}},
    }
    found = check_call(ShapeValidator(project.schema), SeenCall.parse(test_event), {"status": "SUCCESS"}, target_schemas(HOOKBREAKER))
    assert [v.rule.id for v in found] == ["hook-unsupported-target"]


def test_invoke_reports_hook_violations_and_the_sample_answers_unsupported_target(sample: Callable[[str], Path], tmp_path: Path) -> None:
    project = sample("hook")
    queue = tmp_path / "queue.json"
    queue.write_text(json.dumps({"targetName": "AWS::SQS::Queue", "targetModel": {"resourceProperties": {"QueueName": "q"}}}))
    run = cfnrun("invoke", "preCreate", str(queue), "--json", "--no-credentials", cwd=project)
    result = result_of(run)
    assert result["status"] == "FAILED" and result["errorCode"] == "UnsupportedTarget"
    assert not violations_of(run)

    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"targetName": BUCKET, "targetModel": {"resourceProperties": {"BucketName": "x", "Colour": "red"}}}))
    strict = cfnrun("invoke", "preCreate", str(invalid), "--contract", "strict", "--no-credentials", cwd=project)
    assert strict.returncode == 1
    assert "[hook-target-model-valid]" in strict.stdout + strict.stderr
    assert "Additional properties are not allowed ('Colour' was unexpected)" in strict.stdout + strict.stderr


def test_serve_knows_a_hook_call_by_its_invocation_point_and_gives_it_the_contract_budget() -> None:
    from cfnrun.model.budgets import Budgets

    def payload_action(payload: Any) -> Optional[Action]:
        return SeenCall.parse(payload).action

    type_call = {"actionInvocationPoint": "UPDATE_PRE_PROVISION", "requestData": {"targetName": BUCKET}}
    test_event = {"actionInvocationPoint": "DELETE_PRE_PROVISION", "request": {"hookContext": {"targetName": BUCKET}}}
    assert payload_action(type_call) is Action.UPDATE_PRE_PROVISION
    assert payload_action(test_event) is Action.DELETE_PRE_PROVISION
    assert payload_action({"action": "CREATE_PRE_PROVISION"}) is None  # not a HandlerRequest action
    assert Budgets().call(payload_action(type_call), 180).seconds == 30  # the Hooks user guide's limit per hook invocation


def test_a_hook_asked_during_a_change_sets_execution_is_told_the_change_set() -> None:
    # The Hooks user guide's request: changeSetId is the change set that initiated the invocation, null for CreateStack and the like.
    def request(change_set_id: Optional[str], entrypoint: Entrypoint) -> Dict[str, Any]:
        operation = OperationInput(desired={"BucketName": "b"}, target_name=BUCKET, change_set_id=change_set_id)
        return HookOperationRequest(Action.UPDATE_PRE_PROVISION, "Org::Svc::Guard", "us-east-1", "123456789012", entrypoint, operation).payload()

    arn = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/suspend/1"
    assert request(arn, Entrypoint.TYPE)["changeSetId"] == arn
    assert request(arn, Entrypoint.TEST)["request"]["hookContext"]["changeSetId"] == arn
    assert "changeSetId" not in request(None, Entrypoint.TYPE)
