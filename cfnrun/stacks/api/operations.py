"""The CloudFormation API's operations on the local stacks: parsed input in, botocore-shaped output out.

``cfnrun.api.cloudformation`` reads the query protocol into each operation's input shape and
writes the output shape as XML; this module is what each operation means here. Input and
output member names are botocore's (``cloudformation`` 2010-05-15).
"""
from __future__ import annotations

import json
import uuid
from collections import Counter
from typing import Any, Awaitable, Callable, Dict, FrozenSet, List, Mapping, Optional, Protocol, Sequence, Tuple

from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.model.hook_protocol import HOOK_TYPE_VERSION
from cfnrun.stacks.api import STACK_OPERATIONS
from cfnrun.stacks.api.inputs import (
    PAGE_SIZE, PREVIOUS_TEMPLATE_OF_A_NEW_STACK, PREVIOUS_VALUE_OF_A_NEW_STACK, given_notification_arns, given_parameters, given_tags, given_template_body, needed, one_page, rollback_disabled, take_settings,
    type_name_of,
)
from cfnrun.stacks.api.iac_generator import IacGeneratorOperations, IacGeneratorService
from cfnrun.stacks.api.resource_signals import SignalResource
from cfnrun.stacks.api.stack_policies import StackPolicies, given_policy
from cfnrun.stacks.api.stack_aliases import StackAliases
from cfnrun.stacks.api.stack_refactors import StackRefactors
from cfnrun.stacks.api.account_limits import describe_account_limits
from cfnrun.stacks.api.termination_protection import UpdateTerminationProtection
from cfnrun.stacks.api.parameter_values import parameter_list, shown_parameter_list
from cfnrun.stacks.api.outputs import (
    annotation_shape, change_set_summary, event_shape, hook_result_shape, hook_result_summary, last_operations,
    operation_event_shape, present, resource_drift_shape, resource_shape, timestamp,
)
from cfnrun.stacks.operation_events import only_failed
from cfnrun.stacks.hook_results import HookResults
from cfnrun.stacks.changes import described_changes
from cfnrun.stacks.hooks import CHANGE_ACTIONS
from cfnrun.stacks.drift import DriftDetection, ResourceDrift
from cfnrun.stacks.drift_aware import NOT_A_MODE, NOT_AN_UPDATE, REVERT_DRIFT, ActualState
from cfnrun.stacks.plan import ResourceChange
from cfnrun.stacks.records import Stack, StackResource, shown_parameters
from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.statuses import UPDATABLE
from cfnrun.stacks.change_sets import ChangeSet
from cfnrun.stacks.store import ON_STACK_FAILURE_DELETE_NOT_CREATE, StackError, StackStore
from cfnrun.stacks.template.loading import processed_body

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]

BOTH_ON_FAILURE_AND_DISABLE_ROLLBACK = "Either DisableRollback or OnFailure can be specified, not both."  # the service's words
_READING = ("Describe", "List", "Get", "Validate", "Estimate")  # the operations that change nothing


class DriftService(Protocol):
    """The drift operations' detections (the app's ``DriftChecks`` runs them on the handlers and the endpoint)."""

    def detect_stack(self, name_or_id: str, logical_ids: Sequence[str] = ()) -> DriftDetection: ...

    async def detect_resource(self, name_or_id: str, logical_id: str) -> ResourceDrift: ...

    def detection(self, detection_id: str) -> DriftDetection: ...

    def resource_drifts(self, name_or_id: str) -> List[ResourceDrift]: ...

    def stack_information(self, stack: Stack) -> Tuple[str, Optional[float]]: ...

    def resource_information(self, stack: Stack, logical_id: str) -> Tuple[str, Optional[float]]: ...

    async def actual_states(self, stack: Stack) -> Dict[str, ActualState]: ...

    def forget(self, stack: Stack, logical_ids: Sequence[str]) -> None: ...


class KnownHook(Protocol):
    hook_type: str
    configuration: HookConfiguration


class HookService(Protocol):
    """Which hooks would run, and their verdicts (the app's ``HookGate``)."""

    results: HookResults

    def applicable(self, operation: str, action: str, type_name: str, stack_name: Optional[str]) -> Sequence[KnownHook]: ...


