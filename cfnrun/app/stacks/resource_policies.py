"""AWS::SQS::QueuePolicy and AWS::SNS::TopicPolicy made through the AWS endpoint's SQS and SNS APIs.

moto's CloudFormation (5.x) completes a stack that declares a queue or topic policy without making
it, and breaks on one whose Fn::GetAtt it is asked for; so every such policy is made here, as the
type's handler on AWS makes it: the template's PolicyDocument becomes the ``Policy`` attribute of each
queue in ``Queues`` (SetQueueAttributes) or topic in ``Topics`` (SetTopicAttributes). An update sets it
again and takes it off the queues or topics no longer listed; a delete takes it off each of them. A
queue is then left without a policy; a topic gets SNS's default policy back (the one SNS gives a new
topic: its owner's account may use it), as on AWS.

The resource's physical id and Ref are its ``Id`` (the types' primaryIdentifier, readOnly in their
registry schemas). The service generates one; cfnrun makes it as it makes other generated names
(``stack-Logical-SUFFIX``): inferred, the references show no example.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import UPPER, generated_for

QUEUE_POLICY = "AWS::SQS::QueuePolicy"
TOPIC_POLICY = "AWS::SNS::TopicPolicy"
ID_LENGTH = 128  # inferred: the schemas set no limit
DEFAULT_TOPIC_POLICY_ID = "__default_policy_ID"
# what SNS allows a topic's own account to do by default (its developer guide's default topic policy)
DEFAULT_TOPIC_ACTIONS = ("SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission", "SNS:RemovePermission",
                         "SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish")


class AttachedPolicies:
    """A policy set on each of a list of queues or topics; ``_set``, ``_remove`` and ``_holds`` say how on each service."""

    type_name = ""
    targets = ""  # the property that lists them
    gone: Tuple[str, ...] = ()

    def __init__(self, service: EndpointService) -> None:
        self.service = service

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: the service's API is what any endpoint has

    async def put(self, work: ResourceWork) -> Provisioned:
        """Create or update: each listed target's policy becomes the template's PolicyDocument."""
        targets = _listed(work.properties.get(self.targets))
        document = work.properties.get("PolicyDocument")
        for name, missing in ((self.targets, not targets), ("PolicyDocument", not isinstance(document, (dict, str)) or not document)):
            if missing:
                raise ProvisioningFailed(property_problem(work.logical_id, required_key(name)))
        policy = document if isinstance(document, str) else json.dumps(document)
        for target in targets:
            await self._set(target, policy)
        for target in _listed((work.model or {}).get("Targets")):
            if target not in targets:
                await self._remove(target)
        kept = (work.model or {}).get("Id")
        policy_id = kept if isinstance(kept, str) else generated_for(work, ID_LENGTH, UPPER)
        attributes = {"Id": policy_id} if "Id" in work.attributes_wanted else {}
        return Provisioned(policy_id, policy_id, attributes, {DIRECT_KEY: self.type_name, "Id": policy_id, "Targets": targets})

    async def delete(self, work: ResourceWork) -> None:
        """The policy taken off each of its targets; a target already gone has none."""
        if work.retain:
            return
        for target in _listed((work.model or {}).get("Targets")):
            await self._remove(target)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        """Why the policy may still be there (a target of it still holds it), or None when it is gone."""
        for target in _listed(model.get("Targets")):
            try:
                if await self._holds(target):
                    return f"the policy of {target} is still on the AWS endpoint"
            except ProvisioningFailed as error:
                return error.reason
        return None

    async def _set(self, target: str, policy: str) -> None:
        raise NotImplementedError

    async def _remove(self, target: str) -> None:
        raise NotImplementedError

    async def _holds(self, target: str) -> bool:
        raise NotImplementedError


class QueuePolicies(AttachedPolicies):
    """Queue policies on the endpoint's SQS."""

    type_name, targets = QUEUE_POLICY, "Queues"
    gone = ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist")

    def __init__(self, endpoint_url: str, region: str) -> None:
        super().__init__(EndpointService("sqs", "SQS", endpoint_url, region))

    async def _set(self, target: str, policy: str) -> None:
        await self.service.ask("set_queue_attributes", QueueUrl=target, Attributes={"Policy": policy})

    async def _remove(self, target: str) -> None:
        await self.service.unless_gone(self.gone, "set_queue_attributes", QueueUrl=target, Attributes={"Policy": ""})

    async def _holds(self, target: str) -> bool:
        found = await self.service.unless_gone(self.gone, "get_queue_attributes", QueueUrl=target, AttributeNames=["Policy"])
        return found is not None and bool((found.get("Attributes") or {}).get("Policy"))


class TopicPolicies(AttachedPolicies):
    """Topic policies on the endpoint's SNS."""

    type_name, targets = TOPIC_POLICY, "Topics"
    gone = ("NotFound",)

    def __init__(self, endpoint_url: str, region: str) -> None:
        super().__init__(EndpointService("sns", "SNS", endpoint_url, region))

    async def _set(self, target: str, policy: str) -> None:
        await self.service.ask("set_topic_attributes", TopicArn=target, AttributeName="Policy", AttributeValue=policy)

    async def _remove(self, target: str) -> None:
        policy = json.dumps(default_topic_policy(target))
        await self.service.unless_gone(self.gone, "set_topic_attributes", TopicArn=target, AttributeName="Policy", AttributeValue=policy)

    async def _holds(self, target: str) -> bool:
        found = await self.service.unless_gone(self.gone, "get_topic_attributes", TopicArn=target)
        if found is None:
            return False
        try:
            policy = json.loads((found.get("Attributes") or {}).get("Policy") or "{}")
        except ValueError:
            return True
        return not isinstance(policy, dict) or policy.get("Id") != DEFAULT_TOPIC_POLICY_ID


def default_topic_policy(topic_arn: str) -> Dict[str, Any]:
    """The policy SNS gives a new topic: its own account may use and manage it."""
    account = topic_arn.split(":")[4] if topic_arn.count(":") >= 5 else ""
    return {"Version": "2008-10-17", "Id": DEFAULT_TOPIC_POLICY_ID, "Statement": [{
        "Sid": "__default_statement_ID", "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": list(DEFAULT_TOPIC_ACTIONS),
        "Resource": topic_arn, "Condition": {"StringEquals": {"AWS:SourceOwner": account}},
    }]}


def _listed(value: Any) -> List[str]:
    """The queue URLs or topic ARNs a property (or a record) lists."""
    return [target for target in value if isinstance(target, str) and target] if isinstance(value, list) else []
