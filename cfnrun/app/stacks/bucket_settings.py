"""An AWS::S3::Bucket's settings that the AWS endpoint's CloudFormation leaves out, put through its S3 API.

moto's CloudFormation (5.2) makes a bucket with its name, encryption and tags only: versioning, the public
access block, CORS, lifecycle rules, notifications (SAM's S3 events), the website, object ownership,
acceleration and access logging were dropped, so a handler or a test reading them saw none. After the
endpoint's stack makes or updates the bucket, each of those the template sets (on an update: that it
changed) is put with the call the type's handler on AWS makes, the template's shape written as the API's
(``CorsRules``' ``MaxAge`` as ``MaxAgeSeconds``, a lifecycle rule's ``ExpirationInDays`` as
``Expiration.Days``, a ``LambdaConfigurations`` entry's ``Function`` as ``LambdaFunctionArn``); one the
update takes out is deleted (versioning, which cannot be, is suspended: inferred). Access logging that moto refuses
because the target bucket does not yet grant the logging service its writes is left off, and the resource's event
says so: the service took the same template.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from cfnrun.app.stacks.direct_types import EndpointService

BUCKET = "AWS::S3::Bucket"
Call = Tuple[str, Dict[str, Any]]  # an S3 operation and its arguments but Bucket


def _renamed(value: Dict[str, Any], names: Dict[str, str]) -> Dict[str, Any]:
    return {names.get(key, key): item for key, item in value.items()}


def _cors(value: Dict[str, Any]) -> Call:
    names = {"ExposedHeaders": "ExposeHeaders", "Id": "ID", "MaxAge": "MaxAgeSeconds"}
    return "put_bucket_cors", {"CORSConfiguration": {"CORSRules": [_renamed(rule, names) for rule in value.get("CorsRules", [])]}}


def _days(value: Dict[str, Any], days: str, date: str) -> Dict[str, Any]:
    """A transition as the API writes it: ``TransitionInDays`` as ``days`` (``Days``, ``NoncurrentDays``)."""
    return _renamed(value, {"TransitionInDays": days, "TransitionDate": date})


def _lifecycle_rule(rule: Dict[str, Any]) -> Dict[str, Any]:
    made: Dict[str, Any] = {"Status": rule.get("Status", "Enabled")}
    if "Id" in rule:
        made["ID"] = rule["Id"]
    scalars = {key: rule[key] for key in ("Prefix", "ObjectSizeGreaterThan", "ObjectSizeLessThan") if key in rule}
    tags = list(rule.get("TagFilters") or [])
    if len(scalars) + len(tags) > 1:
        made["Filter"] = {"And": {**scalars, **({"Tags": tags} if tags else {})}}
    elif tags:
        made["Filter"] = {"Tag": tags[0]}
    else:
        made["Filter"] = scalars or {"Prefix": ""}
    expiration = {key: rule[field] for field, key in (("ExpirationInDays", "Days"), ("ExpirationDate", "Date"),
                                                       ("ExpiredObjectDeleteMarker", "ExpiredObjectDeleteMarker")) if field in rule}
    if expiration:
        made["Expiration"] = expiration
    transitions = list(rule.get("Transitions", [])) + ([rule["Transition"]] if "Transition" in rule else [])
    if transitions:
        made["Transitions"] = [_days(t, "Days", "Date") for t in transitions]
    noncurrent = list(rule.get("NoncurrentVersionTransitions", [])) + (
        [rule["NoncurrentVersionTransition"]] if "NoncurrentVersionTransition" in rule else [])
    if noncurrent:
        made["NoncurrentVersionTransitions"] = [_days(t, "NoncurrentDays", "Date") for t in noncurrent]
    if "NoncurrentVersionExpiration" in rule:
        made["NoncurrentVersionExpiration"] = rule["NoncurrentVersionExpiration"]
    elif "NoncurrentVersionExpirationInDays" in rule:
        made["NoncurrentVersionExpiration"] = {"NoncurrentDays": rule["NoncurrentVersionExpirationInDays"]}
    if "AbortIncompleteMultipartUpload" in rule:
        made["AbortIncompleteMultipartUpload"] = rule["AbortIncompleteMultipartUpload"]
    return made


def _lifecycle(value: Dict[str, Any]) -> Call:
    return "put_bucket_lifecycle_configuration", {"LifecycleConfiguration": {"Rules": [_lifecycle_rule(r) for r in value.get("Rules", [])]}}


def _filter(value: Dict[str, Any]) -> Dict[str, Any]:
    rules = ((value.get("Filter") or {}).get("S3Key") or {}).get("Rules")
    return {"Filter": {"Key": {"FilterRules": rules}}} if rules else {}


def _notifications(value: Dict[str, Any]) -> Call:
    kinds = (("LambdaConfigurations", "LambdaFunctionConfigurations", "Function", "LambdaFunctionArn"),
             ("QueueConfigurations", "QueueConfigurations", "Queue", "QueueArn"),
             ("TopicConfigurations", "TopicConfigurations", "Topic", "TopicArn"))
    made: Dict[str, Any] = {}
    for declared, written, target, arn in kinds:
        entries = value.get(declared) or []
        if entries:
            made[written] = [{arn: entry[target], "Events": [entry["Event"]], **_filter(entry)} for entry in entries]
    if (value.get("EventBridgeConfiguration") or {}).get("EventBridgeEnabled") is True:
        made["EventBridgeConfiguration"] = {}
    return "put_bucket_notification_configuration", {"NotificationConfiguration": made}


def _website(value: Dict[str, Any]) -> Call:
    made: Dict[str, Any] = {}
    if "IndexDocument" in value:
        made["IndexDocument"] = {"Suffix": value["IndexDocument"]}
    if "ErrorDocument" in value:
        made["ErrorDocument"] = {"Key": value["ErrorDocument"]}
    if "RedirectAllRequestsTo" in value:
        made["RedirectAllRequestsTo"] = value["RedirectAllRequestsTo"]
    if value.get("RoutingRules"):
        made["RoutingRules"] = [{"Redirect": rule.get("RedirectRule", {}), **({"Condition": rule["RoutingRuleCondition"]} if "RoutingRuleCondition" in rule else {})}
                                for rule in value["RoutingRules"]]
    return "put_bucket_website", {"WebsiteConfiguration": made}


def _logging(bucket: str, value: Dict[str, Any]) -> Call:
    target = {"TargetBucket": value.get("DestinationBucketName") or bucket, "TargetPrefix": value.get("LogFilePrefix", "")}
    return "put_bucket_logging", {"BucketLoggingStatus": {"LoggingEnabled": target}}


# each setting: how its value is put, and how it is taken away when an update drops it (None: nothing to undo)
SETTINGS: Dict[str, Tuple[Callable[[str, Dict[str, Any]], Call], Optional[Call]]] = {
    "VersioningConfiguration": (lambda _, v: ("put_bucket_versioning", {"VersioningConfiguration": {"Status": v["Status"]}}),
                                ("put_bucket_versioning", {"VersioningConfiguration": {"Status": "Suspended"}})),
    "PublicAccessBlockConfiguration": (lambda _, v: ("put_public_access_block", {"PublicAccessBlockConfiguration": v}),
                                       ("delete_public_access_block", {})),
    "CorsConfiguration": (lambda _, v: _cors(v), ("delete_bucket_cors", {})),
    "LifecycleConfiguration": (lambda _, v: _lifecycle(v), ("delete_bucket_lifecycle", {})),
    "NotificationConfiguration": (lambda _, v: _notifications(v),
                                  ("put_bucket_notification_configuration", {"NotificationConfiguration": {}})),
    "WebsiteConfiguration": (lambda _, v: _website(v), ("delete_bucket_website", {})),
    "OwnershipControls": (lambda _, v: ("put_bucket_ownership_controls", {"OwnershipControls": {"Rules": v.get("Rules", [])}}),
                          ("delete_bucket_ownership_controls", {})),
    "AccelerateConfiguration": (lambda _, v: ("put_bucket_accelerate_configuration", {"AccelerateConfiguration": {"Status": v["AccelerationStatus"]}}),
                                ("put_bucket_accelerate_configuration", {"AccelerateConfiguration": {"Status": "Suspended"}})),
    "LoggingConfiguration": (_logging, ("put_bucket_logging", {"BucketLoggingStatus": {}})),
}


def setting_calls(bucket: str, properties: Dict[str, Any], before: Optional[Dict[str, Any]]) -> List[Call]:
    """The calls that leave ``bucket`` with the settings ``properties`` give it, coming from ``before`` (None: just made)."""
    calls: List[Call] = []
    for name, (put, undo) in SETTINGS.items():
        value, previous = properties.get(name), (before or {}).get(name)
        if value == previous:
            continue
        if isinstance(value, dict):
            calls.append(put(bucket, value))
        elif previous is not None and undo is not None:
            calls.append(undo)
    return calls


# moto refuses logging to a bucket that does not yet grant the logging service its writes; the service took the same
# template (cloudformation-cli's upload infrastructure, whose log bucket's policy is made after the bucket that logs to it)
LOGGING_REFUSED = "InvalidTargetBucketForLogging"


class BucketSettings:
    """The settings of buckets the endpoint's CloudFormation made, put through its S3 API."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.s3 = EndpointService("s3", "S3", endpoint_url, region)

    async def put(self, bucket: str, properties: Dict[str, Any], before: Optional[Dict[str, Any]], note: Callable[[str], None]) -> None:
        """Each call of ``setting_calls``; ``note``: says in the resource's events what the endpoint would not take."""
        for operation, arguments in setting_calls(bucket, properties, before):
            if operation != "put_bucket_logging":
                await self.s3.ask(operation, Bucket=bucket, **arguments)
            elif await self.s3.unless_gone((LOGGING_REFUSED,), operation, Bucket=bucket, **arguments) is None:
                note(f"cfnrun left access logging off on the AWS endpoint, which refused it ({LOGGING_REFUSED}): the target "
                     "bucket does not grant the logging service its writes yet")