class StackOperations:
    """``cfnrun.api.cloudformation.StackService``: each supported operation, by name."""

    def __init__(
        self,
        store: StackStore,
        describe_type: Callable[[str], Optional[Dict[str, Any]]],
        summarize: Callable[[str], Dict[str, Any]],
        configure_type: Callable[[str, Dict[str, Any]], str],
        drift: DriftService,
        hooks: HookService,
        generator: IacGeneratorService,
    ) -> None:
        self.store = store
        self.hooks = hooks  # which hooks a change set's execution would run, and every hook's verdict
        self.drift = drift
        self.configure_type = configure_type  # a served type's configuration (SetTypeConfiguration) → its ConfigurationArn
        self.describe_type_of = describe_type  # a served type's DescribeType output, or None
        self.summarize = summarize  # a template body → ValidateTemplate's/GetTemplateSummary's Parameters, Description, …
        self._operations: Dict[str, Operation] = {
            "CreateStack": self.create_stack,
            "UpdateStack": self.update_stack,
            "DeleteStack": self.delete_stack,
            "DescribeStacks": self.describe_stacks,
            "ListStacks": self.list_stacks,
            "DescribeStackEvents": self.describe_stack_events,
            "DescribeEvents": self.describe_events,
            "DescribeStackResource": self.describe_stack_resource,
            "DescribeStackResources": self.describe_stack_resources,
            "ListStackResources": self.list_stack_resources,
            "GetTemplate": self.get_template,
            "GetTemplateSummary": self.get_template_summary,
            "ValidateTemplate": self.validate_template,
            "CreateChangeSet": self.create_change_set,
            "DescribeChangeSet": self.describe_change_set,
            "ExecuteChangeSet": self.execute_change_set,
            "DeleteChangeSet": self.delete_change_set,
            "ListChangeSets": self.list_change_sets,
            "ListExports": self.list_exports,
            "ListImports": self.list_imports,
            "DescribeType": self.describe_type,
            "CancelUpdateStack": self.cancel_update_stack,
            "ContinueUpdateRollback": self.continue_update_rollback,
            "SetTypeConfiguration": self.set_type_configuration,
            "DetectStackDrift": self.detect_stack_drift,
            "DescribeStackDriftDetectionStatus": self.describe_stack_drift_detection_status,
            "DescribeStackResourceDrifts": self.describe_stack_resource_drifts,
            "DetectStackResourceDrift": self.detect_stack_resource_drift,
            "DescribeChangeSetHooks": self.describe_change_set_hooks,
            "ListHookResults": self.list_hook_results,
            "GetHookResult": self.get_hook_result,
            "RollbackStack": self.rollback_stack,
        }
        self._operations.update(  # the operations with modules of their own
            StackPolicies(store).operations(),
            **StackAliases(store).operations(),
            **StackRefactors(store).operations(),
            DescribeAccountLimits=describe_account_limits,
            EstimateTemplateCost=self.estimate_template_cost,
            UpdateTerminationProtection=UpdateTerminationProtection(store),
            SignalResource=SignalResource(store, store.engine.signals),
        )
        self._operations.update(IacGeneratorOperations(generator).operations())
        assert frozenset(self._operations) == STACK_OPERATIONS, "stacks/api/__init__.py names every operation answered"

    def operations(self) -> FrozenSet[str]:
        return STACK_OPERATIONS

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        if operation.startswith(_READING):
            return await self._operations[operation](params)
        try:
            return await self._operations[operation](params)
        finally:
            self.store.sync_change_sets()  # what the call changed of a change set is kept (``--state``) before it is answered

    # -- stacks ----------------------------------------------------------------------------

    async def create_stack(self, params: Dict[str, Any], refused: Optional[str] = None) -> Dict[str, Any]:
        """``refused``: its template could not be processed (a failing macro): the stack is made and rolled back with this reason."""
        on_failure = params.get("OnFailure")
        if on_failure is not None and "DisableRollback" in params:
            raise StackError(BOTH_ON_FAILURE_AND_DISABLE_ROLLBACK)
        disable_rollback = rollback_disabled(params) or on_failure == "DO_NOTHING"
        policy = given_policy(params)
        if refused is not None:
            stack = self.store.refused_create(params["StackName"], given_template_body(params) or "", given_tags(params) or {}, refused,
                                              disable_rollback, params.get("ClientRequestToken"))
            return {"StackId": stack.stack_id, "OperationId": stack.operation_id}
        stack = self.store.create_stack(
            params["StackName"],
            given_template_body(params) or "",
            given_parameters(params),
            given_tags(params) or {},
            disable_rollback,
            params.get("ClientRequestToken"),
            disable_validation=bool(params.get("DisableValidation")),
            delete_on_failure=on_failure == "DELETE",
            notification_arns=given_notification_arns(params) or (),
        )
        stack.termination_protection = bool(params.get("EnableTerminationProtection"))
        stack.capabilities = tuple(params.get("Capabilities") or ())  # what its nested stacks are created with too
        stack.policy_body = policy.body if policy is not None else None
        stack.timeout_in_minutes = params.get("TimeoutInMinutes")
        take_settings(stack, params)
        return {"StackId": stack.stack_id, "OperationId": stack.operation_id}

    async def update_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        policy, during_update = given_policy(params), given_policy(params, "StackPolicyDuringUpdateBody")
        stack = self.store.update_stack(
            params["StackName"], given_template_body(params), given_parameters(params), given_tags(params), params.get("ClientRequestToken"),
            during_update,
            disable_validation=bool(params.get("DisableValidation")),
            disable_rollback=rollback_disabled(params),
            notification_arns=given_notification_arns(params),
        )
        if policy is not None:  # the new policy guards the updates after this one
            stack.policy_body = policy.body
        stack.capabilities = tuple(params.get("Capabilities") or ())
        take_settings(stack, params)
        return {"StackId": stack.stack_id, "OperationId": stack.operation_id}

    async def rollback_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.rollback_stack(params["StackName"], params.get("ClientRequestToken"), params.get("RetainExceptOnCreate"))
        return {"StackId": stack.stack_id, "OperationId": stack.operation_id}

    async def delete_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        retain = tuple(params.get("RetainResources") or ())
        if params.get("DeletionMode") == "FORCE_DELETE_STACK":
            retain += self._stuck(params["StackName"])
        self.store.delete_stack(params["StackName"], retain, params.get("ClientRequestToken"))
        return {}

    def _stuck(self, name: str) -> Tuple[str, ...]:
        """DeletionMode FORCE_DELETE_STACK: the resources a DELETE_FAILED stack failed to delete, left in place this time."""
        stack = self.store.find(name)
        if stack is None or stack.status == "DELETE_COMPLETE":
            return ()
        if stack.status != "DELETE_FAILED":
            raise StackError("Invalid operation on stack: DeletionMode FORCE_DELETE_STACK is only valid for a stack in DELETE_FAILED state")
        return tuple(r.logical_id for r in stack.resources.values() if r.status == "DELETE_FAILED")

    async def cancel_update_stack(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.cancel_update(params["StackName"])
        return {}

    async def continue_update_rollback(self, params: Dict[str, Any]) -> Dict[str, Any]:
        skip = tuple(params.get("ResourcesToSkip") or ())
        force = bool(params.get("ForceRollback"))
        if force and skip:  # the model's documentation says so; the words are inferred
            raise StackError("ForceRollback and ResourcesToSkip are mutually exclusive: specify one of them")
        self.store.continue_update_rollback(params["StackName"], skip, force)
        return {}

    async def describe_stacks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params.get("StackName")
        if name:
            stacks = [self.store.get(name)]
        else:
            stacks = [s for s in self.store.stacks.values() if s.status != "DELETE_COMPLETE"]
        page, token = one_page(stacks, params)
        return present({"Stacks": [self._stack(s) for s in page], "NextToken": token})

    def _stack(self, stack: Stack) -> Dict[str, Any]:
        return present(
            {
                "StackId": stack.stack_id,
                "StackName": stack.name,
                "ChangeSetId": stack.change_set_id if stack.status != "DELETE_COMPLETE" else None,
                "Description": stack.description,
                "Parameters": shown_parameter_list(stack, self.store.engine.blueprints.get(stack.stack_id)),
                "CreationTime": timestamp(stack.created_at),
                "LastUpdatedTime": timestamp(stack.updated_at),
                "DeletionTime": timestamp(stack.deleted_at),
                "StackStatus": stack.status,
                "StackStatusReason": stack.reason,
                "DisableRollback": stack.disable_rollback,
                "Outputs": [
                    present({"OutputKey": o.key, "OutputValue": stack.masked_data(str(o.value)), "Description": o.description, "ExportName": o.export_name})
                    for o in stack.outputs
                ],
                "Tags": [{"Key": k, "Value": v} for k, v in stack.tags.items()],
                "Capabilities": list(stack.capabilities),
                "NotificationARNs": list(stack.notification_arns),
                "RollbackConfiguration": stack.rollback_configuration,
                "RoleARN": stack.role_arn,
                "TimeoutInMinutes": stack.timeout_in_minutes,
                "EnableTerminationProtection": stack.termination_protection,
                "AliasName": stack.alias_name,
                "DeploymentConfig": stack.deployment_config or None,
                "DriftInformation": self._stack_drift(stack),
                "LastOperations": last_operations(stack),
                "ParentId": stack.parent_id,
                "RootId": stack.root_id,
            }
        )

    def _stack_drift(self, stack: Stack) -> Dict[str, Any]:
        status, checked_at = self.drift.stack_information(stack)
        return present({"StackDriftStatus": status, "LastCheckTimestamp": timestamp(checked_at)})

    def _resource_drift(self, stack: Stack, resource: StackResource) -> Dict[str, Any]:
        status, checked_at = self.drift.resource_information(stack, resource.logical_id)
        return present({"StackResourceDriftStatus": status, "LastCheckTimestamp": timestamp(checked_at)})

    async def list_stacks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        wanted = set(params.get("StackStatusFilter") or ())
        stacks = [s for s in self.store.stacks.values() if not wanted or s.status in wanted]
        page, token = one_page(stacks, params)
        summaries = [
            present(
                {
                    "StackId": s.stack_id,
                    "StackName": s.name,
                    "TemplateDescription": s.description,
                    "CreationTime": timestamp(s.created_at),
                    "LastUpdatedTime": timestamp(s.updated_at),
                    "DeletionTime": timestamp(s.deleted_at),
                    "StackStatus": s.status,
                    "StackStatusReason": s.reason,
                    "ParentId": s.parent_id,
                    "RootId": s.root_id,
                    "DriftInformation": self._stack_drift(s),
                    "LastOperations": last_operations(s),
                }
            )
            for s in page
        ]
        return present({"StackSummaries": summaries, "NextToken": token})

    async def describe_events(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The events of a change set's creation, of one operation, or of a stack's operations; newest first."""
        log = self.store.log
        if params.get("ChangeSetName"):
            change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
            events = log.of_change_set(change_set.change_set_id, change_set.status)
        elif params.get("OperationId"):
            operation = params["OperationId"]
            stack = next((s for s in self.store.stacks.values() if any(o == operation for _, o in s.operations)), None)
            change_set_id = log.change_set_of(operation)
            if stack is not None:
                events = log.of_stack(stack, operation)
            elif change_set_id is not None and change_set_id in self.store.change_sets:
                events = log.of_change_set(change_set_id, self.store.change_sets[change_set_id].status)
            else:
                events = []
        elif params.get("StackName"):
            events = log.of_stack(self.store.get(params["StackName"]))
        else:
            raise StackError("One of ChangeSetName, OperationId or StackName must be specified.")
        if (params.get("Filters") or {}).get("FailedEvents"):
            events = only_failed(events)
        page, token = one_page(events, params)
        return present({"OperationEvents": [operation_event_shape(e) for e in page], "NextToken": token})

    async def describe_stack_events(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"], bracketed=True)
        page, token = one_page(list(reversed(stack.events)), params)
        return present({"StackEvents": [event_shape(e) for e in page], "NextToken": token})

    # -- resources -------------------------------------------------------------------------

    async def describe_stack_resource(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        resource = _resource(stack, params["LogicalResourceId"])
        detail = {**resource_shape(stack, resource, "LastUpdatedTimestamp"), "DriftInformation": self._resource_drift(stack, resource),
                  "ModuleInfo": self._module_info(stack).get(resource.logical_id)}
        detail["Metadata"] = json.dumps(resource.metadata) if resource.metadata else None
        return {"StackResourceDetail": present(detail)}

    async def describe_stack_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("StackName"):
            stack = self.store.get(params["StackName"])
        elif params.get("PhysicalResourceId"):
            physical = params["PhysicalResourceId"]
            found = [s for s in self.store.stacks.values() if any(r.physical_id == physical for r in s.resources.values())]
            if not found:
                raise StackError(f"Stack for {physical} does not exist")
            stack = found[-1]
        else:
            raise StackError("Either StackName or PhysicalResourceId must be specified.")
        resources = [r for r in stack.resources.values() if params.get("LogicalResourceId") in (None, r.logical_id)]
        modules = self._module_info(stack)
        shapes = [{**resource_shape(stack, r, "Timestamp"), "DriftInformation": self._resource_drift(stack, r),
                   "ModuleInfo": modules.get(r.logical_id)} for r in resources]
        return {"StackResources": [present(shape) for shape in shapes]}

    def _module_info(self, stack: Stack) -> Dict[str, Dict[str, str]]:
        """The ModuleInfo of the stack's resources that modules made, by logical id (its current template's)."""
        blueprint = self.store.engine.blueprints.get(stack.stack_id)
        return blueprint.template.module_info if blueprint is not None else {}

    async def list_stack_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        page, token = one_page(list(stack.resources.values()), params)
        summaries = [
            present(
                {
                    "LogicalResourceId": r.logical_id,
                    "PhysicalResourceId": r.physical_id,
                    "ResourceType": r.type_name,
                    "LastUpdatedTimestamp": timestamp(r.updated_at),
                    "ResourceStatus": r.status,
                    "ResourceStatusReason": r.reason,
                    "DriftInformation": self._resource_drift(stack, r),
                }
            )
            for r in page
        ]
        return present({"StackResourceSummaries": summaries, "NextToken": token})

    # -- drift -----------------------------------------------------------------------------

    async def detect_stack_drift(self, params: Dict[str, Any]) -> Dict[str, Any]:
        detection = self.drift.detect_stack(params["StackName"], tuple(params.get("LogicalResourceIds") or ()))
        return {"StackDriftDetectionId": detection.detection_id}

    async def describe_stack_drift_detection_status(self, params: Dict[str, Any]) -> Dict[str, Any]:
        detection: DriftDetection = self.drift.detection(params["StackDriftDetectionId"])
        return present(
            {
                "StackId": detection.stack_id,
                "StackDriftDetectionId": detection.detection_id,
                "StackDriftStatus": detection.stack_status,
                "DetectionStatus": detection.status,
                "DetectionStatusReason": detection.reason,
                "DriftedStackResourceCount": detection.drifted_count,
                "Timestamp": timestamp(detection.started_at),
            }
        )

    async def describe_stack_resource_drifts(self, params: Dict[str, Any]) -> Dict[str, Any]:
        wanted = set(params.get("StackResourceDriftStatusFilters") or ())
        drifts = [d for d in self.drift.resource_drifts(params["StackName"]) if not wanted or d.status in wanted]
        page, token = one_page(drifts, params, int(params.get("MaxResults") or PAGE_SIZE))
        return present({"StackResourceDrifts": [resource_drift_shape(d) for d in page], "NextToken": token})

    async def detect_stack_resource_drift(self, params: Dict[str, Any]) -> Dict[str, Any]:
        drift = await self.drift.detect_resource(params["StackName"], params["LogicalResourceId"])
        return {"StackResourceDrift": resource_drift_shape(drift)}

    # -- templates -------------------------------------------------------------------------

    async def get_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        blueprint: Optional[Blueprint]
        if params.get("ChangeSetName"):
            change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
            body, blueprint = change_set.blueprint.template_body, change_set.blueprint
        else:
            stack = self.store.get(needed(params, "StackName"))
            body, blueprint = stack.template_body, self.store.engine.blueprints.get(stack.stack_id)
        if params.get("TemplateStage") == "Processed" and blueprint is not None:
            body = processed_body(body, blueprint.processed_document())
        return {"TemplateBody": body, "StagesAvailable": ["Original", "Processed"]}

    async def get_template_summary(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if params.get("StackName"):
            stack = self.store.get(params["StackName"])
            if stack.status == "REVIEW_IN_PROGRESS":
                raise StackError("GetTemplateSummary cannot be called on REVIEW_IN_PROGRESS stacks.")
            body = stack.template_body
        else:
            body = given_template_body(params) or ""
        return self.summarize(body)

    async def validate_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        summary = self.summarize(given_template_body(params) or "")
        keep = ("Parameters", "Description", "Capabilities", "CapabilitiesReason", "DeclaredTransforms")
        parameters = [
            present({k: p.get(k) for k in ("ParameterKey", "DefaultValue", "NoEcho", "Description")}) for p in summary.get("Parameters", [])
        ]
        return present({**{k: summary.get(k) for k in keep}, "Parameters": parameters})

    async def estimate_template_cost(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The template checked as ValidateTemplate checks it, then a Simple Monthly Calculator URL of the form aws-cli's
        example shows the service's (its key is a new UUID: no estimate is made, nor is the URL served)."""
        self.summarize(given_template_body(params) or "")
        return {"Url": f"http://calculator.s3.amazonaws.com/calc5.html?key=cloudformation/{uuid.uuid4()}"}

    # -- change sets -----------------------------------------------------------------------

    async def create_change_set(self, params: Dict[str, Any], refused: Optional[str] = None) -> Dict[str, Any]:
        """``refused``: its template could not be processed (a failing macro): the change set is FAILED with this reason."""
        if params.get("OnStackFailure") == "DELETE" and params.get("ChangeSetType") != "CREATE":
            raise StackError(ON_STACK_FAILURE_DELETE_NOT_CREATE)
        if params.get("ChangeSetType") == "CREATE" and params.get("UsePreviousTemplate"):
            raise StackError(PREVIOUS_TEMPLATE_OF_A_NEW_STACK)
        if params.get("ChangeSetType") == "CREATE" and any(p.get("UsePreviousValue") for p in params.get("Parameters") or []):
            raise StackError(PREVIOUS_VALUE_OF_A_NEW_STACK)
        actual = self._drift_reads(params) if params.get("DeploymentMode") is not None and refused is None else None
        change_set = self.store.create_change_set(
            params["StackName"],
            params["ChangeSetName"],
            params.get("ChangeSetType") or "UPDATE",
            given_template_body(params, required=params.get("ChangeSetType") in ("CREATE", "IMPORT")),
            given_parameters(params),
            given_tags(params),
            params.get("Description"),
            params.get("ResourcesToImport"),
            disable_validation=bool(params.get("DisableValidation")),
            refused=refused,
            notification_arns=given_notification_arns(params),
            actual=actual,
            import_existing=bool(params.get("ImportExistingResources")),
        )
        change_set.capabilities = tuple(params.get("Capabilities") or ())
        stack = self.store.stacks[change_set.stack_id]  # what the change set does not give, it keeps of the stack's
        given_arns = given_notification_arns(params)
        change_set.notification_arns = stack.notification_arns if given_arns is None else given_arns
        change_set.rollback_configuration = dict(params.get("RollbackConfiguration", stack.rollback_configuration))
        change_set.role_arn = params.get("RoleARN", stack.role_arn)
        change_set.include_nested_stacks = bool(params.get("IncludeNestedStacks"))
        change_set.on_stack_failure = params.get("OnStackFailure")
        change_set.deployment_config = dict(params.get("DeploymentConfig") or {})  # its Mode kept and shown, as CreateStack's
        return {"Id": change_set.change_set_id, "StackId": change_set.stack_id}

    def _drift_reads(self, params: Dict[str, Any]) -> Optional[Callable[[Stack], Awaitable[Mapping[str, ActualState]]]]:
        """What makes a drift-aware change set's READs of the stack's resources, which its plan waits for; None when the stack
        cannot be updated now (CreateChangeSet then refuses it in its own words)."""
        mode = params["DeploymentMode"]
        if mode != REVERT_DRIFT:
            raise StackError(NOT_A_MODE.format(mode=mode))
        if (params.get("ChangeSetType") or "UPDATE") != "UPDATE":
            raise StackError(NOT_AN_UPDATE)
        stack = self.store.find(params["StackName"])
        if stack is None or stack.status not in UPDATABLE:
            return None
        return self.drift.actual_states

    async def describe_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
        stack = self.store.stacks[change_set.stack_id]
        shown = shown_parameters(change_set.parameters, change_set.blueprint.no_echo)
        return present(
            {
                "ChangeSetName": change_set.name,
                "ChangeSetId": change_set.change_set_id,
                "StackId": stack.stack_id,
                "StackName": stack.name,
                "Description": change_set.description,
                "Parameters": parameter_list(shown, change_set.blueprint.resolved_values, change_set.blueprint.no_echo),
                "CreationTime": timestamp(change_set.created_at),
                "ExecutionStatus": change_set.execution_status,
                "Status": change_set.status,
                "StatusReason": change_set.status_reason,
                "Changes": with_nested_change_sets(described_changes(
                    change_set.plan, self.store.property_values(change_set) if params.get("IncludePropertyValues") else None,
                    Counter(change.logical_id for change, _ in self._planned_hooks(change_set, stack)),
                ), change_set.nested_change_sets),
                "Tags": [{"Key": k, "Value": v} for k, v in change_set.tags.items()],
                "Capabilities": list(change_set.capabilities),
                "NotificationARNs": list(change_set.notification_arns),
                "RollbackConfiguration": change_set.rollback_configuration,
                "IncludeNestedStacks": change_set.include_nested_stacks,
                "OnStackFailure": change_set.on_stack_failure,
                "ParentChangeSetId": change_set.parent_change_set_id,
                "RootChangeSetId": change_set.root_change_set_id,
                "DeploymentMode": change_set.deployment_mode,
                "DeploymentConfig": change_set.deployment_config or None,
                "ImportExistingResources": change_set.import_existing_resources or None,
                "StackDriftStatus": change_set.stack_drift_status,
            }
        )

    async def execute_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
        self.store.execute_change_set(
            params["ChangeSetName"], params.get("StackName"), params.get("ClientRequestToken"),
            disable_rollback=None if params.get("DisableRollback") is None else bool(params["DisableRollback"]),
        )
        if change_set.deployment_mode is not None:  # its READs' drift is what it resets: checked again, it is known again
            self.drift.forget(self.store.stacks[change_set.stack_id], [c.logical_id for c in change_set.changes if c.drift is not None])
        return {}

    async def delete_change_set(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.store.delete_change_set(params["ChangeSetName"], params.get("StackName"))
        return {}

    # -- hooks -----------------------------------------------------------------------------

    async def describe_change_set_hooks(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The RESOURCE hooks the change set's execution would run, one entry per hook and changed resource."""
        change_set = self.store.change_set(params["ChangeSetName"], params.get("StackName"))
        stack = self.store.stacks[change_set.stack_id]
        wanted = params.get("LogicalResourceId")
        planned = []
        for change, hook in self._planned_hooks(change_set, stack):
            if wanted is not None and change.logical_id != wanted:
                continue
            details = {"LogicalResourceId": change.logical_id, "ResourceType": change.resource_type, "ResourceAction": change.action}
            planned.append(
                {
                    "InvocationPoint": "PRE_PROVISION",
                    "FailureMode": hook.configuration.failure_mode,
                    "TypeName": hook.hook_type,
                    "TypeVersionId": HOOK_TYPE_VERSION,
                    "TargetDetails": {"TargetType": "RESOURCE", "ResourceTargetDetails": details},
                }
            )
        page, token = one_page(planned, params)
        status = "UNAVAILABLE" if change_set.status == "FAILED" else "PLANNED"
        shape = {"ChangeSetId": change_set.change_set_id, "ChangeSetName": change_set.name, "Hooks": page, "Status": status}
        return present({**shape, "NextToken": token, "StackId": stack.stack_id, "StackName": stack.name})


    def _planned_hooks(self, change_set: ChangeSet, stack: Stack) -> List[Tuple[ResourceChange, Any]]:
        """Each RESOURCE hook the change set's execution would run, with the change it runs for, in the plan's order."""
        return [
            (change, hook)
            for change in change_set.changes
            if change.action in CHANGE_ACTIONS  # a SyncWithActual calls no handler, so no hook
            for hook in self.hooks.applicable("RESOURCE", CHANGE_ACTIONS[str(change.action)], change.resource_type, stack.name)
        ]

    async def list_hook_results(self, params: Dict[str, Any]) -> Dict[str, Any]:
        found = self.hooks.results.matching(params)
        page, token = one_page(found, params)
        filtered = params.get("TargetId") is not None
        results = [hook_result_summary(r, filtered) for r in page]
        return present({"TargetType": params.get("TargetType"), "TargetId": params.get("TargetId"), "HookResults": results, "NextToken": token})

    async def get_hook_result(self, params: Dict[str, Any]) -> Dict[str, Any]:
        result = self.hooks.results.get(needed(params, "HookResultId"))
        # HookTarget's TargetType is RESOURCE for a resource wherever it is (the model's only value): a Cloud Control request's too
        target = {"TargetType": result.target.target_type, "TargetTypeName": result.target.type_name, "TargetId": result.target_id, "Action": result.target.action}
        annotations = [annotation_shape(a) for a in result.annotations]
        return present(
            {
                **hook_result_shape(result), "OriginalTypeName": result.original_type_name, "TypeArn": result.type_arn,
                "InvokedAt": timestamp(result.invoked_at), "Target": target, "Annotations": annotations or None,
            }
        )

    async def list_change_sets(self, params: Dict[str, Any]) -> Dict[str, Any]:
        stack = self.store.get(params["StackName"])
        return {"Summaries": [change_set_summary(stack, c) for c in self.store.change_sets_of(params["StackName"])]}

    # -- exports and types -----------------------------------------------------------------

    async def list_exports(self, params: Dict[str, Any]) -> Dict[str, Any]:
        exports = self.store.engine.exports.all()
        page, token = one_page(exports, params)
        return present({"Exports": [{"ExportingStackId": e.stack_id, "Name": e.name, "Value": e.value} for e in page], "NextToken": token})

    async def list_imports(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params["ExportName"]
        importers = self.store.engine.exports.importers(name)
        if not importers:
            raise StackError(f"Export '{name}' is not imported by any stack.")
        return {"Imports": importers}

    async def set_type_configuration(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = type_name_of(params)
        try:
            configuration = json.loads(params["Configuration"])
        except ValueError as error:
            raise StackError(f"Configuration is not valid JSON: {error}") from None
        if not isinstance(configuration, dict):
            raise StackError("Configuration must be a JSON object")
        return {"ConfigurationArn": self.configure_type(type_name, configuration)}

    async def describe_type(self, params: Dict[str, Any]) -> Dict[str, Any]:
        type_name = type_name_of(params)
        described = self.describe_type_of(type_name)
        if described is None:
            raise StackError(f"The type '{type_name}' cannot be found.", "TypeNotFoundException", 404)
        return described


def _resource(stack: Stack, logical_id: str) -> StackResource:
    resource = stack.resources.get(logical_id)
    if resource is None:
        raise StackError(f"Resource {logical_id} does not exist for stack {stack.name}")
    return resource


def with_nested_change_sets(changes: List[Dict[str, Any]], nested: Mapping[str, str]) -> List[Dict[str, Any]]:
    """The changes of a change set made with IncludeNestedStacks: each nested stack's ResourceChange names its change set."""
    for change in changes:
        resource = change.get("ResourceChange") or {}
        if resource.get("LogicalResourceId") in nested:
            resource["ChangeSetId"] = nested[resource["LogicalResourceId"]]
    return changes
