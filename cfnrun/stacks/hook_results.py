"""Every hook verdict of a serve, for ListHookResults and GetHookResult.

A hook's stack events say what it did to a resource or a stack; a change set and a Cloud Control
request have no events, and the service keeps their hooks' verdicts as hook results, found by
target (a change set's ARN, a Cloud Control request's HooksRequestToken) or by hook (its type
ARN, and a status). cfnrun keeps each finished invocation here for the life of the serve.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.hooks import HookedOperation
from cfnrun.stacks.store import StackError

FILTERED_TARGET_TYPES = ("CHANGE_SET", "CLOUD_CONTROL")  # the only TargetType filters the service takes


@dataclass(frozen=True)
class HookResult:
    hook_type: str
    type_arn: str
    status: str  # HOOK_COMPLETE_SUCCEEDED, HOOK_COMPLETE_FAILED or HOOK_FAILED
    reason: Optional[str]
    failure_mode: str
    target: HookedOperation
    invoked_at: float
    annotations: Tuple[Dict[str, Any], ...] = ()  # as the hook answered them (annotationName, status, statusMessage, …)
    result_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    original_type_name: Optional[str] = None  # the public hook an alias activates (AWS::Hooks::GuardHook, AWS::Hooks::LambdaHook)

    @property
    def target_id(self) -> str:
        """What the result names its target by: a change set's ARN, a HooksRequestToken, a stack's ARN, a resource's logical id."""
        target = self.target
        return target.target_id or (target.stack.stack_id if target.operation == "STACK" else target.logical_id)

    @property
    def execution_target(self) -> str:
        """The stack's ARN, or the Cloud Control request's token."""
        return self.target.stack.stack_id or self.target.logical_id


def hook_type_arn(region: str, account_id: str, hook_type: str) -> str:
    """A hook's type ARN, as its results and Cloud Control's HooksProgressEvent name it."""
    return f"arn:aws:cloudformation:{region}:{account_id}:type/hook/{hook_type.replace('::', '-')}"


class HookResults:
    """The verdicts of every hook this serve ran, oldest first."""

    def __init__(self, region: str, account_id: str) -> None:
        self.region = region
        self.account_id = account_id
        self.results: List[HookResult] = []

    def type_arn(self, hook_type: str) -> str:
        return hook_type_arn(self.region, self.account_id, hook_type)

    def record(
        self,
        hook_type: str,
        target: HookedOperation,
        status: str,
        reason: Optional[str],
        failure_mode: str,
        invoked_at: float,
        annotations: Tuple[Dict[str, Any], ...] = (),
        result_id: Optional[str] = None,
        original_type_name: Optional[str] = None,
    ) -> None:
        """Keep one verdict; ``result_id`` is the invocation's id its stack events show as HookInvocationId."""
        arn = self.type_arn(hook_type)
        self.results.append(
            HookResult(hook_type, arn, status, reason, failure_mode, target, invoked_at, annotations, result_id or str(uuid.uuid4()), original_type_name)
        )

    def matching(self, params: Dict[str, Any]) -> List[HookResult]:
        """ListHookResults' filters, refused in the combinations the service refuses."""
        target_type, target_id, type_arn, status = (params.get(k) for k in ("TargetType", "TargetId", "TypeArn", "Status"))
        if (target_type is None) != (target_id is None):
            raise StackError("TargetType and TargetId must be given together")
        if target_type is not None and target_type not in FILTERED_TARGET_TYPES:
            raise StackError(f"TargetType {target_type} cannot be used as a filter: only {' and '.join(FILTERED_TARGET_TYPES)} can")
        if status is not None and type_arn is None:
            raise StackError("Status can only be given with TypeArn")
        if target_type is not None and type_arn is not None:
            raise StackError("TypeArn cannot be combined with TargetType and TargetId")
        found = self.results
        if target_type is not None:
            found = [r for r in found if r.target.operation == target_type and r.target_id == target_id]
        if type_arn is not None:
            found = [r for r in found if r.type_arn == type_arn and (status is None or r.status == status)]
        return found

    def get(self, result_id: str) -> HookResult:
        for result in self.results:
            if result.result_id == result_id:
                return result
        raise StackError(f"Hook result {result_id} does not exist", "HookResultNotFoundException", 404)
