"""``SignalResource``: a SUCCESS or FAILURE signal for a resource that waits by its CreationPolicy (``stacks/signals.py``).

A stack that is not creating or updating is refused in the service's words (``Stack <id> is in
CREATE_COMPLETE state and cannot be signaled``, as users quote it); a resource of a moving stack that
waits for no signal is refused in the same pattern (inferred).
"""
from __future__ import annotations

from typing import Any, Dict

from cfnrun.stacks.signals import ResourceSignals, Signal
from cfnrun.stacks.store import StackError, StackStore



class SignalResource:
    def __init__(self, store: StackStore, signals: ResourceSignals) -> None:
        self.store = store
        self.signals = signals

    async def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        logical_id, status = params["LogicalResourceId"], params["Status"]  # SUCCESS or FAILURE: the model's enum is checked on reading
        if stack.settled:
            raise StackError(f"Stack {stack.stack_id} is in {stack.status} state and cannot be signaled")
        resource = stack.resources.get(logical_id)
        if resource is None:
            raise StackError(f"Resource {logical_id} does not exist for stack {stack.name}")
        if not self.signals.signal_resource(stack.stack_id, logical_id, Signal(params["UniqueId"], status)):
            raise StackError(f"Resource {logical_id} is in {resource.status} state and cannot be signaled")
        return {}
