"""The network resources moto's CloudFormation leaves behind when their stack there is deleted, deleted through EC2's API.

moto's CloudFormation (5.2) makes AWS::EC2::RouteTable, Route, InternetGateway, VPCGatewayAttachment, NatGateway, EIP, VPNGateway and VPCEndpoint, but its stack
delete does nothing for them (their models have no CloudFormation delete). Left there, the VPC they
belong to cannot be deleted ("The vpc ... has dependencies and cannot be deleted.", moto's
DependencyViolation), so the delete, or the rollback, of any stack with a VPC and an internet gateway
ended DELETE_FAILED or ROLLBACK_FAILED. On AWS the stack's delete removes each of them.

So after the resource's stack on the endpoint is deleted, the resource is deleted with the EC2 call
that removes it (a route table's DeleteRouteTable, an attachment's DetachInternetGateway, ...). The
stack's engine deletes in the reverse order of the template's dependencies, so a route goes before
its route table and an attachment before its gateway and VPC, as on AWS. One the
endpoint no longer has (an endpoint whose CloudFormation deleted it, LocalStack's) is deleted. A
subnet's route table association is made and deleted through EC2's API from the start
(``route_table_associations.py``): moto's CloudFormation does not associate the subnet at all.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import ResourceWork
from cfnrun.app.stacks.direct_types import EndpointService

# what the endpoint answers for a resource, attachment, association or route it does not have
GONE = (
    "InvalidRouteTableID.NotFound", "InvalidRoute.NotFound", "InvalidInternetGatewayID.NotFound",
    "Gateway.NotAttached", "InvalidVpnGatewayID.NotFound", "InvalidVpnGatewayAttachment.NotFound", "NatGatewayNotFound",
    "InvalidNatGatewayID.NotFound", "InvalidAllocationID.NotFound", "InvalidAddress.NotFound", "InvalidVpcEndpointId.NotFound",
    "InvalidVpcID.NotFound",
)
DESTINATIONS = ("DestinationCidrBlock", "DestinationIpv6CidrBlock", "DestinationPrefixListId")


class Ec2Deletes:
    """The EC2 network resources moto's CloudFormation does not delete, deleted on the endpoint's EC2 after their stack there."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.ec2 = EndpointService("ec2", "EC2", endpoint_url, region)

    async def after(self, work: ResourceWork) -> None:
        """Delete what the resource's stack on the endpoint left of it."""
        properties, physical_id = work.properties or {}, work.physical_id
        kind = work.type_name[len("AWS::EC2::"):] if work.type_name.startswith("AWS::EC2::") else ""
        if kind == "Route":
            destination = next(({key: properties[key]} for key in DESTINATIONS if properties.get(key)), None)
            if properties.get("RouteTableId") and destination is not None:
                await self._gone("delete_route", RouteTableId=properties["RouteTableId"], **destination)
        elif kind == "VPCGatewayAttachment" and properties.get("VpcId"):
            if properties.get("InternetGatewayId"):
                await self._gone("detach_internet_gateway", InternetGatewayId=properties["InternetGatewayId"], VpcId=properties["VpcId"])
            elif properties.get("VpnGatewayId"):
                await self._gone("detach_vpn_gateway", VpnGatewayId=properties["VpnGatewayId"], VpcId=properties["VpcId"])
        elif kind == "EIP" and physical_id:
            await self._address_released(physical_id)
        elif physical_id and kind in _BY_ID:
            operation, argument = _BY_ID[kind]
            await self._gone(operation, **{argument: [physical_id] if argument.endswith("Ids") else physical_id})

    async def _gone(self, operation: str, **arguments: Any) -> Optional[Dict[str, Any]]:
        return await self.ec2.unless_gone(GONE, operation, **arguments)

    async def _address_released(self, physical_id: str) -> None:
        """An EIP's physical id is its public address (its Ref): released by its allocation id, or by the address itself."""
        found = await self._gone("describe_addresses", PublicIps=[physical_id])
        for address in (found or {}).get("Addresses", []):
            if address.get("AllocationId"):
                await self._gone("release_address", AllocationId=address["AllocationId"])
            else:
                await self._gone("release_address", PublicIp=physical_id)


# the resources deleted by their physical id: the EC2 call and the argument that takes it (a list for a ``...Ids`` one)
_BY_ID = {
    "RouteTable": ("delete_route_table", "RouteTableId"),
    "InternetGateway": ("delete_internet_gateway", "InternetGatewayId"),
    "NatGateway": ("delete_nat_gateway", "NatGatewayId"),
    "VPNGateway": ("delete_vpn_gateway", "VpnGatewayId"),
    "VPCEndpoint": ("delete_vpc_endpoints", "VpcEndpointIds"),
}
