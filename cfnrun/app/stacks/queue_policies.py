"""AWS::SQS::QueuePolicy made through the AWS endpoint's SQS API rather than its CloudFormation.

moto's CloudFormation (5.x) completes a stack that declares a queue policy without making it, and breaks
on one whose Fn::GetAtt it is asked for; so every queue policy is made here: the template's PolicyDocument becomes each
listed queue's ``Policy`` attribute (SetQueueAttributes), as the type's handler on AWS sets it. An
update sets it again and takes it off the queues no longer listed; a delete takes it off every queue.

The resource's physical id and Ref are its ``Id`` (the type's primaryIdentifier, readOnly in its
registry schema). The service generates one; cfnrun makes it as it makes other generated names
(``stack-Logical-SUFFIX``): inferred, the reference shows no example.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import UPPER, generated_name

QUEUE_POLICY = "AWS::SQS::QueuePolicy"
GONE_CODES = ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist")
ID_LENGTH = 128  # inferred: the schema sets no limit


class QueuePolicies:
    """Queue policies on the endpoint's SQS: how ``AwsTypes`` makes AWS::SQS::QueuePolicy."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.sqs = EndpointService("sqs", "SQS", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: SQS's API is what any endpoint has, and moto's CloudFormation breaks on the type's Fn::GetAtt

    async def put(self, work: ResourceWork) -> Provisioned:
        """Create or update: each listed queue's policy becomes the template's PolicyDocument."""
        queues = _queues(work.properties.get("Queues"))
        document = work.properties.get("PolicyDocument")
        if not queues:
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("Queues")))
        if not isinstance(document, (dict, str)) or not document:
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("PolicyDocument")))
        policy = document if isinstance(document, str) else json.dumps(document)
        for queue in queues:
            await self.sqs.ask("set_queue_attributes", QueueUrl=queue, Attributes={"Policy": policy})
        for queue in _queues((work.model or {}).get("Queues")):
            if queue not in queues:
                await self._remove(queue)
        kept = (work.model or {}).get("Id")
        seed = f"{work.stack.stack_id}/{work.logical_id}/{work.client_request_token}" if work.client_request_token else None
        policy_id = kept if isinstance(kept, str) else generated_name(work.stack.stack_name, work.logical_id, ID_LENGTH, UPPER, seed=seed)
        attributes = {"Id": policy_id} if "Id" in work.attributes_wanted else {}
        return Provisioned(policy_id, policy_id, attributes, {DIRECT_KEY: QUEUE_POLICY, "Id": policy_id, "Queues": queues})

    async def delete(self, work: ResourceWork) -> None:
        """The policy taken off each of its queues; a queue already gone has none."""
        if work.retain:
            return
        for queue in _queues((work.model or {}).get("Queues")):
            await self._remove(queue)

    async def _remove(self, queue: str) -> None:
        await self.sqs.unless_gone(GONE_CODES, "set_queue_attributes", QueueUrl=queue, Attributes={"Policy": ""})

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        """Why the policy may still be there (a queue of it still has a policy), or None when it is gone."""
        for queue in _queues(model.get("Queues")):
            try:
                found = await self.sqs.unless_gone(GONE_CODES, "get_queue_attributes", QueueUrl=queue, AttributeNames=["Policy"])
            except ProvisioningFailed as error:
                return error.reason
            if found is not None and (found.get("Attributes") or {}).get("Policy"):
                return f"the policy of the queue {queue} is still on the AWS endpoint"
        return None


def _queues(value: Any) -> List[str]:
    """The queue URLs a Queues property (or a record) lists."""
    return [queue for queue in value if isinstance(queue, str) and queue] if isinstance(value, list) else []
