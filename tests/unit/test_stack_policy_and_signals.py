"""Stack policies and CreationPolicy durations: the rules read from the AWS user guide, checked fast.

The operations themselves (SetStackPolicy, an update refused, SignalResource, wait conditions) are
driven through serve by tests/test_stack_operations.py.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from cfnrun.stacks.signals import SignalProblem, duration_s, resource_signal_policy
from cfnrun.stacks.stack_policy import StackPolicyError, parse_policy

ALLOW_ALL = {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"}


def _policy(*statements: Dict[str, Any]) -> Any:
    return parse_policy(json.dumps({"Statement": list(statements)}))


def test_an_empty_policy_denies_every_update() -> None:
    policy = _policy()
    assert policy.refusal("Update:Delete", "Db", "AWS::RDS::DBInstance") == (
        "Action not allowed by stack policy: No statement allows [Update:Delete] for resource [LogicalResourceId/Db];"
    )


def test_deny_wins_over_allow_whatever_the_order() -> None:
    deny = {"Effect": "Deny", "Action": "Update:Replace", "Principal": "*", "Resource": "LogicalResourceId/Db*"}
    policy = _policy(deny, ALLOW_ALL)
    assert policy.refusal("Update:Replace", "DbPrimary", "AWS::RDS::DBInstance").startswith("Action denied by stack policy: Statement [#1]")
    assert policy.refusal("Update:Modify", "DbPrimary", "AWS::RDS::DBInstance") is None
    assert policy.refusal("Update:Replace", "Cache", "AWS::ElastiCache::CacheCluster") is None


def test_not_action_not_resource_and_like_conditions() -> None:
    everything_but_modify = {"Effect": "Deny", "NotAction": "Update:Modify", "Principal": "*", "NotResource": "LogicalResourceId/Scratch"}
    policy = _policy(ALLOW_ALL, everything_but_modify)
    assert policy.refusal("Update:Modify", "Db", "AWS::RDS::DBInstance") is None
    assert policy.refusal("Update:Delete", "Db", "AWS::RDS::DBInstance") is not None
    assert policy.refusal("Update:Delete", "Scratch", "AWS::S3::Bucket") is None
    only_rds = {"Effect": "Deny", "Action": "Update:*", "Principal": "*", "Resource": "*", "Condition": {"StringLike": {"ResourceType": "AWS::RDS::*"}}}
    policy = _policy(ALLOW_ALL, only_rds)
    assert policy.refusal("Update:Modify", "Db", "AWS::RDS::DBInstance") is not None
    assert policy.refusal("Update:Modify", "Bucket", "AWS::S3::Bucket") is None
    not_s3 = {"Effect": "Deny", "Action": "Update:Delete", "Principal": "*", "Resource": "*", "Condition": {"StringNotEquals": {"ResourceType": ["AWS::S3::Bucket"]}}}
    policy = _policy(ALLOW_ALL, not_s3)
    assert policy.refusal("Update:Delete", "Bucket", "AWS::S3::Bucket") is None
    assert policy.refusal("Update:Delete", "Topic", "AWS::SNS::Topic") is not None


@pytest.mark.parametrize(
    "statement, says",
    [
        ({**ALLOW_ALL, "Effect": "Maybe"}, "Effect must be Allow or Deny"),
        ({**ALLOW_ALL, "Action": "Delete:*"}, "unknown action [Delete:*]"),
        ({**ALLOW_ALL, "Resource": 5}, "Resource must be a string or a list of strings"),
        ({**ALLOW_ALL, "Condition": {"IpAddress": {"ResourceType": "x"}}}, "Condition supports only"),
    ],
)
def test_a_policy_the_service_would_refuse_says_why(statement: Dict[str, Any], says: str) -> None:
    with pytest.raises(StackPolicyError, match="Error validating stack policy: Statement \\[#1\\]") as caught:
        _policy(statement)
    assert says in str(caught.value)


def test_creation_policy_durations_and_defaults() -> None:
    assert duration_s("PT1H2M3S") == 3723 and duration_s("PT15M") == 900 and duration_s("PT12H") == 43200
    for wrong in ("PT", "15M", "P1D", "PT13H"):
        with pytest.raises(SignalProblem):
            duration_s(wrong)
    policy = resource_signal_policy({"ResourceSignal": {}}, {})
    assert policy is not None and (policy.count, policy.timeout_s) == (1, 300.0)  # Count 1, PT5M: the documented defaults
    by_parameter = resource_signal_policy({"ResourceSignal": {"Count": {"Ref": "Hosts"}, "Timeout": "PT1M"}}, {"Hosts": "3"})
    assert by_parameter is not None and (by_parameter.count, by_parameter.timeout_s) == (3, 60.0)
    assert resource_signal_policy({"AutoScalingCreationPolicy": {}}, {}) is None


def test_termination_protection_and_the_policy_survive_a_restart_with_state(tmp_path: Path) -> None:
    from cfnrun.stacks.blueprint import Blueprints
    from cfnrun.stacks.engine import StackEngine
    from cfnrun.stacks.exports import Exports
    from cfnrun.stacks.store import StackError, StackStore
    from test_stack_engine import ACCOUNT, REGION, TWO, Memory, Router, _template

    memory = Memory()
    body = json.dumps({"Statement": [ALLOW_ALL]})

    def store() -> StackStore:
        exports = Exports()
        kept = StackStore(StackEngine(Router(memory), exports, REGION, ACCOUNT), Blueprints(Router(memory), exports, REGION, ACCOUNT), tmp_path)
        kept.restore()
        return kept

    async def first_life() -> None:
        first = store()
        stack = first.create_stack("guarded", _template(TWO), {}, {})
        stack.termination_protection, stack.policy_body = True, body
        await first.settled("guarded")

    asyncio.run(first_life())
    again = store().get("guarded")
    assert (again.termination_protection, again.policy_body) == (True, body)
    with pytest.raises(StackError, match=r"^Stack \[guarded\] cannot be deleted while TerminationProtection is enabled$"):
        store().delete_stack("guarded")
