"""AWS::SQS::QueuePolicy, AWS::SNS::TopicPolicy and AWS::SNS::Subscription in local stacks on ``--moto``, whose CloudFormation
completes these types without making them: made, updated, replaced and deleted through moto's SQS and SNS APIs
(``app/stacks/resource_policies.py``, ``app/stacks/sns_subscriptions.py``), so a topic fanning out to a queue works as the
template says."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.2, "MaxAttempts": 1500}
pytestmark = pytest.mark.timeout(PATIENCE_S * 3)


def _template(policy_queue: str, subscribed: str, subscription: Dict[str, Any]) -> str:
    statement = {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
                 "Resource": {"Fn::GetAtt": [policy_queue, "Arn"]}, "Condition": {"ArnEquals": {"aws:SourceArn": {"Ref": "Topic"}}}}
    return json.dumps({"Resources": {
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Alerts": {"Type": "AWS::SNS::Topic"},
        "TopicPolicy": {"Type": "AWS::SNS::TopicPolicy", "Properties": {
            "Topics": [{"Ref": "Topic" if policy_queue == "Inbox" else "Alerts"}], "PolicyDocument": {"Statement": [{
                "Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"}, "Action": "sns:Publish", "Resource": "*"}]}}},
        "Inbox": {"Type": "AWS::SQS::Queue"},
        "Archive": {"Type": "AWS::SQS::Queue"},
        "Policy": {"Type": "AWS::SQS::QueuePolicy",
                   "Properties": {"Queues": [{"Ref": policy_queue}], "PolicyDocument": {"Version": "2012-10-17", "Statement": [statement]}}},
        "Subscription": {"Type": "AWS::SNS::Subscription", "Properties": {
            "TopicArn": {"Ref": "Topic"}, "Protocol": "sqs", "Endpoint": {"Fn::GetAtt": [subscribed, "Arn"]}, **subscription}},
    }, "Outputs": {"PolicyId": {"Value": {"Ref": "Policy"}}, "SubscriptionArn": {"Value": {"Fn::GetAtt": ["Subscription", "Arn"]}}}})


def _topic_policy(sns: Any, topic: str) -> Dict[str, Any]:
    return dict(json.loads(sns.get_topic_attributes(TopicArn=topic)["Attributes"]["Policy"]))


def _received(sqs: Any, queue: str) -> Optional[str]:
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1).get("Messages", [])
    if not messages:
        return None
    sqs.delete_message(QueueUrl=queue, ReceiptHandle=messages[0]["ReceiptHandle"])
    return str(messages[0]["Body"])


def _policy(sqs: Any, queue: str) -> Optional[str]:
    return sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["Policy"]).get("Attributes", {}).get("Policy")


def test_a_topic_fans_out_to_a_queue_whose_policies_and_subscription_are_made_updated_replaced_and_deleted(tmp_path: Path) -> None:
    import boto3

    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    server = ServerProcess(project, "--no-reload", "--moto")
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        sqs, sns = (boto3.client(service, endpoint_url=server.moto_url(), **CREDENTIALS) for service in ("sqs", "sns"))
        filtered = {"FilterPolicy": {"kind": ["note"]}, "RawMessageDelivery": True}
        cloudformation.create_stack(StackName="fanout", TemplateBody=_template("Inbox", "Inbox", filtered))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="fanout", WaiterConfig=FAST)
        resources = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="fanout")["StackResources"]}
        inbox, archive, topic, arn = resources["Inbox"], resources["Archive"], resources["Topic"], resources["Subscription"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName="fanout")["Stacks"][0]["Outputs"]}
        assert outputs == {"PolicyId": resources["Policy"], "SubscriptionArn": arn}
        assert resources["Policy"].startswith("fanout-Policy-") and arn.startswith(topic + ":")
        assert json.loads(_policy(sqs, inbox) or "{}")["Statement"][0]["Action"] == "sqs:SendMessage" and _policy(sqs, archive) is None
        alerts = resources["Alerts"]
        assert _topic_policy(sns, topic)["Statement"][0]["Principal"] == {"Service": "events.amazonaws.com"}
        assert _topic_policy(sns, alerts)["Id"] == "__default_policy_ID"
        # the subscription's settings hold: the matching message arrives raw, the other is filtered out
        sns.publish(TopicArn=topic, Message="skipped", MessageAttributes={"kind": {"DataType": "String", "StringValue": "other"}})
        sns.publish(TopicArn=topic, Message="hello", MessageAttributes={"kind": {"DataType": "String", "StringValue": "note"}})
        assert _received(sqs, inbox) == "hello" and _received(sqs, inbox) is None

        # the policy moves to the other queue; the subscription's settings change in place (RawMessageDelivery taken out)
        cloudformation.update_stack(StackName="fanout", TemplateBody=_template("Archive", "Inbox", {"FilterPolicy": {"kind": ["todo"]}}))
        cloudformation.get_waiter("stack_update_complete").wait(StackName="fanout", WaiterConfig=FAST)
        after = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cloudformation.describe_stack_resources(StackName="fanout")["StackResources"]}
        assert after == resources
        assert _policy(sqs, inbox) is None and _policy(sqs, archive) is not None
        # the topic policy moved too: the topic it left has SNS's default policy back
        assert _topic_policy(sns, topic)["Id"] == "__default_policy_ID" and _topic_policy(sns, topic)["Statement"][0]["Condition"]
        assert _topic_policy(sns, alerts)["Statement"][0]["Principal"] == {"Service": "events.amazonaws.com"}
        settings = sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"]
        assert (json.loads(settings["FilterPolicy"]), settings["RawMessageDelivery"]) == ({"kind": ["todo"]}, "false")

        # a new Endpoint (createOnly) replaces the subscription: the old one goes in the cleanup
        cloudformation.update_stack(StackName="fanout", TemplateBody=_template("Archive", "Archive", {}))
        cloudformation.get_waiter("stack_update_complete").wait(StackName="fanout", WaiterConfig=FAST)
        replaced = cloudformation.describe_stack_resource(StackName="fanout", LogicalResourceId="Subscription")["StackResourceDetail"]["PhysicalResourceId"]
        assert replaced != arn
        with pytest.raises(ClientError, match="NotFound"):
            sns.get_subscription_attributes(SubscriptionArn=arn)
        sns.publish(TopicArn=topic, Message="to the archive")
        assert json.loads(_received(sqs, archive) or "{}").get("Message") == "to the archive"  # not raw: the SNS envelope

        cloudformation.delete_stack(StackName="fanout")
        cloudformation.get_waiter("stack_delete_complete").wait(StackName="fanout", WaiterConfig=FAST)
        assert sns.list_subscriptions()["Subscriptions"] == [] and sqs.list_queues().get("QueueUrls", []) == []
    finally:
        server.stop(timeout=PATIENCE_S)
