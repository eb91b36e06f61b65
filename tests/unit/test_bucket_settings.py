"""A bucket's settings written as S3's API takes them (app/stacks/bucket_settings.py): the shapes botocore's model accepts."""
from __future__ import annotations

from typing import Any, Dict

import botocore.session
from botocore.validate import ParamValidator

from cfnrun.app.stacks.bucket_settings import setting_calls

S3 = botocore.session.get_session().get_service_model("s3")
EVERY_SETTING: Dict[str, Any] = {
    "VersioningConfiguration": {"Status": "Enabled"},
    "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
    "CorsConfiguration": {"CorsRules": [{"Id": "web", "AllowedMethods": ["GET"], "AllowedOrigins": ["*"], "ExposedHeaders": ["ETag"], "MaxAge": 300}]},
    "LifecycleConfiguration": {"Rules": [
        {"Id": "plain", "Status": "Enabled", "ExpirationInDays": 30},
        {"Status": "Enabled", "Prefix": "logs/", "TagFilters": [{"Key": "k", "Value": "v"}], "NoncurrentVersionExpirationInDays": 7,
         "Transitions": [{"StorageClass": "GLACIER", "TransitionInDays": 10}], "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
        {"Status": "Disabled", "TagFilters": [{"Key": "k", "Value": "v"}], "ExpiredObjectDeleteMarker": True,
         "NoncurrentVersionTransitions": [{"StorageClass": "GLACIER", "TransitionInDays": 5, "NewerNoncurrentVersions": 2}]},
    ]},
    "NotificationConfiguration": {
        "LambdaConfigurations": [{"Event": "s3:ObjectCreated:*", "Function": "arn:aws:lambda:us-east-1:123456789012:function:f",
                                  "Filter": {"S3Key": {"Rules": [{"Name": "prefix", "Value": "in/"}]}}}],
        "TopicConfigurations": [{"Event": "s3:ObjectRemoved:*", "Topic": "arn:aws:sns:us-east-1:123456789012:t"}],
        "EventBridgeConfiguration": {"EventBridgeEnabled": True},
    },
    "WebsiteConfiguration": {"IndexDocument": "index.html", "ErrorDocument": "error.html", "RoutingRules": [
        {"RoutingRuleCondition": {"KeyPrefixEquals": "old/"}, "RedirectRule": {"ReplaceKeyPrefixWith": "new/"}}]},
    "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
    "AccelerateConfiguration": {"AccelerationStatus": "Enabled"},
    "LoggingConfiguration": {"LogFilePrefix": "access/"},
}


def _operation(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def test_every_setting_a_new_bucket_has_is_one_call_botocore_accepts() -> None:
    calls = setting_calls("b", EVERY_SETTING, None)
    assert len(calls) == len(EVERY_SETTING)
    for operation, arguments in calls:
        report = ParamValidator().validate({"Bucket": "b", **arguments}, S3.operation_model(_operation(operation)).input_shape)
        assert not report.has_errors(), (operation, report.generate_report())


def test_the_shapes_are_the_apis() -> None:
    calls = dict(setting_calls("b", EVERY_SETTING, None))
    rules = calls["put_bucket_lifecycle_configuration"]["LifecycleConfiguration"]["Rules"]
    assert rules[0] == {"ID": "plain", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 30}}
    assert rules[1]["Filter"] == {"And": {"Prefix": "logs/", "Tags": [{"Key": "k", "Value": "v"}]}}
    assert rules[1]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7} and rules[1]["Transitions"] == [{"StorageClass": "GLACIER", "Days": 10}]
    assert rules[2]["Filter"] == {"Tag": {"Key": "k", "Value": "v"}} and rules[2]["Expiration"] == {"ExpiredObjectDeleteMarker": True}
    assert rules[2]["NoncurrentVersionTransitions"] == [{"StorageClass": "GLACIER", "NoncurrentDays": 5, "NewerNoncurrentVersions": 2}]
    notifications = calls["put_bucket_notification_configuration"]["NotificationConfiguration"]
    assert notifications["LambdaFunctionConfigurations"] == [{
        "LambdaFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:f", "Events": ["s3:ObjectCreated:*"],
        "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "in/"}]}}}]
    assert notifications["EventBridgeConfiguration"] == {}
    assert calls["put_bucket_logging"] == {"BucketLoggingStatus": {"LoggingEnabled": {"TargetBucket": "b", "TargetPrefix": "access/"}}}


def test_an_update_puts_what_changed_and_takes_away_what_it_drops() -> None:
    after = {**EVERY_SETTING, "VersioningConfiguration": {"Status": "Suspended"}}
    for dropped in ("CorsConfiguration", "PublicAccessBlockConfiguration", "NotificationConfiguration", "LoggingConfiguration"):
        del after[dropped]
    assert setting_calls("b", after, EVERY_SETTING) == [
        ("put_bucket_versioning", {"VersioningConfiguration": {"Status": "Suspended"}}),
        ("delete_public_access_block", {}),
        ("delete_bucket_cors", {}),
        ("put_bucket_notification_configuration", {"NotificationConfiguration": {}}),
        ("put_bucket_logging", {"BucketLoggingStatus": {}}),
    ]
    assert setting_calls("b", EVERY_SETTING, EVERY_SETTING) == []
