"""Local stacks on ``cfnrun serve``: whole templates through the CloudFormation API, with real clients.

One serve (per test module and xdist worker) serves the three samples' types, the custom-resource
functions and an embedded moto; each test works on its own stack names, so the tests stay
independent of each other's order.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError, WaiterError

from kept_state import kept_text
from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess, aws_cli_polling_fast, cfnrun

TEMPLATE = (SAMPLES / "stack" / "template.yaml").read_text(encoding="utf-8")
FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


class Stacks:
    """The module's serve: its address, the moto endpoint behind it, and clients for both."""

    def __init__(self, server: ServerProcess, folder: Path) -> None:
        import boto3

        self.server = server
        self.folder = folder
        announced = re.search(r"at (http://[0-9.]+:[0-9]+)", server.has_printed(r"moto server \(AWS stand-in\) at"))
        assert announced, server.output
        self.moto = announced.group(1)
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.cloudcontrol = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)
        self.s3 = boto3.client("s3", endpoint_url=self.moto, **CREDENTIALS)
        self.ssm = boto3.client("ssm", endpoint_url=self.moto, **CREDENTIALS)

    def events(self, stack: str) -> List[Dict[str, Any]]:
        pages = self.cloudformation.get_paginator("describe_stack_events").paginate(StackName=stack)
        return list(reversed([e for page in pages for e in page["StackEvents"]]))

    def statuses(self, stack: str, logical_id: str) -> List[str]:
        return [e["ResourceStatus"] for e in self.events(stack) if e["LogicalResourceId"] == logical_id]

    def outputs(self, stack: str) -> Dict[str, str]:
        described = self.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
        return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}

    def wait(self, waiter: str, **arguments: Any) -> None:
        self.cloudformation.get_waiter(waiter).wait(WaiterConfig=FAST, **arguments)


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stacks]:
    folder = tmp_path_factory.mktemp("stacks")
    for name in ("note", "cluster", "parameter"):
        shutil.copytree(SAMPLES / name, folder / name, ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "custom_resource", folder / "custom_resource")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock",
            "--provider", "note", "--provider", "cluster", "--provider", "parameter",
            "--functions", "custom_resource/template.yaml",
        ],
        cwd=str(folder), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1", "CFNRUN_HISTORY": "on"},
    )
    server = ServerProcess(folder, process=process)
    try:
        yield Stacks(server, folder)
    finally:
        server.stop()


def _parameters(**values: str) -> List[Dict[str, Any]]:
    return [{"ParameterKey": key, "ParameterValue": value} for key, value in values.items()]


def _previous(*keys: str) -> List[Dict[str, Any]]:
    return [{"ParameterKey": key, "UsePreviousValue": True} for key in keys]


def test_a_stack_of_three_user_types_and_a_bucket_is_created_updated_replaced_and_deleted(stacks: Stacks) -> None:
    cfn = stacks.cloudformation
    cfn.create_stack(StackName="life", TemplateBody=TEMPLATE, Parameters=_parameters(NodeCount="1", NotePassword="hunter2-secret"))
    stacks.wait("stack_create_complete", StackName="life")
    outputs = stacks.outputs("life")
    note_id = outputs["NoteId"]
    assert re.fullmatch(r"note-[0-9a-f]{12}", note_id)
    assert outputs["ClusterEndpoint"].endswith(".cluster.local:7000")  # GetAtt of a readOnly property, after stabilizing
    assert outputs["BucketArn"] == "arn:aws:s3:::cfnrun-life-dev"
    # The AWS resource and the handlers' own AWS calls are in one world: the bucket is on moto, and so is the
    # parameter the SSM-writing type put there, holding the note's id (GetAtt of one user type into another).
    assert "cfnrun-life-dev" in [b["Name"] for b in stacks.s3.list_buckets()["Buckets"]]
    assert stacks.ssm.get_parameter(Name="/life/note-id")["Parameter"]["Value"] == note_id
    described = cfn.describe_stacks(StackName="life")["Stacks"][0]
    assert {p["ParameterKey"]: p["ParameterValue"] for p in described["Parameters"]}["NotePassword"] == "****"
    assert not any("hunter2-secret" in json.dumps(e, default=str) for e in stacks.events("life"))
    assert [e["Name"] for e in cfn.list_exports()["Exports"]] == ["life-note-id"]

    # In place: only the cluster changes, and its handler gets the previous state.
    cfn.update_stack(StackName="life", UsePreviousTemplate=True, Parameters=_parameters(NodeCount="2") + _previous("Env", "Folder", "NotePassword"))
    stacks.wait("stack_update_complete", StackName="life")
    update = stacks.events("life")
    since = max(i for i, e in enumerate(update) if e["ResourceStatus"] == "UPDATE_IN_PROGRESS" and e["LogicalResourceId"] == "life")
    touched = {e["LogicalResourceId"] for e in update[since:]} - {"life"}
    assert touched == {"Cluster"}

    # A createOnly change through a change set: the note is replaced, its dependant follows, the old note goes in cleanup.
    cfn.create_change_set(
        StackName="life", ChangeSetName="move", UsePreviousTemplate=True,
        Parameters=_parameters(Folder="archive") + _previous("Env", "NodeCount", "NotePassword"),
    )
    stacks.wait("change_set_create_complete", StackName="life", ChangeSetName="move")
    changes = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in cfn.describe_change_set(StackName="life", ChangeSetName="move")["Changes"]}
    assert changes["Note"]["Replacement"] == "True"
    assert changes["Note"]["Details"][0]["Target"] == {"Attribute": "Properties", "Name": "Folder", "RequiresRecreation": "Always"}
    assert changes["NoteSetting"]["Details"][0]["Evaluation"] == "Dynamic"
    cfn.execute_change_set(StackName="life", ChangeSetName="move")
    stacks.wait("stack_update_complete", StackName="life")
    new_id = stacks.outputs("life")["NoteId"]
    assert new_id != note_id
    assert stacks.ssm.get_parameter(Name="/life/note-id")["Parameter"]["Value"] == new_id
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=note_id)
    assert "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS" in stacks.statuses("life", "life")

    cfn.delete_stack(StackName="life")
    stacks.wait("stack_delete_complete", StackName="life")
    assert "cfnrun-life-dev" not in [b["Name"] for b in stacks.s3.list_buckets()["Buckets"]]
    with pytest.raises(ClientError, match="ParameterNotFound"):
        stacks.ssm.get_parameter(Name="/life/note-id")
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=new_id)
    assert cfn.list_exports()["Exports"] == []
    # The stack operations' handler calls are in the providers' history, as their own source.
    history = cfnrun("history", cwd=stacks.folder / "note")
    assert history.returncode == 0, history.stderr
    assert "stack" in history.stdout


