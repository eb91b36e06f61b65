"""AWS::* resources of local stacks on ``cfnrun serve --moto``: what the console shows, and a resource that never settles.

Each test starts its own serve (the note sample, and an embedded moto, or a moto server behind a
stand-in endpoint) and drives it with boto3's ``cloudformation`` client, as a user's deploy tool would.
"""
from __future__ import annotations

import http.client
import http.server
import json
import re
import shutil
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import WaiterError

from conftest import LOCAL_STATE, SAMPLES, ServerProcess

FAST = {"Delay": 0.1, "MaxAttempts": 600}
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
OPERATION_TIMEOUT_S = 2  # serve's --operation-timeout for the resource moto never settles


def _serve(tmp_path: Path, *args: str) -> ServerProcess:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    return ServerProcess(tmp_path / "note", "--no-reload", *args)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerProcess]:
    server = _serve(tmp_path, "--moto")
    yield server
    server.stop()


def _cloudformation(server: ServerProcess) -> Any:
    import boto3

    return boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)


def _events(cloudformation: Any, stack: str) -> List[Dict[str, Any]]:
    return list(reversed(cloudformation.describe_stack_events(StackName=stack)["StackEvents"]))


def test_a_clean_deploy_of_a_bootstrap_like_stack_puts_no_fault_on_the_console(serve: ServerProcess) -> None:
    # A CDK bootstrap stack's staging bucket and its policy (a type moto's CloudFormation lacks: made through its S3 API).
    # The resource's stack on moto used to be probed with DescribeStackResource, which moto breaks on for a type it does
    # not know: serve's console said "moto server: broke answering an AWS call: ... logical_resource_id" for nothing.
    policy = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }]}
    resources = {
        "StagingBucket": {"Type": "AWS::S3::Bucket"},
        "StagingBucketPolicy": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "StagingBucket"}, "PolicyDocument": policy}},
        "CdkBootstrapVersion": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "21"}},
    }
    cloudformation = _cloudformation(serve)
    cloudformation.create_stack(StackName="CDKToolkit", TemplateBody=json.dumps({"Resources": resources}))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="CDKToolkit", WaiterConfig=FAST)
    assert serve.stop() == 0
    console = serve.printed_until_exit()
    assert "stopped" in console, console  # everything serve printed, to its last line
    assert not re.search(r"moto server: broke|Error on request|No Moto CloudFormation support", console), console


def _vpc_template(with_routes: bool) -> str:
    resources: Dict[str, Any] = {
        "Gateway": {"Type": "AWS::EC2::InternetGateway"},
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.7.0.0/16"}},
        "Attachment": {"Type": "AWS::EC2::VPCGatewayAttachment", "Properties": {"VpcId": {"Ref": "Vpc"}, "InternetGatewayId": {"Ref": "Gateway"}}},
        "Routes": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}},
        "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.7.1.0/24"}},
        "Address": {"Type": "AWS::EC2::EIP", "DependsOn": "Attachment", "Properties": {"Domain": "vpc"}},
        "Nat": {"Type": "AWS::EC2::NatGateway", "Properties": {"AllocationId": {"Fn::GetAtt": ["Address", "AllocationId"]}, "SubnetId": {"Ref": "Subnet"}}},
    }
    if with_routes:
        resources["Default"] = {"Type": "AWS::EC2::Route", "DependsOn": "Attachment", "Properties": {
            "RouteTableId": {"Ref": "Routes"}, "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": {"Ref": "Gateway"}}}
        resources["Association"] = {"Type": "AWS::EC2::SubnetRouteTableAssociation", "Properties": {
            "SubnetId": {"Ref": "Subnet"}, "RouteTableId": {"Ref": "Routes"}}}
    return json.dumps({"Resources": resources})


