"""AWS::ApiGatewayV2::Api, Stage, Route and Integration, made through the endpoint's API Gateway V2 API.

SAM's ``HttpApi`` events and ``AWS::Serverless::HttpApi`` become an AWS::ApiGatewayV2::Api whose routes are an OpenAPI
document in ``Body`` (without a ``Name``: the document's ``info.title`` names it) and a ``$default`` (or named) Stage with
``AutoDeploy``. moto's CloudFormation (5.2) has none of the ApiGatewayV2 types — its stack completes without the resource,
or fails inside moto when the resource's attribute is read (``ApiEndpoint``) — while its API Gateway V2 API answers
CreateApi, ReimportApi and the routes', integrations' and stages' calls, so these resources are always made here, as the
types' handlers do on the service:

- an Api with a ``Body``: CreateApi (``Name``, or the body's ``info.title``; ``ProtocolType`` HTTP unless given; the
  other settings as the template gives them), then ReimportApi with the body, whose paths become routes and whose
  ``x-amazon-apigateway-integration``s become integrations (moto has no ImportApi, the one call the service's handler may
  make instead; inferred); an update puts the body again and UpdateApi takes the settings. Without a ``Body``: CreateApi
  and UpdateApi with the settings. Its Ref and physical id are the API's id; ``ApiEndpoint`` and ``ApiId`` its attributes.
- a Stage, a Route, an Integration: CreateStage, CreateRoute, CreateIntegration with the template's properties (their
  names are the API's parameter names), UpdateRoute and UpdateIntegration on an update, DeleteX on a delete. moto has no
  UpdateStage: a stage it refuses to update is deleted and made again with the new properties (its name is its identity),
  and the resource's event says so. Their Ref and physical id are the stage's name, the route's id, the integration's id.

A ``BodyS3Location`` is not read (the API is made without its routes; the event says so).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.rest_apis import openapi_document, openapi_info
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key

HTTP_API = "AWS::ApiGatewayV2::Api"
GONE = ("NotFoundException",)
NOT_IMPLEMENTED = "has not been implemented"  # moto's answer to a call it lacks
# the Api's properties CreateApi takes as they are (CloudFormation's names are the API's parameter names); UpdateApi takes
# them but the tags
API_SETTINGS = ("ApiKeySelectionExpression", "CorsConfiguration", "CredentialsArn", "Description", "DisableExecuteApiEndpoint",
                "DisableSchemaValidation", "RouteKey", "RouteSelectionExpression", "Tags", "Target", "Version")


def _service(endpoint_url: str, region: str) -> EndpointService:
    return EndpointService("apigatewayv2", "API Gateway V2", endpoint_url, region)


class HttpApis:
    """HTTP and WebSocket APIs, on the endpoint's API Gateway V2."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation has no ApiGatewayV2 type (and fails, not completes, when one's attribute is read)

    async def put(self, work: ResourceWork) -> Provisioned:
        properties = work.properties
        body = openapi_document(work) if "Body" in properties else None
        if "BodyS3Location" in properties:
            work.note("cfnrun does not read an API's BodyS3Location: the API is made without its routes")
        settings = {key: properties[key] for key in API_SETTINGS if key in properties}
        description = openapi_info(body, "description") if body is not None else None
        if description and "Description" not in settings:
            settings["Description"] = description  # as the body's title names the API, its description describes it
        name = properties.get("Name") or (openapi_info(body, "title") if body is not None else None)
        if not isinstance(name, str) or not name:
            raise ProvisioningFailed(f"{work.logical_id}: an Api needs a Name, or a Body whose info.title names it")
        api_id = (work.model or {}).get("ApiId")
        if isinstance(api_id, str):
            if body is not None:
                await self._reimported(work, api_id, body)
            await self.api.ask("update_api", ApiId=api_id, Name=name, **{k: v for k, v in settings.items() if k != "Tags"})
        else:
            protocol = str(properties.get("ProtocolType") or "HTTP")
            api_id = str((await self.api.ask("create_api", Name=name, ProtocolType=protocol, **settings))["ApiId"])
            try:
                if body is not None:
                    await self.api.ask("reimport_api", ApiId=api_id, Body=json.dumps(body), FailOnWarnings=bool(properties.get("FailOnWarnings")))
                    await self.api.ask("update_api", ApiId=api_id, Name=name)  # the template's Name over the body's title
            except ProvisioningFailed:
                await self.api.unless_gone(GONE, "delete_api", ApiId=api_id)  # a create that failed leaves nothing
                raise
        endpoint = (await self.api.ask("get_api", ApiId=api_id)).get("ApiEndpoint")
        known = {"ApiId": api_id, **({"ApiEndpoint": endpoint} if endpoint else {})}
        attributes = {a: known[a] for a in work.attributes_wanted if a in known}
        return Provisioned(api_id, api_id, attributes, {DIRECT_KEY: HTTP_API, "ApiId": api_id})

    async def _reimported(self, work: ResourceWork, api_id: str, body: Dict[str, Any]) -> None:
        """The API's body put again. moto's ReimportApi drops the API's stages with its routes and integrations (the body
        makes those again); the service keeps them, so each stage dropped is made again as it was."""
        stages = (await self.api.ask("get_stages", ApiId=api_id)).get("Items", [])
        await self.api.ask("reimport_api", ApiId=api_id, Body=json.dumps(body), FailOnWarnings=bool(work.properties.get("FailOnWarnings")))
        kept = {stage.get("StageName") for stage in (await self.api.ask("get_stages", ApiId=api_id)).get("Items", [])}
        dropped = [stage for stage in stages if stage.get("StageName") not in kept]
        for stage in dropped:
            await self.api.ask("create_stage", ApiId=api_id, **{k: v for k, v in stage.items() if k in STAGE.settings and v is not None})
        if dropped:
            work.note(f"the AWS endpoint dropped the API's stages as it took the new body: cfnrun made them again as they were "
                      f"({', '.join(str(stage.get('StageName')) for stage in dropped)})")

    async def delete(self, work: ResourceWork) -> None:
        api_id = (work.model or {}).get("ApiId") or work.physical_id
        if not work.retain and isinstance(api_id, str):
            await self.api.unless_gone(GONE, "delete_api", ApiId=api_id)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        api_id = model.get("ApiId")
        if not isinstance(api_id, str):
            return "cfnrun has no record of the API's id"
        return await self.api.still_there(GONE, f"the API {api_id}", "get_api", ApiId=api_id)


