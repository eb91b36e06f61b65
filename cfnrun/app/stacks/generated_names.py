"""Names for AWS::* resources declared without one, made the way CloudFormation makes them, before they go to the endpoint.

The service names such a resource itself: a prefix (the stack's name, or the type's own, such as
``CFN`` for Systems Manager parameters), the logical id and a random suffix of 12 letters and
digits (upper-case ones for the older types: the AWS::SQS::Queue reference's example Ref is
``…/aa4-MyQueue-Z5NOSZO2PZE9``; all lower-case for buckets, whose names must be), cut to the
type's length limit. A FIFO queue or topic gets the ``.fifo`` ending its service requires.

cfnrun must name these resources itself: each AWS resource goes to the endpoint as a
one-resource stack of its own (``aws_types.py``), and moto, left to name it, would put that
inner stack's name (``stack-Logical-1a2b3c4d``) where the stack's belongs, giving
``stack-Logical-1a2b3c4d-Logical-…``. A name made here is kept on every update (its record holds
it) and a CREATE made again with the same request token makes the same name (``seed``).
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import ResourceWork

GENERATED_NAME_KEY = "cfnrun:generatedName"  # where a resource's generated name is kept, in its record
SUFFIX_LENGTH = 12
MIXED = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
FIFO = ".fifo"


@dataclass(frozen=True)
class NameRule:
    property_name: str
    max_length: int
    prefix: Optional[str] = None  # None: the stack's name; "": none (the logical id first)
    alphabet: str = UPPER
    lower_case: bool = False
    fifo_flag: Optional[str] = None  # the property that, true, makes the name end in .fifo


NAME_RULES: Dict[str, NameRule] = {
    "AWS::SSM::Parameter": NameRule("Name", 40, prefix="CFN", alphabet=MIXED),  # the SSM provider's: CFN-Logical-random, 40 at most
    "AWS::SQS::Queue": NameRule("QueueName", 80, fifo_flag="FifoQueue"),
    "AWS::SNS::Topic": NameRule("TopicName", 256, fifo_flag="FifoTopic"),
    "AWS::S3::Bucket": NameRule("BucketName", 63, lower_case=True),
    "AWS::DynamoDB::Table": NameRule("TableName", 255),
    # mixed case, as names the service made in 2026 show (yulin issue 1113: a role's ...-UjecjFhpdr1d, a log group's
    # ...-UJ5n2NwuSPZB); a user's is inferred to be the role's
    "AWS::IAM::Role": NameRule("RoleName", 64, alphabet=MIXED),
    "AWS::IAM::User": NameRule("UserName", 64, alphabet=MIXED),
    "AWS::Logs::LogGroup": NameRule("LogGroupName", 512, alphabet=MIXED),
    "AWS::Kinesis::Stream": NameRule("Name", 128),
    # mixed case, as SAM's guides show a generated function name (sam-app-HelloWorldFunction-<12 letters and digits>)
    "AWS::Lambda::Function": NameRule("FunctionName", 64, alphabet=MIXED),
    "AWS::EC2::SecurityGroup": NameRule("GroupName", 255),
    "AWS::Events::Rule": NameRule("Name", 64),
    # no stack name, mixed case: StateMachine-3ypO3dryEmXE in a SAM stack (aws-sam-cli issue 2022); 80 at most
    "AWS::StepFunctions::StateMachine": NameRule("StateMachineName", 80, prefix="", alphabet=MIXED),
    "AWS::IAM::ManagedPolicy": NameRule("ManagedPolicyName", 128),
    "AWS::IAM::InstanceProfile": NameRule("InstanceProfileName", 128),
    "AWS::ECR::Repository": NameRule("RepositoryName", 256, lower_case=True),  # ECR takes lower-case names only
    "AWS::ECS::Cluster": NameRule("ClusterName", 255, alphabet=MIXED),
    # a load balancer's and a target group's names are 32 characters at most; upper-case suffixes, as the service's
    # generated ALB names show (inferred for target groups and Auto Scaling groups)
    "AWS::ElasticLoadBalancingV2::LoadBalancer": NameRule("Name", 32),
    "AWS::ElasticLoadBalancingV2::TargetGroup": NameRule("Name", 32),
    "AWS::AutoScaling::AutoScalingGroup": NameRule("AutoScalingGroupName", 255),
    "AWS::ECS::Service": NameRule("ServiceName", 255, alphabet=MIXED),  # mixed case, as the ECS cluster's (inferred)
    # RDS keeps names lower-case (it lower-cases what it is given); a subnet group's name is its Ref
    "AWS::RDS::DBSubnetGroup": NameRule("DBSubnetGroupName", 255, lower_case=True),
}


def _fitted(prefix: str, logical_id: str, room: int) -> "tuple[str, str]":
    """``prefix`` and ``logical_id`` cut so that both, and the hyphen between them, take ``room`` characters at most:
    the longer one is cut first, so a short logical id survives a long stack name and the other way round. Without a
    prefix, the logical id alone is cut."""
    if not prefix:
        return prefix, logical_id[:room]
    while len(prefix) + len(logical_id) + 1 > room and (prefix or logical_id):
        if len(logical_id) >= len(prefix):
            logical_id = logical_id[:-1]
        else:
            prefix = prefix[:-1]
    return prefix, logical_id


def generated_name(prefix: str, logical_id: str, max_length: int, alphabet: str = MIXED, ending: str = "",
                   seed: Optional[str] = None) -> str:
    """``prefix-logicalId-SUFFIX[ending]`` (``logicalId-SUFFIX[ending]`` without a prefix) within ``max_length``;
    ``seed``: the same seed, the same suffix."""
    chooser = random.Random(seed) if seed is not None else random.SystemRandom()
    suffix = "".join(chooser.choice(alphabet) for _ in range(SUFFIX_LENGTH))
    prefix, logical_id = _fitted(prefix, logical_id, max_length - len(suffix) - len(ending) - 1)
    return f"{prefix + '-' if prefix else ''}{logical_id}-{suffix}{ending}"


def name_seed(work: ResourceWork) -> Optional[str]:
    """The seed that makes the same name for the same CREATE made again (its request token), or None without one."""
    return f"{work.stack.stack_id}/{work.logical_id}/{work.client_request_token}" if work.client_request_token else None


def generated_for(work: ResourceWork, max_length: int, alphabet: str, prefix: Optional[str] = None) -> str:
    """The name the service would give ``work``'s resource: ``stack-Logical-SUFFIX`` (``prefix`` in place of the stack's name)."""
    return generated_name(work.stack.stack_name if prefix is None else prefix, work.logical_id, max_length, alphabet, seed=name_seed(work))


def named(type_name: str, stack_name: str, logical_id: str, properties: Dict[str, Any], kept: Optional[str],
          seed: Optional[str] = None) -> Optional[str]:
    """The name to give a resource declared without one (``kept``: the one it was given before), or None when it needs none."""
    rule = NAME_RULES.get(type_name)
    if rule is None or properties.get(rule.property_name) is not None:
        return None
    if kept:
        return kept
    ending = FIFO if rule.fifo_flag and str(properties.get(rule.fifo_flag)).lower() == "true" else ""
    name = generated_name(stack_name if rule.prefix is None else rule.prefix, logical_id, rule.max_length, rule.alphabet, ending, seed)
    return name.lower() if rule.lower_case else name


def with_name(type_name: str, properties: Dict[str, Any], name: Optional[str]) -> Dict[str, Any]:
    if name is None:
        return properties
    return {**properties, NAME_RULES[type_name].property_name: name}
