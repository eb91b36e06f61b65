"""AWS::* resources of a local stack, deployed on the AWS endpoint the handlers use.

Each AWS resource becomes a one-resource stack on that endpoint's own CloudFormation API
(embedded moto with ``--moto``, or any ``--aws-endpoint``: an external moto, LocalStack). Its
physical id is the one that stack reports, its Ref and the Fn::GetAtt values the template
uses come back as that stack's outputs. So the resource lives in the same world the
handlers' own AWS calls see: a bucket the stack creates is there when a handler lists buckets.
What a user can rely on is what the endpoint implements (moto's CloudFormation support covers
the common types; LocalStack covers more); a type it does not know fails the resource with the
endpoint's own message, except the types ``direct_types.py`` makes through the endpoint's service
APIs: AWS::S3::BucketPolicy (``bucket_policies.py``: cfn submit's upload infrastructure stack declares
two), AWS::SQS::QueuePolicy and AWS::SNS::TopicPolicy (``resource_policies.py``), AWS::SNS::Subscription (``sns_subscriptions.py``),
AWS::EC2::SubnetRouteTableAssociation (``route_table_associations.py``), AWS::SecretsManager::Secret
(``secrets.py``), AWS::Lambda::Version, Alias, Url and Permission (``lambda_versions.py``), AWS::Logs::MetricFilter and
SubscriptionFilter (``log_filters.py``), AWS::Scheduler::Schedule (``schedules.py``), AWS::Cognito::UserPool and
UserPoolClient (``cognito.py``) and AWS::ApiGateway::Stage once the endpoint's stack completes without them, and SAM's REST APIs
with an OpenAPI body and their deployments from the start (``rest_apis.py``). A role's and a managed
policy's delete detach and delete their policies first, as the service's do (``iam_deletes.py``); a
VPC's route tables, routes, gateways and their attachments, which moto's stack delete leaves, are
deleted after it (``ec2_deletes.py``); a DynamoDB table is updated in place with the endpoint's DynamoDB API (``dynamodb_tables.py``).
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import uuid
from typing import Any, Dict, List, Optional, Set, Tuple

from cfnrun.invoker.cancellable_clock import CancelRequested, Stopping
from cfnrun.invoker.clock import RealClock
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.in_flight import OperationStopped
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork
from cfnrun.app.moto_server import warm_cloudformation
from cfnrun.app.stacks.aws_schemas import AwsSchemas
from cfnrun.app.stacks.local_code import staged
from cfnrun.app.stacks.generated_names import GENERATED_NAME_KEY, name_seed, named, with_name
from cfnrun.app.stacks.bucket_policies import BUCKET_POLICY, BucketPolicies
from cfnrun.app.stacks.bucket_settings import BUCKET, BucketSettings
from cfnrun.app.stacks.alarms import ALARM, Alarms
from cfnrun.app.stacks.db_instances import DB_INSTANCE, DbInstances
from cfnrun.app.stacks.delivery_streams import DELIVERY_STREAM, DeliveryStreams
from cfnrun.app.stacks.direct_types import DIRECT_KEY, DirectType, endpoint_config
from cfnrun.app.stacks.dynamodb_tables import TABLE, DynamoDbTables
from cfnrun.app.stacks.ec2_deletes import Ec2Deletes
from cfnrun.app.stacks.iam_deletes import IamDeletes
from cfnrun.app.stacks.http_apis import HTTP_API, INTEGRATION, ROUTE, STAGE as HTTP_STAGE, ApiParts, HttpApis
from cfnrun.app.stacks.resource_policies import QUEUE_POLICY, TOPIC_POLICY, QueuePolicies, TopicPolicies
from cfnrun.app.stacks.sns_subscriptions import SUBSCRIPTION, SnsSubscriptions
from cfnrun.app.stacks.route_table_associations import ASSOCIATION, RouteTableAssociations
from cfnrun.app.stacks.secrets import SECRET, Secrets
from cfnrun.app.stacks.schedules import SCHEDULE, Schedules
from cfnrun.app.stacks.cognito import USER_POOL, USER_POOL_CLIENT, UserPoolClients, UserPools
from cfnrun.app.stacks.log_filters import METRIC_FILTER, SUBSCRIPTION_FILTER, MetricFilters, SubscriptionFilters
from cfnrun.app.stacks.lambda_versions import ALIAS, PERMISSION, URL, VERSION, Aliases, FunctionUrls, Permissions, Versions
from cfnrun.app.stacks.rest_apis import DEPLOYMENT, REST_API, STAGE, Deployments, RestApis, Stages

SETTLED_SUFFIXES = ("_COMPLETE", "_FAILED")
INNER_STACK_KEY = "cfnrun:endpointStack"  # where the resource's stack on the endpoint is kept, in its record
REF_OUTPUT = "Ref"
# moto's CloudFormation gives some types' physical id and Ref as the text of its Python object ("<moto.events.models.EventBus
# object at 0x7f...>"); where the service's Ref is one of the resource's properties, that property is its Ref and physical id
OBJECT_TEXT = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>")
# the property whose value the type's Ref returns where moto's CloudFormation gives the text of a Python object
REF_PROPERTY = {"AWS::Events::EventBus": "Name", "AWS::RDS::DBSubnetGroup": "DBSubnetGroupName"}
NO_ENDPOINT = (
    "{type_name} resources need an AWS endpoint: start serve with --moto (an embedded moto) "
    "or --aws-endpoint URL (an external moto or LocalStack)"
)
STACK_EXISTS = "(the AWS endpoint's AlreadyExistsException)"  # CreateStack's answer for a stack name in use (not a resource's: BucketAlreadyExists)
POLL_FIRST_S = 0.05
POLL_MAX_S = 1.0


class NotStabilized(ProvisioningFailed):
    """The endpoint's stack of the resource did not settle within the operation's timeout (the handler's timeoutInMinutes)."""

    def __init__(self, name: str, status: str, budget: Budget) -> None:
        super().__init__(
            f"Resource timed out waiting for completion: the AWS endpoint's stack {name} was still {status} at the end of "
            f"{budget.describe()}",
            "NotStabilized",
        )


class NotImplementedThere(ProvisioningFailed):
    """The endpoint's CloudFormation completed the resource's stack without making the resource: it does not know the type."""


class NoUpdateThere(ProvisioningFailed):
    """The endpoint's CloudFormation updated the resource's stack without the resource (moto's lacks some types' update)."""

    def __init__(self, work: ResourceWork, endpoint_url: Optional[str]) -> None:
        super().__init__(
            f"the AWS endpoint {endpoint_url} does not update {work.type_name} in place: its stack's update left no resource "
            f"(the resource {work.physical_id} is unchanged there)"
        )


def _answered(error: Exception) -> str:
    """What the endpoint sent instead of XML, from botocore's parser error (which carries the body after its first line)."""
    body = str(error).split("\n", 1)[1] if "\n" in str(error) else ""
    text = " ".join(re.sub(r"<[^>]+>", " ", body.strip().lstrip("b").strip("'\"")).split())
    if not text:
        return "nothing readable"
    return repr(text if len(text) <= 200 else text[:199] + "…")


def _inner_name(work: ResourceWork) -> str:
    """The resource's stack on the endpoint: named after the request (its clientRequestToken), so that a CREATE made again
    with the same token (``stacks/unanswered_creates.py``) finds the stack the first made instead of making another."""
    base = re.sub(r"[^A-Za-z0-9-]", "-", f"{work.stack.stack_name}-{work.logical_id}")
    request = work.client_request_token or str(uuid.uuid4())
    return f"{base[:100]}-{uuid.uuid5(uuid.NAMESPACE_URL, f'{work.stack.stack_id}/{work.logical_id}/{request}').hex[:8]}"


def _named(work: ResourceWork, creating: bool = True) -> "Tuple[ResourceWork, Optional[str]]":
    """``work`` with the name CloudFormation would generate when the type needs one and has none, and that name. An
    update keeps the name its create generated, and names none its create did not (a resource kept by an older cfnrun,
    named by the endpoint: a new name would replace it)."""
    kept = (work.model or {}).get(GENERATED_NAME_KEY)
    if not creating and not isinstance(kept, str):
        return work, None
    given = named(work.type_name, work.stack.stack_name, work.logical_id, work.properties, kept if isinstance(kept, str) else None,
                  name_seed(work))
    return dataclasses.replace(work, properties=with_name(work.type_name, work.properties, given)), given


def _output_keys(wanted: List[str]) -> Dict[str, str]:
    """Output key (alphanumeric, as the service requires) → the attribute it carries."""
    return {f"Att{index}": name for index, name in enumerate(wanted)}


class AwsTypes:
    """The ``Provisioner`` of AWS::* types."""

    idempotent_creates = True  # a CREATE made again with the same clientRequestToken goes on with the endpoint stack the first made

    def __init__(
        self, endpoint_url: Optional[str], region: str, schemas: AwsSchemas, poll_max_s: float = POLL_MAX_S, stopping: Optional[Stopping] = None,
        budgets: Optional[Budgets] = None,
    ) -> None:
        self.budgets = budgets or Budgets()  # how long the endpoint's stack of a resource may take to settle
        self.stopping = stopping or Stopping()  # serve stopping ends the polling of the endpoint's stack at once
        self.endpoint_url = endpoint_url
        self.region = region
        self.schemas = schemas
        self.poll_max_s = poll_max_s
        self._client: Any = None
        # the types made through the endpoint's own service API when its CloudFormation lacks them (moto's lacks bucket policies
        # and stages), or makes them without what the service would (a REST API's OpenAPI body): ``direct_types.py``
        self.direct: Dict[str, DirectType] = {
            BUCKET_POLICY: BucketPolicies(endpoint_url, region), REST_API: RestApis(endpoint_url, region),
            DEPLOYMENT: Deployments(endpoint_url, region), STAGE: Stages(endpoint_url, region),
            HTTP_API: HttpApis(endpoint_url, region),
            QUEUE_POLICY: QueuePolicies(endpoint_url, region), TOPIC_POLICY: TopicPolicies(endpoint_url, region),
            SUBSCRIPTION: SnsSubscriptions(endpoint_url, region),
            ASSOCIATION: RouteTableAssociations(endpoint_url, region), SECRET: Secrets(endpoint_url, region),
            VERSION: Versions(endpoint_url, region), ALIAS: Aliases(endpoint_url, region), URL: FunctionUrls(endpoint_url, region),
            PERMISSION: Permissions(endpoint_url, region),
            METRIC_FILTER: MetricFilters(endpoint_url, region), SUBSCRIPTION_FILTER: SubscriptionFilters(endpoint_url, region),
            SCHEDULE: Schedules(endpoint_url, region), ALARM: Alarms(endpoint_url, region, schemas.typed),
            DELIVERY_STREAM: DeliveryStreams(endpoint_url, region), DB_INSTANCE: DbInstances(endpoint_url, region),
            USER_POOL: UserPools(endpoint_url, region), USER_POOL_CLIENT: UserPoolClients(endpoint_url, region),
            **{part.type_name: ApiParts(part, endpoint_url, region) for part in (HTTP_STAGE, ROUTE, INTEGRATION)},
        } if endpoint_url else {}
        self.iam_deletes = IamDeletes(endpoint_url, region) if endpoint_url else None
        self.ec2_deletes = Ec2Deletes(endpoint_url, region) if endpoint_url else None  # what moto's stack delete leaves of a VPC's parts
        self.tables = DynamoDbTables(endpoint_url, region) if endpoint_url else None  # updated in place with DynamoDB's API
        self.bucket_settings = BucketSettings(endpoint_url, region) if endpoint_url else None  # what moto's CloudFormation leaves out
        self._lacking: Set[str] = set()  # the types this endpoint's CloudFormation was found not to implement
        # per stack on the endpoint, the properties its resource was last made or updated with, and what that gave: the
        # resource as it still is when the endpoint's CloudFormation cannot update its type (in this serve's memory)
        self._as_made: Dict[str, Tuple[Dict[str, Any], Provisioned]] = {}
        self._lost: Set[str] = set()  # the stacks on the endpoint whose update lost their resource

    def _cloudformation(self) -> Any:
        if self._client is None:
            import boto3  # what the endpoint speaks; imported once a stack has an AWS resource

            warm_cloudformation()  # an embedded moto's CloudFormation, imported without cyclic collections
            self._client = boto3.client(
                "cloudformation",
                endpoint_url=self.endpoint_url,
                region_name=self.region,
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
                config=endpoint_config(),
            )
        return self._client

    # -- before any call ---------------------------------------------------------------------

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        return None  # cfn-lint checked the properties of AWS types against their schemas before the operation began

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return self.schemas.mask_write_only(type_name, properties)

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return self.schemas.replacement(type_name, property_path)

    # -- on the endpoint ---------------------------------------------------------------------

    async def create(self, work: ResourceWork) -> Provisioned:
        direct = self.direct.get(work.type_name)
        if direct is not None and (work.type_name in self._lacking or direct.takes(work)):
            return await direct.put(work)
        name = _inner_name(work)
        work, given_name = _named(self._gettable(work))
        body = self._template(work, await staged(work.type_name, self.schemas.typed(work.type_name, work.properties), self.endpoint_url, self.region))
        try:
            await self._call(work, "create_stack", StackName=name, TemplateBody=body)
        except ProvisioningFailed as failed:
            if STACK_EXISTS not in failed.reason:  # (a stack of that name was made by the same request: its CREATE made again goes on with it)
                await self._half_made_deleted(name)
                raise
        try:
            made = await self._settled(work, name, given_name)
        except NotImplementedThere:
            if direct is None:
                raise
            self._lacking.add(work.type_name)  # asked once per serve: from now on straight to the service's API
            return await direct.put(work)
        await self._settings(work, made, creating=True)
        return made

    async def _settings(self, work: ResourceWork, made: Provisioned, creating: bool) -> None:
        """What the endpoint's CloudFormation left out of a bucket it made or updated, or of a table it made, put through
        the service's API."""
        if work.type_name == TABLE and creating and self.tables is not None:
            await self.tables.made(dataclasses.replace(work, properties=self.schemas.typed(TABLE, work.properties)), str(made.physical_id))
        if work.type_name == BUCKET and self.bucket_settings is not None:
            before = None if creating or work.previous_properties is None else self.schemas.typed(BUCKET, work.previous_properties)
            await self.bucket_settings.put(str(made.physical_id), self.schemas.typed(BUCKET, work.properties), before, work.note)

    async def _half_made_deleted(self, name: str) -> None:
        """The endpoint's stack ``name`` deleted after its CreateStack failed: moto registers the stack before it makes the
        resource, and one it broke making stays CREATE_IN_PROGRESS, where a retry of the CREATE (a retriable failure)
        found it, AlreadyExists, and waited for it until the operation's budget ran out."""
        try:
            await self._ask("delete_stack", StackName=name)
        except ProvisioningFailed:
            pass  # nothing there, or the endpoint cannot say: the failure being raised says what broke

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        """``AttributeNames``: the type's schema has no property the attribute names (``AwsSchemas.lacks_attribute``)."""
        return self.schemas.lacks_attribute(type_name, attribute)

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        """``AttributeNames``: the type the type's schema gives the attribute (``AwsSchemas.attribute_type``)."""
        return self.schemas.attribute_type(type_name, attribute)

    def _gettable(self, work: ResourceWork) -> ResourceWork:
        """``work`` without the wanted attributes its type's schema has no property for: the endpoint is not asked for
        them (moto would fail the resource itself), so the resource that reads one fails, as on the service."""
        wanted = frozenset(a for a in work.attributes_wanted if not self.schemas.lacks_attribute(work.type_name, a))
        return work if wanted == work.attributes_wanted else dataclasses.replace(work, attributes_wanted=wanted)

    def _made_directly(self, model: Optional[Dict[str, Any]]) -> Optional[DirectType]:
        """The service-API maker of a resource made without a stack on the endpoint (its record says which), or None."""
        made = (model or {}).get(DIRECT_KEY)
        return self.direct.get(made) if isinstance(made, str) else None

    async def update(self, work: ResourceWork) -> Provisioned:
        direct = self._made_directly(work.model)
        if direct is not None:
            return await direct.put(work)
        name = self._inner_stack(work)
        if work.type_name == TABLE and self.tables is not None:  # moto's CloudFormation has no update for tables
            typed = self.schemas.typed(work.type_name, work.properties)
            before = self.schemas.typed(work.type_name, work.previous_properties) if work.previous_properties is not None else None
            return await self.tables.update(dataclasses.replace(self._gettable(work), properties=typed, previous_properties=before))
        work, given_name = _named(self._gettable(work), creating=False)
        if name in self._lost:
            return self._unchanged(work, name)
        try:
            try:
                properties = await staged(work.type_name, self.schemas.typed(work.type_name, work.properties), self.endpoint_url, self.region)
                await self._call(work, "update_stack", StackName=name, TemplateBody=self._template(work, properties))
            except ProvisioningFailed as error:
                if "No updates are to be performed" not in error.reason:
                    raise
            made = await self._settled(work, name, given_name, updating=True)
            await self._settings(work, made, creating=False)
            return made
        except ProvisioningFailed as failed:
            if not isinstance(failed, NoUpdateThere) and f"undefined resource {work.logical_id}" not in failed.reason:
                raise
        # moto's CloudFormation has no update for the type: its stack lost the resource, which is left as it was there; the
        # stack is given a template without Outputs (moto reads them on every describe and delete, and they read nothing)
        self._lost.add(name)
        try:
            await self._without_outputs(work, name)
        except ProvisioningFailed:
            pass
        raise NoUpdateThere(work, self.endpoint_url)

    def _unchanged(self, work: ResourceWork, name: str) -> Provisioned:
        """The resource of a stack on the endpoint whose update lost it: as it was made when that is what is asked (the
        rollback of the update that failed), else the update fails and changes nothing."""
        as_made = self._as_made.get(name)
        if as_made is not None and as_made[0] == work.properties and work.attributes_wanted <= set(as_made[1].attributes):
            return as_made[1]
        raise NoUpdateThere(work, self.endpoint_url)

    async def read_attributes(self, work: ResourceWork) -> Dict[str, Any]:
        """The endpoint's stack of the resource updated with outputs for the attributes now wanted: the resource itself unchanged."""
        return dict((await self.update(work)).attributes)

    async def delete(self, work: ResourceWork) -> None:
        direct = self._made_directly(work.model)
        if direct is not None:
            return await direct.delete(work)
        name = self._inner_stack(work)
        self._as_made.pop(name, None)
        self._lost.discard(name)
        if work.retain:
            return
        self._require_endpoint(work)
        if await self._endpoint_status(name) is None:
            return  # already gone (an embedded moto after a restart of serve): deleted, as the service takes a resource it cannot find
        if self.iam_deletes is not None:
            await self.iam_deletes.before(work)  # a role's policies detached, a managed policy's attachments: as the service's delete
        await self._call(work, "delete_stack", StackName=name)
        status, reason = await self._wait(name, Action.DELETE, work.type_name)
        if status != "DELETE_COMPLETE":
            raise ProvisioningFailed(reason or f"the endpoint's stack {name} ended {status}")
        if self.iam_deletes is not None:
            await self.iam_deletes.after(work)
        if self.ec2_deletes is not None:
            await self.ec2_deletes.after(work)

    async def _without_outputs(self, work: ResourceWork, name: str) -> None:
        """The endpoint's stack ``name`` updated to its template without Outputs, which moto evaluates on delete too."""
        body = (await self._ask("get_template", StackName=name))["TemplateBody"]
        template = json.loads(body) if isinstance(body, str) else dict(body)
        template.pop("Outputs", None)
        await self._call(work, "update_stack", StackName=name, TemplateBody=json.dumps(template))
        await self._wait(name, Action.UPDATE, work.type_name)

    async def still_there(self, model: Optional[Dict[str, Any]]) -> bool:
        """Does the endpoint still have the resource's stack (after a restart of serve, an embedded moto does not)?"""
        direct = self._made_directly(model)
        if direct is not None:
            return await direct.left(model or {}) is not None
        name = (model or {}).get(INNER_STACK_KEY)
        if self.endpoint_url is None or not isinstance(name, str):
            return False
        try:
            return await self._endpoint_status(name) is not None
        except ProvisioningFailed:
            return False

    async def left_on_endpoint(self, model: Optional[Dict[str, Any]]) -> Optional[str]:
        """After a delete: why the resource may still be on the endpoint (its stack there is not deleted), or None when it is gone."""
        direct = self._made_directly(model)
        if direct is not None:
            return await direct.left(model or {})
        name = (model or {}).get(INNER_STACK_KEY)
        if self.endpoint_url is None or not isinstance(name, str):
            return "cfnrun has no record of its stack on the AWS endpoint"
        try:
            status = await self._endpoint_status(name)
        except ProvisioningFailed as error:
            return error.reason
        return None if status is None else f"its stack {name} on the AWS endpoint is {status}"

    async def _endpoint_status(self, name: str) -> Optional[str]:
        """The status of the endpoint's stack ``name``; None once it is deleted or gone; ProvisioningFailed when the endpoint cannot say."""
        try:
            stacks = (await self._ask("describe_stacks", StackName=name))["Stacks"]
        except ProvisioningFailed as error:
            if "does not exist" in error.reason:
                return None
            raise
        status = stacks[0]["StackStatus"] if stacks else "DELETE_COMPLETE"
        return None if status == "DELETE_COMPLETE" else status

    # -- helpers -----------------------------------------------------------------------------

    def _require_endpoint(self, work: ResourceWork) -> None:
        if self.endpoint_url is None:
            raise ProvisioningFailed(NO_ENDPOINT.format(type_name=work.type_name))

    @staticmethod
    def _inner_stack(work: ResourceWork) -> str:
        name = (work.model or {}).get(INNER_STACK_KEY)
        if not isinstance(name, str):
            raise ProvisioningFailed(f"cfnrun has no record of {work.logical_id}'s stack on the AWS endpoint")
        return name

    def _template(self, work: ResourceWork, properties: Dict[str, Any]) -> str:
        declaration: Dict[str, Any] = {"Type": work.type_name}
        if properties:
            declaration["Properties"] = properties
        outputs: Dict[str, Any] = {REF_OUTPUT: {"Value": {"Ref": work.logical_id}}}
        for key, attribute in _output_keys(sorted(work.attributes_wanted)).items():
            outputs[key] = {"Value": {"Fn::GetAtt": [work.logical_id, attribute]}}
        return json.dumps({"Resources": {work.logical_id: declaration}, "Outputs": outputs})

    async def _call(self, work: ResourceWork, operation: str, **arguments: Any) -> Dict[str, Any]:
        self._require_endpoint(work)
        return await self._ask(operation, **arguments)

    async def _ask(self, operation: str, **arguments: Any) -> Dict[str, Any]:
        """One call to the endpoint's CloudFormation API; whatever goes wrong fails the resource, never the stack operation."""
        from botocore.exceptions import BotoCoreError, ClientError
        from botocore.parsers import ResponseParserError

        client = self._cloudformation()
        try:
            return await asyncio.to_thread(getattr(client, operation), **arguments)
        except ClientError as error:
            detail = error.response.get("Error", {})
            raise ProvisioningFailed(f"{detail.get('Message') or error} (the AWS endpoint's {detail.get('Code', 'error')})") from None
        except ResponseParserError as error:  # an HTML page or a traceback where XML should be: the endpoint broke on the call
            raise ProvisioningFailed(
                f"the AWS endpoint {self.endpoint_url} failed answering {operation}: it answered {_answered(error)}, "
                "not an AWS answer (the endpoint itself broke on this call: try the resource there alone, or another endpoint)"
            ) from None
        except BotoCoreError as error:
            raise ProvisioningFailed(f"the AWS endpoint {self.endpoint_url} did not answer: {error}") from None

    def budget(self, action: Action, type_name: str) -> Budget:
        """How long the resource's operation may take: its handler's timeoutInMinutes (cfn-lint's schemas carry no
        handlers, so mostly the documented default of 120), or serve's --operation-timeout; scaled by --time-scale."""
        return self.budgets.operation(action, self.schemas.schema(type_name) or ResourceSchema({}))

    async def _wait(self, name: str, action: Action, type_name: str) -> Tuple[str, Optional[str]]:
        """Poll the endpoint's stack until it settles: its status and, when it failed, the first failure's reason.
        NotStabilized when it has not settled within the operation's budget: an endpoint that never settles a resource
        (moto leaves a stack IN_PROGRESS when it broke making it) fails the resource instead of holding the stack."""
        delay = POLL_FIRST_S
        clock = self.stopping.clock(RealClock())
        budget = self.budget(action, type_name)
        deadline = clock.now() + budget.seconds
        while True:
            status = await self._endpoint_status(name) or "DELETE_COMPLETE"  # a stack gone is one deleted
            if status.endswith(SETTLED_SUFFIXES) and not status.endswith("CLEANUP_COMPLETE"):
                break
            remaining = deadline - clock.now()
            if remaining <= 0:
                raise NotStabilized(name, status, budget)
            try:
                await clock.sleep(min(delay, remaining))
            except CancelRequested as stopped:
                raise OperationStopped(str(stopped)) from None
            delay = min(self.poll_max_s, delay * 2)
        if status.endswith("_COMPLETE") and "ROLLBACK" not in status:
            return status, None
        events = (await self._ask("describe_stack_events", StackName=name)).get("StackEvents", [])
        failures = [e.get("ResourceStatusReason") for e in reversed(events) if e.get("ResourceStatus", "").endswith("_FAILED")]
        return status, next((f for f in failures if f), None)

    async def _settled(self, work: ResourceWork, name: str, given_name: Optional[str] = None, updating: bool = False) -> Provisioned:
        status, reason = await self._wait(name, Action.UPDATE if updating else Action.CREATE, work.type_name)
        if status not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
            raise ProvisioningFailed(reason or f"the AWS endpoint's stack {name} ended {status}")
        stack = (await self._ask("describe_stacks", StackName=name))["Stacks"][0]
        outputs = {o["OutputKey"]: o.get("OutputValue") for o in stack.get("Outputs", [])}
        made = await self._made(name, work.logical_id)
        if REF_OUTPUT not in outputs and made is None and updating:  # moto's CloudFormation lacks the type's update: its stack lost
            raise NoUpdateThere(work, self.endpoint_url)  # the resource, left as it was (the stack there is kept: its record)
        if REF_OUTPUT not in outputs and made is None:  # moto completes a stack whose type it does not know, without making the resource
            await self._ask("delete_stack", StackName=name)  # nothing of it is left on the endpoint
            raise NotImplementedThere(
                f"the AWS endpoint {self.endpoint_url} does not implement {work.type_name}: its stack completed without making the resource"
            )
        physical_id = made or outputs[REF_OUTPUT] or name
        given = {attribute: outputs[key] for key, attribute in _output_keys(sorted(work.attributes_wanted)).items() if key in outputs}
        attributes = {**attributes_from_properties(work.attributes_wanted - set(given), work.properties), **given}
        missing = sorted(work.attributes_wanted - set(attributes))
        if missing:
            raise ProvisioningFailed(
                f"{work.type_name} {physical_id} has no attribute {', '.join(missing)} (Fn::GetAtt): the AWS endpoint "
                f"{self.endpoint_url} does not give it, and the resource's properties do not hold it"
            )
        model = {INNER_STACK_KEY: name, **({GENERATED_NAME_KEY: given_name} if given_name else {})}
        ref = outputs.get(REF_OUTPUT, physical_id)
        if OBJECT_TEXT.fullmatch(str(ref)) or OBJECT_TEXT.fullmatch(str(physical_id)):
            named_by = work.properties.get(REF_PROPERTY.get(work.type_name, ""))
            if isinstance(named_by, str) and named_by:
                physical_id = ref = named_by
        provisioned = Provisioned(physical_id, ref, attributes, model)
        self._as_made[name] = (work.properties, provisioned)
        return provisioned

    async def _made(self, name: str, logical_id: str) -> Optional[str]:
        """The physical id of the resource the endpoint's stack made, or None when it made none (a type the endpoint does not know).

        moto leaves out every output of a stack when one Fn::GetAtt fails, the Ref with them: the resource is there all the
        same. Asked with ListStackResources: moto's DescribeStackResource breaks on a stack holding a type it does not know
        (it reads the logical id of the resource it never made), which put a misleading line on serve's console."""
        try:
            summaries = (await self._ask("list_stack_resources", StackName=name)).get("StackResourceSummaries", [])
        except ProvisioningFailed:
            return None
        for summary in summaries:
            if summary.get("LogicalResourceId") == logical_id and summary.get("ResourceStatus", "").endswith("_COMPLETE"):
                return summary.get("PhysicalResourceId") or None
        return None


def attributes_from_properties(wanted: "frozenset[str] | set[str]", properties: Dict[str, Any]) -> Dict[str, Any]:
    """The attributes that repeat a property of the same name (AWS::SSM::Parameter's Value and Type): what the resource was given."""
    found: Dict[str, Any] = {}
    for attribute in wanted:
        value: Any = properties
        for part in attribute.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, (dict, list)):
            found[attribute] = value
    return found
