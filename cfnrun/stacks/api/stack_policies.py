"""``SetStackPolicy`` and ``GetStackPolicy``: the policy that guards a stack's updates (``stacks/stack_policy.py``).

CreateStack and UpdateStack take one as ``StackPolicyBody`` (``given_policy``), UpdateStack one
for itself only as ``StackPolicyDuringUpdateBody``. Shapes are botocore's ``cloudformation``
2010-05-15.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Optional

from cfnrun.stacks.stack_policy import StackPolicy, StackPolicyError, parse_policy
from cfnrun.stacks.store import StackError, StackStore

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]


def given_policy(params: Dict[str, Any], member: str = "StackPolicyBody") -> Optional[StackPolicy]:
    """The policy given as ``member`` (StackPolicyBody, StackPolicyDuringUpdateBody), checked; None if not given."""
    url_member = member.replace("Body", "URL")
    if params.get(url_member):
        raise StackError(f"{url_member} is not supported by cfnrun's local stacks: pass the policy as {member}")
    body = params.get(member)
    if body is None:
        return None
    try:
        return parse_policy(body)
    except StackPolicyError as error:
        raise StackError(str(error)) from None


class StackPolicies:
    """The stack policy operations, by name (``StackOperations`` answers them)."""

    def __init__(self, store: StackStore) -> None:
        self.store = store

    def operations(self) -> Dict[str, Operation]:
        return {
            "SetStackPolicy": self.set_stack_policy,
            "GetStackPolicy": self.get_stack_policy,
        }

    async def set_stack_policy(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        policy = given_policy(params)
        if policy is None:
            raise StackError("Either StackPolicyBody or StackPolicyURL must be specified.")
        stack.policy_body = policy.body
        self.store.save(stack)
        return {}

    async def get_stack_policy(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        return {"StackPolicyBody": stack.policy_body} if stack.policy_body else {}
