"""AWS::Scheduler::Schedule made through the AWS endpoint's EventBridge Scheduler API rather than its CloudFormation.

moto's CloudFormation (5.2) completes a stack that declares a schedule without making it. The type's
handler on AWS calls CreateSchedule, UpdateSchedule (which takes the whole schedule again) and
DeleteSchedule; so does cfnrun, passing the template's properties under the same names the API uses.
``Name`` is the type's primaryIdentifier and createOnly: a schedule declared without one is named
``stack-Logical-SUFFIX`` (inferred), and a new name replaces the schedule (the engine does that).
The physical id and Ref are the name, ``Arn`` its ARN.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import MIXED, generated_for

SCHEDULE = "AWS::Scheduler::Schedule"
GONE = ("ResourceNotFoundException",)
NAME_LENGTH = 64  # the API's limit for a schedule's name
SETTINGS = ("Description", "EndDate", "FlexibleTimeWindow", "KmsKeyArn", "ScheduleExpression", "ScheduleExpressionTimezone",
            "StartDate", "State", "Target")


class Schedules:
    """Schedules on the endpoint's EventBridge Scheduler: how ``AwsTypes`` makes AWS::Scheduler::Schedule."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.scheduler = EndpointService("scheduler", "EventBridge Scheduler", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        for name in ("FlexibleTimeWindow", "ScheduleExpression", "Target"):
            if work.properties.get(name) is None:
                raise ProvisioningFailed(property_problem(work.logical_id, required_key(name)))
        model = work.model or {}
        name = model.get("Name") or work.properties.get("Name") or generated_for(work, NAME_LENGTH, MIXED)
        group = model.get("GroupName") or work.properties.get("GroupName")
        where = {"Name": str(name), **({"GroupName": str(group)} if group else {})}
        settings = {key: work.properties[key] for key in SETTINGS if work.properties.get(key) is not None}
        answer = await self.scheduler.ask("update_schedule" if model.get("Name") else "create_schedule", **where, **settings)
        arn = str(answer["ScheduleArn"])
        return Provisioned(str(name), str(name), {"Arn": arn} if "Arn" in work.attributes_wanted else {},
                           {DIRECT_KEY: SCHEDULE, **where, "Arn": arn})

    async def delete(self, work: ResourceWork) -> None:
        where = _where(work.model or {})
        if not work.retain and where is not None:
            await self.scheduler.unless_gone(GONE, "delete_schedule", **where)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        where = _where(model)
        if where is None:
            return "cfnrun has no record of the schedule's name"
        return await self.scheduler.still_there(GONE, f"the schedule {where['Name']}", "get_schedule", **where)


def _where(model: Dict[str, Any]) -> Optional[Dict[str, str]]:
    """The schedule's Name (and GroupName) as the record keeps them, or None."""
    if not isinstance(model.get("Name"), str):
        return None
    return {"Name": model["Name"], **({"GroupName": model["GroupName"]} if isinstance(model.get("GroupName"), str) else {})}
