"""AWS::SNS::Subscription made through the AWS endpoint's SNS API rather than its CloudFormation.

moto's CloudFormation (5.x) completes a stack that declares a subscription without making it, and breaks
on one whose Fn::GetAtt it is asked for; so every subscription is made here. It is made with SNS's
Subscribe (``ReturnSubscriptionArn``: its ARN at once, as the type's handler gets it), its settings
(``FilterPolicy``, ``RawMessageDelivery``, ``RedrivePolicy``, ...) passed as Subscribe's attributes,
in the API's text form (an object as JSON, a boolean as ``true``/``false``). ``TopicArn``,
``Protocol`` and ``Endpoint`` are createOnly in the type's registry schema, so a change to one
replaces the subscription (the engine does that); an update changes each setting that changed with
SetSubscriptionAttributes and puts back the default of one taken out of the template (inferred: the
service's handler does the same). A delete is Unsubscribe. The physical id, the Ref and ``Arn`` are
the subscription's ARN.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem, required_key
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService

SUBSCRIPTION = "AWS::SNS::Subscription"
GONE_CODES = ("NotFound",)
# the type's properties that are the subscription's attributes in SNS's API, FilterPolicyScope first (a FilterPolicy is
# read by its scope), each with the value a setting taken out of the template goes back to
SETTINGS: Dict[str, str] = {
    "FilterPolicyScope": "MessageAttributes",
    "FilterPolicy": "",
    "RawMessageDelivery": "false",
    "DeliveryPolicy": "",
    "RedrivePolicy": "",
    "ReplayPolicy": "",
    "SubscriptionRoleArn": "",
}


class SnsSubscriptions:
    """Subscriptions on the endpoint's SNS: how ``AwsTypes`` makes AWS::SNS::Subscription."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.sns = EndpointService("sns", "SNS", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: SNS's API is what any endpoint has, and moto's CloudFormation breaks on the type's Fn::GetAtt

    async def put(self, work: ResourceWork) -> Provisioned:
        """Create the subscription, or update its settings."""
        settings = _settings(work.properties)
        arn = (work.model or {}).get("Arn")
        if isinstance(arn, str):
            before = _settings(work.previous_properties or {})
            for name, default in SETTINGS.items():
                if name in settings and settings[name] != before.get(name):
                    await self.sns.ask("set_subscription_attributes", SubscriptionArn=arn, AttributeName=name, AttributeValue=settings[name])
                elif name in before and name not in settings:
                    await self.sns.ask("set_subscription_attributes", SubscriptionArn=arn, AttributeName=name, AttributeValue=default)
        else:
            for required in ("TopicArn", "Protocol"):
                if not isinstance(work.properties.get(required), str) or not work.properties[required]:
                    raise ProvisioningFailed(property_problem(work.logical_id, required_key(required)))
            endpoint = work.properties.get("Endpoint")
            arguments: Dict[str, Any] = {"TopicArn": work.properties["TopicArn"], "Protocol": work.properties["Protocol"],
                                         "ReturnSubscriptionArn": True, **({"Endpoint": str(endpoint)} if endpoint is not None else {})}
            if settings:
                arguments["Attributes"] = settings
            arn = str((await self.sns.ask("subscribe", **arguments))["SubscriptionArn"])
        attributes = {"Arn": arn} if "Arn" in work.attributes_wanted else {}
        return Provisioned(arn, arn, attributes, {DIRECT_KEY: SUBSCRIPTION, "Arn": arn})

    async def delete(self, work: ResourceWork) -> None:
        arn = (work.model or {}).get("Arn") or work.physical_id
        if not work.retain and isinstance(arn, str):
            await self.sns.unless_gone(GONE_CODES, "unsubscribe", SubscriptionArn=arn)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        arn = model.get("Arn")
        if not isinstance(arn, str):
            return "cfnrun has no record of the subscription's ARN"
        return await self.sns.still_there(GONE_CODES, f"the subscription {arn}", "get_subscription_attributes", SubscriptionArn=arn)


def _settings(properties: Dict[str, Any]) -> Dict[str, str]:
    """The template's settings as SNS's API takes them: an object as JSON, a boolean as true or false, the rest as text."""
    return {name: _text(properties[name]) for name in SETTINGS if properties.get(name) is not None}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
