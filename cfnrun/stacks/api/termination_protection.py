"""``UpdateTerminationProtection``: switches DeleteStack's refusal on and off.

CreateStack's ``EnableTerminationProtection`` sets it first and DescribeStacks shows it; while it
is on, DeleteStack is refused in the service's words (``StackStore.delete_stack``).
"""
from __future__ import annotations

from typing import Any, Dict

from cfnrun.stacks.store import StackStore


class UpdateTerminationProtection:
    def __init__(self, store: StackStore) -> None:
        self.store = store

    async def __call__(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        stack.termination_protection = bool(params["EnableTerminationProtection"])
        self.store.save(stack)
        return {"StackId": stack.stack_id}