def test_a_vpc_with_a_gateway_routes_and_a_nat_is_deleted_with_everything_moto_s_stack_delete_leaves(serve: ServerProcess) -> None:
    # moto's CloudFormation deletes none of a route table, route, association, gateway, attachment, NAT gateway or EIP with
    # its stack: the VPC kept dependencies, and the stack's delete ended DELETE_FAILED ("... has dependencies ...")
    import boto3

    cloudformation = _cloudformation(serve)
    ec2 = boto3.client("ec2", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="network", TemplateBody=_vpc_template(with_routes=True))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="network", WaiterConfig=FAST)
    made = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="network")["StackResources"]}
    [table] = ec2.describe_route_tables(RouteTableIds=[made["Routes"]])["RouteTables"]
    assert [a["SubnetId"] for a in table["Associations"]] == [made["Subnet"]]
    assert "0.0.0.0/0" in [r.get("DestinationCidrBlock") for r in table["Routes"]]

    # the route and the association taken out of the template go from the table; the stack's update completes
    cloudformation.update_stack(StackName="network", TemplateBody=_vpc_template(with_routes=False))
    cloudformation.get_waiter("stack_update_complete").wait(StackName="network", WaiterConfig=FAST)
    [table] = ec2.describe_route_tables(RouteTableIds=[made["Routes"]])["RouteTables"]
    assert table["Associations"] == [] and "0.0.0.0/0" not in [r.get("DestinationCidrBlock") for r in table["Routes"]]

    cloudformation.delete_stack(StackName="network")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="network", WaiterConfig=FAST)
    assert [v for v in ec2.describe_vpcs()["Vpcs"] if v["VpcId"] == made["Vpc"]] == []
    assert [g for g in ec2.describe_internet_gateways()["InternetGateways"] if g["InternetGatewayId"] == made["Gateway"]] == []
    assert ec2.describe_addresses()["Addresses"] == []
    assert [n["State"] for n in ec2.describe_nat_gateways()["NatGateways"] if n["NatGatewayId"] == made["Nat"]] in ([], ["deleted"])


def test_a_custom_event_bus_is_referred_to_by_its_name_and_its_rule_lands_on_it(serve: ServerProcess) -> None:
    # moto's CloudFormation gave the bus's Ref as its Python object's text ("<moto.events.models.EventBus object at 0x...>"):
    # the rule on it failed with moto's "Event bus <...> does not exist."
    import boto3

    resources = {
        "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "orders"}},
        "Rule": {"Type": "AWS::Events::Rule", "Properties": {"EventBusName": {"Ref": "Bus"}, "EventPattern": {"source": ["shop"]}}},
    }
    cloudformation = _cloudformation(serve)
    cloudformation.create_stack(StackName="events", TemplateBody=json.dumps({"Resources": resources, "Outputs": {"Bus": {"Value": {"Ref": "Bus"}}}}))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="events", WaiterConfig=FAST)
    [output] = cloudformation.describe_stacks(StackName="events")["Stacks"][0]["Outputs"]
    bus = cloudformation.describe_stack_resource(StackName="events", LogicalResourceId="Bus")["StackResourceDetail"]["PhysicalResourceId"]
    assert output["OutputValue"] == bus == "orders"
    events = boto3.client("events", endpoint_url=serve.moto_url(), **CREDENTIALS)
    assert [json.loads(r["EventPattern"]) for r in events.list_rules(EventBusName="orders")["Rules"]] == [{"source": ["shop"]}]
    cloudformation.delete_stack(StackName="events")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="events", WaiterConfig=FAST)
    assert [b["Name"] for b in events.list_event_buses()["EventBuses"]] == ["default"]


def _secrets_template(description: str) -> str:
    return json.dumps({
        "Parameters": {"ApiKey": {"Type": "String", "NoEcho": True}},
        "Resources": {
            "Generated": {"Type": "AWS::SecretsManager::Secret", "Properties": {"Description": description, "GenerateSecretString": {
                "SecretStringTemplate": json.dumps({"username": "app"}), "GenerateStringKey": "password",
                "PasswordLength": 24, "ExcludePunctuation": True}}},
            "Given": {"Type": "AWS::SecretsManager::Secret", "Properties": {"Name": "app/api-key", "SecretString": {"Ref": "ApiKey"}}},
            "User": {"Type": "AWS::SSM::Parameter", "Properties": {
                "Type": "String", "Value": {"Fn::Sub": "{{resolve:secretsmanager:${Generated}:SecretString:username}}"}}},
        },
        "Outputs": {"Generated": {"Value": {"Ref": "Generated"}}, "GivenId": {"Value": {"Fn::GetAtt": ["Given", "Id"]}}},
    })


