"""``Fn::GetAZs`` on serve: the region's Availability Zones as the AWS endpoint's EC2 reports them.

CloudFormation's reference says what the service does: it lists the region's zones in
alphabetical order, only those with a default subnet unless none has one (then all), asking EC2
(DescribeAvailabilityZones, DescribeSubnets). cfnrun asks the endpoint the same (moto's EC2 has a
default VPC with a default subnet in each zone), once a region per serve: a template resolves
``Fn::GetAZs`` wherever it is used, and the answer does not change under it. An endpoint that
cannot answer, or no endpoint, gives the zones AWS lists for the region (``listed_zones``).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from cfnrun.stacks.template.availability_zones import listed_zones


class EndpointZones:
    """The Availability Zones of each region, read from the endpoint's EC2 on first use."""

    def __init__(self, endpoint_url: Optional[str]) -> None:
        self.endpoint_url = endpoint_url
        self._zones: Dict[str, Tuple[str, ...]] = {}

    def zones(self, region: str) -> Tuple[str, ...]:
        if region not in self._zones:
            self._zones[region] = (self._asked(region) if self.endpoint_url else None) or listed_zones(region)
        return self._zones[region]

    def _asked(self, region: str) -> Optional[Tuple[str, ...]]:
        """The zones the endpoint's EC2 reports for ``region`` (those with a default subnet, if any has one); None when it cannot say."""
        import boto3  # what the endpoint speaks; imported once a template calls Fn::GetAZs
        from botocore.exceptions import BotoCoreError, ClientError

        ec2: Any = boto3.client(
            "ec2", endpoint_url=self.endpoint_url, region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing",
        )
        try:
            described = ec2.describe_availability_zones(Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}])
            subnets = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])
        except (BotoCoreError, ClientError):
            return None
        available = sorted(z["ZoneName"] for z in described.get("AvailabilityZones", []) if z.get("State", "available") == "available")
        with_default = {s.get("AvailabilityZone") for s in subnets.get("Subnets", [])}
        return tuple([z for z in available if z in with_default] or available) or None
