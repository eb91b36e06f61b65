"""Drift-aware change sets (CreateChangeSet's ``DeploymentMode: REVERT_DRIFT``): each resource's actual state beside the
previous deployment and the new template.

As the change set is made, each existing resource of a served type is READ by the one invoker (the drift detection's
READ, ``cfnrun.app.stacks.drift_checks``) and compared with its properties as last applied, the contract checker's way
(``drift.py``). The plan (``plan.py``) then puts three values side by side for each top-level property: the previous
deployment's, the actual one and the template's. A property that drifted is brought back to the template (a ``Modify``
detail whose before-value is the actual one, ``BeforeValueFrom: ACTUAL_STATE``, and whose ``Drift`` names both the
previous and the actual value), even when the template did not change it; a property the template changes to exactly
what it actually is now is only written down (``AttributeChangeType`` and resource ``Action`` ``SyncWithActual``,
``ChangeSource`` ``NoModification``: the handler is not called). A resource deleted outside CloudFormation is made
again (``Add``). What READ cannot tell (writeOnly properties, ``ResourceDriftIgnoredAttributes`` with
``WRITE_ONLY_PROPERTY``; types with no READ that cfnrun runs, ``UNSUPPORTED``) is planned against the previous
deployment (``PREVIOUS_DEPLOYMENT_STATE``). If the update fails, its rollback puts the drifted properties back to their
actual values, not to the previous template's.

The members and their values are botocore's (ResourceChange, ResourceTargetDefinition, LiveResourceDrift); what the
service does with a deleted resource, which before-value source an unchanged readable property names, and the events a
``SyncWithActual`` resource gets are inferred from the API reference and the user guide's description, not from a
recorded answer (docs/reference/cloudformation-api.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional

from cfnrun.stacks.drift import DELETED, IN_SYNC, MODIFIED, NOT_CHECKED, UNKNOWN, ResourceDrift, stack_drift_status

REVERT_DRIFT = "REVERT_DRIFT"  # the one DeploymentMode
UNSUPPORTED = "UNSUPPORTED"  # ResourceDriftStatus of a resource whose type has no READ cfnrun runs
ACTUAL_STATE, PREVIOUS_DEPLOYMENT_STATE, TEMPLATE = "ACTUAL_STATE", "PREVIOUS_DEPLOYMENT_STATE", "TEMPLATE"
SYNC_WITH_ACTUAL = "SyncWithActual"  # an Action and an AttributeChangeType
NO_MODIFICATION = "NoModification"  # the ChangeSource of a SyncWithActual detail
WRITE_ONLY_PROPERTY = "WRITE_ONLY_PROPERTY"  # why drift was not looked for (ResourceDriftIgnoredAttribute's Reason)

NOT_AN_UPDATE = "DeploymentMode REVERT_DRIFT can only be used with ChangeSetType UPDATE"  # inferred words
NOT_A_MODE = (
    "1 validation error detected: Value '{mode}' at 'deploymentMode' failed to satisfy constraint: "
    "Member must satisfy enum value set: [REVERT_DRIFT]"
)


@dataclass(frozen=True)
class ActualState:
    """One resource as its READ found it when the change set was made."""

    status: str  # ResourceDriftStatus: IN_SYNC | MODIFIED | DELETED | UNKNOWN | UNSUPPORTED
    checked_at: float
    properties: Mapping[str, Any] = field(default_factory=dict)  # as READ answered them
    drifted: FrozenSet[str] = frozenset()  # the top-level properties whose actual value is not the one last applied
    write_only: FrozenSet[str] = frozenset()  # the type's writeOnly top-level properties: READ never shows them

    @property
    def read(self) -> bool:
        """Was the resource's actual state read (found, as it is or drifted)?"""
        return self.status in (IN_SYNC, MODIFIED)

    def before_from(self, name: Optional[str]) -> str:
        """Where a detail's before-value of ``name`` comes from."""
        return ACTUAL_STATE if self.read and name is not None and name not in self.write_only else PREVIOUS_DEPLOYMENT_STATE

    def restored(self, previous: Mapping[str, Any]) -> Dict[str, Any]:
        """The resource's properties as they actually were: those last applied, each drifted one as READ found it (gone
        when READ found none)."""
        restored = dict(previous)
        for name in self.drifted:
            if name in self.properties:
                restored[name] = self.properties[name]
            else:
                restored.pop(name, None)
        return restored


def actual_state(drift: ResourceDrift, properties: Optional[Mapping[str, Any]], write_only: FrozenSet[str]) -> ActualState:
    """The actual state drift detection found: ``properties`` is READ's model (None when it found none or failed)."""
    status = UNSUPPORTED if drift.status == NOT_CHECKED else drift.status
    drifted = frozenset(d.path.split("/")[1] for d in drift.differences if d.path.count("/") >= 1)
    return ActualState(status, drift.timestamp, dict(properties or {}), drifted if status == MODIFIED else frozenset(), write_only)


def stack_status(states: Mapping[str, ActualState]) -> str:
    """The change set's StackDriftStatus: DRIFTED, UNKNOWN or IN_SYNC, as drift detection words the stack's."""
    return stack_drift_status([_as_drift(s) for s in states.values() if s.status != UNSUPPORTED])


def _as_drift(state: ActualState) -> ResourceDrift:
    return ResourceDrift("", "", None, "", state.status if state.status in (IN_SYNC, MODIFIED, DELETED) else UNKNOWN, state.checked_at)