def test_secrets_are_made_generated_read_by_a_dynamic_reference_updated_and_deleted_without_their_values_shown(serve: ServerProcess) -> None:
    # moto's CloudFormation completes a stack declaring an AWS::SecretsManager::Secret without making it
    import boto3

    cloudformation = _cloudformation(serve)
    secrets = boto3.client("secretsmanager", endpoint_url=serve.moto_url(), **CREDENTIALS)
    ssm = boto3.client("ssm", endpoint_url=serve.moto_url(), **CREDENTIALS)
    parameters = [{"ParameterKey": "ApiKey", "ParameterValue": "first-key-2f81"}]
    cloudformation.create_stack(StackName="vault", TemplateBody=_secrets_template("one"), Parameters=parameters)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="vault", WaiterConfig=FAST)
    made = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="vault")["StackResources"]}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="vault")["Stacks"][0]["Outputs"]}
    assert outputs == {"Generated": made["Generated"], "GivenId": made["Given"]}
    generated = secrets.describe_secret(SecretId=made["Generated"])
    assert generated["ARN"] == made["Generated"] and re.fullmatch(r"Generated-[A-Za-z0-9]{12}", generated["Name"]), generated
    value = json.loads(secrets.get_secret_value(SecretId=made["Generated"])["SecretString"])
    assert value["username"] == "app" and re.fullmatch(r"[A-Za-z0-9]{24}", value["password"]), value
    assert secrets.get_secret_value(SecretId="app/api-key")["SecretString"] == "first-key-2f81"
    assert ssm.get_parameter(Name=made["User"])["Parameter"]["Value"] == "app"  # the dynamic reference read the new secret

    parameters = [{"ParameterKey": "ApiKey", "ParameterValue": "second-key-77c0"}]
    cloudformation.update_stack(StackName="vault", TemplateBody=_secrets_template("two"), Parameters=parameters)
    cloudformation.get_waiter("stack_update_complete").wait(StackName="vault", WaiterConfig=FAST)
    assert secrets.describe_secret(SecretId=made["Generated"])["Description"] == "two"
    assert json.loads(secrets.get_secret_value(SecretId=made["Generated"])["SecretString"]) == value  # its value unchanged
    assert secrets.get_secret_value(SecretId="app/api-key")["SecretString"] == "second-key-77c0"

    cloudformation.delete_stack(StackName="vault")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="vault", WaiterConfig=FAST)
    assert secrets.list_secrets()["SecretList"] == []
    assert serve.stop() == 0
    console = serve.printed_until_exit()
    for secret in ("first-key-2f81", "second-key-77c0", value["password"]):
        assert secret not in console


def _filters_template(pattern: str, subscribed: bool) -> str:
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    resources: Dict[str, Any] = {
        "Group": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/filters/app"}},
        "Errors": {"Type": "AWS::Logs::MetricFilter", "Properties": {"LogGroupName": {"Ref": "Group"}, "FilterPattern": pattern,
                   "MetricTransformations": [{"MetricName": "errors", "MetricNamespace": "app", "MetricValue": "1"}]}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Reader": {"Type": "AWS::Lambda::Function", "Properties": {"Runtime": "python3.12", "Handler": "index.handler",
                   "Role": {"Fn::GetAtt": ["Role", "Arn"]}, "Code": {"ZipFile": "def handler(event, context):\n    return None\n"}}},
    }
    if subscribed:
        resources["Shipped"] = {"Type": "AWS::Logs::SubscriptionFilter", "Properties": {
            "LogGroupName": {"Ref": "Group"}, "FilterPattern": "", "DestinationArn": {"Fn::GetAtt": ["Reader", "Arn"]}}}
    return json.dumps({"Resources": resources})


def test_metric_and_subscription_filters_are_put_changed_and_removed_on_the_log_group(serve: ServerProcess) -> None:
    # moto's CloudFormation completes a stack declaring either filter without making it
    import boto3

    cloudformation = _cloudformation(serve)
    logs = boto3.client("logs", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="filters", TemplateBody=_filters_template("ERROR", subscribed=True), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="filters", WaiterConfig=FAST)
    made = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="filters")["StackResources"]}
    [metric] = logs.describe_metric_filters(logGroupName="/filters/app")["metricFilters"]
    assert (metric["filterName"], metric["filterPattern"], metric["metricTransformations"][0]["metricName"]) == (made["Errors"], "ERROR", "errors")
    assert re.fullmatch(r"filters-Errors-[A-Z0-9]{12}", made["Errors"])
    [shipped] = logs.describe_subscription_filters(logGroupName="/filters/app")["subscriptionFilters"]
    assert shipped["filterName"] == made["Shipped"] and shipped["destinationArn"].endswith(f":function:{made['Reader']}")

    cloudformation.update_stack(StackName="filters", TemplateBody=_filters_template("FATAL", subscribed=False), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_update_complete").wait(StackName="filters", WaiterConfig=FAST)
    assert [(f["filterName"], f["filterPattern"]) for f in logs.describe_metric_filters(logGroupName="/filters/app")["metricFilters"]] == [
        (made["Errors"], "FATAL")]
    assert logs.describe_subscription_filters(logGroupName="/filters/app")["subscriptionFilters"] == []

    cloudformation.delete_stack(StackName="filters")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="filters", WaiterConfig=FAST)
    assert logs.describe_metric_filters()["metricFilters"] == []


