"""AWS::Lambda::Version, Alias, Url and Permission made through the AWS endpoint's Lambda API rather than its CloudFormation.

moto's CloudFormation (5.2) publishes a version but reports no resource for it, has no alias type,
and breaks on a function URL's Fn::GetAtt; SAM's ``AutoPublishAlias`` (a Version and an Alias beside
each function) and ``FunctionUrlConfig`` therefore failed. They are made as their handlers on AWS make
them:

- a **Version** with PublishVersion (``Description``, ``CodeSha256``): its physical id and Ref are the
  version's ARN (``...:function:name:1``), ``Version`` its number, ``FunctionArn`` its ARN. Its
  properties are createOnly, so a change publishes a new version (the engine replaces it); a delete
  is DeleteFunction of that version (SAM retains its versions: ``DeletionPolicy: Retain``).
- an **Alias** with CreateAlias (``FunctionVersion``, ``Description``, ``RoutingConfig``), UpdateAlias
  on an update, DeleteAlias on a delete; its physical id, Ref and ``AliasArn`` are the alias's ARN.
- a **Url** with CreateFunctionUrlConfig (``AuthType``, ``Cors``, ``InvokeMode``, ``Qualifier``),
  UpdateFunctionUrlConfig, DeleteFunctionUrlConfig; ``FunctionUrl`` and ``FunctionArn`` its attributes,
  its physical id the function's ARN (the type's primaryIdentifier). moto takes no alias or version for
  a URL (SAM's ``AutoPublishAlias`` with ``FunctionUrlConfig`` points it at the alias): the URL is then
  made for the function itself, and its event says so.

- a **Permission** with AddPermission, its properties under the API's names, its ``StatementId``
  generated as the service generates it (``stack-Logical-SUFFIX``); its physical id and Ref are that
  statement id (as a 2026 report of DescribeStackResources says; moto's CloudFormation gave the text
  of a Python object, and its stack delete left the statement in the function's policy). Its
  properties are createOnly, so a change replaces it; a delete is RemovePermission.

``ProvisionedConcurrencyConfig`` is not applied (moto has no provisioned concurrency); the resource's
event says so.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import UPPER, generated_for

VERSION = "AWS::Lambda::Version"
ALIAS = "AWS::Lambda::Alias"
URL = "AWS::Lambda::Url"
PERMISSION = "AWS::Lambda::Permission"
STATEMENT_ID_LENGTH = 100  # AddPermission's limit for a StatementId
PERMISSION_SETTINGS = ("Action", "EventSourceToken", "FunctionUrlAuthType", "InvokedViaFunctionUrl", "Principal", "PrincipalOrgID",
                       "SourceAccount", "SourceArn")
GONE = ("ResourceNotFoundException",)
NO_QUALIFIER = ("cfnrun made the URL for the function itself, not its alias or version: the AWS endpoint (moto) takes no "
                "qualifier for a function URL")
NOT_APPLIED = "cfnrun did not apply ProvisionedConcurrencyConfig: the AWS endpoint (moto) has no provisioned concurrency"


def _service(endpoint_url: str, region: str) -> EndpointService:
    return EndpointService("lambda", "Lambda", endpoint_url, region)


def _required(work: ResourceWork, *names: str) -> None:
    for name in names:
        if work.properties.get(name) in (None, ""):
            raise ProvisioningFailed(property_problem(work.logical_id, required_key(name)))


def _given(properties: Dict[str, Any], *names: str) -> Dict[str, Any]:
    return {name: properties[name] for name in names if properties.get(name) is not None}


def _unqualified(function: str) -> str:
    """A function's name or ARN without its alias or version (``...:function:name:live`` is ``...:function:name``)."""
    parts = function.split(":")
    return ":".join(parts[:7]) if function.startswith("arn:") else parts[0]


def _wanted(work: ResourceWork, known: Dict[str, Any]) -> Dict[str, Any]:
    return {name: known[name] for name in work.attributes_wanted if name in known}


