"""AWS::S3::BucketPolicy made through the AWS endpoint's S3 API, for an endpoint whose CloudFormation lacks the type.

moto's CloudFormation (5.x) completes a stack that declares a bucket policy without making it
(``aws_types.py`` finds that out and asks here instead): the policy is then put with S3's own
PutBucketPolicy on the same endpoint, replaced by it on update, and removed by DeleteBucketPolicy.
The resource's physical id and Ref are its bucket's name, the type's primaryIdentifier in its
registry schema (``/properties/Bucket``: inferred from the schema, the reference names no Ref).
What the resource keeps in its record says so (``DIRECT_KEY``), so an update, a delete and the
checks after a restart or a delete go the same way.

moto's S3 enforces a bucket policy without its Conditions (moto 5.2: ``IAMPolicy.is_action_permitted``
reads actions and resources only), so a Deny statement with a Condition there denies every call it
names: cfn submit's ``Require Secure Transport`` statement (Deny ``s3:*`` when ``aws:SecureTransport``
is false) would refuse its own upload, on an endpoint reached over http at that. Such statements are
left out of the policy put on the endpoint, and the resource's event says which; a policy left with no
statement is not put at all. The stack keeps the template's policy as written.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService

BUCKET_POLICY = "AWS::S3::BucketPolicy"
GONE_CODES = ("NoSuchBucket", "NoSuchBucketPolicy")


class BucketPolicies:
    """Bucket policies on the endpoint's S3: what ``AwsTypes`` does for AWS::S3::BucketPolicy when the endpoint's stacks cannot."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.s3 = EndpointService("s3", "S3", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return False  # through the endpoint's CloudFormation first: an endpoint that makes bucket policies there makes them

    async def put(self, work: ResourceWork) -> Provisioned:
        """Create or update: the bucket's policy becomes the template's PolicyDocument."""
        bucket = work.properties.get("Bucket")
        document = work.properties.get("PolicyDocument")
        if not isinstance(bucket, str) or not bucket:
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("Bucket")))
        if not isinstance(document, (dict, str)):
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("PolicyDocument")))
        policy, left_out = enforceable(json.loads(document) if isinstance(document, str) else document)
        if left_out:
            work.note(
                f"cfnrun left out of the policy put on the AWS endpoint's S3 the Deny statement(s) with a Condition "
                f"({', '.join(left_out)}): moto enforces a policy without its Conditions, so they would deny every call"
            )
        if policy["Statement"]:
            await self.s3.ask("put_bucket_policy", Bucket=bucket, Policy=json.dumps(policy))
        elif work.model:  # an update that leaves nothing to enforce: the earlier policy goes
            await self._delete(bucket)
        return Provisioned(bucket, bucket, {}, {DIRECT_KEY: BUCKET_POLICY, "Bucket": bucket})

    async def delete(self, work: ResourceWork) -> None:
        """The bucket's policy removed; a bucket or policy already gone is a policy deleted."""
        bucket = (work.model or {}).get("Bucket") or work.physical_id
        if work.retain or not isinstance(bucket, str):
            return
        await self._delete(bucket)

    async def _delete(self, bucket: str) -> None:
        await self.s3.unless_gone(GONE_CODES, "delete_bucket_policy", Bucket=bucket)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        """Why the policy may still be there (its bucket still has one), or None when it is gone."""
        bucket = model.get("Bucket")
        if not isinstance(bucket, str):
            return "cfnrun has no record of the policy's bucket"
        return await self.s3.still_there(GONE_CODES, f"the policy of its bucket {bucket}", "get_bucket_policy", Bucket=bucket)


def enforceable(document: Dict[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """The policy without its Deny statements that have a Condition, and those statements' Sids (or positions)."""
    statements = document.get("Statement")
    listed = statements if isinstance(statements, list) else [statements] if isinstance(statements, dict) else []
    kept, left_out = [], []
    for index, statement in enumerate(listed):
        if isinstance(statement, dict) and statement.get("Effect") == "Deny" and statement.get("Condition"):
            left_out.append(str(statement.get("Sid") or f"statement {index + 1}"))
        else:
            kept.append(statement)
    return {**document, "Statement": kept}, left_out