def _schedule_template(rate: str) -> str:
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "scheduler.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    return json.dumps({"Resources": {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Tick": {"Type": "AWS::Scheduler::Schedule", "Properties": {
            "ScheduleExpression": rate, "FlexibleTimeWindow": {"Mode": "OFF"},
            "Target": {"Arn": {"Fn::GetAtt": ["Queue", "Arn"]}, "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]}, "Input": "{}"}}},
    }, "Outputs": {"TickArn": {"Value": {"Fn::GetAtt": ["Tick", "Arn"]}}}})


def test_a_schedule_is_made_updated_and_deleted_on_the_endpoints_scheduler(serve: ServerProcess) -> None:
    # moto's CloudFormation completes a stack declaring an AWS::Scheduler::Schedule without making it
    import boto3

    cloudformation = _cloudformation(serve)
    scheduler = boto3.client("scheduler", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="ticks", TemplateBody=_schedule_template("rate(5 minutes)"), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="ticks", WaiterConfig=FAST)
    name = cloudformation.describe_stack_resource(StackName="ticks", LogicalResourceId="Tick")["StackResourceDetail"]["PhysicalResourceId"]
    [output] = cloudformation.describe_stacks(StackName="ticks")["Stacks"][0]["Outputs"]
    schedule = scheduler.get_schedule(Name=name)
    assert (schedule["ScheduleExpression"], schedule["Arn"], output["OutputValue"]) == ("rate(5 minutes)", output["OutputValue"], schedule["Arn"])
    assert re.fullmatch(r"ticks-Tick-[A-Za-z0-9]{12}", name)

    cloudformation.update_stack(StackName="ticks", TemplateBody=_schedule_template("rate(1 hour)"), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_update_complete").wait(StackName="ticks", WaiterConfig=FAST)
    assert scheduler.get_schedule(Name=name)["ScheduleExpression"] == "rate(1 hour)"

    cloudformation.delete_stack(StackName="ticks")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="ticks", WaiterConfig=FAST)
    assert scheduler.list_schedules()["Schedules"] == []


def _monitoring_template(threshold: str, interval: int) -> str:
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "firehose.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    return json.dumps({"Resources": {
        "Stream": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "Lake": {"Type": "AWS::S3::Bucket"},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Busy": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
            "Namespace": "AWS/Kinesis", "MetricName": "IncomingRecords", "Dimensions": [{"Name": "StreamName", "Value": {"Ref": "Stream"}}],
            "Statistic": "Sum", "Period": "60", "EvaluationPeriods": 1, "Threshold": threshold, "ComparisonOperator": "GreaterThanThreshold"}},
        "Delivery": {"Type": "AWS::KinesisFirehose::DeliveryStream", "Properties": {
            "DeliveryStreamType": "KinesisStreamAsSource",
            "KinesisStreamSourceConfiguration": {"KinesisStreamARN": {"Fn::GetAtt": ["Stream", "Arn"]}, "RoleARN": {"Fn::GetAtt": ["Role", "Arn"]}},
            "S3DestinationConfiguration": {"BucketARN": {"Fn::GetAtt": ["Lake", "Arn"]}, "RoleARN": {"Fn::GetAtt": ["Role", "Arn"]},
                                           "BufferingHints": {"IntervalInSeconds": interval, "SizeInMBs": 5}}}},
    }, "Outputs": {"AlarmArn": {"Value": {"Fn::GetAtt": ["Busy", "Arn"]}}, "DeliveryArn": {"Value": {"Fn::GetAtt": ["Delivery", "Arn"]}}}})


