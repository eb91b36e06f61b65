"""AWS::S3::BucketPolicy in local stacks on ``--moto`` (whose CloudFormation completes the type without making it): put, replaced
and removed through moto's S3 API, as cfn submit's upload infrastructure stack needs (``app/stacks/bucket_policies.py``)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.2, "MaxAttempts": 1500}
pytestmark = pytest.mark.timeout(PATIENCE_S * 3)


def _template(sid: str) -> str:
    bucket_arn = {"Fn::Sub": "arn:aws:s3:::${Bucket}/*"}
    statements = [
        {"Sid": sid, "Effect": "Allow", "Principal": {"AWS": {"Ref": "AWS::AccountId"}}, "Action": "s3:GetObject", "Resource": bucket_arn},
        {"Sid": "DenyInsecure", "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": bucket_arn,
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]
    return json.dumps({"Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain"},  # kept: it shows its policy went with the stack
        "Policy": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "Bucket"}, "PolicyDocument": {"Version": "2012-10-17", "Statement": statements}}},
    }, "Outputs": {"PolicyRef": {"Value": {"Ref": "Policy"}}}})


def _policy(s3: Any, bucket: str) -> Dict[str, Any]:
    return dict(json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]))


def test_a_bucket_policy_is_put_updated_and_removed_on_the_endpoints_s3(tmp_path: Path) -> None:
    import boto3

    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    server = ServerProcess(project, "--no-reload", "--moto")
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        s3 = boto3.client("s3", endpoint_url=server.moto_url(), **CREDENTIALS)
        cloudformation.create_stack(StackName="policed", TemplateBody=_template("ReadByOwner"))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="policed", WaiterConfig=FAST)
        resources = {r["LogicalResourceId"]: r for r in cloudformation.describe_stack_resources(StackName="policed")["StackResources"]}
        bucket = resources["Bucket"]["PhysicalResourceId"]
        assert resources["Policy"]["PhysicalResourceId"] == bucket  # its bucket's name, the type's primaryIdentifier
        [output] = cloudformation.describe_stacks(StackName="policed")["Stacks"][0]["Outputs"]
        assert output["OutputValue"] == bucket
        # the conditional Deny moto would enforce on every call is left out, and the event says so; the rest is on the bucket
        assert [s["Sid"] for s in _policy(s3, bucket)["Statement"]] == ["ReadByOwner"]
        events = cloudformation.describe_stack_events(StackName="policed")["StackEvents"]
        assert any("(DenyInsecure)" in (e.get("ResourceStatusReason") or "") for e in events if e["LogicalResourceId"] == "Policy"), events
        s3.put_object(Bucket=bucket, Key="still-usable", Body=b"x")  # moto does not refuse calls to the bucket

        cloudformation.update_stack(StackName="policed", TemplateBody=_template("ReadByOwnerAgain"))
        cloudformation.get_waiter("stack_update_complete").wait(StackName="policed", WaiterConfig=FAST)
        assert [s["Sid"] for s in _policy(s3, bucket)["Statement"]] == ["ReadByOwnerAgain"]

        s3.delete_object(Bucket=bucket, Key="still-usable")
        cloudformation.delete_stack(StackName="policed")
        cloudformation.get_waiter("stack_delete_complete").wait(StackName="policed", WaiterConfig=FAST)
        with pytest.raises(ClientError, match="NoSuchBucketPolicy"):  # the policy went with the stack; its bucket was retained
            s3.get_bucket_policy(Bucket=bucket)
    finally:
        server.stop(timeout=PATIENCE_S)
