"""Dynamic references in a resource's properties, resolved on the AWS endpoint right before the resource's handler runs.

``{{resolve:ssm:name[:version]}}``, ``{{resolve:ssm-secure:name[:version]}}`` and
``{{resolve:secretsmanager:secret-id[:SecretString[:json-key[:version-stage[:version-id]]]]}}``, whole or
inside a longer string, are replaced by the value Systems Manager or Secrets Manager on the endpoint
(``--moto`` or ``--aws-endpoint``) holds. Only what goes to the provisioner is resolved: the stack keeps
the properties with the literal reference, so DescribeStackResource, events and ``--state`` show
the reference and never the value, as the service does for ``ssm-secure`` and ``secretsmanager``
(for ``ssm`` the service resolves the same way; what it stores is inferred, not documented). The
values of ``ssm-secure`` and ``secretsmanager`` references join the stack's secrets (``StackContext.secrets``):
the history record and the console lines of the handler's call show them masked.
A reference that cannot be read fails the resource: ``Parameters: [ssm:name] cannot be found.`` for a
parameter (the service's words as users report them), Secrets Manager's own message for a secret.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from cfnrun.stacks.provisioning import Provisioned, Provisioner, Provisioners, ProvisioningFailed, ResourceWork, forward_methods

SECURE_SERVICES = ("ssm-secure", "secretsmanager")  # references whose values are secrets: masked wherever a call made with them is shown
REFERENCE = re.compile(r"\{\{resolve:(ssm|ssm-secure|secretsmanager):([^}]+)\}\}")
ARN_PARTS = 7  # arn:aws:secretsmanager:region:account:secret:name


class EndpointValues:
    """Reads the values references name, from the endpoint's Systems Manager and Secrets Manager."""

    def __init__(self, endpoint_url: Optional[str], region: str) -> None:
        self.endpoint_url = endpoint_url
        self.region = region
        self._clients: dict = {}

    def _client(self, service: str) -> Any:
        if service not in self._clients:
            import boto3  # what the endpoint speaks; imported once a template uses a dynamic reference

            self._clients[service] = boto3.client(
                service, endpoint_url=self.endpoint_url, region_name=self.region,
                aws_access_key_id="testing", aws_secret_access_key="testing",
            )
        return self._clients[service]

    def value(self, service: str, key: str) -> str:
        if self.endpoint_url is None:
            raise ProvisioningFailed(
                f"{{{{resolve:{service}:...}}}} is read on the AWS endpoint: start serve with --moto or --aws-endpoint URL"
            )
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            if service == "secretsmanager":
                return self._secret(key)
            return self._parameter(key, decrypt=service == "ssm-secure")
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            if service != "secretsmanager" and code in ("ParameterNotFound", "ParameterVersionNotFound", "ValidationException"):
                raise ProvisioningFailed(f"Parameters: [{service}:{key}] cannot be found.") from None
            raise ProvisioningFailed(str(error.response.get("Error", {}).get("Message") or error)) from None
        except BotoCoreError as error:
            raise ProvisioningFailed(f"the AWS endpoint {self.endpoint_url} did not answer: {error}") from None

    def _parameter(self, key: str, decrypt: bool) -> str:
        answered = self._client("ssm").get_parameter(Name=key, WithDecryption=decrypt)  # name:version is SSM's own selector
        return str(answered["Parameter"]["Value"])

    def _secret(self, key: str) -> str:
        parts = key.split(":")
        split = ARN_PARTS if key.startswith("arn:") else 1
        secret_id, rest = ":".join(parts[:split]), parts[split:] + [""] * 4
        field, json_key, stage, version_id = rest[:4]
        if field not in ("", "SecretString"):
            raise ProvisioningFailed(f"{{{{resolve:secretsmanager:{key}}}}}: only SecretString can be read, not {field}")
        arguments = {"SecretId": secret_id}
        if stage:
            arguments["VersionStage"] = stage
        if version_id:
            arguments["VersionId"] = version_id
        text = str(self._client("secretsmanager").get_secret_value(**arguments).get("SecretString", ""))
        if not json_key:
            return text
        try:
            document = json.loads(text)
        except ValueError:
            raise ProvisioningFailed(f"Secrets Manager's secret {secret_id} is not JSON, so it has no key {json_key}") from None
        if not isinstance(document, dict) or json_key not in document:
            raise ProvisioningFailed(f"Could not find SecretString key {json_key} in secret {secret_id}")
        return str(document[json_key])


def resolved(value: Any, read: Callable[[str, str], str]) -> Any:
    """``value`` with every dynamic reference in its strings replaced by what ``read(service, key)`` gives."""
    if isinstance(value, str):
        return REFERENCE.sub(lambda found: read(found.group(1), found.group(2)), value) if "{{resolve:" in value else value
    if isinstance(value, dict):
        return {key: resolved(item, read) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, read) for item in value]
    return value


def refers(value: Any) -> bool:
    """Does a string in ``value`` hold a dynamic reference (what ``resolved`` replaces)?"""
    if isinstance(value, str):
        return "{{resolve:" in value
    if isinstance(value, dict):
        return any(refers(item) for item in value.values())
    if isinstance(value, list):
        return any(refers(item) for item in value)
    return False


class ResolvingProvisioner:
    """A provisioner whose create and update get the properties with their references resolved; the rest as it is."""

    def __init__(self, inner: Provisioner, values: EndpointValues) -> None:
        self.inner = inner
        self.values = values
        forward_methods(self, inner)  # the inner's Importer, AttributeNames... methods, as isinstance sees them

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def _resolved(self, work: ResourceWork) -> ResourceWork:
        previous = work.previous_properties
        secure: List[str] = []  # what ssm-secure and secretsmanager references read: secrets of the stack from now on

        def read(service: str, key: str) -> str:
            value = self.values.value(service, key)
            if service in SECURE_SERVICES:
                secure.append(value)
            return value

        properties = await self._resolving(work.properties, read)
        before = await self._resolving(previous, read) if previous is not None else None
        if not secure:
            return dataclasses.replace(work, properties=properties, previous_properties=before)
        stack = dataclasses.replace(work.stack, secrets=tuple(dict.fromkeys([*work.stack.secrets, *secure])))
        return dataclasses.replace(work, stack=stack, properties=properties, previous_properties=before)

    @staticmethod
    async def _resolving(value: Any, read: Callable[[str, str], str]) -> Any:
        """``resolved``: off the loop when a reference asks the endpoint; at once when none does (most resources: no
        thread's hop before each create or update)."""
        if refers(value):
            return await asyncio.to_thread(resolved, value, read)
        return resolved(value, read)  # the same copy, with nothing to read

    async def create(self, work: ResourceWork) -> Provisioned:
        return await self.inner.create(await self._resolved(work))

    async def update(self, work: ResourceWork) -> Provisioned:
        return await self.inner.update(await self._resolved(work))


class ResolvingProvisioners:
    """``Provisioners`` whose every provisioner resolves dynamic references on the endpoint."""

    def __init__(self, inner: Provisioners, values: EndpointValues) -> None:
        self.inner = inner
        self.values = values
        self._wrapped: Dict[int, Tuple[Provisioner, ResolvingProvisioner]] = {}  # by the inner provisioner's id: one wrapper each

    def for_type(self, type_name: str) -> Provisioner:
        inner = self.inner.for_type(type_name)
        kept = self._wrapped.get(id(inner))
        if kept is None or kept[0] is not inner:
            kept = self._wrapped[id(inner)] = (inner, ResolvingProvisioner(inner, self.values))
        return kept[1]  # type: ignore[return-value]
