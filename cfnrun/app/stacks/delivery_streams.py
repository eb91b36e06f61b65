"""AWS::KinesisFirehose::DeliveryStream made through the AWS endpoint's Firehose API rather than its CloudFormation.

moto's CloudFormation (5.2) does not implement the type. Its handler on AWS calls CreateDeliveryStream,
UpdateDestination and DeleteDeliveryStream; so does cfnrun, passing the template's properties under the
API's names (the same: ``S3DestinationConfiguration``, ``KinesisStreamSourceConfiguration`` ...). A
property the call does not take is left out and the resource's event names it. An update sends each
destination the template changed as its ``...DestinationUpdate`` (``S3DestinationConfiguration`` as
``S3DestinationUpdate``), against the stream's current version and destination; the name, the type and the
source are createOnly in the type's schema, so a change to one replaces the stream (the engine does that). A stream declared without ``DeliveryStreamName`` is named ``stack-Logical-SUFFIX``
(inferred). The physical id and Ref are the name, ``Arn`` its ARN.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService, taken_arguments
from cfnrun.app.stacks.generated_names import MIXED, generated_for
from cfnrun.stacks.provisioning import Provisioned, ResourceWork

DELIVERY_STREAM = "AWS::KinesisFirehose::DeliveryStream"
GONE = ("ResourceNotFoundException",)
NAME_LENGTH = 64  # CreateDeliveryStream's limit for DeliveryStreamName
CONFIGURATION, UPDATE = "DestinationConfiguration", "DestinationUpdate"


class DeliveryStreams:
    """Delivery streams on the endpoint's Firehose: how ``AwsTypes`` makes AWS::KinesisFirehose::DeliveryStream."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.firehose = EndpointService("firehose", "Firehose", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        name = (work.model or {}).get("DeliveryStreamName")
        if isinstance(name, str):
            await self._update(name, work)
        else:
            name = str(work.properties.get("DeliveryStreamName") or generated_for(work, NAME_LENGTH, MIXED))
            arguments = taken_arguments(self.firehose, "CreateDeliveryStream", work.properties, work, identity=("DeliveryStreamName",))
            await self.firehose.ask("create_delivery_stream", DeliveryStreamName=name, **arguments)
        attributes: Dict[str, Any] = {}
        if "Arn" in work.attributes_wanted:
            attributes["Arn"] = str((await self._described(name))["DeliveryStreamARN"])
        return Provisioned(name, name, attributes, {DIRECT_KEY: DELIVERY_STREAM, "DeliveryStreamName": name})

    async def _update(self, name: str, work: ResourceWork) -> None:
        before = work.previous_properties or {}
        changed = {key: value for key, value in work.properties.items()
                   if key.endswith(CONFIGURATION) and value is not None and before.get(key) != value}
        for key, value in changed.items():
            described = await self._described(name)  # again for each: an update makes a new version of the stream
            await self.firehose.ask(
                "update_destination", DeliveryStreamName=name, CurrentDeliveryStreamVersionId=described["VersionId"],
                DestinationId=described["Destinations"][0]["DestinationId"], **{key[: -len(CONFIGURATION)] + UPDATE: value},
            )

    async def _described(self, name: str) -> Dict[str, Any]:
        return dict((await self.firehose.ask("describe_delivery_stream", DeliveryStreamName=name))["DeliveryStreamDescription"])

    async def delete(self, work: ResourceWork) -> None:
        name = (work.model or {}).get("DeliveryStreamName")
        if not work.retain and isinstance(name, str):
            await self.firehose.unless_gone(GONE, "delete_delivery_stream", DeliveryStreamName=name)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        name = model.get("DeliveryStreamName")
        if not isinstance(name, str):
            return "cfnrun has no record of the delivery stream's name"
        return await self.firehose.still_there(GONE, f"the delivery stream {name}", "describe_delivery_stream", DeliveryStreamName=name)