def test_an_alarm_and_a_delivery_stream_are_made_updated_and_deleted_on_the_endpoints_services(serve: ServerProcess) -> None:
    # moto's CloudFormation does not implement AWS::CloudWatch::Alarm or AWS::KinesisFirehose::DeliveryStream: the stack failed
    import boto3

    cloudformation = _cloudformation(serve)
    cloudwatch = boto3.client("cloudwatch", endpoint_url=serve.moto_url(), **CREDENTIALS)
    firehose = boto3.client("firehose", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="watch", TemplateBody=_monitoring_template("80", 60), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="watch", WaiterConfig=FAST)
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="watch")["StackResources"]}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="watch")["Stacks"][0]["Outputs"]}
    [alarm] = cloudwatch.describe_alarms(AlarmNames=[physical["Busy"]])["MetricAlarms"]
    assert re.fullmatch(r"watch-Busy-[A-Z0-9]{12}", physical["Busy"])
    assert (alarm["Threshold"], alarm["Period"], alarm["Dimensions"], alarm["AlarmArn"]) == (
        80.0, 60, [{"Name": "StreamName", "Value": physical["Stream"]}], outputs["AlarmArn"])  # "80" and "60" typed as the schema says
    described = firehose.describe_delivery_stream(DeliveryStreamName=physical["Delivery"])["DeliveryStreamDescription"]
    assert described["DeliveryStreamARN"] == outputs["DeliveryArn"] and described["DeliveryStreamType"] == "KinesisStreamAsSource"

    cloudformation.update_stack(StackName="watch", TemplateBody=_monitoring_template("95", 300), Capabilities=["CAPABILITY_IAM"])
    cloudformation.get_waiter("stack_update_complete").wait(StackName="watch", WaiterConfig=FAST)
    assert cloudwatch.describe_alarms(AlarmNames=[physical["Busy"]])["MetricAlarms"][0]["Threshold"] == 95.0
    [destination] = firehose.describe_delivery_stream(DeliveryStreamName=physical["Delivery"])["DeliveryStreamDescription"]["Destinations"]
    assert destination["S3DestinationDescription"]["BufferingHints"] == {"IntervalInSeconds": 300, "SizeInMBs": 5}

    cloudformation.delete_stack(StackName="watch")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="watch", WaiterConfig=FAST)
    assert cloudwatch.describe_alarms()["MetricAlarms"] == [] and firehose.list_delivery_streams()["DeliveryStreamNames"] == []


def _bucket_template(days: int, cors: bool) -> str:
    delivery = {"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sqs:SendMessage", "Resource": {"Fn::GetAtt": ["Inbox", "Arn"]}}
    settings: Dict[str, Any] = {
        "VersioningConfiguration": {"Status": "Enabled"},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": "true", "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
        "LifecycleConfiguration": {"Rules": [{"Id": "expire", "Status": "Enabled", "Prefix": "logs/", "ExpirationInDays": days,
                                              "Transitions": [{"StorageClass": "GLACIER", "TransitionInDays": 10}]}]},
        "NotificationConfiguration": {"QueueConfigurations": [{"Event": "s3:ObjectCreated:*", "Queue": {"Fn::GetAtt": ["Inbox", "Arn"]},
                                                               "Filter": {"S3Key": {"Rules": [{"Name": "suffix", "Value": ".csv"}]}}}]},
    }
    if cors:
        settings["CorsConfiguration"] = {"CorsRules": [{"Id": "web", "AllowedMethods": ["GET"], "AllowedOrigins": ["*"], "MaxAge": 300}]}
    return json.dumps({"Resources": {
        "Inbox": {"Type": "AWS::SQS::Queue"},
        "InboxPolicy": {"Type": "AWS::SQS::QueuePolicy", "Properties": {"Queues": [{"Ref": "Inbox"}],
                                                                        "PolicyDocument": {"Version": "2012-10-17", "Statement": [delivery]}}},
        "Data": {"Type": "AWS::S3::Bucket", "DependsOn": "InboxPolicy", "Properties": settings},
    }})