@dataclass(frozen=True)
class ApiPart:
    """One kind of an API's parts: its type, the noun of its calls (create_<noun>, …), what identifies it, and the
    properties its create call takes as they are."""

    type_name: str
    noun: str
    id_key: str
    settings: Tuple[str, ...]


STAGE = ApiPart("AWS::ApiGatewayV2::Stage", "stage", "StageName", (
    "StageName", "AccessLogSettings", "AutoDeploy", "ClientCertificateId", "DefaultRouteSettings", "DeploymentId", "Description",
    "RouteSettings", "StageVariables", "Tags"))
ROUTE = ApiPart("AWS::ApiGatewayV2::Route", "route", "RouteId", (
    "RouteKey", "ApiKeyRequired", "AuthorizationScopes", "AuthorizationType", "AuthorizerId", "ModelSelectionExpression",
    "OperationName", "RequestModels", "RequestParameters", "RouteResponseSelectionExpression", "Target"))
INTEGRATION = ApiPart("AWS::ApiGatewayV2::Integration", "integration", "IntegrationId", (
    "IntegrationType", "ConnectionId", "ConnectionType", "ContentHandlingStrategy", "CredentialsArn", "Description",
    "IntegrationMethod", "IntegrationSubtype", "IntegrationUri", "PassthroughBehavior", "PayloadFormatVersion",
    "RequestParameters", "RequestTemplates", "ResponseParameters", "TemplateSelectionExpression", "TimeoutInMillis", "TlsConfig"))


class ApiParts:
    """An API's stages, routes or integrations, on the endpoint's API Gateway V2."""

    def __init__(self, part: ApiPart, endpoint_url: str, region: str) -> None:
        self.part = part
        self.api = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation has no ApiGatewayV2 type (and fails, not completes, when one's attribute is read)

    async def put(self, work: ResourceWork) -> Provisioned:
        part = self.part
        api_id = work.properties.get("ApiId")
        if not isinstance(api_id, str):
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("ApiId")))
        settings = {key: work.properties[key] for key in part.settings if key in work.properties}
        made = (work.model or {}).get(part.id_key)
        if isinstance(made, str) and made == settings.get(part.id_key, made):
            changed = {key: value for key, value in settings.items() if key not in ("Tags", part.id_key)}
            try:
                await self.api.ask(f"update_{part.noun}", ApiId=api_id, **{part.id_key: made}, **changed)
            except ProvisioningFailed as refused:
                if NOT_IMPLEMENTED not in refused.reason:
                    raise
                await self.api.unless_gone(GONE, f"delete_{part.noun}", ApiId=api_id, **{part.id_key: made})
                await self.api.ask(f"create_{part.noun}", ApiId=api_id, **settings)
                work.note(f"the AWS endpoint cannot update a {part.noun}: cfnrun deleted it and made it again with the new properties")
            part_id = made
        else:
            part_id = str((await self.api.ask(f"create_{part.noun}", ApiId=api_id, **settings))[part.id_key])
        return Provisioned(part_id, part_id, {}, {DIRECT_KEY: part.type_name, "ApiId": api_id, part.id_key: part_id})

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        api_id, part_id = model.get("ApiId"), model.get(self.part.id_key)
        if not work.retain and isinstance(api_id, str) and isinstance(part_id, str):
            await self.api.unless_gone(GONE, f"delete_{self.part.noun}", ApiId=api_id, **{self.part.id_key: part_id})

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        api_id, part_id = model.get("ApiId"), model.get(self.part.id_key)
        if not isinstance(api_id, str) or not isinstance(part_id, str):
            return f"cfnrun has no record of the {self.part.noun}'s API and identifier"
        return await self.api.still_there(
            GONE, f"the {self.part.noun} {part_id} of the API {api_id}", f"get_{self.part.noun}", ApiId=api_id, **{self.part.id_key: part_id})
