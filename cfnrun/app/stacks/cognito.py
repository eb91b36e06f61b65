"""AWS::Cognito::UserPool and UserPoolClient made through the AWS endpoint's Cognito user pools API.

moto's CloudFormation (5.2) completes a stack that declares either without making it. The types'
handlers on AWS call CreateUserPool / UpdateUserPool / DeleteUserPool and CreateUserPoolClient /
UpdateUserPoolClient / DeleteUserPoolClient; so does cfnrun. The template's properties go under the
API's names (``UserPoolName`` as ``PoolName``, the others as they are); a property the call does not
take is left out and the resource's event names it (UpdateUserPool takes no ``Schema``,
``AliasAttributes``, ``UsernameAttributes`` or ``UsernameConfiguration``: a change to one is not
applied there, inferred from the API). A client's ``UserPoolId`` and ``GenerateSecret`` are createOnly,
so a change replaces it (the engine does that).

A pool's physical id and Ref are its id; ``Arn``, ``ProviderName`` (``cognito-idp.REGION.amazonaws.com/ID``),
``ProviderURL`` and ``UserPoolId`` its attributes. A client's physical id and Ref are its id; ``ClientId``,
``Name`` and ``ClientSecret`` its attributes. A stack that reads ``ClientSecret`` gets the resource's
attributes masked wherever cfnrun shows or keeps them, as a NoEcho answer's are.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService, taken_arguments

USER_POOL = "AWS::Cognito::UserPool"
USER_POOL_CLIENT = "AWS::Cognito::UserPoolClient"
GONE = ("ResourceNotFoundException",)
RENAMED = {"UserPoolName": "PoolName"}


def _service(endpoint_url: str, region: str) -> EndpointService:
    return EndpointService("cognito-idp", "Cognito", endpoint_url, region)


class UserPools:
    """User pools on the endpoint's Cognito: how ``AwsTypes`` makes AWS::Cognito::UserPool."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.cognito = _service(endpoint_url, region)
        self.region = region

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        pool_id = (work.model or {}).get("UserPoolId")
        if isinstance(pool_id, str):  # UpdateUserPool puts back the default of each setting it is not given: all are sent
            await self.cognito.ask("update_user_pool", UserPoolId=pool_id, **taken_arguments(
                self.cognito, "UpdateUserPool", work.properties, work, identity=("UserPoolId",), renamed=RENAMED))
        else:
            properties = {"UserPoolName": work.logical_id, **work.properties}  # inferred: a pool needs a name, the service gives one
            made = await self.cognito.ask("create_user_pool", **taken_arguments(self.cognito, "CreateUserPool", properties, work, renamed=RENAMED))
            pool_id = str(made["UserPool"]["Id"])
        arn = str((await self.cognito.ask("describe_user_pool", UserPoolId=pool_id))["UserPool"]["Arn"])
        provider = f"cognito-idp.{self.region}.amazonaws.com/{pool_id}"
        known = {"Arn": arn, "ProviderName": provider, "ProviderURL": f"https://{provider}", "UserPoolId": pool_id}
        return Provisioned(pool_id, pool_id, {k: known[k] for k in work.attributes_wanted if k in known},
                           {DIRECT_KEY: USER_POOL, "UserPoolId": pool_id})

    async def delete(self, work: ResourceWork) -> None:
        pool_id = (work.model or {}).get("UserPoolId") or work.physical_id
        if not work.retain and isinstance(pool_id, str):
            await self.cognito.unless_gone(GONE, "delete_user_pool", UserPoolId=pool_id)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        pool_id = model.get("UserPoolId")
        if not isinstance(pool_id, str):
            return "cfnrun has no record of the user pool's id"
        return await self.cognito.still_there(GONE, f"the user pool {pool_id}", "describe_user_pool", UserPoolId=pool_id)


class UserPoolClients:
    """App clients of user pools on the endpoint's Cognito: how ``AwsTypes`` makes AWS::Cognito::UserPoolClient."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.cognito = _service(endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        pool_id = work.properties.get("UserPoolId")
        if not isinstance(pool_id, str) or not pool_id:
            raise ProvisioningFailed(property_problem(work.logical_id, required_key("UserPoolId")))
        properties = {"ClientName": work.logical_id, **work.properties}  # inferred: a client needs a name, the service gives one
        client_id = (work.model or {}).get("ClientId")
        if isinstance(client_id, str):
            arguments = taken_arguments(self.cognito, "UpdateUserPoolClient", properties, work, identity=("UserPoolId", "ClientId"), renamed=RENAMED)
            client = (await self.cognito.ask("update_user_pool_client", UserPoolId=pool_id, ClientId=client_id, **arguments))["UserPoolClient"]
        else:
            arguments = taken_arguments(self.cognito, "CreateUserPoolClient", properties, work, identity=("UserPoolId",), renamed=RENAMED)
            client = (await self.cognito.ask("create_user_pool_client", UserPoolId=pool_id, **arguments))["UserPoolClient"]
        client_id = str(client["ClientId"])
        known = {"ClientId": client_id, "Name": client.get("ClientName"), "ClientSecret": client.get("ClientSecret")}
        wanted = {k: known[k] for k in work.attributes_wanted if known.get(k) is not None}
        return Provisioned(client_id, client_id, wanted, {DIRECT_KEY: USER_POOL_CLIENT, "UserPoolId": pool_id, "ClientId": client_id},
                           no_echo="ClientSecret" in wanted)

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        if not work.retain and isinstance(model.get("UserPoolId"), str) and isinstance(model.get("ClientId"), str):
            await self.cognito.unless_gone(GONE, "delete_user_pool_client", UserPoolId=model["UserPoolId"], ClientId=model["ClientId"])

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        if not isinstance(model.get("UserPoolId"), str) or not isinstance(model.get("ClientId"), str):
            return "cfnrun has no record of the client's user pool and id"
        return await self.cognito.still_there(GONE, f"the user pool client {model['ClientId']}", "describe_user_pool_client",
                                              UserPoolId=model["UserPoolId"], ClientId=model["ClientId"])
