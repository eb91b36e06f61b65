"""AWS::* resources made through the AWS endpoint's own service APIs instead of a stack on its CloudFormation.

``aws_types.py`` makes each AWS resource as a one-resource stack on the endpoint's CloudFormation. Where
that CloudFormation lacks a type, or makes it without what the service would (moto's), a ``DirectType``
makes it with the service's own calls, as the type's handler on AWS does: bucket policies
(``bucket_policies.py``), queue and topic policies (``resource_policies.py``), SNS subscriptions (``sns_subscriptions.py``),
REST APIs defined by an OpenAPI body and their stages (``rest_apis.py``), HTTP APIs and their stages,
routes and integrations (``http_apis.py``), and the others ``aws_types.py`` lists (alarms, delivery streams,
schedules, secrets, user pools ...). What the resource keeps in its record says so
(``DIRECT_KEY``), so its update, delete and the checks after a restart or a delete go the same way.
"""
from __future__ import annotations

import asyncio
from typing import Any, Dict, FrozenSet, Iterable, Mapping, Optional, Protocol, Tuple

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork

DIRECT_KEY = "cfnrun:endpointApi"  # in a resource's record: made through the endpoint's service API (its value: the type), not a stack there


class DirectType(Protocol):
    def takes(self, work: ResourceWork) -> bool:
        """Is this resource made here from the start (not only once the endpoint's CloudFormation was found to lack its type)?"""

    async def put(self, work: ResourceWork) -> Provisioned:
        """Create or update the resource; its model carries ``DIRECT_KEY``."""

    async def delete(self, work: ResourceWork) -> None:
        """Delete the resource; one already gone is deleted."""

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        """Why the resource may still be on the endpoint, or None when it is gone."""


def endpoint_config() -> Any:
    """botocore's configuration of cfnrun's own clients of the AWS endpoint: each call made once. The endpoint is moto
    on this machine (or a stand-in like it): a 500 means it broke on the call, and botocore's retry of a create it broke
    on half way found what it had half made (CreateStack answered AlreadyExists, and the resource waited for a stack
    that never settled)."""
    from botocore.config import Config

    return Config(retries={"total_max_attempts": 1, "mode": "standard"})


class EndpointService:
    """One AWS service's API on the endpoint; whatever goes wrong fails the resource, in the endpoint's words."""

    def __init__(self, service: str, label: str, endpoint_url: str, region: str) -> None:
        self.service = service
        self.label = label  # the service as the failure names it ("S3", "API Gateway", "IAM")
        self.endpoint_url = endpoint_url
        self.region = region
        self._client: Any = None

    def _service(self) -> Any:
        if self._client is None:
            import boto3  # imported once a stack has such a resource

            self._client = boto3.client(
                self.service, endpoint_url=self.endpoint_url, region_name=self.region,
                aws_access_key_id="testing", aws_secret_access_key="testing", config=endpoint_config(),
            )
        return self._client

    def members(self, operation: str) -> FrozenSet[str]:
        """The parameters the API's ``operation`` (``CreateUserPool``) takes, as botocore's service model names them."""
        return frozenset(self._service().meta.service_model.operation_model(operation).input_shape.members)

    def typed(self, operation: str, name: str, value: Any) -> Any:
        """``value`` of the parameter ``name`` as the API's model types it: a template's text for an integer or a boolean
        (``AllocatedStorage: "20"``, ``MultiAZ: "true"``: the type's schema says string) as that integer or boolean."""
        shape = self._service().meta.service_model.operation_model(operation).input_shape.members.get(name)
        if shape is None or not isinstance(value, str):
            return value
        if shape.type_name in ("integer", "long") and value.strip().lstrip("-").isdigit():
            return int(value)
        if shape.type_name == "boolean" and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return value

    async def ask(self, operation: str, **arguments: Any) -> Dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return dict(await asyncio.to_thread(getattr(self._service(), operation), **arguments))
        except ClientError as error:
            detail = error.response.get("Error", {})
            raise ProvisioningFailed(
                f"{detail.get('Message') or error} (the AWS endpoint's {self.label} {detail.get('Code', 'error')}, answering {operation})"
            ) from None
        except BotoCoreError as error:
            raise ProvisioningFailed(f"the AWS endpoint {self.endpoint_url} did not answer {operation}: {error}") from None

    async def unless_gone(self, gone_codes: Tuple[str, ...], operation: str, **arguments: Any) -> Optional[Dict[str, Any]]:
        """``ask``, or None when the endpoint answers one of ``gone_codes`` (what the call names is not there)."""
        try:
            return await self.ask(operation, **arguments)
        except ProvisioningFailed as error:
            if any(f" {code}, answering" in error.reason for code in gone_codes):
                return None
            raise

    async def still_there(self, gone_codes: Tuple[str, ...], what: str, operation: str, **arguments: Any) -> Optional[str]:
        """After a delete: why ``what`` may still be there (the read ``operation`` finds it, or cannot say), or None when it is gone."""
        try:
            there = await self.unless_gone(gone_codes, operation, **arguments)
        except ProvisioningFailed as error:
            return error.reason
        return None if there is None else f"{what} is still on the AWS endpoint"


def taken_arguments(service: EndpointService, operation: str, properties: Dict[str, Any], work: ResourceWork,
                    identity: Iterable[str] = (), renamed: Mapping[str, str] = {}) -> Dict[str, Any]:
    """The properties ``operation`` takes, under its names (``renamed``: a property's name in the API where it differs),
    but ``identity`` (the call names the resource by those itself); the others, when new or changed, named in the
    resource's event."""
    named_by_call = set(identity)
    taken = service.members(operation) - named_by_call
    arguments: Dict[str, Any] = {}
    left_out = []
    for name, value in properties.items():
        if value is None or renamed.get(name, name) in named_by_call:
            continue
        if renamed.get(name, name) in taken:
            arguments[renamed.get(name, name)] = service.typed(operation, renamed.get(name, name), value)
        elif work.previous_properties is None or work.previous_properties.get(name) != value:
            left_out.append(name)
    if left_out:
        work.note(f"cfnrun left out what {operation} does not take on the AWS endpoint: {', '.join(sorted(left_out))}")
    return arguments
