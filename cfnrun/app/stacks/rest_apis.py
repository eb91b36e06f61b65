"""AWS::ApiGateway::RestApi with an OpenAPI ``Body``, and AWS::ApiGateway::Stage, made through the endpoint's API Gateway API.

SAM's ``Api`` events (``sam init``'s hello world) become a RestApi whose routes are an OpenAPI
document in ``Body``, without a ``Name``: API Gateway then names the API after the document's
``info.title`` and imports its paths as resources, methods and integrations. moto's CloudFormation
(5.2) reads only ``Name`` (and fails without one) and ignores ``Body``, so such a RestApi is made here,
as the type's handler does on the service: CreateRestApi with ``Name`` (or the body's ``info.title``),
``Description`` (or ``info.description``) and the API's other settings, then PutRestApi with the body
(``Mode``, ``overwrite`` unless the template says ``merge``; ``FailOnWarnings``; ``Parameters``). An
update renames and re-describes it (UpdateRestApi) and puts the body again; a delete is DeleteRestApi.
Its Ref and physical id are the API's id; ``RootResourceId`` is the id of its ``/`` resource.

moto imports OpenAPI 3 only ("Only OpenAPI 3.x.x are currently supported") while the service imports
Swagger 2.0 too, which is what SAM writes unless ``OpenApiVersion`` says otherwise. A Swagger 2.0 body
it refuses is put again as an OpenAPI 3.0.1 document (``swagger`` replaced by ``openapi``, nothing else):
the parts moto reads, ``paths``, their methods, response codes and ``x-amazon-apigateway-integration``,
are written alike in both. The resource's event says so.

moto's CloudFormation makes an AWS::ApiGateway::Deployment but gives no id for it (its Ref is the text of a
Python object, ``<moto.apigateway.models.Deployment object at 0x...>``, which a Stage's ``DeploymentId``
then carried), so deployments are made here too: CreateDeployment with ``Description``, ``StageName``
(API Gateway makes that stage with the deployment, as SAM's ``Stage`` stage shows) and
``StageDescription``'s description and variables; an update changes the description (UpdateDeployment)
and points ``StageName``'s stage at the deployment; a delete removes the stage the deployment made while
it still points at it, then the deployment (DeleteDeployment: API Gateway refuses to delete a deployment
that a stage uses; inferred). moto also refuses while a stage of the name the deployment was made with
exists, though that stage points at a later deployment (SAM's ``Stage`` after an update): such a
deployment is left on moto and its event says so. Their Ref and physical id are the deployment's id.

moto's CloudFormation has no AWS::ApiGateway::Stage: ``aws_types.py`` finds that out (its stack there
completes without the resource) and then makes stages here, with CreateStage, UpdateStage (the
deployment, description and stage variables) and DeleteStage. Their Ref and physical id are the stage's name.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService

REST_API = "AWS::ApiGateway::RestApi"
DEPLOYMENT = "AWS::ApiGateway::Deployment"
STAGE = "AWS::ApiGateway::Stage"
GONE = ("NotFoundException",)
OPENAPI_3_ONLY = "Only OpenAPI 3.x.x"  # moto's refusal of a Swagger 2.0 document
ACTIVE_STAGES = "Active stages pointing to this deployment"  # API Gateway's refusal to delete a deployment a stage uses
# the RestApi's properties that CreateRestApi takes as they are, by the name it takes them under
CREATE_SETTINGS = {
    "ApiKeySourceType": "apiKeySource", "BinaryMediaTypes": "binaryMediaTypes", "EndpointConfiguration": "endpointConfiguration",
    "MinimumCompressionSize": "minimumCompressionSize", "DisableExecuteApiEndpoint": "disableExecuteApiEndpoint",
}


def openapi_document(work: ResourceWork) -> Dict[str, Any]:
    """The resource's ``Body``: an OpenAPI document, given as an object or as JSON or YAML text."""
    body = work.properties.get("Body")
    if isinstance(body, str):
        try:
            body = decode_template(body)
        except TemplateDecodeError as error:
            raise ProvisioningFailed(f"Body of {work.logical_id} is not a JSON or YAML document: {error}") from None
    if not isinstance(body, dict):
        raise ProvisioningFailed(f"Body of {work.logical_id} is not an OpenAPI document (a JSON object)")
    return body