def test_a_buckets_settings_moto_leaves_out_are_put_through_s3_and_its_notifications_reach_the_queue(serve: ServerProcess) -> None:
    # moto's CloudFormation made a bucket with its name, encryption and tags only: SAM's S3 events never fired
    import boto3

    cloudformation = _cloudformation(serve)
    s3 = boto3.client("s3", endpoint_url=serve.moto_url(), **CREDENTIALS)
    sqs = boto3.client("sqs", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="data", TemplateBody=_bucket_template(30, cors=True))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="data", WaiterConfig=FAST)
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="data")["StackResources"]}
    bucket = physical["Data"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == [{"ID": "web", "AllowedMethods": ["GET"], "AllowedOrigins": ["*"], "MaxAgeSeconds": 300}]
    [rule] = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert (rule["ID"], rule["Filter"], rule["Expiration"], rule["Transitions"]) == (
        "expire", {"Prefix": "logs/"}, {"Days": 30}, [{"Days": 10, "StorageClass": "GLACIER"}])
    s3.put_object(Bucket=bucket, Key="report.csv", Body=b"a,b")
    s3.put_object(Bucket=bucket, Key="notes.txt", Body=b"-")  # the filter's suffix leaves it out
    received = sqs.receive_message(QueueUrl=physical["Inbox"], MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    records = [record["s3"]["object"]["key"] for m in received for record in json.loads(m["Body"]).get("Records", [])]
    assert records == ["report.csv"], received

    cloudformation.update_stack(StackName="data", TemplateBody=_bucket_template(60, cors=False))
    cloudformation.get_waiter("stack_update_complete").wait(StackName="data", WaiterConfig=FAST)
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"][0]["Expiration"] == {"Days": 60}
    with pytest.raises(s3.exceptions.ClientError, match="NoSuchCORSConfiguration"):
        s3.get_bucket_cors(Bucket=bucket)

    for version in s3.list_object_versions(Bucket=bucket).get("Versions", []):  # the service deletes no bucket that holds objects
        s3.delete_object(Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"])
    cloudformation.delete_stack(StackName="data")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="data", WaiterConfig=FAST)
    assert bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


def _web_tier_template(instance_class: str) -> str:
    subnet = lambda cidr, zone: {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": cidr, "AvailabilityZone": zone}}  # noqa: E731
    return json.dumps({"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.20.0.0/16"}},
        "SubnetA": subnet("10.20.1.0/24", "us-east-1a"), "SubnetB": subnet("10.20.2.0/24", "us-east-1b"),
        "Lb": {"Type": "AWS::ElasticLoadBalancingV2::LoadBalancer", "Properties": {"Subnets": [{"Ref": "SubnetA"}, {"Ref": "SubnetB"}], "Scheme": "internal"}},
        "Tg": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {"VpcId": {"Ref": "Vpc"}, "Port": 80, "Protocol": "HTTP", "TargetType": "ip"}},
        "Cluster": {"Type": "AWS::ECS::Cluster"},
        "Task": {"Type": "AWS::ECS::TaskDefinition", "Properties": {
            "Family": "web", "RequiresCompatibilities": ["FARGATE"], "NetworkMode": "awsvpc", "Cpu": "256", "Memory": "512",
            "ContainerDefinitions": [{"Name": "web", "Image": "nginx"}]}},
        "Service": {"Type": "AWS::ECS::Service", "Properties": {
            "Cluster": {"Ref": "Cluster"}, "TaskDefinition": {"Ref": "Task"}, "LaunchType": "FARGATE", "DesiredCount": 1,
            "NetworkConfiguration": {"AwsvpcConfiguration": {"Subnets": [{"Ref": "SubnetA"}]}}}},
        "DbSubnets": {"Type": "AWS::RDS::DBSubnetGroup", "Properties": {"DBSubnetGroupDescription": "db", "SubnetIds": [{"Ref": "SubnetA"}, {"Ref": "SubnetB"}]}},
        "Db": {"Type": "AWS::RDS::DBInstance", "Properties": {
            "Engine": "postgres", "DBInstanceClass": instance_class, "AllocatedStorage": "20", "MasterUsername": "app",
            "MasterUserPassword": "not-a-secret-1", "DBSubnetGroupName": {"Ref": "DbSubnets"}}},
    }, "Outputs": {"DbAddress": {"Value": {"Fn::GetAtt": ["Db", "Endpoint.Address"]}}, "Service": {"Value": {"Fn::GetAtt": ["Service", "Name"]}}}})