def test_a_resource_failing_schema_validation_rolls_back_the_one_created_before_it(stacks: Stacks) -> None:
    # The value comes from a parameter: lint cannot see it, so the properties check before the handler catches it (with
    # DisableValidation: the pre-deployment validation would stop the stack before First, test_pre_deployment_validation.py).
    template = {
        "Parameters": {"Priority": {"Type": "Number"}},
        "Resources": {
            "First": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "first"}},
            "Second": {"Type": "Cfnrun::Sample::Note", "DependsOn": "First", "Properties": {"Title": "second", "Priority": {"Ref": "Priority"}}},
        },
    }
    stacks.cloudformation.create_stack(
        StackName="invalid", TemplateBody=json.dumps(template), Parameters=_parameters(Priority="9"), DisableValidation=True
    )
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
        stacks.wait("stack_create_complete", StackName="invalid")
    described = stacks.cloudformation.describe_stacks(StackName="invalid")["Stacks"][0]
    assert described["StackStatus"] == "ROLLBACK_COMPLETE"
    events = stacks.events("invalid")
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed[0]["LogicalResourceId"] == "Second"
    assert failed[0]["ResourceStatusReason"].startswith("Properties validation failed for resource Second with message:")
    assert "#/Priority" in failed[0]["ResourceStatusReason"]
    first = [e for e in events if e["LogicalResourceId"] == "First"]
    assert [e["ResourceStatus"] for e in first] == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=first[2]["PhysicalResourceId"])


