"""Waiting on a local stack as the tests do: boto3's own waiters, polled every 0.1 s for as long as the suite's
patience (``CFNRUN_TEST_PATIENCE_S``), and a failed wait that says why (each reason the stack's events give)."""
from __future__ import annotations

from typing import Any, Dict

from botocore.exceptions import WaiterError

from conftest import PATIENCE_S

FAST = {"Delay": 0.1, "MaxAttempts": int(PATIENCE_S / 0.1)}


def settled(cloudformation: Any, name: str, waiter: str) -> None:
    """Wait with ``waiter`` (e.g. ``stack_create_complete``); on failure, the reasons in the stack's events."""
    try:
        cloudformation.get_waiter(waiter).wait(StackName=name, WaiterConfig=FAST)
    except WaiterError:
        events = cloudformation.describe_stack_events(StackName=name)["StackEvents"]
        raise AssertionError([e.get("ResourceStatusReason") for e in events if e.get("ResourceStatusReason")]) from None


def outputs(cloudformation: Any, name: str) -> Dict[str, str]:
    return {o["OutputKey"]: o["OutputValue"] for o in cloudformation.describe_stacks(StackName=name)["Stacks"][0].get("Outputs", [])}
