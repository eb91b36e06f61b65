"""``CreateStackRefactor``, ``DescribeStackRefactor``, ``ExecuteStackRefactor``, ``ListStackRefactors`` and
``ListStackRefactorActions``: moving resources between stacks and renaming them, no resource touched (``refactors.py``).

The shapes are botocore's model's; the StackRefactorId (a bare UUID), the MOVE actions' Descriptions, TagResources and
UntagResources and the stack ARNs in their ResourceMapping are as aws-cli's examples show the service's answers. A
refactor is planned as CreateStackRefactor answers (the service plans it afterwards: CREATE_IN_PROGRESS is never seen
here) and carried out as ExecuteStackRefactor answers.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict

from cfnrun.stacks.api.inputs import given_template_body, one_page
from cfnrun.stacks.api.outputs import present
from cfnrun.stacks.refactors import StackRefactor, refactor_actions
from cfnrun.stacks.store import StackError, StackStore

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]


class StackRefactors:
    """The stack refactor operations, by name (``StackOperations`` answers them)."""

    def __init__(self, store: StackStore) -> None:
        self.store = store

    def operations(self) -> Dict[str, Operation]:
        return {
            "CreateStackRefactor": self.create, "DescribeStackRefactor": self.describe, "ExecuteStackRefactor": self.execute,
            "ListStackRefactors": self.list, "ListStackRefactorActions": self.list_actions,
        }

    async def create(self, params: Dict[str, Any]) -> Dict[str, Any]:
        definitions = []
        for definition in params["StackDefinitions"]:
            if not definition.get("StackName"):
                raise StackError("Each of StackDefinitions must have a StackName")
            definitions.append((str(definition["StackName"]), str(given_template_body(definition))))
        refactor = self.store.create_refactor(
            definitions, params.get("ResourceMappings") or [], bool(params.get("EnableStackCreation")), params.get("Description"),
        )
        return {"StackRefactorId": refactor.refactor_id}

    async def describe(self, params: Dict[str, Any]) -> Dict[str, Any]:
        refactor = self.store.refactor(params["StackRefactorId"])
        return present({**_summary(refactor), "StackIds": list(refactor.stack_ids.values())})

    async def execute(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.execute_refactor(params["StackRefactorId"])
        return {}

    async def list(self, params: Dict[str, Any]) -> Dict[str, Any]:
        wanted = set(params.get("ExecutionStatusFilter") or ())
        found = [self.store.refactor(i) for i in list(self.store.refactors)]
        page, token = one_page([r for r in found if not wanted or r.execution_status in wanted], params, int(params.get("MaxResults") or 100))
        return present({"StackRefactorSummaries": [present(_summary(r)) for r in page], "NextToken": token})

    async def list_actions(self, params: Dict[str, Any]) -> Dict[str, Any]:
        refactor = self.store.refactor(params["StackRefactorId"])
        page, token = one_page(refactor_actions(refactor), params, int(params.get("MaxResults") or 100))
        return present({"StackRefactorActions": [present(action) for action in page], "NextToken": token})


SUMMARY = (  # StackRefactorSummary's members, and the refactor's fields that hold them
    ("StackRefactorId", "refactor_id"), ("Description", "description"), ("ExecutionStatus", "execution_status"),
    ("ExecutionStatusReason", "execution_status_reason"), ("Status", "status"), ("StatusReason", "status_reason"),
)


def _summary(refactor: StackRefactor) -> Dict[str, Any]:
    return {member: getattr(refactor, name) for member, name in SUMMARY}
