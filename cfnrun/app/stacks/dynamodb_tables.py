"""AWS::DynamoDB::Table updated in place through the AWS endpoint's DynamoDB API.

moto's CloudFormation (5.2) creates and deletes tables but has no update for them: its stack's update
drops the table from the stack (the table stays as it was, and is then never deleted). So an update of a
table goes to the endpoint's DynamoDB API instead, as the type's handler on the service makes it: the
changed properties that can change in place, each with its own call, and the table's stack on the
endpoint is left as it was (its delete still deletes the table, by its name, which an update never
changes: ``TableName`` is create-only). Changed in place: ``BillingMode`` and ``ProvisionedThroughput``,
``StreamSpecification``, ``SSESpecification``, ``TableClass``, ``DeletionProtectionEnabled`` (UpdateTable),
``TimeToLiveSpecification`` (UpdateTimeToLive), ``PointInTimeRecoverySpecification``
(UpdateContinuousBackups) and ``Tags`` (TagResource, UntagResource). A change to any other property that
does not replace the table (``GlobalSecondaryIndexes``, ``AttributeDefinitions``...) fails the update,
naming them; the rollback puts back what was changed. moto's CloudFormation also makes a table without its
``TimeToLiveSpecification`` and ``PointInTimeRecoverySpecification``: those are put with their calls once it is made.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork
from cfnrun.app.stacks.direct_types import EndpointService

TABLE = "AWS::DynamoDB::Table"
BY_UPDATE_TABLE = ("BillingMode", "ProvisionedThroughput", "StreamSpecification", "SSESpecification", "TableClass", "DeletionProtectionEnabled")
BY_OTHER_CALLS = ("TimeToLiveSpecification", "PointInTimeRecoverySpecification", "Tags")


def _changed(work: ResourceWork, key: str) -> bool:
    return (work.previous_properties or {}).get(key) != work.properties.get(key)


class DynamoDbTables:
    """In-place updates of tables on the endpoint's DynamoDB."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.dynamodb = EndpointService("dynamodb", "DynamoDB", endpoint_url, region)

    async def update(self, work: ResourceWork) -> Provisioned:
        name = work.physical_id
        if not name:
            raise ProvisioningFailed(f"cfnrun has no record of {work.logical_id}'s table on the AWS endpoint")
        keys = set(work.properties) | set(work.previous_properties or {})
        unsupported = sorted(k for k in keys if _changed(work, k) and k not in BY_UPDATE_TABLE + BY_OTHER_CALLS)
        if unsupported:
            raise ProvisioningFailed(
                f"cfnrun updates {TABLE} on the AWS endpoint through its DynamoDB API, and does not change {', '.join(unsupported)} "
                "in place there (moto's CloudFormation has no update for tables)"
            )
        table = (await self.dynamodb.ask("describe_table", TableName=name))["Table"]
        await self._table_updated(work, name)
        await self._ttl_and_backups(work, name)
        if _changed(work, "Tags"):
            await self._tagged(work, str(table["TableArn"]))
        return await self._provisioned(work, name)

    async def made(self, work: ResourceWork, name: str) -> None:
        """A new table's ``TimeToLiveSpecification`` and ``PointInTimeRecoverySpecification``, which moto's CloudFormation
        leaves out when it makes the table, put with their calls."""
        await self._ttl_and_backups(work, name)

    async def _table_updated(self, work: ResourceWork, name: str) -> None:
        changes: Dict[str, Any] = {}
        if _changed(work, "BillingMode") or _changed(work, "ProvisionedThroughput"):
            mode = work.properties.get("BillingMode", "PROVISIONED")
            changes["BillingMode"] = mode
            if mode == "PROVISIONED" and "ProvisionedThroughput" in work.properties:
                changes["ProvisionedThroughput"] = work.properties["ProvisionedThroughput"]
        if _changed(work, "StreamSpecification"):
            view = (work.properties.get("StreamSpecification") or {}).get("StreamViewType")
            changes["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view} if view else {"StreamEnabled": False}
        if _changed(work, "SSESpecification"):
            changes["SSESpecification"] = work.properties.get("SSESpecification") or {"Enabled": False}
        for key, default in (("TableClass", "STANDARD"), ("DeletionProtectionEnabled", False)):
            if _changed(work, key):
                changes[key] = work.properties.get(key, default)
        if changes:
            await self.dynamodb.ask("update_table", TableName=name, **changes)

    async def _ttl_and_backups(self, work: ResourceWork, name: str) -> None:
        if _changed(work, "TimeToLiveSpecification"):
            given = work.properties.get("TimeToLiveSpecification")
            was = (work.previous_properties or {}).get("TimeToLiveSpecification") or {}
            ttl = given if given else {"Enabled": False, "AttributeName": was.get("AttributeName", "")}
            await self.dynamodb.ask("update_time_to_live", TableName=name, TimeToLiveSpecification=ttl)
        if _changed(work, "PointInTimeRecoverySpecification"):
            enabled = bool((work.properties.get("PointInTimeRecoverySpecification") or {}).get("PointInTimeRecoveryEnabled", False))
            await self.dynamodb.ask("update_continuous_backups", TableName=name,
                                    PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": enabled})

    async def _tagged(self, work: ResourceWork, arn: str) -> None:
        tags = {t["Key"]: t["Value"] for t in work.properties.get("Tags") or []}
        was = {t["Key"]: t["Value"] for t in (work.previous_properties or {}).get("Tags") or []}
        gone: List[str] = [k for k in was if k not in tags]
        if gone:
            await self.dynamodb.ask("untag_resource", ResourceArn=arn, TagKeys=gone)
        if tags:
            await self.dynamodb.ask("tag_resource", ResourceArn=arn, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])

    async def _provisioned(self, work: ResourceWork, name: str) -> Provisioned:
        table = (await self.dynamodb.ask("describe_table", TableName=name))["Table"]
        known: Dict[str, Optional[str]] = {"Arn": table.get("TableArn"), "StreamArn": table.get("LatestStreamArn")}
        missing = sorted(a for a in work.attributes_wanted if not known.get(a))
        if missing:
            raise ProvisioningFailed(f"{TABLE} {name} has no attribute {', '.join(missing)} (Fn::GetAtt) on the AWS endpoint")
        return Provisioned(name, name, {a: known[a] for a in work.attributes_wanted}, work.model)
