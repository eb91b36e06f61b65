"""What a stack's operations were is kept across a ``--state`` restart (issue #29): a real ``cfnrun serve --moto``
stopped and started again on the same state folder answers DescribeStacks' LastOperations, DescribeEvents (the
OperationIds, the VALIDATION_ERROR events of an operation the pre-deployment validation stopped) and an SSM-typed
parameter's ResolvedValue as it did before — the ResolvedValue without asking Systems Manager (the embedded moto
is a new, empty one after the restart)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

from conftest import LOCAL_STATE, SAMPLES, ServerProcess
from stack_waits import settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
NOTE = "Cfnrun::Sample::Note"


def _template(priority: int) -> str:
    return json.dumps({
        "Parameters": {"Greeting": {"Type": "AWS::SSM::Parameter::Value<String>"}},
        "Resources": {"Note": {"Type": NOTE, "Properties": {"Title": {"Ref": "Greeting"}, "Priority": priority}}},
    })


def _serve(project: Path, state: Path) -> Tuple[ServerProcess, Any]:
    import boto3

    server = ServerProcess(project, "--no-reload", "--moto", "--virtual-clock", "--state", str(state))
    return server, boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def _seen(cfn: Any, stack: str) -> Dict[str, Any]:
    """What the stack's operations look like to a caller."""
    described = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    events: List[Dict[str, Any]] = []
    for page in cfn.get_paginator("describe_events").paginate(StackName=stack):
        events += page["OperationEvents"]
    return {
        "LastOperations": described.get("LastOperations"),
        "Parameters": described["Parameters"],
        "Events": sorted(
            (e["EventId"], e["OperationId"], e["OperationType"], e["OperationStatus"], e["EventType"], e.get("ValidationName", ""))
            for e in events
        ),
        "StackEventOperations": [e.get("OperationId") for e in cfn.describe_stack_events(StackName=stack)["StackEvents"]],
    }


def test_operation_ids_their_events_and_resolved_values_are_kept_across_a_restart(tmp_path: Path) -> None:
    import boto3

    project = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    state = tmp_path / "kept"
    first, cfn = _serve(project, state)
    try:
        announced = re.search(r"at (http://[0-9.]+:[0-9]+)", first.has_printed(r"moto server \(AWS stand-in\) at"))
        assert announced, first.output
        ssm = boto3.client("ssm", endpoint_url=announced.group(1), **CREDENTIALS)
        ssm.put_parameter(Name="/kept/greeting", Value="hello", Type="String")
        given = [{"ParameterKey": "Greeting", "ParameterValue": "/kept/greeting"}]
        created = cfn.create_stack(StackName="kept", TemplateBody=_template(1), Parameters=given)
        settled(cfn, "kept", "stack_create_complete")
        refused = cfn.update_stack(StackName="kept", TemplateBody=_template(9), Parameters=given)  # Priority 9: the schema's maximum is 5
        assert cfn.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"  # stopped before any resource
        before = _seen(cfn, "kept")
    finally:
        first.stop()
    operations = [o["OperationId"] for o in before["LastOperations"]]
    assert set(operations) == {created["OperationId"], refused["OperationId"]}
    assert any(e[4] == "VALIDATION_ERROR" and e[1] == refused["OperationId"] for e in before["Events"])
    assert before["Parameters"] == [{"ParameterKey": "Greeting", "ParameterValue": "/kept/greeting", "ResolvedValue": "hello"}]

    second, cfn = _serve(project, state)
    try:
        assert _seen(cfn, "kept") == before
    finally:
        second.stop()

