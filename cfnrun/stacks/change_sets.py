"""A change set: its plan (what DescribeChangeSet shows and ExecuteChangeSet carries out), its statuses and the settings
it was made with."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.hooks import HookReport
from cfnrun.stacks.plan import ChangePlan, ResourceChange

# what a change set is planned from when it only shows the template as sent: one whose template could not be processed,
# one read back from --state without what executing it needs (``kept_change_sets.py``)
UNPROCESSED = '{"Resources": {"Unprocessed": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}}'


@dataclass
class ChangeSet:
    change_set_id: str
    name: str
    stack_id: str
    change_set_type: str  # CREATE | UPDATE
    plan: ChangePlan  # what DescribeChangeSet shows and ExecuteChangeSet carries out
    parameters: Dict[str, str]
    tags: Dict[str, str]
    description: Optional[str] = None
    status: str = "CREATE_COMPLETE"
    status_reason: Optional[str] = None
    execution_status: str = "AVAILABLE"
    created_at: float = field(default_factory=time.time)
    hook_results: List[HookReport] = field(default_factory=list)  # what its CHANGE_SET hooks answered
    capabilities: Tuple[str, ...] = ()  # as CreateChangeSet acknowledged them
    notification_arns: Tuple[str, ...] = ()  # these three: as given, else the stack's; the stack's once it is executed
    rollback_configuration: Dict[str, Any] = field(default_factory=dict)
    role_arn: Optional[str] = None
    include_nested_stacks: bool = False
    on_stack_failure: Optional[str] = None  # OnStackFailure (DO_NOTHING, ROLLBACK, DELETE): what a failed create does, set at creation
    parent_change_set_id: Optional[str] = None  # a nested change set's parent and root (IncludeNestedStacks)
    root_change_set_id: Optional[str] = None
    nested_change_sets: Dict[str, str] = field(default_factory=dict)  # each nested stack's change set, by logical id
    deployment_mode: Optional[str] = None  # REVERT_DRIFT: a drift-aware change set (``drift_aware.py``)
    deployment_config: Dict[str, Any] = field(default_factory=dict)  # DeploymentConfig as given (Mode, DisableRollback)
    import_existing_resources: bool = False  # ImportExistingResources: what exists is imported (``auto_imports.py``)
    stack_drift_status: Optional[str] = None  # a drift-aware change set's StackDriftStatus, as its READs found the stack
    # read back from --state without what executing it needs (``kept_change_sets.py``): what it lacks, said by ExecuteChangeSet
    unexecutable: Optional[str] = None

    @property
    def blueprint(self) -> Blueprint:
        return self.plan.blueprint

    @property
    def changes(self) -> List[ResourceChange]:
        return self.plan.changes

    @property
    def skips_stack_hooks(self) -> FrozenSet[str]:
        """The hooks that answered CHANGE_SET_SUCCESS_SKIP_STACK_HOOK: the change set's execution does not ask them again."""
        return frozenset(r.hook_type for r in self.hook_results if r.skips_stack_hook)
