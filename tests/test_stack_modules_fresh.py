"""A MODULE project fresh from ``cfn init --artifact-type MODULE`` (and ``cfn generate``), as a module author starts one:
validated, served with ``--provider``, used twice in one template (once inside another module) beside a served type
and an AWS::S3::Bucket, created with boto3, updated and deleted with the aws CLI."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import LOCAL_STATE, SAMPLES, cfnrun
from stack_waits import settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FRESH = "Org::Fresh::Bucket::MODULE"
PAIR = "Org::Fresh::Pair::MODULE"

TEMPLATE = """\
Resources:
  Logs:
    Type: Org::Fresh::Bucket::MODULE
    Properties:
      BucketName: !Sub "logs-${AWS::StackName}"
  Pair:
    Type: Org::Fresh::Pair::MODULE
    Properties:
      Prefix: !Sub "pair-${AWS::StackName}"
  Plain:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub "plain-${AWS::StackName}"
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Ref Logs.S3Bucket
"""


def cfn(folder: Path, *args: str) -> None:
    run = subprocess.run([sys.executable, "-c", "import sys; from rpdk.core.cli import main; sys.exit(main())", *args],
                         cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def fresh_module(folder: Path, type_name: str) -> Path:
    folder.mkdir()
    cfn(folder, "init", "--type-name", type_name, "--artifact-type", "MODULE")
    cfn(folder, "generate")
    return folder


def test_a_fresh_cfn_init_module_is_validated_served_nested_and_used_beside_a_type_and_a_bucket(serve, tmp_path: Path) -> None:
    import boto3

    fresh = fresh_module(tmp_path / "fresh", FRESH)
    assert json.loads((fresh / "fragments" / "sample.json").read_text())["Resources"]["S3Bucket"]["Type"] == "AWS::S3::Bucket"
    pair = fresh_module(tmp_path / "pair", PAIR)  # a second module whose fragment uses the first: a module in a module
    (pair / "fragments" / "sample.json").write_text(json.dumps({
        "Parameters": {"Prefix": {"Type": "String"}},
        "Resources": {"Inner": {"Type": FRESH, "Properties": {"BucketName": {"Fn::Sub": "${Prefix}-inner"}}}},
    }))
    validated = cfnrun("validate", str(fresh))
    assert validated.returncode == 0 and "0 error(s)" in validated.stdout, validated.stdout + validated.stderr

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = serve(tmp_path / "note", "--no-reload", "--moto", "--provider", str(fresh), "--provider", str(pair))
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="fresh", TemplateBody=TEMPLATE)
    settled(cloudformation, "fresh", "stack_create_complete")
    resources = {r["LogicalResourceId"]: r for r in cloudformation.describe_stack_resources(StackName="fresh")["StackResources"]}
    assert set(resources) == {"LogsS3Bucket", "PairInnerS3Bucket", "Plain", "Note"}
    assert resources["LogsS3Bucket"]["ModuleInfo"] == {"TypeHierarchy": FRESH, "LogicalIdHierarchy": "Logs"}
    assert resources["PairInnerS3Bucket"]["ModuleInfo"] == {"TypeHierarchy": f"{PAIR}/{FRESH}", "LogicalIdHierarchy": "Pair/Inner"}
    assert resources["PairInnerS3Bucket"]["PhysicalResourceId"] == "pair-fresh-inner"
    moto = re.search(r" at (http://[0-9.]+:[0-9]+)", server.has_printed(r"moto server .* at http://"))
    assert moto is not None
    s3 = boto3.client("s3", endpoint_url=moto.group(1), **CREDENTIALS)
    assert {"logs-fresh", "pair-fresh-inner", "plain-fresh"} <= {b["Name"] for b in s3.list_buckets()["Buckets"]}  # on the endpoint

    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    assert aws, "the aws CLI is a test dependency"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

    def aws_cli(*args: str) -> str:
        run = subprocess.run([aws, "cloudformation", *args, "--endpoint-url", server.url], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stdout

    updated = tmp_path / "updated.yaml"
    updated.write_text(TEMPLATE.replace("Title: !Ref Logs.S3Bucket", "Title: !Ref PairInnerS3Bucket"), encoding="utf-8")
    aws_cli("update-stack", "--stack-name", "fresh", "--template-body", f"file://{updated}")
    settled(cloudformation, "fresh", "stack_update_complete")
    note = cloudformation.describe_stack_resource(StackName="fresh", LogicalResourceId="Note")["StackResourceDetail"]
    assert note["ResourceStatus"] == "UPDATE_COMPLETE" and "ModuleInfo" not in note
    aws_cli("delete-stack", "--stack-name", "fresh")
    settled(cloudformation, "fresh", "stack_delete_complete")
