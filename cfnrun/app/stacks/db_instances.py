"""AWS::RDS::DBInstance made through the AWS endpoint's RDS API rather than its CloudFormation.

moto's CloudFormation (5.2) breaks making a DB instance whose ``DBSubnetGroupName`` is a name (it expects
the subnet group object of its own stack), which is how every instance in a subnet group reaches it from
cfnrun, one resource per stack there. The type's handler on AWS calls CreateDBInstance, ModifyDBInstance
and DeleteDBInstance; so does cfnrun, with the template's properties under the API's names
(``VPCSecurityGroups`` as ``VpcSecurityGroupIds``), each value typed as the API types it (the schema's
``AllocatedStorage: "20"`` is sent as 20). An update sends what changed, applied at once
(``ApplyImmediately``). ``DBInstanceIdentifier`` is createOnly: an instance declared without one is
named ``stack-logical-suffix``, lower-case as RDS keeps identifiers (inferred). The physical id and Ref are
the identifier; ``Endpoint.Address``, ``Endpoint.Port``, ``DBInstanceArn`` and ``DbiResourceId`` its
attributes. A delete takes no final snapshot (the type's default DeletionPolicy on AWS is Snapshot:
not made here).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService, taken_arguments
from cfnrun.app.stacks.generated_names import MIXED, generated_for
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork

DB_INSTANCE = "AWS::RDS::DBInstance"
GONE = ("DBInstanceNotFound", "DBInstanceNotFoundFault")
IDENTIFIER_LENGTH = 63
RENAMED = {"VPCSecurityGroups": "VpcSecurityGroupIds"}


class DbInstances:
    """DB instances on the endpoint's RDS: how ``AwsTypes`` makes AWS::RDS::DBInstance."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.rds = EndpointService("rds", "RDS", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation breaks on a subnet group given by name

    async def put(self, work: ResourceWork) -> Provisioned:
        identifier = (work.model or {}).get("DBInstanceIdentifier")
        if isinstance(identifier, str):
            before = work.previous_properties or {}
            changed = {key: value for key, value in work.properties.items() if before.get(key) != value}
            arguments = taken_arguments(self.rds, "ModifyDBInstance", changed, work, identity=("DBInstanceIdentifier",), renamed=RENAMED)
            if arguments:
                await self.rds.ask("modify_db_instance", DBInstanceIdentifier=identifier, ApplyImmediately=True, **arguments)
        else:
            given = work.properties.get("DBInstanceIdentifier")
            identifier = str(given).lower() if given else generated_for(work, IDENTIFIER_LENGTH, MIXED).lower()
            arguments = taken_arguments(self.rds, "CreateDBInstance", work.properties, work, identity=("DBInstanceIdentifier",), renamed=RENAMED)
            await self.rds.ask("create_db_instance", DBInstanceIdentifier=identifier, **arguments)
        instance = (await self.rds.ask("describe_db_instances", DBInstanceIdentifier=identifier))["DBInstances"][0]
        endpoint = instance.get("Endpoint") or {}
        known = {"Endpoint.Address": endpoint.get("Address"), "Endpoint.Port": str(endpoint.get("Port", "")) or None,
                 "DBInstanceArn": instance.get("DBInstanceArn"), "DbiResourceId": instance.get("DbiResourceId")}
        missing = sorted(a for a in work.attributes_wanted if not known.get(a))
        if missing:
            raise ProvisioningFailed(f"{DB_INSTANCE} {identifier} has no attribute {', '.join(missing)} (Fn::GetAtt) on the AWS endpoint")
        return Provisioned(identifier, identifier, {a: known[a] for a in work.attributes_wanted},
                           {DIRECT_KEY: DB_INSTANCE, "DBInstanceIdentifier": identifier})

    async def delete(self, work: ResourceWork) -> None:
        identifier = (work.model or {}).get("DBInstanceIdentifier")
        if not work.retain and isinstance(identifier, str):
            await self.rds.unless_gone(GONE, "delete_db_instance", DBInstanceIdentifier=identifier, SkipFinalSnapshot=True)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        identifier = model.get("DBInstanceIdentifier")
        if not isinstance(identifier, str):
            return "cfnrun has no record of the DB instance's identifier"
        return await self.rds.still_there(GONE, f"the DB instance {identifier}", "describe_db_instances", DBInstanceIdentifier=identifier)
