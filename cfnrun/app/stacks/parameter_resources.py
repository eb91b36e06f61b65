"""AWS-specific parameter values (``AWS::EC2::KeyPair::KeyName``, ``AWS::EC2::VPC::Id`` ...) looked up on the AWS endpoint.

CloudFormation checks that each such value names something in the account as the stack operation starts
(``stacks/validation.py``, ``missing_parameter_value``). On serve the account is the AWS endpoint (``--moto`` or
``--aws-endpoint``): its EC2 and Route 53 are asked, each call listing what exists of that kind. An endpoint that cannot
answer (it has no EC2, say) refuses nothing: the values are then taken as they are, as without an endpoint.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Set

# each AWS-specific type: how to list the names or ids in use among ``values`` (a kind an account holds many of, such as
# images, is asked for those values alone: moto's EC2 lists 1,301 images in ~3 s, one by its id in ~15 ms)
_LISTED: Dict[str, Callable[[Any, Sequence[str]], Iterable[str]]] = {
    "AWS::EC2::AvailabilityZone::Name": lambda ec2, values: (z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]),
    "AWS::EC2::Image::Id": lambda ec2, values: (
        i["ImageId"] for i in ec2.describe_images(Filters=[{"Name": "image-id", "Values": list(values)}])["Images"]
    ),
    "AWS::EC2::Instance::Id": lambda ec2, values: (
        i["InstanceId"]
        for page in ec2.get_paginator("describe_instances").paginate(Filters=[{"Name": "instance-id", "Values": list(values)}])
        for r in page["Reservations"] for i in r["Instances"]
    ),
    "AWS::EC2::KeyPair::KeyName": lambda ec2, values: (k["KeyName"] for k in ec2.describe_key_pairs()["KeyPairs"]),
    "AWS::EC2::SecurityGroup::GroupName": lambda ec2, values: (
        g["GroupName"] for page in ec2.get_paginator("describe_security_groups").paginate() for g in page["SecurityGroups"]
    ),
    "AWS::EC2::SecurityGroup::Id": lambda ec2, values: (
        g["GroupId"] for page in ec2.get_paginator("describe_security_groups").paginate() for g in page["SecurityGroups"]
    ),
    "AWS::EC2::Subnet::Id": lambda ec2, values: (
        s["SubnetId"] for page in ec2.get_paginator("describe_subnets").paginate() for s in page["Subnets"]
    ),
    "AWS::EC2::Volume::Id": lambda ec2, values: (
        v["VolumeId"]
        for page in ec2.get_paginator("describe_volumes").paginate(Filters=[{"Name": "volume-id", "Values": list(values)}])
        for v in page["Volumes"]
    ),
    "AWS::EC2::VPC::Id": lambda ec2, values: (v["VpcId"] for page in ec2.get_paginator("describe_vpcs").paginate() for v in page["Vpcs"]),
    # a hosted zone's Id is /hostedzone/Z123; parameters name it Z123
    "AWS::Route53::HostedZone::Id": lambda route53, values: (
        z["Id"].rsplit("/", 1)[-1] for page in route53.get_paginator("list_hosted_zones").paginate() for z in page["HostedZones"]
    ),
}


class ParameterResources:
    """``missing(type, values)``: the first value naming nothing of that type on the endpoint (``StackEnvironment.aws_value_missing``)."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.endpoint_url = endpoint_url
        self.region = region
        self._clients: Dict[str, Any] = {}
        self._lock = threading.Lock()  # asked from worker threads, one per operation starting

    def missing(self, type_name: str, values: Sequence[str]) -> Optional[str]:
        listed = _LISTED.get(type_name)
        if listed is None or not values:
            return None
        existing = self._existing(listed, values, "route53" if type_name.startswith("AWS::Route53::") else "ec2")
        if existing is None:
            return None
        return next((value for value in values if value not in existing), None)

    def _existing(self, listed: Callable[[Any, Sequence[str]], Iterable[str]], values: Sequence[str], service: str) -> Optional[Set[str]]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return set(listed(self._client(service), values))
        except (BotoCoreError, ClientError, KeyError):
            return None  # the endpoint cannot say: nothing is refused for it

    def _client(self, service: str) -> Any:
        with self._lock:
            if service not in self._clients:
                import boto3  # what the endpoint speaks; imported once a template declares such a parameter

                self._clients[service] = boto3.client(
                    service, endpoint_url=self.endpoint_url, region_name=self.region,
                    aws_access_key_id="testing", aws_secret_access_key="testing",
                )
            return self._clients[service]