def test_an_attribute_a_resource_lacks_fails_the_resource_that_reads_it_not_the_one_it_names(stacks: Stacks) -> None:
    # The bucket (on moto) and the note are made, then deleted by the rollback; what reads their attribute Nope fails, in
    # the service's words, an AWS type's as one of your types'.
    reading = {
        "AWS::S3::Bucket": ("Bucket", "Queue", {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::GetAtt": ["Bucket", "Nope"]}}}),
        "Cfnrun::Sample::Note": ("Note", "Reader", {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Fn::GetAtt": ["Note", "Nope"]}}}),
    }
    for type_name, (named, reader, declared) in reading.items():
        stack = f"lacking-{named.lower()}"
        made = {"Type": type_name, "Properties": {"Title": "read"}} if type_name.startswith("Cfnrun") else {"Type": type_name}
        template = {"Resources": {named: made, reader: declared}}
        stacks.cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps(template), DisableValidation=True)
        with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
            stacks.wait("stack_create_complete", StackName=stack)
        failed = [(e["LogicalResourceId"], e.get("ResourceStatusReason")) for e in stacks.events(stack) if e["ResourceStatus"] == "CREATE_FAILED"]
        where = next(iter(declared["Properties"]))
        assert failed == [(reader, f"Requested attribute Nope does not exist in schema for {type_name} (at Resources.{reader}.Properties.{where})")]
        assert stacks.statuses(stack, named)[-3:] == ["CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]


def test_the_cdk_metadata_every_cdk_stack_holds_is_created_updated_and_deleted_though_no_endpoint_has_it(stacks: Stacks) -> None:
    # AWS::CDK::Metadata is the service's own record (moto's CloudFormation makes nothing for it): before, every stack the
    # CDK synthesizes failed its CDKMetadata on moto and rolled back.
    template = {
        "Parameters": {"Analytics": {"Type": "String"}},
        "Conditions": {"Reported": {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}},
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": {"Ref": "Analytics"}}, "Condition": "Reported"},
        },
    }
    body = json.dumps(template)
    stack_id = stacks.cloudformation.create_stack(
        StackName="cdk-app", TemplateBody=body, Parameters=[{"ParameterKey": "Analytics", "ParameterValue": "v2:deflate64:A"}]
    )["StackId"]
    stacks.wait("stack_create_complete", StackName="cdk-app")
    created = stacks.cloudformation.describe_stack_resource(StackName="cdk-app", LogicalResourceId="CDKMetadata")["StackResourceDetail"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", created["PhysicalResourceId"])
    stacks.cloudformation.update_stack(StackName="cdk-app", TemplateBody=body, Parameters=[{"ParameterKey": "Analytics", "ParameterValue": "v2:deflate64:B"}])
    stacks.wait("stack_update_complete", StackName="cdk-app")
    assert stacks.statuses("cdk-app", "CDKMetadata") == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    updated = stacks.cloudformation.describe_stack_resource(StackName="cdk-app", LogicalResourceId="CDKMetadata")["StackResourceDetail"]
    assert updated["PhysicalResourceId"] == created["PhysicalResourceId"]
    stacks.cloudformation.delete_stack(StackName="cdk-app")
    stacks.wait("stack_delete_complete", StackName="cdk-app")
    assert stacks.statuses(stack_id, "CDKMetadata")[-2:] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]


def test_an_update_moto_cannot_make_fails_says_so_and_rolls_back_to_the_resource_as_it_is(stacks: Stacks) -> None:
    # moto's CloudFormation has no update for AWS::Logs::LogGroup: its stack's update leaves no resource. cfnrun took that
    # for a type moto lacks, deleted the endpoint's stack, and the rollback failed on it (UPDATE_ROLLBACK_FAILED); with an
    # output reading the group's Arn, moto's stack broke on every later call, the stack's delete too
    import boto3

    template = json.dumps({
        "Parameters": {"Days": {"Type": "Number"}},
        "Resources": {"Group": {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": {"Ref": "Days"}}}},
        "Outputs": {"Name": {"Value": {"Ref": "Group"}}, "Arn": {"Value": {"Fn::GetAtt": ["Group", "Arn"]}}},
    })
    stacks.cloudformation.create_stack(StackName="retention", TemplateBody=template, Parameters=[{"ParameterKey": "Days", "ParameterValue": "1"}])
    stacks.wait("stack_create_complete", StackName="retention")
    before = stacks.outputs("retention")
    stacks.cloudformation.update_stack(StackName="retention", TemplateBody=template, Parameters=[{"ParameterKey": "Days", "ParameterValue": "3"}])
    with pytest.raises(WaiterError, match="UPDATE_ROLLBACK_COMPLETE"):
        stacks.wait("stack_update_complete", StackName="retention")
    failed = [e.get("ResourceStatusReason", "") for e in stacks.events("retention") if e["ResourceStatus"] == "UPDATE_FAILED"]
    assert len(failed) == 1 and "does not update AWS::Logs::LogGroup in place" in failed[0], failed
    assert stacks.statuses("retention", "Group")[-2:] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]  # the rollback
    assert stacks.outputs("retention") == before
    logs = boto3.client("logs", endpoint_url=stacks.moto, **CREDENTIALS)
    assert [g["retentionInDays"] for g in logs.describe_log_groups(logGroupNamePrefix=before["Name"])["logGroups"]] == [1]
    stacks.cloudformation.delete_stack(StackName="retention")
    stacks.wait("stack_delete_complete", StackName="retention")


def test_a_table_is_updated_in_place_through_dynamodb_and_deleted_with_its_stack(stacks: Stacks) -> None:
    # sam init's web app: its table's ProvisionedThroughput changed. moto's CloudFormation has no update for tables: the
    # update failed, and the table, dropped from moto's stack, was left behind when the stack was deleted
    import boto3

    template = {
        "Parameters": {"Reads": {"Type": "Number"}},
        "Resources": {"Table": {"Type": "AWS::DynamoDB::Table", "Properties": {
            "AttributeDefinitions": [{"AttributeName": "Id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "Id", "KeyType": "HASH"}],
            "ProvisionedThroughput": {"ReadCapacityUnits": {"Ref": "Reads"}, "WriteCapacityUnits": 1},
            "TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": "true"},
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        }}},
        "Outputs": {"Name": {"Value": {"Ref": "Table"}}, "Arn": {"Value": {"Fn::GetAtt": ["Table", "Arn"]}}},
    }
    reads = [{"ParameterKey": "Reads", "ParameterValue": "1"}]
    stacks.cloudformation.create_stack(StackName="capacity", TemplateBody=json.dumps(template), Parameters=reads)
    stacks.wait("stack_create_complete", StackName="capacity")
    before = stacks.outputs("capacity")
    dynamodb = boto3.client("dynamodb", endpoint_url=stacks.moto, **CREDENTIALS)
    # moto's CloudFormation makes the table without them: put with their own calls once it is made
    assert dynamodb.describe_time_to_live(TableName=before["Name"])["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    backups = dynamodb.describe_continuous_backups(TableName=before["Name"])["ContinuousBackupsDescription"]
    assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"

    template["Resources"]["Table"]["Properties"]["Tags"] = [{"Key": "team", "Value": "web"}]
    stacks.cloudformation.update_stack(StackName="capacity", TemplateBody=json.dumps(template), Parameters=[{"ParameterKey": "Reads", "ParameterValue": "2"}])
    stacks.wait("stack_update_complete", StackName="capacity")
    table = dynamodb.describe_table(TableName=before["Name"])["Table"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert dynamodb.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == [{"Key": "team", "Value": "web"}]
    assert stacks.outputs("capacity") == before

    # a change cfnrun cannot make there fails, naming it, and the rollback leaves the table as it was
    template["Resources"]["Table"]["Properties"]["GlobalSecondaryIndexes"] = [{
        "IndexName": "ById", "KeySchema": [{"AttributeName": "Id", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"},
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]
    stacks.cloudformation.update_stack(StackName="capacity", TemplateBody=json.dumps(template), Parameters=[{"ParameterKey": "Reads", "ParameterValue": "3"}])
    with pytest.raises(WaiterError, match="UPDATE_ROLLBACK_COMPLETE"):
        stacks.wait("stack_update_complete", StackName="capacity")
    failed = [e.get("ResourceStatusReason", "") for e in stacks.events("capacity") if e["ResourceStatus"] == "UPDATE_FAILED"]
    assert len(failed) == 1 and "does not change GlobalSecondaryIndexes in place" in failed[0], failed
    assert dynamodb.describe_table(TableName=before["Name"])["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 2

    stacks.cloudformation.delete_stack(StackName="capacity")
    stacks.wait("stack_delete_complete", StackName="capacity")
    assert before["Name"] not in dynamodb.list_tables()["TableNames"]


def test_a_parameter_string_for_an_integer_property_reaches_moto_as_the_integer_the_service_takes(stacks: Stacks) -> None:
    # awslabs' VPC flow logs sample: MaxAggregationInterval is a String parameter ("600"); the service takes it for the
    # schema's integer, moto compared it with 60 and 600 and refused it ("Invalid Flow Log Max Aggregation Interval")
    template = json.dumps({
        "Parameters": {"Interval": {"Type": "String", "AllowedValues": ["60", "600"]}},
        "Resources": {
            "Network": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
            "Logs": {"Type": "AWS::S3::Bucket"},
            "FlowLog": {"Type": "AWS::EC2::FlowLog", "Properties": {
                "ResourceId": {"Ref": "Network"}, "ResourceType": "VPC", "TrafficType": "ALL", "LogDestinationType": "s3",
                "LogDestination": {"Fn::GetAtt": ["Logs", "Arn"]}, "MaxAggregationInterval": {"Ref": "Interval"},
            }},
        },
    })
    stacks.cloudformation.create_stack(StackName="flow-logs", TemplateBody=template, Parameters=[{"ParameterKey": "Interval", "ParameterValue": "600"}])
    stacks.wait("stack_create_complete", StackName="flow-logs")
    stacks.cloudformation.delete_stack(StackName="flow-logs")
    stacks.wait("stack_delete_complete", StackName="flow-logs")


def test_describe_stacks_shows_the_notification_arns_rollback_configuration_role_and_timeout_a_stack_was_given(stacks: Stacks) -> None:
    cloudformation = stacks.cloudformation
    template = {"Parameters": {"Title": {"Type": "String"}}, "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "Title"}}}}}
    topic, role = "arn:aws:sns:us-east-1:123456789012:stack-news", "arn:aws:iam::123456789012:role/deployer"
    rollback = {"RollbackTriggers": [{"Arn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:errors", "Type": "AWS::CloudWatch::Alarm"}],
                "MonitoringTimeInMinutes": 5}
    cloudformation.create_stack(StackName="told", TemplateBody=json.dumps(template), Parameters=_parameters(Title="one"),
                                NotificationARNs=[topic], RollbackConfiguration=rollback, RoleARN=role, TimeoutInMinutes=30)
    cloudformation.create_stack(StackName="untold", TemplateBody=json.dumps(template), Parameters=_parameters(Title="one"))
    for name in ("told", "untold"):
        stacks.wait("stack_create_complete", StackName=name)

    def settings(name: str) -> Dict[str, Any]:
        stack = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
        return {key: stack.get(key) for key in ("NotificationARNs", "RollbackConfiguration", "RoleARN", "TimeoutInMinutes")}

    given = {"NotificationARNs": [topic], "RollbackConfiguration": rollback, "RoleARN": role, "TimeoutInMinutes": 30}
    assert settings("told") == given
    assert settings("untold") == {"NotificationARNs": [], "RollbackConfiguration": {}, "RoleARN": None, "TimeoutInMinutes": None}
    cloudformation.update_stack(StackName="told", UsePreviousTemplate=True, Parameters=_parameters(Title="two"))  # none given: all kept
    stacks.wait("stack_update_complete", StackName="told")
    assert settings("told") == given
    cloudformation.update_stack(StackName="told", UsePreviousTemplate=True, Parameters=_parameters(Title="three"), NotificationARNs=[])
    stacks.wait("stack_update_complete", StackName="told")
    assert settings("told") == {**given, "NotificationARNs": []}  # an empty list removes them
    cloudformation.create_change_set(StackName="untold", ChangeSetName="told-now", UsePreviousTemplate=True,
                                     Parameters=_parameters(Title="two"), NotificationARNs=[topic])
    stacks.wait("change_set_create_complete", StackName="untold", ChangeSetName="told-now")
    assert cloudformation.describe_change_set(StackName="untold", ChangeSetName="told-now")["NotificationARNs"] == [topic]
    cloudformation.execute_change_set(StackName="untold", ChangeSetName="told-now")
    stacks.wait("stack_update_complete", StackName="untold")
    assert settings("untold")["NotificationARNs"] == [topic]
    for name in ("told", "untold"):
        cloudformation.delete_stack(StackName=name)


def test_the_aws_cli_deploys_updates_replaces_and_deletes_a_stack(stacks: Stacks, tmp_path: Path) -> None:
    """``aws cloudformation deploy`` as users type it, its waiters looking every 0.1 s instead of its fixed 5 s
    and 30 s (tests/aws_cli_plugin). The ``wait`` commands after, started once the operation is done, answer at
    their first poll."""
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    assert aws, "the aws CLI is a test dependency"
    template = tmp_path / "stack.yaml"
    template.write_text(TEMPLATE, encoding="utf-8")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           **aws_cli_polling_fast(tmp_path)}

    def aws_cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([aws, "cloudformation", *args, "--endpoint-url", stacks.server.url], env=env, capture_output=True, text=True, timeout=120)

    deployed = aws_cli("deploy", "--stack-name", "clistack", "--template-file", str(template), "--parameter-overrides", "Env=prod")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert "Successfully created/updated stack - clistack" in deployed.stdout
    shown = aws_cli("describe-stacks", "--stack-name", "clistack")
    stack = json.loads(shown.stdout)["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    resources = json.loads(aws_cli("list-stack-resources", "--stack-name", "clistack").stdout)["StackResourceSummaries"]
    assert sorted(r["LogicalResourceId"] for r in resources) == ["Bucket", "Cluster", "Note", "NoteSetting"]
    # Env=prod takes the If branches: three nodes, priority 5.
    cluster = next(r for r in resources if r["LogicalResourceId"] == "Cluster")
    model = json.loads(stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Cluster", Identifier=cluster["PhysicalResourceId"])["ResourceDescription"]["Properties"])
    assert model["NodeCount"] == 3
    unchanged = aws_cli(
        "deploy", "--stack-name", "clistack", "--template-file", str(template), "--parameter-overrides", "Env=prod", "--no-fail-on-empty-changeset"
    )
    assert unchanged.returncode == 0 and "No changes to deploy" in unchanged.stdout + unchanged.stderr, unchanged.stdout + unchanged.stderr

    def succeeded(*args: str) -> Any:
        done = aws_cli(*args)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
        return json.loads(done.stdout) if done.stdout.strip() else None

    # In place: Env=dev takes the other If branches; the cluster keeps its id and gets one node.
    succeeded("update-stack", "--stack-name", "clistack", "--use-previous-template", "--parameters", "ParameterKey=Env,ParameterValue=dev")
    succeeded("wait", "stack-update-complete", "--stack-name", "clistack")
    model = json.loads(stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Cluster", Identifier=cluster["PhysicalResourceId"])["ResourceDescription"]["Properties"])
    assert model["NodeCount"] == 1
    # A createOnly change through a change set, all by the CLI: the note is replaced.
    note_before = stacks.outputs("clistack")["NoteId"]
    succeeded(
        "create-change-set", "--stack-name", "clistack", "--change-set-name", "move", "--use-previous-template",
        "--parameters", "ParameterKey=Env,UsePreviousValue=true", "ParameterKey=Folder,ParameterValue=archive",
    )
    succeeded("wait", "change-set-create-complete", "--stack-name", "clistack", "--change-set-name", "move")
    changes = succeeded("describe-change-set", "--stack-name", "clistack", "--change-set-name", "move")["Changes"]
    assert {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"].get("Replacement") for c in changes}["Note"] == "True"
    succeeded("execute-change-set", "--stack-name", "clistack", "--change-set-name", "move")
    succeeded("wait", "stack-update-complete", "--stack-name", "clistack")
    assert stacks.outputs("clistack")["NoteId"] != note_before
    assert aws_cli("delete-stack", "--stack-name", "clistack").returncode == 0
    waited = aws_cli("wait", "stack-delete-complete", "--stack-name", "clistack")
    assert waited.returncode == 0, waited.stderr


def test_a_custom_resource_answers_on_its_response_url(stacks: Stacks) -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:GreeterFunction"
    template = {
        "Parameters": {"Times": {"Type": "Number", "Default": "2"}},
        "Resources": {"Greeting": {"Type": "Custom::Greeting", "Properties": {"ServiceToken": arn, "Name": "world", "Times": {"Ref": "Times"}}}},
        "Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Greeting", "Greeting"]}}, "Old": {"Value": {"Fn::GetAtt": ["Greeting", "Old"]}}},
    }
    cfn = stacks.cloudformation
    cfn.create_stack(StackName="custom", TemplateBody=json.dumps(template))
    stacks.wait("stack_create_complete", StackName="custom")
    assert stacks.outputs("custom")["Greeting"] == "hello, world (x2)"
    cfn.update_stack(StackName="custom", TemplateBody=json.dumps(template), Parameters=_parameters(Times="3"))
    stacks.wait("stack_update_complete", StackName="custom")
    assert stacks.outputs("custom")["Greeting"] == "hello, world (x3)"
    # An update answered with a new PhysicalResourceId: the old resource gets its Delete in the cleanup phase.
    renamed = json.loads(json.dumps(template))
    renamed["Resources"]["Greeting"]["Properties"]["Name"] = "moon"
    cfn.update_stack(StackName="custom", TemplateBody=json.dumps(renamed), Parameters=_parameters(Times="3"))
    stacks.wait("stack_update_complete", StackName="custom")
    events = stacks.events("custom")
    cleanup = max(i for i, e in enumerate(events) if e["ResourceStatus"] == "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
    assert [(e["PhysicalResourceId"], e["ResourceStatus"]) for e in events[cleanup + 1:] if e["LogicalResourceId"] == "Greeting"] == [
        ("greeting-world", "DELETE_IN_PROGRESS"), ("greeting-world", "DELETE_COMPLETE")
    ]
    assert cfn.describe_stack_resource(StackName="custom", LogicalResourceId="Greeting")["StackResourceDetail"]["PhysicalResourceId"] == "greeting-moon"
    # ... as the service does it: the function got an Update (its old properties beside), not a Create for a new resource
    assert stacks.server.has_printed(r'Update Greeting: .*"Name": "moon"')
    assert [e["ResourceStatus"] for e in events[:cleanup] if e["LogicalResourceId"] == "Greeting"][-2:] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    assert json.loads(stacks.outputs("custom")["Old"])["Name"] == "world"
    template = renamed
    cfn.delete_stack(StackName="custom")
    stacks.wait("stack_delete_complete", StackName="custom")
    assert stacks.server.has_printed(r"Delete Greeting")


def test_a_custom_resource_that_fails_or_never_answers_fails_its_stack(stacks: Stacks) -> None:
    refused = {"Resources": {"Greeting": {"Type": "Custom::Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "refuse"}}}}
    silent = {"Resources": {"Quiet": {"Type": "AWS::CloudFormation::CustomResource", "Properties": {"ServiceToken": "SilentFunction"}}}}
    cfn = stacks.cloudformation
    cfn.create_stack(StackName="refused", TemplateBody=json.dumps(refused))
    cfn.create_stack(StackName="silent", TemplateBody=json.dumps(silent))
    for name in ("refused", "silent"):
        with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):
            stacks.wait("stack_create_complete", StackName=name)
        assert cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = {e["LogicalResourceId"]: e.get("ResourceStatusReason") for e in stacks.events("refused") + stacks.events("silent") if e["ResourceStatus"] == "CREATE_FAILED"}
    assert "Received response status [FAILED] from custom resource. Message returned: names like 'refuse' are refused" in reasons["Greeting"]
    assert reasons["Quiet"].startswith("CloudFormation did not receive a response from your Custom Resource.")
    # The FAILED answer named a physical resource: the rollback sends it a Delete, as the service does (cfn-response names
    # the log stream: a function must take the Delete of what it failed to make)
    refused_events = [(e["PhysicalResourceId"], e["ResourceStatus"]) for e in stacks.events("refused") if e["LogicalResourceId"] == "Greeting"]
    assert refused_events[-3:] == [("refused-Greeting", "CREATE_FAILED"), ("refused-Greeting", "DELETE_IN_PROGRESS"), ("refused-Greeting", "DELETE_COMPLETE")]
    assert stacks.server.has_printed(r'Delete Greeting: .*"Name": "refuse"')


def test_an_update_that_adds_a_failing_custom_resource_rolls_back_deleting_what_it_made(stacks: Stacks) -> None:
    """An update moves a custom resource to a new physical resource and adds one whose function answers FAILED: the stack's
    reason names the added one as failing to create; the cleanup deletes the new physical resources, both."""
    template: Dict[str, Any] = {"Resources": {"Greeting": {"Type": "Custom::Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "sun"}}}}
    cfn = stacks.cloudformation
    cfn.create_stack(StackName="added-refused", TemplateBody=json.dumps(template))
    stacks.wait("stack_create_complete", StackName="added-refused")
    template["Resources"]["Greeting"]["Properties"]["Name"] = "star"
    template["Resources"]["Bad"] = {"Type": "Custom::Greeting", "DependsOn": "Greeting", "Properties": {"ServiceToken": "GreeterFunction", "Name": "refuse"}}
    cfn.update_stack(StackName="added-refused", TemplateBody=json.dumps(template))
    with pytest.raises(WaiterError, match="UPDATE_ROLLBACK_COMPLETE"):
        stacks.wait("stack_update_complete", StackName="added-refused")
    events = stacks.events("added-refused")
    rollback = next(e for e in events if e["ResourceStatus"] == "UPDATE_ROLLBACK_IN_PROGRESS")
    assert rollback["ResourceStatusReason"] == "The following resource(s) failed to create: [Bad]. "
    cleanup = next(i for i, e in enumerate(events) if e["ResourceStatus"] == "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")
    deleted = {(e["LogicalResourceId"], e["PhysicalResourceId"]) for e in events[cleanup:] if e["ResourceStatus"] == "DELETE_COMPLETE"}
    assert deleted == {("Bad", "refused-Bad"), ("Greeting", "greeting-star")}
    kept = cfn.describe_stack_resource(StackName="added-refused", LogicalResourceId="Greeting")["StackResourceDetail"]
    assert kept["PhysicalResourceId"] == "greeting-sun"
    cfn.delete_stack(StackName="added-refused")
    stacks.wait("stack_delete_complete", StackName="added-refused")


def test_what_the_service_refuses_up_front_is_a_validation_error(stacks: Stacks) -> None:
    cfn = stacks.cloudformation

    def refused(**arguments: Any) -> str:
        with pytest.raises(ClientError) as caught:
            cfn.create_stack(**arguments)
        assert caught.value.response["Error"]["Code"] == "ValidationError"
        return str(caught.value.response["Error"]["Message"])

    unknown = refused(StackName="unknown", TemplateBody=json.dumps({"Resources": {"X": {"Type": "Acme::Nope::Thing"}}}))
    assert "Acme::Nope::Thing" in unknown and "Cfnrun::Sample::Note" in unknown
    broken = refused(StackName="broken", TemplateBody="Resources:\n  X:\n    Type: [unclosed\n")
    assert "line" in broken
    circular = {
        "Resources": {
            "A": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "B"}}},
            "B": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "A"}}},
        }
    }
    assert "Circular dependency between resources: [A, B]" in refused(StackName="circle", TemplateBody=json.dumps(circular))
    # a misspelt property is accepted, as the service accepts it, and fails its resource: test_stack_bad_input.py
    missing = {"Resources": {"A": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Fn::ImportValue": "nobody-exports-this"}}}}}
    assert "No export named nobody-exports-this found" in refused(StackName="importer", TemplateBody=json.dumps(missing))
    # serve keeps serving: the next call works
    assert cfn.list_stacks()["StackSummaries"] is not None


def test_stacks_kept_with_state_survive_a_restart_and_say_what_the_endpoint_lost(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    template = {
        "Parameters": {"Password": {"Type": "String", "NoEcho": True}},
        "Resources": {
            "Bucket": {"Type": "AWS::S3::Bucket"},
            "Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "Bucket"}, "AccessPassword": {"Ref": "Password"}}},
        },
    }
    arguments = ("serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock", "--provider", "note", "--state", "kept")

    def start() -> ServerProcess:
        process = subprocess.Popen(
            [sys.executable, "-m", "cfnrun", *arguments], cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, "NO_COLOR": "1"},
        )
        return ServerProcess(tmp_path, process=process)

    first = start()
    try:
        cfn = boto3.client("cloudformation", endpoint_url=first.url, **CREDENTIALS)
        cfn.create_stack(StackName="kept", TemplateBody=json.dumps(template), Parameters=_parameters(Password="s3cret-pass"))
        cfn.get_waiter("stack_create_complete").wait(StackName="kept", WaiterConfig=FAST)
        note = cfn.describe_stack_resource(StackName="kept", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    finally:
        first.stop()
    assert "s3cret-pass" not in kept_text(tmp_path / "kept")

    second = start()
    try:
        second.has_printed(r"stack kept: CREATE_COMPLETE, read back from")
        second.has_printed(r"stack kept: Bucket \(AWS::S3::Bucket .*\) is gone from the AWS endpoint")
        cfn = boto3.client("cloudformation", endpoint_url=second.url, **CREDENTIALS)
        cloudcontrol = boto3.client("cloudcontrol", endpoint_url=second.url, **CREDENTIALS)
        assert cfn.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        assert cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=note)["ResourceDescription"]["Identifier"] == note
        cfn.delete_stack(StackName="kept")
        cfn.get_waiter("stack_delete_complete").wait(StackName="kept", WaiterConfig=FAST)
        with pytest.raises(ClientError, match="ResourceNotFoundException"):
            cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=note)
    finally:
        second.stop()


def test_aws_resources_declared_without_a_name_are_named_once_as_the_service_names_them(stacks: Stacks) -> None:
    # The service's pattern: stack name, logical id, 12 random upper-case letters and digits (a bucket's all lower-case),
    # cut to the type's length limit, a FIFO queue's ending in .fifo. Not the inner stack's name on the endpoint.
    table = {"AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
             "BillingMode": "PAY_PER_REQUEST"}
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    resources = {
        "Queue1": {"Type": "AWS::SQS::Queue"},
        "Ordered": {"Type": "AWS::SQS::Queue", "Properties": {"FifoQueue": True}},
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Bucket": {"Type": "AWS::S3::Bucket"},
        "Table": {"Type": "AWS::DynamoDB::Table", "Properties": table},
        "ExecutionRoleWithALongLogicalIdForTheLimit": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Fn": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": "python3.11", "Handler": "index.handler", "Code": {"ZipFile": "def handler(event, context):\n    return 1\n"},
            "Role": {"Fn::GetAtt": ["ExecutionRoleWithALongLogicalIdForTheLimit", "Arn"]},
        }},
    }
    stack = "Named-" + "x" * 40
    stacks.cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": resources}), Capabilities=["CAPABILITY_IAM"])
    stacks.wait("stack_create_complete", StackName=stack)
    listed = stacks.cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    names = {r["LogicalResourceId"]: re.split(r"[/:]", r["PhysicalResourceId"])[-1] for r in listed}
    suffix = "[A-Z0-9]{12}"
    assert re.fullmatch(rf"{stack}-Queue1-{suffix}", names["Queue1"]), names
    assert re.fullmatch(rf"{stack}-Ordered-{suffix}\.fifo", names["Ordered"]), names
    assert re.fullmatch(rf"{stack}-Topic-{suffix}", names["Topic"]), names
    assert len(names["Bucket"]) == 63 and re.fullmatch(r"named-x+-bucket-[a-z0-9]{12}", names["Bucket"]), names  # 63 at most
    assert re.fullmatch(rf"{stack}-Table-{suffix}", names["Table"]), names
    # 64 at most: 13 for the suffix and its hyphen, the rest split between stack name and logical id (the stack's half
    # rounding up), mixed case, as the service named ChineseboostAnalyticsStac-RainlyticsSummariesJobFun-UjecjFhpdr1d
    role = names["ExecutionRoleWithALongLogicalIdForTheLimit"]
    assert re.fullmatch(r"Named-x{19}-ExecutionRoleWithALongLog-[A-Za-z0-9]{12}", role), role
    assert re.fullmatch(rf"{stack}-Fn-[A-Za-z0-9]{{12}}", names["Fn"]), names  # mixed case, as SAM's guides show them
    assert names["Bucket"] in [b["Name"] for b in stacks.s3.list_buckets()["Buckets"]]  # the name the endpoint has
    stacks.cloudformation.delete_stack(StackName=stack)
    stacks.wait("stack_delete_complete", StackName=stack)


def test_more_aws_types_declared_without_a_name_are_named_as_the_service_names_them_not_after_moto_s_inner_stack(stacks: Stacks) -> None:
    # moto named these after the one-resource stack cfnrun makes there: stack-Logical-1a2b3c4d-Logical-RANDOM
    import boto3

    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    allow = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*"}]}
    resources = {
        "WebSecurityGroup": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "web"}},
        "NightlyRule": {"Type": "AWS::Events::Rule", "Properties": {"ScheduleExpression": "rate(1 day)"}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Flow": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {
            "DefinitionString": json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
            "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]},
        }},
        "ReadPolicy": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": allow}},
        "Profile": {"Type": "AWS::IAM::InstanceProfile", "Properties": {"Roles": [{"Ref": "Role"}]}},
        "Images": {"Type": "AWS::ECR::Repository"},
        "Cluster": {"Type": "AWS::ECS::Cluster"},
    }
    stack = "Named-More"
    stacks.cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": resources}), Capabilities=["CAPABILITY_IAM"])
    stacks.wait("stack_create_complete", StackName=stack)
    listed = stacks.cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in listed}

    def client(service: str) -> Any:
        return boto3.client(service, endpoint_url=stacks.moto, **CREDENTIALS)

    upper, mixed = "[A-Z0-9]{12}", "[A-Za-z0-9]{12}"
    [group] = client("ec2").describe_security_groups(GroupIds=[physical["WebSecurityGroup"]])["SecurityGroups"]
    assert re.fullmatch(rf"{stack}-WebSecurityGroup-{upper}", group["GroupName"]), group["GroupName"]
    assert re.fullmatch(rf"{stack}-NightlyRule-{upper}", client("events").describe_rule(Name=physical["NightlyRule"])["Name"]), physical
    machine = client("stepfunctions").describe_state_machine(stateMachineArn=physical["Flow"])["name"]
    assert re.fullmatch(rf"Flow-{mixed}", machine), machine  # the logical id alone, as the service names a state machine
    policy = client("iam").get_policy(PolicyArn=physical["ReadPolicy"])["Policy"]["PolicyName"]
    assert re.fullmatch(rf"{stack}-ReadPolicy-{upper}", policy), policy
    profile = client("iam").get_instance_profile(InstanceProfileName=physical["Profile"])["InstanceProfile"]["InstanceProfileName"]
    assert re.fullmatch(rf"{stack}-Profile-{upper}", profile), profile
    [repository] = client("ecr").describe_repositories(repositoryNames=[physical["Images"]])["repositories"]
    assert re.fullmatch(r"named-more-images-[a-z0-9]{12}", repository["repositoryName"]), repository  # ECR's names are lower-case
    [cluster] = client("ecs").describe_clusters(clusters=[physical["Cluster"]])["clusters"]
    assert re.fullmatch(rf"{stack}-Cluster-{mixed}", cluster["clusterName"]), cluster
    stacks.cloudformation.delete_stack(StackName=stack)
    stacks.wait("stack_delete_complete", StackName=stack)


def test_get_azs_gives_the_zones_the_endpoints_ec2_reports_with_a_default_subnet(stacks: Stacks) -> None:
    # The reference: the region's zones in alphabetical order, only those with a default subnet unless none has one.
    # moto's us-east-1 has six; in Tokyo (a, c, d there) the default subnet of one is deleted first.
    import boto3

    tokyo = boto3.client("ec2", endpoint_url=stacks.moto, **{**CREDENTIALS, "region_name": "ap-northeast-1"})
    [gone] = tokyo.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}, {"Name": "availability-zone", "Values": ["ap-northeast-1c"]}])["Subnets"]
    tokyo.delete_subnet(SubnetId=gone["SubnetId"])
    joined = {
        "Here": {"Fn::Join": [",", {"Fn::GetAZs": ""}]},
        "ByRegion": {"Fn::Join": [",", {"Fn::GetAZs": {"Ref": "AWS::Region"}}]},
        "Tokyo": {"Fn::Join": [",", {"Fn::GetAZs": "ap-northeast-1"}]},
        "Sixth": {"Fn::Select": [5, {"Fn::GetAZs": ""}]},
    }
    template = {"Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
                "Outputs": {key: {"Value": value} for key, value in joined.items()}}
    stacks.cloudformation.create_stack(StackName="zones", TemplateBody=json.dumps(template))
    stacks.wait("stack_create_complete", StackName="zones")
    here = ",".join(f"us-east-1{letter}" for letter in "abcdef")
    assert stacks.outputs("zones") == {"Here": here, "ByRegion": here, "Tokyo": "ap-northeast-1a,ap-northeast-1d", "Sixth": "us-east-1f"}
    stacks.cloudformation.delete_stack(StackName="zones")


def test_the_notification_arns_pseudo_parameter_is_what_the_stack_was_given_on_create_update_and_change_set(stacks: Stacks) -> None:
    cloudformation = stacks.cloudformation
    listed = {"Fn::Join": ["", ["[", {"Fn::Join": [",", {"Ref": "AWS::NotificationARNs"}]}, "]"]]}
    template = {
        "Parameters": {"Title": {"Type": "String"}},
        "Resources": {"Note": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Fn::Join": [" ", [{"Ref": "Title"}, listed]]}}}},
        "Outputs": {"Topics": {"Value": listed}},
    }
    first, second, third = (f"arn:aws:sns:us-east-1:123456789012:news-{n}" for n in (1, 2, 3))
    cloudformation.create_stack(StackName="notified", TemplateBody=json.dumps(template), Parameters=_parameters(Title="one"),
                                NotificationARNs=[first, second])
    stacks.wait("stack_create_complete", StackName="notified")
    assert stacks.outputs("notified") == {"Topics": f"[{first},{second}]"}
    cloudformation.update_stack(StackName="notified", UsePreviousTemplate=True, Parameters=_parameters(Title="two"))  # none given: kept
    stacks.wait("stack_update_complete", StackName="notified")
    assert stacks.outputs("notified") == {"Topics": f"[{first},{second}]"}
    cloudformation.update_stack(StackName="notified", UsePreviousTemplate=True, Parameters=_parameters(Title="three"), NotificationARNs=[third])
    stacks.wait("stack_update_complete", StackName="notified")
    assert stacks.outputs("notified") == {"Topics": f"[{third}]"}
    note = cloudformation.describe_stack_resource(StackName="notified", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]
    model = json.loads(stacks.cloudcontrol.get_resource(TypeName="Cfnrun::Sample::Note", Identifier=note)["ResourceDescription"]["Properties"])
    assert model["Title"] == f"three [{third}]"  # a resource's properties read it too
    cloudformation.create_change_set(StackName="notified", ChangeSetName="quiet", UsePreviousTemplate=True,
                                     Parameters=_parameters(Title="four"), NotificationARNs=[])
    stacks.wait("change_set_create_complete", StackName="notified", ChangeSetName="quiet")
    cloudformation.execute_change_set(StackName="notified", ChangeSetName="quiet")
    stacks.wait("stack_update_complete", StackName="notified")
    assert stacks.outputs("notified") == {"Topics": "[]"}
    cloudformation.delete_stack(StackName="notified")