def test_a_web_tier_is_named_as_the_service_names_it_and_its_database_is_made_in_its_subnet_group(serve: ServerProcess) -> None:
    # moto's CloudFormation broke making a DB instance whose subnet group is given by name (the stack waited two hours for
    # it), gave a subnet group a Python object's text for its Ref, and named load balancers, target groups and services
    # after the one-resource stack cfnrun makes there (web-Lb-1a2b3c4d-Lb-...)
    import boto3

    cloudformation = _cloudformation(serve)
    rds = boto3.client("rds", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="web", TemplateBody=_web_tier_template("db.t3.micro"))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="web", WaiterConfig=FAST)
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="web")["StackResources"]}
    assert re.fullmatch(r"arn:aws:elasticloadbalancing:us-east-1:\d{12}:loadbalancer/app/web-Lb-[A-Z0-9]{12}/\w+", physical["Lb"])
    assert re.fullmatch(r"arn:aws:elasticloadbalancing:us-east-1:\d{12}:targetgroup/web-Tg-[A-Z0-9]{12}/\w+", physical["Tg"])
    assert re.fullmatch(r"web-dbsubnets-[a-z0-9]{12}", physical["DbSubnets"]) and re.fullmatch(r"web-db-[a-z0-9]{12}", physical["Db"])
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="web")["Stacks"][0]["Outputs"]}
    assert re.fullmatch(r"web-Service-[A-Za-z0-9]{12}", outputs["Service"])
    [db] = rds.describe_db_instances(DBInstanceIdentifier=physical["Db"])["DBInstances"]
    assert (db["DBSubnetGroup"]["DBSubnetGroupName"], db["AllocatedStorage"], db["Endpoint"]["Address"]) == (
        physical["DbSubnets"], 20, outputs["DbAddress"])  # "20" typed as the API types it

    cloudformation.update_stack(StackName="web", TemplateBody=_web_tier_template("db.t3.small"))
    cloudformation.get_waiter("stack_update_complete").wait(StackName="web", WaiterConfig=FAST)
    assert rds.describe_db_instances(DBInstanceIdentifier=physical["Db"])["DBInstances"][0]["DBInstanceClass"] == "db.t3.small"

    cloudformation.delete_stack(StackName="web")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="web", WaiterConfig=FAST)
    assert rds.describe_db_instances()["DBInstances"] == [] and rds.describe_db_subnet_groups()["DBSubnetGroups"] == []


def _user_pool_template(minimum_length: int, flows: List[str]) -> str:
    return json.dumps({"Resources": {
        "Users": {"Type": "AWS::Cognito::UserPool", "Properties": {
            "UserPoolName": "app-users", "UsernameAttributes": ["email"], "AutoVerifiedAttributes": ["email"],
            "Policies": {"PasswordPolicy": {"MinimumLength": minimum_length}}}},
        "Web": {"Type": "AWS::Cognito::UserPoolClient", "Properties": {
            "UserPoolId": {"Ref": "Users"}, "ClientName": "web", "GenerateSecret": False, "ExplicitAuthFlows": flows}},
    }, "Outputs": {"Issuer": {"Value": {"Fn::GetAtt": ["Users", "ProviderURL"]}}, "Client": {"Value": {"Ref": "Web"}}}})


def test_a_user_pool_and_its_client_are_made_updated_in_place_and_deleted_on_the_endpoints_cognito(serve: ServerProcess) -> None:
    # moto's CloudFormation completes a stack declaring AWS::Cognito::UserPool or UserPoolClient without making it
    import boto3

    cloudformation = _cloudformation(serve)
    cognito = boto3.client("cognito-idp", endpoint_url=serve.moto_url(), **CREDENTIALS)
    cloudformation.create_stack(StackName="users", TemplateBody=_user_pool_template(10, ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="users", WaiterConfig=FAST)
    made = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="users")["StackResources"]}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="users")["Stacks"][0]["Outputs"]}
    assert outputs == {"Issuer": f"https://cognito-idp.us-east-1.amazonaws.com/{made['Users']}", "Client": made["Web"]}
    pool = cognito.describe_user_pool(UserPoolId=made["Users"])["UserPool"]
    assert (pool["Name"], pool["UsernameAttributes"], pool["Policies"]["PasswordPolicy"]["MinimumLength"]) == ("app-users", ["email"], 10)
    client = cognito.describe_user_pool_client(UserPoolId=made["Users"], ClientId=made["Web"])["UserPoolClient"]
    assert client["ClientName"] == "web" and "ClientSecret" not in client

    cloudformation.update_stack(StackName="users", TemplateBody=_user_pool_template(12, ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]))
    cloudformation.get_waiter("stack_update_complete").wait(StackName="users", WaiterConfig=FAST)
    after = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="users")["StackResources"]}
    assert after == made
    assert cognito.describe_user_pool(UserPoolId=made["Users"])["UserPool"]["Policies"]["PasswordPolicy"]["MinimumLength"] == 12
    client = cognito.describe_user_pool_client(UserPoolId=made["Users"], ClientId=made["Web"])["UserPoolClient"]
    assert sorted(client["ExplicitAuthFlows"]) == ["ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_USER_PASSWORD_AUTH"]

    cloudformation.delete_stack(StackName="users")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="users", WaiterConfig=FAST)
    assert cognito.list_user_pools(MaxResults=10)["UserPools"] == []


