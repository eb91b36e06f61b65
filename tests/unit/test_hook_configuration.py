"""A hook's configuration as SetTypeConfiguration sets it, and which targets it applies to."""
from __future__ import annotations

from typing import Any

import pytest

from cfnrun.model.hook_configuration import HookConfigurationError, parse_hook_configuration


def configured(**section: Any) -> Any:
    return parse_hook_configuration({"CloudFormationConfiguration": {"HookConfiguration": section}})


def test_enabled_by_status_or_by_the_older_target_stacks() -> None:
    assert configured(HookInvocationStatus="ENABLED").applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")
    assert not configured(HookInvocationStatus="DISABLED").applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")
    assert configured(TargetStacks="ALL").applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")
    assert not configured(TargetStacks="NONE").applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")
    assert not configured().applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")  # a hook nobody configured runs nowhere


def test_target_operations_and_filters() -> None:
    hook = configured(
        HookInvocationStatus="ENABLED",
        TargetOperations=["RESOURCE", "CLOUD_CONTROL"],
        TargetFilters={"Actions": ["CREATE", "UPDATE"], "TargetNames": ["AWS::S3::*"]},
    )
    assert hook.applies("RESOURCE", "UPDATE", "AWS::S3::Bucket", "s")
    assert not hook.applies("RESOURCE", "DELETE", "AWS::S3::Bucket", "s")
    assert not hook.applies("RESOURCE", "CREATE", "AWS::SQS::Queue", "s")
    assert not hook.applies("STACK", "CREATE", "AWS::S3::Bucket", "s")
    exact = configured(HookInvocationStatus="ENABLED", TargetFilters={"Targets": [{"TargetName": "AWS::S3::Bucket", "Action": "DELETE"}]})
    assert exact.applies("RESOURCE", "DELETE", "AWS::S3::Bucket", "s")
    assert not exact.applies("RESOURCE", "CREATE", "AWS::S3::Bucket", "s")


def test_stack_filters_all_any_wildcards_and_exclusion_winning() -> None:
    names = {"Include": ["prod-*", "audit"], "Exclude": ["prod-sandbox"]}
    every = configured(HookInvocationStatus="ENABLED", StackFilters={"FilteringCriteria": "ALL", "StackNames": names, "StackRoles": {"Include": ["arn:role/deploy"]}})
    assert every.applies("RESOURCE", "CREATE", "T", "prod-web", "arn:role/deploy")
    assert not every.applies("RESOURCE", "CREATE", "T", "prod-web", "arn:role/other")
    assert not every.applies("RESOURCE", "CREATE", "T", "prod-sandbox", "arn:role/deploy")
    either = configured(HookInvocationStatus="ENABLED", StackFilters={"FilteringCriteria": "ANY", "StackNames": names, "StackRoles": {"Include": ["arn:role/deploy"]}})
    assert either.applies("RESOURCE", "CREATE", "T", "dev", "arn:role/deploy")
    assert not either.applies("RESOURCE", "CREATE", "T", "dev", "arn:role/other")
    assert either.applies("CLOUD_CONTROL", "CREATE", "T", None, None) is False  # not a target operation here
    control = configured(HookInvocationStatus="ENABLED", TargetOperations=["CLOUD_CONTROL"], StackFilters={"FilteringCriteria": "ALL", "StackNames": names})
    assert control.applies("CLOUD_CONTROL", "CREATE", "T", None)  # Cloud Control ignores stack filters


@pytest.mark.parametrize(
    "document, message",
    [
        ({}, "HookConfiguration is missing"),
        ({"CloudFormationConfiguration": {"HookConfiguration": {"FailureMode": "SOMETIMES"}}}, "FailureMode must be one of FAIL, WARN"),
        ({"CloudFormationConfiguration": {"HookConfiguration": {"TargetOperations": ["NOPE"]}}}, "NOPE is not one of"),
        ({"CloudFormationConfiguration": {"HookConfiguration": {"StackFilters": {"FilteringCriteria": "ALL"}}}}, "needs StackNames or StackRoles"),
    ],
)
def test_a_configuration_the_service_refuses_says_what_is_wrong(document: Any, message: str) -> None:
    with pytest.raises(HookConfigurationError, match=message):
        parse_hook_configuration(document)
