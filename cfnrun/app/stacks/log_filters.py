"""AWS::Logs::MetricFilter and AWS::Logs::SubscriptionFilter made through the AWS endpoint's CloudWatch Logs API.

moto's CloudFormation (5.2) completes a stack that declares either without making it. Each is a
filter on one log group, named by ``FilterName``, put with PutMetricFilter or PutSubscriptionFilter
(the same call updates it) and removed with DeleteMetricFilter or DeleteSubscriptionFilter, as the
types' handlers on AWS do. The metric filter's ``MetricTransformations`` go to the API in its own
field names (``MetricName`` as ``metricName``, ``Dimensions`` as a map). ``LogGroupName`` and
``FilterName`` are createOnly, so a change to either replaces the filter (the engine does that). A
filter declared without ``FilterName`` is named ``stack-Logical-SUFFIX`` (inferred). The physical id
and Ref are the filter's name.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import UPPER, generated_for

METRIC_FILTER = "AWS::Logs::MetricFilter"
SUBSCRIPTION_FILTER = "AWS::Logs::SubscriptionFilter"
GONE = ("ResourceNotFoundException",)
NAME_LENGTH = 512


class LogFilters:
    """Filters of one kind on log groups of the endpoint's CloudWatch Logs; ``_put`` and ``_filters`` say which kind."""

    type_name = ""
    noun = ""  # the API's name for the kind: delete_<noun>, describe_<noun>s
    required: Tuple[str, ...] = ("LogGroupName", "FilterPattern")

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.logs = EndpointService("logs", "CloudWatch Logs", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        for name in self.required:
            if work.properties.get(name) is None:
                raise ProvisioningFailed(property_problem(work.logical_id, required_key(name)))
        group = str(work.properties["LogGroupName"])
        kept = (work.model or {}).get("FilterName")
        name = kept if isinstance(kept, str) else str(work.properties.get("FilterName") or generated_for(work, NAME_LENGTH, UPPER))
        await self._put(group, name, work.properties)
        return Provisioned(name, name, {}, {DIRECT_KEY: self.type_name, "LogGroupName": group, "FilterName": name})

    async def delete(self, work: ResourceWork) -> None:
        model = work.model or {}
        if not work.retain and isinstance(model.get("LogGroupName"), str) and isinstance(model.get("FilterName"), str):
            await self.logs.unless_gone(GONE, f"delete_{self.noun}", logGroupName=model["LogGroupName"], filterName=model["FilterName"])

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        group, name = model.get("LogGroupName"), model.get("FilterName")
        if not isinstance(group, str) or not isinstance(name, str):
            return "cfnrun has no record of the filter's log group and name"
        try:
            found = await self.logs.unless_gone(GONE, f"describe_{self.noun}s", logGroupName=group, filterNamePrefix=name)
        except ProvisioningFailed as error:
            return error.reason
        filters: List[Dict[str, Any]] = (found or {}).get(self._listed_key(), [])
        return f"the filter {name} of the log group {group} is still on the AWS endpoint" if any(
            f.get("filterName") == name for f in filters) else None

    def _listed_key(self) -> str:
        return "metricFilters" if self.noun == "metric_filter" else "subscriptionFilters"

    async def _put(self, group: str, name: str, properties: Dict[str, Any]) -> None:
        raise NotImplementedError


class MetricFilters(LogFilters):
    type_name, noun = METRIC_FILTER, "metric_filter"
    required = ("LogGroupName", "FilterPattern", "MetricTransformations")

    async def _put(self, group: str, name: str, properties: Dict[str, Any]) -> None:
        transformations = properties["MetricTransformations"]
        # PutMetricFilter replaces a filter of the same name; moto's (5.2) keeps both: the old one goes first
        await self.logs.unless_gone(GONE, "delete_metric_filter", logGroupName=group, filterName=name)
        await self.logs.ask("put_metric_filter", logGroupName=group, filterName=name, filterPattern=str(properties["FilterPattern"]),
                            metricTransformations=[_transformation(t) for t in transformations if isinstance(t, dict)])


class SubscriptionFilters(LogFilters):
    type_name, noun = SUBSCRIPTION_FILTER, "subscription_filter"
    required = ("LogGroupName", "FilterPattern", "DestinationArn")

    async def _put(self, group: str, name: str, properties: Dict[str, Any]) -> None:
        optional = {api: properties[key] for key, api in (("RoleArn", "roleArn"), ("Distribution", "distribution"))
                    if properties.get(key) is not None}
        await self.logs.ask("put_subscription_filter", logGroupName=group, filterName=name, filterPattern=str(properties["FilterPattern"]),
                            destinationArn=str(properties["DestinationArn"]), **optional)


def _transformation(declared: Dict[str, Any]) -> Dict[str, Any]:
    """One of the template's MetricTransformations in the API's field names."""
    fields = {"MetricName": "metricName", "MetricNamespace": "metricNamespace", "MetricValue": "metricValue", "Unit": "unit"}
    found: Dict[str, Any] = {api: str(declared[key]) for key, api in fields.items() if declared.get(key) is not None}
    if declared.get("DefaultValue") is not None:
        found["defaultValue"] = float(declared["DefaultValue"])
    dimensions = declared.get("Dimensions")
    if isinstance(dimensions, list):
        found["dimensions"] = {str(d["Key"]): str(d["Value"]) for d in dimensions if isinstance(d, dict) and "Key" in d and "Value" in d}
    return found
