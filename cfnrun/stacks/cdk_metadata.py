"""``AWS::CDK::Metadata``, provisioned by cfnrun itself: the resource the CDK adds to every stack it synthesizes.

The service keeps it for CDK's usage reporting and makes nothing anywhere, so no AWS endpoint has
it (moto's CloudFormation completes its stack without making anything). cfnrun does what the
service does as seen from the stack: the resource is created, updated in place when its
``Analytics`` (or any property) changes, and deleted, each at once; its physical id is a UUID
(inferred: the service shows one, and nothing reads it) and it has no ``Fn::GetAtt`` attribute.
"""
from __future__ import annotations

import uuid
from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, Replacement, ResourceWork

CDK_METADATA_TYPE = "AWS::CDK::Metadata"


class CdkMetadata:
    """The ``Provisioner`` of ``AWS::CDK::Metadata``: a record in the stack, nothing made."""

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        return None

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.NEVER

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    async def create(self, work: ResourceWork) -> Provisioned:
        physical_id = str(uuid.uuid4())
        return Provisioned(physical_id, physical_id)

    async def update(self, work: ResourceWork) -> Provisioned:
        physical_id = str(work.physical_id or uuid.uuid4())
        return Provisioned(physical_id, physical_id)

    async def delete(self, work: ResourceWork) -> None:
        return None