class NeverSettles(http.server.BaseHTTPRequestHandler):
    """An AWS endpoint stand-in: moto behind it, except that its CloudFormation never reports a stack holding a resource
    named ``Unsettled`` complete (as an endpoint that never stabilizes a resource: moto, for a stack it broke making)."""

    moto = ""

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urllib.parse.urlsplit(self.moto)
        connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        headers = {key: value for key, value in self.headers.items() if key.lower() not in ("host", "content-length")}
        connection.request(self.command, self.path, body=body, headers=headers)
        answer = connection.getresponse()
        content = answer.read()
        asked = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        if asked.get("Action") == ["DescribeStacks"] and "-Unsettled-" in (asked.get("StackName") or [""])[0]:
            content = content.replace(b"<StackStatus>CREATE_COMPLETE</StackStatus>", b"<StackStatus>CREATE_IN_PROGRESS</StackStatus>")
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        connection.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def impatient(tmp_path: Path, moto_url: str) -> Iterator[ServerProcess]:
    """serve with --operation-timeout, its AWS endpoint the stand-in in front of a moto server."""
    handler = type("Handler", (NeverSettles,), {"moto": moto_url})
    stand_in = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=stand_in.serve_forever, daemon=True).start()
    server = _serve(tmp_path, "--aws-endpoint", f"http://127.0.0.1:{stand_in.server_address[1]}", "--operation-timeout", str(OPERATION_TIMEOUT_S))
    yield server
    server.stop()
    stand_in.shutdown()
    stand_in.server_close()


def test_a_resource_moto_never_settles_fails_at_the_operation_timeout_and_the_stack_rolls_back(impatient: ServerProcess) -> None:
    # The endpoint's stack of Unsettled never reports complete: the resource used to be waited on for ever, the local
    # stack held CREATE_IN_PROGRESS and DeleteStack was refused while it did.
    resources = {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Unsettled": {"Type": "AWS::SNS::Topic", "DependsOn": "Queue"},
    }
    cloudformation = _cloudformation(impatient)
    cloudformation.create_stack(StackName="never-settles", TemplateBody=json.dumps({"Resources": resources}))
    with pytest.raises(WaiterError, match="ROLLBACK_COMPLETE"):  # the create waiter's failure: the stack rolled back
        cloudformation.get_waiter("stack_create_complete").wait(StackName="never-settles", WaiterConfig=FAST)
    events = _events(cloudformation, "never-settles")
    [failed] = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED" and e["LogicalResourceId"] == "Unsettled"]
    assert re.fullmatch(
        r"Resource timed out waiting for completion: the AWS endpoint's stack never-settles-Unsettled-[0-9a-f]{8} was still "
        rf"CREATE_IN_PROGRESS at the end of --operation-timeout \({OPERATION_TIMEOUT_S} s\)",
        failed["ResourceStatusReason"],
    ), failed["ResourceStatusReason"]
    queue = [(e["ResourceStatus"]) for e in events if e["LogicalResourceId"] == "Queue"]
    assert queue[-2:] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"], queue  # the normal rollback
    stack_reasons = [e.get("ResourceStatusReason") for e in events if e["LogicalResourceId"] == "never-settles"]
    assert "The following resource(s) failed to create: [Unsettled]. Rollback requested by user." in stack_reasons, stack_reasons
    # serve is free for the next operation: the stack is deleted
    cloudformation.delete_stack(StackName="never-settles")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="never-settles", WaiterConfig=FAST)
