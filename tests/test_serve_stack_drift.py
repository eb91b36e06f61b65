"""Drift detection on serve's local stacks, driven by boto3 and the aws CLI: a note changed and deleted behind the stack's back."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

from botocore import UNSIGNED
from botocore.config import Config

from conftest import ServerProcess, wait_until

NOTE = "Cfnrun::Sample::Note"
FAST = {"Delay": 0.1, "MaxAttempts": 1200}
TEMPLATE = {
    "Parameters": {"Password": {"Type": "String", "NoEcho": True}},
    "Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket"},
        "Note": {
            "Type": NOTE,
            "Properties": {"Title": "drift me", "Priority": 2, "AccessPassword": {"Ref": "Password"}, "Tags": [{"Key": "a", "Value": "1"}]},
        }
    },
}
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "AKIDCFNRUNTEST", "AWS_SECRET_ACCESS_KEY": "cfnrun-test-secret", "AWS_DEFAULT_REGION": "us-east-1"}


def client(server: ServerProcess, service: str) -> Any:
    import boto3

    return boto3.client(service, endpoint_url=server.url, region_name="us-east-1", config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}))


def detected(cloudformation: Any, stack: str) -> Dict[str, Any]:
    """DetectStackDrift, then its status once the detection is over (it answers at once and runs in the background)."""
    detection_id = cloudformation.detect_stack_drift(StackName=stack)["StackDriftDetectionId"]
    found: Dict[str, Any] = {}

    def over() -> bool:
        found.update(cloudformation.describe_stack_drift_detection_status(StackDriftDetectionId=detection_id))
        return found["DetectionStatus"] != "DETECTION_IN_PROGRESS"

    wait_until(over, timeout=60, what="the drift detection to end")
    return found


def test_a_note_changed_then_deleted_behind_the_stacks_back_is_modified_then_deleted(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = serve(sample("note"), "--no-reload", "--virtual-clock", "--moto")
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    cloudformation.create_stack(
        StackName="notes", TemplateBody=json.dumps(TEMPLATE), Parameters=[{"ParameterKey": "Password", "ParameterValue": "hunter2222"}]
    )
    cloudformation.get_waiter("stack_create_complete").wait(StackName="notes", WaiterConfig=FAST)
    note_id = cloudformation.describe_stack_resource(StackName="notes", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    assert cloudformation.describe_stacks(StackName="notes")["Stacks"][0]["DriftInformation"] == {"StackDriftStatus": "NOT_CHECKED"}

    in_sync = detected(cloudformation, "notes")
    assert (in_sync["DetectionStatus"], in_sync["StackDriftStatus"], in_sync["DriftedStackResourceCount"]) == ("DETECTION_COMPLETE", "IN_SYNC", 0)
    [drift] = cloudformation.describe_stack_resource_drifts(StackName="notes")["StackResourceDrifts"]
    assert (drift["LogicalResourceId"], drift["PhysicalResourceId"], drift["StackResourceDriftStatus"]) == ("Note", note_id, "IN_SYNC")
    expected = json.loads(drift["ExpectedProperties"])
    assert expected == {"Title": "drift me", "Priority": 2, "AccessPassword": "*** writeOnly ***", "Tags": [{"Key": "a", "Value": "1"}]}
    assert "hunter2222" not in json.dumps(drift, default=str)
    server.has_printed(r"READ \(stack notes Note\)")  # the READ ran on the note's handler, like any served operation

    # Changed behind the stack's back: Cloud Control on the same serve updates the note's handler's record.
    patch = json.dumps([{"op": "replace", "path": "/Title", "value": "changed elsewhere"}])
    token = cloudcontrol.update_resource(TypeName=NOTE, Identifier=note_id, PatchDocument=patch)["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    modified = detected(cloudformation, "notes")
    assert (modified["StackDriftStatus"], modified["DriftedStackResourceCount"]) == ("DRIFTED", 1)
    [drift] = cloudformation.describe_stack_resource_drifts(StackName="notes", StackResourceDriftStatusFilters=["MODIFIED"])["StackResourceDrifts"]
    assert drift["PropertyDifferences"] == [
        {"PropertyPath": "/Title", "ExpectedValue": "drift me", "ActualValue": "changed elsewhere", "DifferenceType": "NOT_EQUAL"}
    ]
    assert json.loads(drift["ActualProperties"])["Title"] == "changed elsewhere"
    one = cloudformation.detect_stack_resource_drift(StackName="notes", LogicalResourceId="Note")["StackResourceDrift"]
    assert one["StackResourceDriftStatus"] == "MODIFIED" and one["PropertyDifferences"] == drift["PropertyDifferences"]
    bucket = cloudformation.detect_stack_resource_drift(StackName="notes", LogicalResourceId="Bucket")["StackResourceDrift"]
    assert bucket["StackResourceDriftStatus"] == "NOT_CHECKED" and "AWS endpoint" in bucket["DriftStatusReason"]
    stack = cloudformation.describe_stacks(StackName="notes")["Stacks"][0]
    assert stack["DriftInformation"]["StackDriftStatus"] == "DRIFTED" and "LastCheckTimestamp" in stack["DriftInformation"]
    summaries = cloudformation.list_stack_resources(StackName="notes")["StackResourceSummaries"]
    assert {s["LogicalResourceId"]: s["DriftInformation"]["StackResourceDriftStatus"] for s in summaries} == {"Bucket": "NOT_CHECKED", "Note": "MODIFIED"}

    # Deleted behind its back: the READ answers NotFound. The aws CLI asks, as a user would.
    token = cloudcontrol.delete_resource(TypeName=NOTE, Identifier=note_id)["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    aws = shutil.which("aws") or str(Path(sys.executable).parent / "aws")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **DUMMY_CREDENTIALS,
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }

    def cli(*args: str) -> Dict[str, Any]:
        run = subprocess.run(
            [aws, "cloudformation", *args, "--endpoint-url", server.url, "--output", "json"], capture_output=True, text=True, env=env, timeout=120
        )
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    detection_id = cli("detect-stack-drift", "--stack-name", "notes")["StackDriftDetectionId"]
    wait_until(
        lambda: cloudformation.describe_stack_drift_detection_status(StackDriftDetectionId=detection_id)["DetectionStatus"] != "DETECTION_IN_PROGRESS",
        timeout=60,
        what="the drift detection to end",
    )
    [drift] = cli("describe-stack-resource-drifts", "--stack-name", "notes")["StackResourceDrifts"]
    assert drift["StackResourceDriftStatus"] == "DELETED" and "PropertyDifferences" not in drift and "ActualProperties" not in drift
    assert cloudformation.describe_stacks(StackName="notes")["Stacks"][0]["DriftInformation"]["StackDriftStatus"] == "DRIFTED"
