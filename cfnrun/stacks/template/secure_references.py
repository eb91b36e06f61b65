"""Where a template may use ``{{resolve:ssm-secure:…}}``: only in the resource properties the service supports it in.

AWS's "Get a secure string value from Systems Manager Parameter Store" page lists the properties that take an
``ssm-secure`` reference (``SUPPORTED``, as the page's table has them; cfn-lint's E1027 keeps the same list) and says
custom resources take none. Anywhere else the service refuses the template, naming each place:
``SSM Secure reference is not supported in: [AWS::Lambda::Function/Properties/Environment/Variables/API_KEY]`` (its
words, as users quote them from a FAILED change set's status reason). Inferred, not read: how a place in a list or
in Outputs is named (its index; ``Outputs/Name/Value``), and that your own types' properties (not AWS's, not a
custom resource's) take it — the list covers AWS's types only, and a third-party type's writeOnly password is the
case the reference exists for. Only the reference's text is named, never a value.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, List, Optional

from cfnrun.stacks.template.declarations import StackTemplate, is_custom_resource

SECURE_REFERENCE = re.compile(r"\{\{resolve:ssm-secure:[^}]*\}\}")
NOT_SUPPORTED = "SSM Secure reference is not supported in: [{places}]"
SUPPORTED = (
    "AWS::DirectoryService::MicrosoftAD/Properties/Password",
    "AWS::DirectoryService::SimpleAD/Properties/Password",
    "AWS::ElastiCache::ReplicationGroup/Properties/AuthToken",
    "AWS::IAM::User/Properties/LoginProfile/Password",
    "AWS::KinesisFirehose::DeliveryStream/Properties/RedshiftDestinationConfiguration/Password",
    "AWS::OpsWorks::App/Properties/AppSource/Password",
    "AWS::OpsWorks::Stack/Properties/CustomCookbooksSource/Password",
    "AWS::OpsWorks::Stack/Properties/RdsDbInstances/*/DbPassword",
    "AWS::RDS::DBCluster/Properties/MasterUserPassword",
    "AWS::RDS::DBInstance/Properties/MasterUserPassword",
    "AWS::Redshift::Cluster/Properties/MasterUserPassword",
)


def unsupported_secure_references(template: StackTemplate) -> List[str]:
    """The places (as the service names them) where the template uses ssm-secure and may not, in template order."""
    places: List[str] = []
    for declaration in template.resources.values():
        for path in _secure_paths(declaration.properties, []):
            place = "/".join([declaration.type, "Properties", *path])
            if not _takes_secure(declaration.type, place):
                places.append(place)
    for output in template.outputs.values():
        if _holds_secure(output.value):
            places.append(f"Outputs/{output.name}/Value")
        if _holds_secure(output.export_name):
            places.append(f"Outputs/{output.name}/Export/Name")
    return places


def secure_reference_problem(template: StackTemplate) -> Optional[str]:
    """The service's refusal of a template using ssm-secure where it may not, or None."""
    places = unsupported_secure_references(template)
    return NOT_SUPPORTED.format(places=",".join(places)) if places else None


def _takes_secure(type_name: str, place: str) -> bool:
    if is_custom_resource(type_name):
        return False
    if not type_name.startswith("AWS::"):
        return True  # your own types (inferred: the service's list names AWS's types only)
    general = re.sub(r"/\d+(?=/|$)", "/*", place)
    return general in SUPPORTED


def _holds_secure(value: Any) -> bool:
    return any(True for _ in _secure_paths(value, []))


def _secure_paths(value: Any, path: List[str]) -> Iterator[List[str]]:
    """The path of each value holding an ssm-secure reference; inside an intrinsic function, the path to the function."""
    if isinstance(value, str):
        if SECURE_REFERENCE.search(value):
            yield path
    elif isinstance(value, dict):
        if len(value) == 1 and next(iter(value)).startswith(("Fn::", "Ref")):
            if _holds_secure(next(iter(value.values()))):
                yield path
            return
        for key, item in value.items():
            yield from _secure_paths(item, [*path, str(key)])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secure_paths(item, [*path, str(index)])