class Versions:
    """Published versions of the stack's functions, on the endpoint's Lambda."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation reports no resource for a version it publishes

    async def put(self, work: ResourceWork) -> Provisioned:
        arn, number = (work.model or {}).get("Arn"), (work.model or {}).get("Version")
        if not isinstance(arn, str):  # every property that publishes is createOnly: an update changes nothing here
            _required(work, "FunctionName")
            published = await self.api.ask("publish_version", FunctionName=str(work.properties["FunctionName"]),
                                           **_given(work.properties, "Description", "CodeSha256"))
            arn, number = str(published["FunctionArn"]), str(published["Version"])
            if work.properties.get("ProvisionedConcurrencyConfig"):
                work.note(NOT_APPLIED)
        return Provisioned(arn, arn, _wanted(work, {"Version": number, "FunctionArn": arn}), {DIRECT_KEY: VERSION, "Arn": arn, "Version": number})

    async def delete(self, work: ResourceWork) -> None:
        arn = (work.model or {}).get("Arn") or work.physical_id
        if not work.retain and isinstance(arn, str):
            await self.api.unless_gone(GONE, "delete_function", FunctionName=arn)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        arn = model.get("Arn")
        if not isinstance(arn, str):
            return "cfnrun has no record of the version's ARN"
        return await self.api.still_there(GONE, f"the version {arn}", "get_function", FunctionName=arn)


class Aliases:
    """Aliases of the stack's functions, on the endpoint's Lambda."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation has no alias type

    async def put(self, work: ResourceWork) -> Provisioned:
        _required(work, "FunctionName", "FunctionVersion", "Name")
        settings = {"FunctionName": str(work.properties["FunctionName"]), "Name": str(work.properties["Name"]),
                    "FunctionVersion": str(work.properties["FunctionVersion"]), **_given(work.properties, "Description", "RoutingConfig")}
        creating = not isinstance((work.model or {}).get("Arn"), str)
        arn = str((await self.api.ask("create_alias" if creating else "update_alias", **settings))["AliasArn"])
        if work.properties.get("ProvisionedConcurrencyConfig"):
            work.note(NOT_APPLIED)
        return Provisioned(arn, arn, _wanted(work, {"AliasArn": arn}),
                           {DIRECT_KEY: ALIAS, "Arn": arn, "FunctionName": settings["FunctionName"], "Name": settings["Name"]})

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        if not work.retain and isinstance(model.get("FunctionName"), str) and isinstance(model.get("Name"), str):
            await self.api.unless_gone(GONE, "delete_alias", FunctionName=model["FunctionName"], Name=model["Name"])

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        if not isinstance(model.get("FunctionName"), str) or not isinstance(model.get("Name"), str):
            return "cfnrun has no record of the alias's function and name"
        return await self.api.still_there(GONE, f"the alias {model.get('Arn')}", "get_alias", FunctionName=model["FunctionName"], Name=model["Name"])


class FunctionUrls:
    """Function URLs of the stack's functions, on the endpoint's Lambda."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation breaks on the type's Fn::GetAtt

    async def put(self, work: ResourceWork) -> Provisioned:
        _required(work, "TargetFunctionArn", "AuthType")
        target = {"FunctionName": str(work.properties["TargetFunctionArn"]), **_given(work.properties, "Qualifier")}
        settings = _given(work.properties, "AuthType", "Cors", "InvokeMode")
        kept = (work.model or {}).get("Target")
        if isinstance(kept, dict):  # TargetFunctionArn and Qualifier are createOnly: the URL made before, as it was made
            answer = await self.api.ask("update_function_url_config", **kept, **settings)
        else:
            try:
                answer = await self.api.ask("create_function_url_config", **target, **settings)
            except ProvisioningFailed as refused:
                if "Cannot provide qualifier" not in refused.reason:
                    raise
                target = {"FunctionName": _unqualified(target["FunctionName"])}
                answer = await self.api.ask("create_function_url_config", **target, **settings)
                work.note(NO_QUALIFIER)
        known = {"FunctionUrl": answer["FunctionUrl"], "FunctionArn": answer["FunctionArn"]}
        return Provisioned(str(known["FunctionArn"]), str(known["FunctionArn"]), _wanted(work, known),
                           {DIRECT_KEY: URL, "FunctionArn": known["FunctionArn"], "Target": target})

    async def delete(self, work: ResourceWork) -> None:
        target = (work.model or {}).get("Target")
        if not work.retain and isinstance(target, dict):
            await self.api.unless_gone(GONE, "delete_function_url_config", **target)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        target = model.get("Target")
        if not isinstance(target, dict):
            return "cfnrun has no record of the URL's function"
        return await self.api.still_there(GONE, f"the URL of {target.get('FunctionName')}", "get_function_url_config", **target)


class Permissions:
    """Statements in the policies of the stack's functions, on the endpoint's Lambda."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation names it by a Python object's text and never removes it

    async def put(self, work: ResourceWork) -> Provisioned:
        statement, function = (work.model or {}).get("StatementId"), (work.model or {}).get("FunctionName")
        if not isinstance(statement, str) or not isinstance(function, str):  # every property is createOnly: an update changes nothing
            _required(work, "FunctionName", "Action", "Principal")
            function, statement = str(work.properties["FunctionName"]), generated_for(work, STATEMENT_ID_LENGTH, UPPER)
            await self.api.ask("add_permission", FunctionName=function, StatementId=statement, **_given(work.properties, *PERMISSION_SETTINGS))
        return Provisioned(statement, statement, {}, {DIRECT_KEY: PERMISSION, "FunctionName": function, "StatementId": statement})

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        if not work.retain and isinstance(model.get("FunctionName"), str) and isinstance(model.get("StatementId"), str):
            await self.api.unless_gone(GONE, "remove_permission", FunctionName=model["FunctionName"], StatementId=model["StatementId"])

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        function, statement = model.get("FunctionName"), model.get("StatementId")
        if not isinstance(function, str) or not isinstance(statement, str):
            return "cfnrun has no record of the permission's function and statement"
        try:
            policy = await self.api.unless_gone(GONE, "get_policy", FunctionName=function)
        except ProvisioningFailed as error:
            return error.reason
        return f"the statement {statement} is still in the policy of {function}" if policy and statement in str(policy.get("Policy")) else None
