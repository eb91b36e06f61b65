"""The registry's CloudFormation API operations: input shapes in, output shapes out (botocore's ``cloudformation`` model)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence

from cfnrun.model.aws_type_schemas import AwsTypeSchemas
from cfnrun.registry.kept import read_moment
from cfnrun.registry.package import RESOURCE
from cfnrun.registry.store import COMPLETE, RegisteredType, RegistryError, TypeRegistry, TypeVersion, provisioning_type

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]
PAGE = 100  # results per page when MaxResults is not given (the model's maximum)
# How long DescribeTypeRegistration holds its answer while the registration is IN_PROGRESS, in seconds. The service answers at once;
# its waiter (type_registration_complete, what `cfn submit` waits with) asks again only after 30 s, so an answer that waits for a
# registration serve finishes in a second or two saves each submit that half-minute. Well under boto3's 60 s read timeout.
REGISTRATION_ANSWER_WAIT_S = 20.0
# What DescribeType, ListTypes and ListTypeVersions answer as null for a public third-party extension, activated in the account or
# not (the model's documentation of each member): its default version and its contract tests are its publisher's
PUBLISHERS_OWN = ("DefaultVersionId", "IsDefaultVersion", "TypeTestsStatus", "TypeTestsStatusDescription")
SUMMARIZED = ("IsActivated", "OriginalTypeName", "PublicVersionNumber", "LatestPublicVersion", "PublisherId")  # an activated type's, in ListTypes
CONFIGURATION_PARAMS = ("TypeArn", "Type", "TypeName", "Configuration", "ConfigurationAlias")  # SetTypeConfiguration's input, as kept


@dataclass(frozen=True)
class ProvidedType:
    """A type serve runs from a ``--provider`` project: not registered, but what stacks and Cloud Control use under its name."""

    kind: str  # RESOURCE or HOOK
    type_name: str
    schema: Dict[str, Any]
    source: Path  # the project's folder: DescribeType's SourceUrl says where the type comes from


class RegistryOperations:
    def __init__(
        self, registry: TypeRegistry, provided: Callable[[], Sequence[ProvidedType]] = lambda: (), answer_wait: float = REGISTRATION_ANSWER_WAIT_S,
    ) -> None:
        self.registry = registry
        self.answer_wait = answer_wait  # DescribeTypeRegistration's hold on a registration in progress (REGISTRATION_ANSWER_WAIT_S)
        self.provided = provided  # the --provider projects' types, as they are now (a reload may change a schema)
        self.aws = AwsTypeSchemas(registry.region)  # the public AWS::* types: what cfn asks the registry for a hook's targets
        self.connection: Optional[str] = None  # RegisterPublisher's ConnectionArn: a verified publisher (inferred)
        self.handlers: Dict[str, Operation] = {
            "RegisterType": self.register_type,
            "DescribeTypeRegistration": self.describe_type_registration,
            "ListTypeRegistrations": self.list_type_registrations,
            "DescribeType": self.describe_type,
            "ListTypes": self.list_types,
            "ListTypeVersions": self.list_type_versions,
            "SetTypeDefaultVersion": self.set_type_default_version,
            "DeregisterType": self.deregister_type,
            "TestType": self.test_type,
            "RegisterPublisher": self.register_publisher,
            "DescribePublisher": self.describe_publisher,
            "PublishType": self.publish_type,
            "ActivateType": self.activate_type,
            "DeactivateType": self.deactivate_type,
            "BatchDescribeTypeConfigurations": self.batch_describe_type_configurations,
        }

    def operations(self) -> "frozenset[str]":
        return frozenset(self.handlers)

    def knows(self, params: Dict[str, Any]) -> bool:
        """Whether a DescribeType call names a registered type, a --provider project's, a public AWS type or a public type (one
        published here, or none: TypeNotFoundException) (else the stacks answer)."""
        if self._aws_schema(params) is not None or self._provided(params) is not None or _names_public(params):
            return True
        try:
            self._find(params)
        except RegistryError:
            return False
        return True

    def _aws_schema(self, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The schema of the public AWS::* resource type a DescribeType call names (cfn-lint's copy of the registry's), or None."""
        name = params.get("TypeName") or ""
        if params.get("Arn") or params.get("VersionId") or not name.startswith("AWS::") or (params.get("Type") or RESOURCE) != RESOURCE:
            return None
        return self.aws.document(name)

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        return await self.handlers[operation](params)

    def _find(self, params: Dict[str, Any]) -> "tuple[RegisteredType, Optional[str]]":
        return self.registry.find(params.get("Type"), params.get("TypeName"), params.get("Arn") or params.get("TypeArn"), params.get("VersionId"))

    async def register_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        kind = params.get("Type") or RESOURCE  # the reader has refused what the model's enum does not allow
        registration = self.registry.register(
            kind, params["TypeName"], params["SchemaHandlerPackage"], params.get("LoggingConfig"), params.get("ExecutionRoleArn"),
            params.get("ClientRequestToken"),
        )
        return {"RegistrationToken": registration.token}

    async def describe_type_registration(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registration = self.registry.registration(params["RegistrationToken"])
        await self.registry.settled(registration.token, self.answer_wait)
        answer: Dict[str, Any] = {"ProgressStatus": registration.status, "Description": registration.description}
        if registration.status == COMPLETE:  # the model: TypeArn and TypeVersionArn are null for any other ProgressStatus
            answer.update(TypeArn=registration.type_arn, TypeVersionArn=registration.version_arn)
        return answer

    async def list_type_registrations(self, params: Dict[str, Any]) -> Dict[str, Any]:
        arn = params.get("TypeArn")
        wanted = params.get("RegistrationStatusFilter")
        tokens = [
            r.token for r in self.registry.registrations.values()
            if (not arn or r.type_arn == arn)
            and (not params.get("TypeName") or (r.type_name == params["TypeName"] and r.kind == (params.get("Type") or r.kind)))
            and (not wanted or r.status == wanted)
        ]
        page, token = _page(tokens, params)
        return _with_token({"RegistrationTokenList": page}, token)

    def _provided(self, params: Dict[str, Any]) -> Optional[ProvidedType]:
        """The --provider project's type a DescribeType call names by Type and TypeName, when no registration has that name."""
        if params.get("Arn") or params.get("VersionId"):
            return None
        kind, name = params.get("Type") or RESOURCE, params.get("TypeName")
        if self._registered(kind, name):
            return None  # the registration answers the registry's API; stacks and Cloud Control run the provider
        return next((p for p in self.provided() if (p.kind, p.type_name) == (kind, name)), None)

    def _registered(self, kind: str, type_name: Optional[str]) -> bool:
        """Whether a registration with a live version names the type."""
        registered = self.registry.types.get((kind, type_name or ""))
        return registered is not None and bool(registered.live())

    async def describe_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        aws_schema = self._aws_schema(params)
        if aws_schema is not None:
            return self._aws_type(params["TypeName"], aws_schema)
        if _names_public(params):
            published = self.registry.published(params.get("Type"), params.get("Arn"), params.get("PublisherId"), params.get("TypeName"))
            return self._public_type(published, params.get("PublicVersionNumber"))
        provided = self._provided(params)
        if provided is not None:
            return self._provided_type(provided)
        registered, version_id = self._find(params)
        version = self.registry.version(registered, version_id)
        answer: Dict[str, Any] = {
            "Arn": version.arn if version_id else registered.arn,
            "Type": registered.kind,
            "TypeName": registered.type_name,
            "DefaultVersionId": registered.default_id,
            "IsDefaultVersion": version.version_id == registered.default_id,
            "TypeTestsStatus": version.tests_status,
            "TypeTestsStatusDescription": version.tests_description,
            "Description": version.package.schema.get("description"),
            "Schema": json.dumps(version.package.schema),
            "ProvisioningType": version.provisioning_type,
            "DeprecatedStatus": "DEPRECATED" if version.deprecated else "LIVE",
            "LoggingConfig": version.logging_config,
            "ExecutionRoleArn": version.execution_role_arn,
            "Visibility": "PRIVATE",
            "SourceUrl": version.package.schema.get("sourceUrl"),
            "DocumentationUrl": version.package.schema.get("documentationUrl"),
            "LastUpdated": version.registered,
            "TimeCreated": version.registered,
            "ConfigurationSchema": json.dumps(version.package.configuration_schema) if version.package.configuration_schema else None,
        }
        answer.update(_activation(registered, version, self.registry.publisher_id))
        return _shown(registered, answer)

    def _provided_type(self, provided: ProvidedType) -> Dict[str, Any]:
        """DescribeType of a --provider project's type: PRIVATE, not versioned (no DefaultVersionId), its SourceUrl the project's
        folder (a file: URL), where it comes from."""
        described = {
            "Arn": self.registry.arn(provided.kind, provided.type_name), "Type": provided.kind, "TypeName": provided.type_name,
            "IsDefaultVersion": True, "Schema": json.dumps(provided.schema), "Description": provided.schema.get("description"),
            "ProvisioningType": provisioning_type(provided.kind, provided.schema), "DeprecatedStatus": "LIVE", "Visibility": "PRIVATE",
            "TypeTestsStatus": "NOT_TESTED", "SourceUrl": provided.source.resolve().as_uri(),
            "DocumentationUrl": provided.schema.get("documentationUrl"),
        }
        return {key: value for key, value in described.items() if value is not None}

    def _public_type(self, published: RegisteredType, number: Optional[str]) -> Dict[str, Any]:
        """DescribeType of a type published here, as a public third-party extension: its public version ``number`` (the latest
        when None, with LatestPublicVersion); no default version, tests or deprecation (the model: null for these)."""
        latest = published.public_versions[-1]
        version = next((v for v in published.versions.values() if v.public_version == (number or latest)), None)
        if version is None:
            raise RegistryError(f"The type '{published.type_name}' with public version '{number}' cannot be found.", "TypeNotFoundException")
        schema = version.package.schema
        described = {
            "Arn": published.public_arn, "Type": published.kind, "TypeName": published.type_name, "Visibility": "PUBLIC",
            "PublisherId": self.registry.publisher_id, "PublicVersionNumber": version.public_version, "LatestPublicVersion": None if number else latest,
            "IsActivated": any(t.origin is published and t.live() for t in self.registry.types.values()),
            "Schema": json.dumps(schema), "Description": schema.get("description"), "ProvisioningType": version.provisioning_type,
            "SourceUrl": schema.get("sourceUrl"), "DocumentationUrl": schema.get("documentationUrl"),
        }
        return {key: value for key, value in described.items() if value is not None}

    def _aws_type(self, type_name: str, schema: Dict[str, Any]) -> Dict[str, Any]:
        """DescribeType of a public AWS type: its schema as the registry publishes it, from cfn-lint's data."""
        described = {
            "Arn": f"arn:aws:cloudformation:{self.registry.region}::type/resource/{type_name.replace('::', '-')}",
            "Type": RESOURCE, "TypeName": type_name, "IsDefaultVersion": True, "Schema": json.dumps(schema),
            "Description": schema.get("description"), "Visibility": "PUBLIC", "DeprecatedStatus": "LIVE",
            "ProvisioningType": provisioning_type(RESOURCE, schema),
            "SourceUrl": schema.get("sourceUrl"), "DocumentationUrl": schema.get("documentationUrl"),
        }
        return {key: value for key, value in described.items() if value is not None}

    async def list_types(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("Visibility", "PRIVATE") != "PRIVATE":
            return self._public_types(params)
        status = params.get("DeprecatedStatus") or "LIVE"
        prefix = (params.get("Filters") or {}).get("TypeNamePrefix") or ""
        summaries: List[Dict[str, Any]] = []
        for registered in sorted(self.registry.types.values(), key=lambda t: (t.kind, t.type_name)):
            live = registered.live()
            if (status == "LIVE") != bool(live) or (params.get("Type") and registered.kind != params["Type"]):
                continue
            if not registered.type_name.startswith(prefix):
                continue
            shown = self.registry.version(registered, None)
            if params.get("ProvisioningType") and shown.provisioning_type != params["ProvisioningType"]:
                continue
            summary = {
                "Type": registered.kind, "TypeName": registered.type_name, "DefaultVersionId": registered.default_id,
                "TypeArn": registered.arn, "LastUpdated": shown.registered, "Description": shown.package.schema.get("description"),
                **{key: value for key, value in _activation(registered, shown, self.registry.publisher_id).items() if key in SUMMARIZED},
            }
            summaries.append(_shown(registered, summary))
        if status == "LIVE":
            summaries += self._provided_summaries(params, prefix)
        page, token = _page([summary for summary in summaries if _in_filters(summary, params.get("Filters") or {}, public=False)], params)
        return _with_token({"TypeSummaries": page}, token)

    def _provided_summaries(self, params: Dict[str, Any], prefix: str) -> List[Dict[str, Any]]:
        """ListTypes' summaries of the --provider projects' types no registration names: PRIVATE, no DefaultVersionId."""
        summaries: List[Dict[str, Any]] = []
        for provided in sorted(self.provided(), key=lambda p: (p.kind, p.type_name)):
            if self._registered(provided.kind, provided.type_name) or not provided.type_name.startswith(prefix):
                continue
            if (params.get("Type") and provided.kind != params["Type"]) or (
                params.get("ProvisioningType") and provisioning_type(provided.kind, provided.schema) != params["ProvisioningType"]
            ):
                continue
            summary = {
                "Type": provided.kind, "TypeName": provided.type_name, "TypeArn": self.registry.arn(provided.kind, provided.type_name),
                "Description": provided.schema.get("description"),
            }
            summaries.append({key: value for key, value in summary.items() if value is not None})
        return summaries

    def _public_types(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """ListTypes of PUBLIC types of one kind: AWS's own resource types (from cfn-lint's data), then the types published here."""
        kind = params.get("Type") or RESOURCE
        if (params.get("DeprecatedStatus") or "LIVE") != "LIVE":
            return {"TypeSummaries": []}
        prefix = (params.get("Filters") or {}).get("TypeNamePrefix") or ""
        summaries: List[Dict[str, Any]] = [
            {"Type": RESOURCE, "TypeName": name, "TypeArn": f"arn:aws:cloudformation:{self.registry.region}::type/resource/{name.replace('::', '-')}"}
            for name in (self.aws.type_names() if kind == RESOURCE else ()) if name.startswith(prefix)
        ]
        for registered in self.registry.types.values():
            if registered.public_arn and registered.kind == kind and registered.type_name.startswith(prefix):
                summaries.append({
                    "Type": kind, "TypeName": registered.type_name, "TypeArn": registered.public_arn,
                    "PublisherId": self.registry.publisher_id, "LatestPublicVersion": registered.public_versions[-1],
                })
        page, token = _page([summary for summary in summaries if _in_filters(summary, params.get("Filters") or {}, public=True)], params)
        return _with_token({"TypeSummaries": page}, token)

    async def list_type_versions(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, _ = self._find(params)
        deprecated = (params.get("DeprecatedStatus") or "LIVE") == "DEPRECATED"
        summaries = [_version_summary(registered, v) for v in registered.versions.values() if v.deprecated == deprecated]
        page, token = _page(summaries, params)
        return _with_token({"TypeVersionSummaries": page}, token)

    async def set_type_default_version(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, version_id = self._find(params)
        self.registry.set_default(registered, version_id)
        return {}

    async def deregister_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, version_id = self._find(params)
        await self.registry.deregister(registered, version_id)
        return {}


    async def test_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, version_id = self._find(params)
        version = self.registry.test(registered, version_id, params.get("LogDeliveryBucket"))
        return {"TypeVersionArn": version.arn}

    async def register_publisher(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("ConnectionArn"):
            self.connection = str(params["ConnectionArn"])
        return {"PublisherId": self.registry.register_publisher()}

    async def describe_publisher(self, params: Dict[str, Any]) -> Dict[str, Any]:
        own = self.registry.publisher_id
        if own is None or params.get("PublisherId") not in (None, own):
            raise RegistryError(f"Publisher '{params.get('PublisherId') or 'of this account'}' not found: register one with RegisterPublisher")
        return {"PublisherId": own, "PublisherStatus": "VERIFIED" if self.connection else "UNVERIFIED"}

    async def publish_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, _ = self._find(params)
        return {"PublicTypeArn": await self.registry.publish(registered, params.get("PublicVersionNumber"))}


    async def activate_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        published = self.registry.published(params.get("Type"), params.get("PublicTypeArn"), params.get("PublisherId"), params.get("TypeName"))
        activated = await self.registry.activate(published, params.get("TypeNameAlias"), params.get("AutoUpdate"), params.get("VersionBump"))
        return {"Arn": activated.arn}

    async def deactivate_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        registered, _ = self._find(params)
        await self.registry.deactivate(registered)
        return {}


    def configured(self, params: Dict[str, Any], configuration_arn: str) -> None:
        """Note a SetTypeConfiguration the local stacks accepted (they apply it): BatchDescribeTypeConfigurations answers it."""
        self.registry.configure(configuration_arn, {key: params[key] for key in CONFIGURATION_PARAMS if params.get(key) is not None})

    def _configuration(self, record: Dict[str, Any]) -> Dict[str, Any]:
        """A kept SetTypeConfiguration as BatchDescribeTypeConfigurations describes it."""
        configuration_arn, params = record["arn"], record["params"]
        kind = configuration_arn.split(":type-configuration/", 1)[-1].split("/", 1)[0].upper()
        type_arn = params.get("TypeArn")
        type_name = params.get("TypeName") or (type_arn.rsplit("/", 1)[-1].replace("-", "::") if type_arn else "")
        alias = params.get("ConfigurationAlias") or "default"
        return {
            "Arn": configuration_arn, "Alias": alias, "Configuration": params["Configuration"], "LastUpdated": read_moment(record["set"]),
            "TypeArn": type_arn or self.registry.arn(kind, type_name), "TypeName": type_name, "IsDefaultConfiguration": alias == "default",
        }

    async def batch_describe_type_configurations(self, params: Dict[str, Any]) -> Dict[str, Any]:
        found: List[Dict[str, Any]] = []
        errors: List[Dict[str, Any]] = []
        for identifier in params["TypeConfigurationIdentifiers"]:
            described = (self._configuration(record) for record in self.registry.configurations.values())
            match = next((details for details in described if _identifies(identifier, details)), None)
            if match is None:
                named = identifier.get("TypeConfigurationArn") or identifier.get("TypeArn") or identifier.get("TypeName")
                errors.append({
                    "ErrorCode": "TypeConfigurationNotFoundException", "ErrorMessage": f"No type configuration has been set for {named}",
                    "TypeConfigurationIdentifier": identifier,
                })
            else:
                found.append(match)
        return {"TypeConfigurations": found, "Errors": errors}


def _in_filters(summary: Dict[str, Any], filters: Dict[str, Any], public: bool) -> bool:
    """Whether a ListTypes summary passes the Category and PublisherId of its TypeFilters (the model): REGISTERED, the account's
    private types (a --provider project's too); ACTIVATED, public types activated in it; THIRD_PARTY, any type not Amazon's;
    AWS_TYPES, Amazon's, which are PUBLIC only."""
    publisher = summary.get("PublisherId")
    if filters.get("PublisherId") and filters["PublisherId"] != publisher:
        return False
    amazons, activated = public and publisher is None, bool(summary.get("IsActivated"))
    wanted = {"AWS_TYPES": amazons, "THIRD_PARTY": not amazons, "ACTIVATED": activated, "REGISTERED": not public and not activated}
    return wanted.get(filters.get("Category") or "", True)


def _names_public(params: Dict[str, Any]) -> bool:
    """Whether a DescribeType call names a public third-party type: by PublisherId, or by a public ARN (no account in it)."""
    return bool(params.get("PublisherId")) or (params.get("Arn") or "").split(":")[4:5] == [""]


def _identifies(identifier: Dict[str, Any], details: Dict[str, Any]) -> bool:
    """Whether a TypeConfigurationIdentifier names this configuration: by its ARN, or its type (ARN or name) and alias."""
    if identifier.get("TypeConfigurationArn"):
        return bool(identifier["TypeConfigurationArn"] == details["Arn"])
    if identifier.get("TypeArn") and identifier["TypeArn"] != details["TypeArn"]:
        return False
    if identifier.get("TypeName") and identifier["TypeName"] != details["TypeName"]:
        return False
    if identifier.get("Type") and f"/{str(identifier['Type']).lower()}/" not in details["Arn"]:
        return False
    return bool(identifier.get("TypeArn") or identifier.get("TypeName")) and (identifier.get("TypeConfigurationAlias") or "default") == details["Alias"]


def _shown(registered: RegisteredType, answer: Dict[str, Any]) -> Dict[str, Any]:
    """``answer`` without its null values and, for an activated public type, without what the model says is null for a public
    third-party extension, activated or not."""
    hidden = PUBLISHERS_OWN if registered.origin is not None else ()
    return {key: value for key, value in answer.items() if value is not None and key not in hidden}


def _activation(registered: RegisteredType, version: TypeVersion, publisher_id: Optional[str]) -> Dict[str, Any]:
    """What DescribeType and ListTypes say of an activated public type: its origin, its public version."""
    origin = registered.origin
    if origin is None:
        return {}
    return {
        "IsActivated": True, "OriginalTypeName": origin.type_name, "OriginalTypeArn": origin.public_arn, "PublisherId": publisher_id,
        "PublicVersionNumber": version.public_version, "LatestPublicVersion": origin.public_versions[-1], "AutoUpdate": registered.auto_update,
    }


def _version_summary(registered: RegisteredType, version: TypeVersion) -> Dict[str, Any]:
    summary = {
        "Type": registered.kind, "TypeName": registered.type_name, "VersionId": version.version_id,
        "IsDefaultVersion": version.version_id == registered.default_id, "Arn": version.arn, "TimeCreated": version.registered,
        "Description": version.package.schema.get("description"), "PublicVersionNumber": version.public_version if registered.origin else None,
    }
    return _shown(registered, summary)


def _page(items: List[Any], params: Dict[str, Any]) -> "tuple[List[Any], Optional[str]]":
    """One page of ``items`` from the offset NextToken names, and the next page's token (None: the last page)."""
    token = params.get("NextToken")
    start = int(token) if isinstance(token, str) and token.isdigit() else 0
    size = int(params.get("MaxResults") or PAGE)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _with_token(answer: Dict[str, Any], token: Optional[str]) -> Dict[str, Any]:
    if token is not None:
        answer["NextToken"] = token
    return answer
