"""AWS::CloudWatch::Alarm made through the AWS endpoint's CloudWatch API rather than its CloudFormation.

moto's CloudFormation (5.2) does not implement the type. Its handler on AWS calls PutMetricAlarm, which
creates an alarm or replaces every setting of one, and DeleteAlarms; so does cfnrun, passing the
template's properties under the API's own names (they are the same) with numbers and booleans typed as
the type's schema types them (``Threshold: "80"`` is sent as 80); a property PutMetricAlarm does not
take is left out and the resource's event names it. ``AlarmName`` is createOnly: an alarm declared
without one is named ``stack-Logical-SUFFIX`` (inferred from the other types' names), and a new name
replaces the alarm (the engine does that). The physical id and Ref are the name, ``Arn`` its ARN.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService, taken_arguments
from cfnrun.app.stacks.generated_names import UPPER, generated_for
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork

ALARM = "AWS::CloudWatch::Alarm"
NAME_LENGTH = 255  # PutMetricAlarm's limit for AlarmName

Typed = Callable[[str, Dict[str, Any]], Dict[str, Any]]  # properties typed as a type's schema types them (AwsSchemas.typed)


class Alarms:
    """Metric alarms on the endpoint's CloudWatch: how ``AwsTypes`` makes AWS::CloudWatch::Alarm."""

    def __init__(self, endpoint_url: str, region: str, typed: Typed) -> None:
        self.cloudwatch = EndpointService("cloudwatch", "CloudWatch", endpoint_url, region)
        self.typed = typed

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        name = str((work.model or {}).get("AlarmName") or work.properties.get("AlarmName") or generated_for(work, NAME_LENGTH, UPPER))
        settings = taken_arguments(self.cloudwatch, "PutMetricAlarm", self.typed(ALARM, work.properties), work, identity=("AlarmName",))
        await self.cloudwatch.ask("put_metric_alarm", AlarmName=name, **settings)
        attributes: Dict[str, Any] = {}
        if "Arn" in work.attributes_wanted:
            [alarm] = (await self.cloudwatch.ask("describe_alarms", AlarmNames=[name]))["MetricAlarms"]
            attributes["Arn"] = str(alarm["AlarmArn"])
        return Provisioned(name, name, attributes, {DIRECT_KEY: ALARM, "AlarmName": name})

    async def delete(self, work: ResourceWork) -> None:
        name = (work.model or {}).get("AlarmName")
        if not work.retain and isinstance(name, str):
            await self.cloudwatch.unless_gone(("ResourceNotFound",), "delete_alarms", AlarmNames=[name])

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        name = model.get("AlarmName")
        if not isinstance(name, str):
            return "cfnrun has no record of the alarm's name"
        try:
            found = await self.cloudwatch.ask("describe_alarms", AlarmNames=[name])
        except ProvisioningFailed as error:
            return error.reason
        return f"the alarm {name} is still on the AWS endpoint" if found.get("MetricAlarms") else None