def openapi_info(body: Dict[str, Any], key: str) -> Optional[str]:
    info = body.get("info")
    value = info.get(key) if isinstance(info, dict) else None
    return value if isinstance(value, str) and value else None


def _object(properties: Dict[str, Any], key: str) -> Dict[str, Any]:
    value = properties.get(key)
    return value if isinstance(value, dict) else {}


def _capitalized(tags: Any) -> Dict[str, str]:
    return {str(t.get("Key")): str(t.get("Value")) for t in tags if isinstance(t, dict)} if isinstance(tags, list) else {}


class RestApis:
    """REST APIs defined by an OpenAPI body, on the endpoint's API Gateway."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = EndpointService("apigateway", "API Gateway", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return "Body" in work.properties  # moto's CloudFormation ignores the body: made here from the start

    async def put(self, work: ResourceWork) -> Provisioned:
        body = openapi_document(work)
        name = work.properties.get("Name") or openapi_info(body, "title")
        if not isinstance(name, str) or not name:
            raise ProvisioningFailed(f"{work.logical_id}: a RestApi needs a Name, or a Body whose info.title names it")
        description = work.properties.get("Description") or openapi_info(body, "description")
        api_id = (work.model or {}).get("RestApiId")
        if isinstance(api_id, str):
            await self.api.ask("update_rest_api", restApiId=api_id, patchOperations=[
                {"op": "replace", "path": "/name", "value": name}, {"op": "replace", "path": "/description", "value": description or ""}])
            await self._import(work, api_id, body)
        else:
            api_id = await self._created(work, name, description)
            try:
                await self._import(work, api_id, body)
            except ProvisioningFailed:
                await self.api.unless_gone(GONE, "delete_rest_api", restApiId=api_id)  # a create that failed leaves nothing
                raise
        resources = (await self.api.ask("get_resources", restApiId=api_id, limit=500)).get("items", [])
        root = next((r["id"] for r in resources if r.get("path") == "/"), None)
        known = {"RestApiId": api_id, **({"RootResourceId": root} if root else {})}
        attributes = {a: known[a] for a in work.attributes_wanted if a in known}
        return Provisioned(api_id, api_id, attributes, {DIRECT_KEY: REST_API, "RestApiId": api_id})

    async def _created(self, work: ResourceWork, name: str, description: Optional[str]) -> str:
        settings = {to: work.properties[key] for key, to in CREATE_SETTINGS.items() if key in work.properties}
        if description:
            settings["description"] = description
        if "Policy" in work.properties:
            policy = work.properties["Policy"]
            settings["policy"] = policy if isinstance(policy, str) else json.dumps(policy)
        if work.properties.get("Tags"):
            settings["tags"] = _capitalized(work.properties["Tags"])
        return str((await self.api.ask("create_rest_api", name=name, **settings))["id"])

    async def _import(self, work: ResourceWork, api_id: str, body: Dict[str, Any]) -> None:
        mode = "merge" if work.properties.get("Mode") == "merge" else "overwrite"
        options: Dict[str, Any] = {"failOnWarnings": bool(work.properties.get("FailOnWarnings", False))}
        if isinstance(work.properties.get("Parameters"), dict):
            options["parameters"] = {str(k): str(v) for k, v in work.properties["Parameters"].items()}
        try:
            await self.api.ask("put_rest_api", restApiId=api_id, mode=mode, body=json.dumps(body).encode(), **options)
        except ProvisioningFailed as refused:
            if OPENAPI_3_ONLY not in refused.reason or "swagger" not in body:
                raise
            as_openapi = {"openapi": "3.0.1", **{k: v for k, v in body.items() if k != "swagger"}}
            await self.api.ask("put_rest_api", restApiId=api_id, mode=mode, body=json.dumps(as_openapi).encode(), **options)
            work.note("the AWS endpoint imports OpenAPI 3 only: cfnrun put the Swagger 2.0 Body there as OpenAPI 3.0.1 (its paths and integrations as written)")

    async def delete(self, work: ResourceWork) -> None:
        api_id = (work.model or {}).get("RestApiId") or work.physical_id
        if not work.retain and isinstance(api_id, str):
            await self.api.unless_gone(GONE, "delete_rest_api", restApiId=api_id)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        api_id = model.get("RestApiId")
        if not isinstance(api_id, str):
            return "cfnrun has no record of the REST API's id"
        return await self.api.still_there(GONE, f"the REST API {api_id}", "get_rest_api", restApiId=api_id)


class Deployments:
    """Deployments of REST APIs, on the endpoint's API Gateway."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = EndpointService("apigateway", "API Gateway", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # moto's CloudFormation gives no id for a deployment

    async def put(self, work: ResourceWork) -> Provisioned:
        api_id, stage = work.properties.get("RestApiId"), work.properties.get("StageName")
        if not isinstance(api_id, str):
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("RestApiId")))
        on_stage = _object(work.properties, "StageDescription")
        deployment_id = (work.model or {}).get("DeploymentId")
        if isinstance(deployment_id, str):
            await self.api.ask("update_deployment", restApiId=api_id, deploymentId=deployment_id, patchOperations=[
                {"op": "replace", "path": "/description", "value": str(work.properties.get("Description", ""))}])
            if isinstance(stage, str) and stage:
                await self._pointed(api_id, stage, deployment_id)
        else:
            settings: Dict[str, Any] = {"description": str(work.properties.get("Description", ""))}
            if isinstance(stage, str) and stage:
                settings["stageName"] = stage
                settings["stageDescription"] = str(on_stage.get("Description", ""))
                if on_stage.get("Variables"):
                    settings["variables"] = {str(k): str(v) for k, v in _object(on_stage, "Variables").items()}
            deployment_id = str((await self.api.ask("create_deployment", restApiId=api_id, **settings))["id"])
        model = {DIRECT_KEY: DEPLOYMENT, "RestApiId": api_id, "DeploymentId": deployment_id, **({"StageName": stage} if stage else {})}
        attributes = {"DeploymentId": deployment_id} if "DeploymentId" in work.attributes_wanted else {}
        return Provisioned(deployment_id, deployment_id, attributes, model)

    async def _pointed(self, api_id: str, stage: str, deployment_id: str) -> None:
        if await self.api.unless_gone(GONE, "get_stage", restApiId=api_id, stageName=stage) is None:
            await self.api.ask("create_stage", restApiId=api_id, stageName=stage, deploymentId=deployment_id)
        else:
            await self.api.ask("update_stage", restApiId=api_id, stageName=stage, patchOperations=[
                {"op": "replace", "path": "/deploymentId", "value": deployment_id}])

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        api_id, deployment_id, stage = model.get("RestApiId"), model.get("DeploymentId"), model.get("StageName")
        if work.retain or not isinstance(api_id, str) or not isinstance(deployment_id, str):
            return
        if isinstance(stage, str):
            now = await self.api.unless_gone(GONE, "get_stage", restApiId=api_id, stageName=stage)
            if now is not None and now.get("deploymentId") == deployment_id:
                await self.api.unless_gone(GONE, "delete_stage", restApiId=api_id, stageName=stage)
        try:
            await self.api.unless_gone(GONE, "delete_deployment", restApiId=api_id, deploymentId=deployment_id)
        except ProvisioningFailed as refused:
            stages = (await self.api.unless_gone(GONE, "get_stages", restApiId=api_id) or {}).get("item", [])
            if ACTIVE_STAGES not in refused.reason or any(s.get("deploymentId") == deployment_id for s in stages):
                raise
            # moto refuses while a stage of the name the deployment was made with exists, though that stage now points at a
            # later deployment (SAM's "Stage" after an update); the service deletes it. It is left on moto, said so
            work.note(f"the AWS endpoint kept the deployment {deployment_id}, which no stage uses: it refuses to delete a "
                      f"deployment while a stage named {stage} exists (moto)")

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        api_id, deployment_id = model.get("RestApiId"), model.get("DeploymentId")
        if not isinstance(api_id, str) or not isinstance(deployment_id, str):
            return "cfnrun has no record of the deployment's API and id"
        try:  # listed, not asked for: moto's GetDeployment of an id it no longer has breaks (KeyError) rather than answering NotFound
            found = await self.api.unless_gone(GONE, "get_deployments", restApiId=api_id)
        except ProvisioningFailed as error:
            return error.reason
        there = any(item.get("id") == deployment_id for item in (found or {}).get("items", []))
        return f"the deployment {deployment_id} of the REST API {api_id} is still on the AWS endpoint" if there else None


