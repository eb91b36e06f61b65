"""AWS::EC2::SubnetRouteTableAssociation made through the AWS endpoint's EC2 API rather than its CloudFormation.

moto's CloudFormation (5.2) records such an association beside the route table without associating
the subnet (DescribeRouteTables shows none), gives the route table's id as its physical id, and
deletes nothing with its stack. The type's handler on AWS calls AssociateRouteTable, and the
resource's physical id and Ref are the association's id (``rtbassoc-...``); here too. Both
properties are createOnly in the type's registry schema, so a change replaces the association (the
engine does that); a delete is DisassociateRouteTable.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService

ASSOCIATION = "AWS::EC2::SubnetRouteTableAssociation"
GONE = ("InvalidAssociationID.NotFound",)


class RouteTableAssociations:
    """Subnets' route table associations on the endpoint's EC2: how ``AwsTypes`` makes AWS::EC2::SubnetRouteTableAssociation."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.ec2 = EndpointService("ec2", "EC2", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not associate the subnet

    async def put(self, work: ResourceWork) -> Provisioned:
        association = (work.model or {}).get("Id")
        if not isinstance(association, str):  # both properties are createOnly: an update changes nothing here
            for required in ("RouteTableId", "SubnetId"):
                if not isinstance(work.properties.get(required), str) or not work.properties[required]:
                    raise ProvisioningFailed(property_problem(work.logical_id, required_key(required)))
            answer = await self.ec2.ask("associate_route_table", RouteTableId=work.properties["RouteTableId"], SubnetId=work.properties["SubnetId"])
            association = str(answer["AssociationId"])
        attributes = {"Id": association} if "Id" in work.attributes_wanted else {}
        return Provisioned(association, association, attributes, {DIRECT_KEY: ASSOCIATION, "Id": association})

    async def delete(self, work: ResourceWork) -> None:
        association = (work.model or {}).get("Id") or work.physical_id
        if not work.retain and isinstance(association, str):
            await self.ec2.unless_gone(GONE, "disassociate_route_table", AssociationId=association)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        association = model.get("Id")
        if not isinstance(association, str):
            return "cfnrun has no record of the association's id"
        try:
            found = await self.ec2.ask(
                "describe_route_tables", Filters=[{"Name": "association.route-table-association-id", "Values": [association]}]
            )
        except ProvisioningFailed as error:
            return error.reason
        return f"the route table association {association} is still on the AWS endpoint" if found.get("RouteTables") else None