class Stages:
    """Stages of REST APIs, on the endpoint's API Gateway, for an endpoint whose CloudFormation lacks the type (moto's)."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.api = EndpointService("apigateway", "API Gateway", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return False  # through the endpoint's CloudFormation first: one that makes stages there makes them

    async def put(self, work: ResourceWork) -> Provisioned:
        api_id, name = work.properties.get("RestApiId"), work.properties.get("StageName")
        if not isinstance(api_id, str) or not isinstance(name, str):
            raise ProvisioningFailed(f"{work.logical_id}: cfnrun makes a stage on the AWS endpoint from its RestApiId and StageName, and both are needed")
        variables = _object(work.properties, "Variables")
        if (work.model or {}).get("StageName") == name:
            await self.api.ask("update_stage", restApiId=api_id, stageName=name, patchOperations=await self._changes(work, api_id, name, variables))
        else:
            settings: Dict[str, Any] = {"variables": variables}
            for key, to in (("DeploymentId", "deploymentId"), ("Description", "description"), ("CacheClusterEnabled", "cacheClusterEnabled"),
                            ("CacheClusterSize", "cacheClusterSize"), ("TracingEnabled", "tracingEnabled")):
                if key in work.properties:
                    settings[to] = work.properties[key]
            if work.properties.get("Tags"):
                settings["tags"] = _capitalized(work.properties["Tags"])
            await self.api.ask("create_stage", restApiId=api_id, stageName=name, **settings)
        return Provisioned(name, name, {}, {DIRECT_KEY: STAGE, "RestApiId": api_id, "StageName": name})

    async def _changes(self, work: ResourceWork, api_id: str, name: str, variables: Dict[str, Any]) -> List[Dict[str, str]]:
        now = await self.api.ask("get_stage", restApiId=api_id, stageName=name)
        changes = [{"op": "replace", "path": "/deploymentId", "value": str(work.properties.get("DeploymentId", now.get("deploymentId", "")))},
                   {"op": "replace", "path": "/description", "value": str(work.properties.get("Description", ""))}]
        was = now.get("variables") or {}
        changes += [{"op": "replace", "path": f"/variables/{k}", "value": str(v)} for k, v in variables.items() if was.get(k) != v]
        changes += [{"op": "remove", "path": f"/variables/{k}"} for k in was if k not in variables]
        return changes

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        api_id, name = model.get("RestApiId"), model.get("StageName")
        if not work.retain and isinstance(api_id, str) and isinstance(name, str):
            await self.api.unless_gone(GONE, "delete_stage", restApiId=api_id, stageName=name)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        api_id, name = model.get("RestApiId"), model.get("StageName")
        if not isinstance(api_id, str) or not isinstance(name, str):
            return "cfnrun has no record of the stage's API and name"
        return await self.api.still_there(GONE, f"the stage {name} of the REST API {api_id}", "get_stage", restApiId=api_id, stageName=name)
