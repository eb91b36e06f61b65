"""Local stacks on serve: the engine, its provisioners and the API's operations, built from serve's parts.

Every user type's resource operation goes through ``ServedTypeOperations`` (the one invoker on
the served providers' warm workers); AWS::* resources go to the AWS endpoint the handlers use;
custom resources to the functions ``--functions`` serves. A template is read (parameters, conditions,
dependencies) when the API call arrives, so what the service refuses up front is refused then, as a
ValidationError, and linted (cfn-lint, with the served types' schemas) in the next pause of the
handler calls (``lint_in_pauses.py``).
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from functools import partial
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from cfnrun.api.cloudformation.errors import StackApiError, modelled_error
from cfnrun.app.stacks.aws_schemas import AwsSchemas
from cfnrun.app.stacks.aws_types import AwsTypes
from cfnrun.app.served import Served
from cfnrun.app.stacks.drift_checks import DriftChecks
from cfnrun.app.stacks.iac_generator import IacGenerator
from cfnrun.app.stacks.leftovers import LeftoverCheck
from cfnrun.app.leftovers_named import unnamed_left_line
from cfnrun.stacks.iam_capabilities import iam_acknowledgement, insufficient_capabilities
from cfnrun.stacks.in_flight import FirstCall
from cfnrun.stacks.records import Stack, StackResource
from cfnrun.app.stacks.custom_resources import CustomResources, FunctionCalls, PendingResponses
from cfnrun.app.stacks.template_locations import RefusedTemplateUrl, read_snippet, read_template_url
from cfnrun.stacks.template.includes import IncludeReader
from cfnrun.app.stacks.nested_stacks import NESTED_STACK, NestedStacks
from cfnrun.app.stacks.macros import Macros
from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.api.inputs import given_parameters
from cfnrun.stacks.template.macros import MACRO_TYPE, MacroRunner, TransformFailed
from cfnrun.stacks.template.declarations import StackTemplate, transform_names
from cfnrun.stacks.template.transforms import transforms_called
from cfnrun.app.stacks.stack_functions import LocalLambdas, StackFunctions
from cfnrun.app.stacks.guard_hooks import GuardHookKind
from cfnrun.app.stacks.hook_files import HookFiles, readable_folders
from cfnrun.app.stacks.hook_gate import CustomHook, HookGate
from cfnrun.app.stacks.hook_payloads import HookPayloadStore
from cfnrun.stacks.hook_results import HookResults
from cfnrun.app.stacks.hook_resources import HookKind, HookResources
from cfnrun.app.stacks.lambda_hooks import LAMBDA_HOOK_TYPE, LambdaHookKind
from cfnrun.app.stacks.provisioners import TypeRouter
from cfnrun.app.stacks.dynamic_references import EndpointValues, ResolvingProvisioners
from cfnrun.app.stacks.parameter_resources import ParameterResources
from cfnrun.app.stacks.ssm_parameters import SsmParameters
from cfnrun.app.stacks.endpoint_zones import EndpointZones
from cfnrun.stacks.api.operations import StackOperations
from cfnrun.app.stacks.user_types import UserTypes
from cfnrun.app.type_operations import TypeOperations
from cfnrun.invoker.cancellable_clock import Stopping
from cfnrun.ui.console import Console
from cfnrun.stacks.blueprint import Blueprints
from cfnrun.model.errors import CfnrunError
from cfnrun.model.module_fragment import ModuleFragment
from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.app.stacks.type_configurations import check_resource_configuration, configure_hook
from cfnrun.stacks.engine import StackEngine
from cfnrun.stacks.lint_process import lint_lines
from cfnrun.app.stacks.lint_in_pauses import pause_in_calls
from cfnrun.stacks.state_db import StateError
from cfnrun.stacks.exports import Exports
from cfnrun.stacks.signals import ResourceSignals, Signal
from cfnrun.stacks.wait_conditions import CONDITION_TYPE, HANDLE_TYPE, WaitConditions
from cfnrun.stacks.cdk_metadata import CDK_METADATA_TYPE, CdkMetadata
from cfnrun.api.cloudformation.wait_condition_signals import HandleSignal
from cfnrun.stacks.identifier_summaries import PrimaryIdentifier, identifier_summaries, property_names
from cfnrun.stacks.store import StackError, StackStore
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.limits import body_size_problem, check_parameter_keys
from cfnrun.stacks.template.loading import load_stack_template

TEMPLATE_VERSION = "2010-09-09"
CARRYING_ON = {  # what the console says of an interrupted operation carried on (``stacks/interrupted_operations.py``)
    "ROLLBACK": "rolling back its create",
    "CONTINUE_ROLLBACK": "rolling back its update",
    "DELETE_STACK": "going on with its delete",
    "UPDATE_STACK": "going on with its update's cleanup",
}
# StackError codes whose botocore error shape differs from the code
MODELLED = {
    "ChangeSetNotFound": "ChangeSetNotFoundException",
    "TypeNotFoundException": "TypeNotFoundException",
    "HookResultNotFoundException": "HookResultNotFoundException",
}


@dataclass
class LocalStacks:
    store: StackStore
    calls: "CheckedStackOperations"
    responses: PendingResponses
    drift: DriftChecks
    hooks: HookGate  # every hook of this serve: custom ones served, Guard and Lambda ones declared in stacks
    payloads: HookPayloadStore  # the documents STACK and CHANGE_SET hooks download, on serve's port
    aws_types: AwsTypes
    console: Console
    operations: TypeOperations  # the one invoker every user type's resource operation goes through
    leftovers: LeftoverCheck  # is a deleted resource gone (``cfnrun stack test``)
    signals: ResourceSignals  # what CreationPolicies and WaitConditions wait for: SignalResource's and the handles' signals
    generator: IacGenerator  # the IaC generator's resource scans and generated templates
    stopping: Stopping = field(default_factory=Stopping)  # the clocks of every resource operation's waits, cancelled when serve stops
    local_types: Tuple[str, ...] = ()  # the AWS::* types cfnrun runs itself (not on the AWS endpoint): nested stacks, macros, ...
    lambdas: Optional[LocalLambdas] = None  # the stacks' own Python functions, served locally (again after --state)

    def stop_starting(self, why: str) -> None:
        """Serve is told to stop: no resource operation starts from now on, and each in flight makes no call after its current one."""
        self.store.stop_starting(why)
        self.stopping.stop(why)

    def _unidentified(self, stack: Stack, resource: StackResource, call: FirstCall, why: str) -> None:
        projects = {registry.project.type_name: registry.project for registry in self.operations.served.providers}
        self.console.warn(unnamed_left_line(stack.name, resource.logical_id, call.type_name, call.properties, projects.get(call.type_name), why))

    async def signal_handle(self, token: str, signal: HandleSignal) -> bool:
        """A signal PUT to a WaitConditionHandle's URL; False when no handle has ``token``."""
        return await self.signals.signal_handle(token, Signal(signal.unique_id, signal.status, signal.reason, signal.data))

    async def restore(self) -> None:
        """Read back the stacks ``--state`` keeps, and say which AWS resources the endpoint no longer has."""
        try:
            restored = self.store.restore()
            self.generator.restore()
        except StateError as error:
            raise CfnrunError(str(error)) from None
        for stack in restored:
            if stack.status == "DELETE_COMPLETE":
                continue
            self.console.info(f"stack {stack.name}: {stack.status}, read back from {self.store.state}")
            for resource in stack.resources.values():
                on_endpoint = resource.type_name.startswith("AWS::") and resource.type_name not in self.local_types
                if resource.exists and on_endpoint and not await self.aws_types.still_there(resource.model):
                    self.console.warn(
                        f"stack {stack.name}: {resource.logical_id} ({resource.type_name} {resource.physical_id}) is gone from the AWS "
                        "endpoint (an embedded --moto starts empty each time): delete the stack, or update it to make it again"
                    )
        if self.lambdas is not None:  # their inline code and CodeUri folders, so custom resources and macros backed by them run
            kept = [(s, self.store.engine.blueprints.get(s.stack_id)) for s in restored if s.status != "DELETE_COMPLETE"]
            served, unresolved = await self.lambdas.serve_kept(kept)
            for name in served:
                self.console.info(f"function {name} (a stack's AWS::Lambda::Function) served again")
            for name in unresolved:
                self.console.warn(f"function {name} (a stack's AWS::Lambda::Function) is not served again: its Code, Handler, Runtime, "
                                  "Timeout, MemorySize or Environment use intrinsic functions, which a stack read back cannot resolve; "
                                  "update its stack to serve it")
        self.store.engine.in_flight.unidentified = self._unidentified  # a first CREATE no second call could name (``unanswered_creates.py``)
        for stack, operation_type in self.store.carry_on():
            self.console.info(f"stack {stack.name}: serve stopped during its operation: {CARRYING_ON[operation_type]}, as the service would")


class CheckedStackOperations:
    """``api.cloudformation.StackService``: templates read as the service reads them (its refusals as API errors)
    and linted on the side (cfn-lint's findings are console warnings, which no operation waits for)."""

    def __init__(self, calls: StackOperations, lint: Callable[[str], Awaitable[None]], modules: Optional[Mapping[str, Any]] = None,
                 read_include: Optional[IncludeReader] = None, macros: Optional[Macros] = None,
                 nested: Optional[NestedStacks] = None, unrecognized: Callable[[Iterable[str]], List[str]] = lambda types: [],
                 read_url: Optional[Callable[[str], str]] = None) -> None:
        self.unrecognized = unrecognized  # the AWS::* types of a template the service does not have
        self.read_url = read_url  # reads a call's TemplateURL (template_locations.read_template_url)
        self.read_include = read_include
        self.calls = calls
        self.lint = lint
        self.modules = modules  # the served modules' fragments by type name
        self.macros = macros  # the account's macros: run here, off the event loop, before the engine reads the template
        self.nested = nested  # makes the nested stacks' change sets of a change set made with IncludeNestedStacks
        self._linting: Set["asyncio.Task[None]"] = set()
        self._linting_stopped = False

    def operations(self) -> "frozenset[str]":
        return self.calls.operations()

    async def stop_linting(self) -> None:
        """Serve stops: the lints under way are called off (their child stopped while the event loop still runs), and
        none starts from now on. Their findings are warnings that nothing waits for."""
        self._linting_stopped = True
        for linting in list(self._linting):
            linting.cancel()
        await asyncio.gather(*self._linting, return_exceptions=True)

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        try:
            body = params.get("TemplateBody")
            too_large = body_size_problem(body) if isinstance(body, str) else None
            if too_large is not None:
                raise StackError(too_large)
            check_parameter_keys(params.get("Parameters") or [])
            if params.get("TemplateURL") and body is None and self.read_url is not None:  # read here: the engine gets its text
                try:
                    body = await asyncio.to_thread(self.read_url, str(params["TemplateURL"]))
                except RefusedTemplateUrl as refused:
                    raise StackError(str(refused)) from None
                params = {**{key: value for key, value in params.items() if key != "TemplateURL"}, "TemplateBody": body}
            kept_template = params.get("UsePreviousTemplate") or operation == "GetTemplateSummary"  # the stack's template is read
            if operation in ("UpdateStack", "CreateChangeSet", "GetTemplateSummary") and kept_template and body is None:
                stack = self.calls.store.find(str(params.get("StackName")))
                body = stack.template_body if stack is not None else None
            if operation == "CreateStackRefactor" and self.read_url is not None:
                params = {**params, "StackDefinitions": [await self._with_body(d) for d in params.get("StackDefinitions") or []]}
            checked = ("CreateStack", "UpdateStack", "CreateChangeSet", "ValidateTemplate", "GetTemplateSummary", "EstimateTemplateCost")
            if isinstance(body, str) and operation in checked:
                self._check_capabilities(operation, body, params)
                # what the service refuses, in its words (cfn-lint's findings only warn); its macros run here
                runner = self.macros.calling(asyncio.get_running_loop()) if self.macros is not None else None
                given = self._given(params)
                try:
                    template = await asyncio.to_thread(load_stack_template, body, given, self.modules, self.read_include, runner)
                except TransformFailed as failed:  # the service reports a failing macro in the operation it was asked for
                    if operation == "CreateStack":
                        return await self.calls.create_stack(params, refused=failed.message)
                    if operation == "CreateChangeSet":
                        return await self.calls.create_change_set(params, refused=failed.message)
                    raise
                unknown = self.unrecognized(resource.type for resource in template.resources.values())
                warned = operation == "GetTemplateSummary" and (params.get("TemplateSummaryConfig") or {}).get("TreatUnrecognizedResourceTypesAsWarnings")
                if unknown and not warned:
                    raise TemplateError(f"Template format error: Unrecognized resource types: [{', '.join(unknown)}]")
                refusal = self._iam_refusal(operation, template, params)
                if refusal is not None:
                    if operation == "CreateChangeSet" and declared_transforms(body):  # processed as the change set is made: it FAILs
                        return await self.calls.create_change_set(params, refused=refusal)
                    raise modelled_error("InsufficientCapabilitiesException", refusal)
                if operation != "GetTemplateSummary" and not self._linting_stopped:
                    linting = asyncio.ensure_future(self.lint(body))
                    self._linting.add(linting)
                    linting.add_done_callback(self._linting.discard)
                with self.calls.store.blueprints.loaded(body, given, template):  # the operation reads it once, here
                    answer = await self.calls.call(operation, params)
                if unknown and warned:  # TemplateSummaryConfig: the types no one serves are a warning, not the error
                    answer = {**answer, "Warnings": {"UnrecognizedResourceTypes": list(unknown)}}
            else:
                answer = await self.calls.call(operation, params)
            if operation == "CreateChangeSet" and params.get("IncludeNestedStacks") and self.nested is not None:
                try:
                    await self.nested.include_nested(answer["Id"])
                finally:
                    self.calls.store.sync_change_sets()  # the nested change sets' links, kept (``--state``)
            return answer
        except TemplateError as error:
            raise StackApiError("ValidationError", str(error)) from None
        except StackError as error:
            if error.code in MODELLED:
                raise modelled_error(MODELLED[error.code], error.message) from None
            raise StackApiError(error.code, error.message, error.status) from None

    async def _with_body(self, definition: Dict[str, Any]) -> Dict[str, Any]:
        """A stack refactor's StackDefinition, its TemplateURL read into TemplateBody as CreateStack's is."""
        if not definition.get("TemplateURL") or definition.get("TemplateBody") is not None or self.read_url is None:
            return definition
        try:
            body = await asyncio.to_thread(self.read_url, str(definition["TemplateURL"]))
        except RefusedTemplateUrl as refused:
            raise StackError(str(refused)) from None
        return {"StackName": definition.get("StackName"), "TemplateBody": body}

    async def run_macros(self, body: str, given: Mapping[str, str]) -> None:
        """Run the template's macros for an operation the store is asked for directly (``cfnrun stack test``), so that
        the engine reads their answers; TemplateError as the service words a template it refuses."""
        runner = self.macros.calling(asyncio.get_running_loop()) if self.macros is not None else None
        await asyncio.to_thread(load_stack_template, body, dict(given), self.modules, self.read_include, runner)

    def _given(self, params: Dict[str, Any]) -> Dict[str, str]:
        """The parameter values the engine will read the template with (UsePreviousValue: the stack's)."""
        stack = self.calls.store.find(str(params["StackName"])) if params.get("StackName") else None
        previous = stack.parameters if stack is not None else {}
        return {key: previous.get(key, "") if value is None else value for key, value in given_parameters(params).items()}

    @staticmethod
    def _iam_refusal(operation: str, template: StackTemplate, params: Dict[str, Any]) -> Optional[str]:
        """CreateStack, UpdateStack and CreateChangeSet of a template (as processed: a SAM function's role counts) with IAM
        resources must acknowledge CAPABILITY_IAM, or CAPABILITY_NAMED_IAM when one is named (``iam_capabilities.py``)."""
        if operation not in ("CreateStack", "UpdateStack", "CreateChangeSet"):
            return None
        needed = iam_acknowledgement((r.type, r.properties) for r in template.resources.values())
        missing = needed.missing(params.get("Capabilities") or ()) if needed is not None else None
        return insufficient_capabilities(missing) if missing is not None else None

    @staticmethod
    def _check_capabilities(operation: str, body: str, params: Dict[str, Any]) -> None:
        """CreateStack/UpdateStack of a template that calls a macro must acknowledge CAPABILITY_AUTO_EXPAND (a change set
        needs not: it is the review the capability stands for). The service's macros count: botocore's documentation of
        the capability names AWS::Serverless and AWS::Include; AWS::LanguageExtensions, also "a macro hosted by
        CloudFormation" in its guide, is inferred to count as they do."""
        if operation not in ("CreateStack", "UpdateStack") or "CAPABILITY_AUTO_EXPAND" in (params.get("Capabilities") or ()):
            return
        try:
            document = decode_template(body)
        except TemplateDecodeError:
            return  # the engine says what is wrong with it
        if isinstance(document, dict) and transforms_called(document):
            raise modelled_error("InsufficientCapabilitiesException", "Requires capabilities : [CAPABILITY_AUTO_EXPAND]")


def local_stacks(
    operations: TypeOperations, url: str, state: Optional[Path] = None, active_hooks: Tuple[str, ...] = (),
    rules_folders: Tuple[Path, ...] = (), modules: Tuple[ModuleFragment, ...] = (), parameter_lookups: bool = True,
) -> LocalStacks:
    """The stacks of a serve listening on ``url`` (the ResponseURL of custom resources is there); ``parameter_lookups``:
    AWS-specific parameter values are looked up on the AWS endpoint (``ServeSettings.parameter_lookups``)."""
    fragments = {module.type_name: module.document for module in modules}
    served: Served = operations.served
    region, account_id = served.region, served.account_id
    served_types = served.type_names
    responses = PendingResponses(url)
    aws_schemas = AwsSchemas(region)
    stopping = Stopping()
    aws_types = AwsTypes(served.aws_endpoint, region, aws_schemas, stopping=stopping, budgets=operations.budgets)
    user_types = UserTypes(operations, stopping)
    hooks = HookGate(HookResults(region, account_id))
    payloads = HookPayloadStore(url)
    for registry in served.providers:
        if registry.project.is_hook:
            hook_type = registry.project.type_name
            hooks.add(CustomHook(hook_type, operations, HookConfiguration(enabled=hook_type in active_hooks), payloads, stopping))
    hook_files = HookFiles(served.aws_endpoint, region, Path.cwd(), readable_folders(served, rules_folders))  # relative to serve's folder
    hook_kinds: Dict[str, HookKind] = {  # the hook-declaring resource types: what runs each kind
        "AWS::CloudFormation::GuardHook": GuardHookKind(hook_files, operations.budgets),
        LAMBDA_HOOK_TYPE: LambdaHookKind(operations, payloads, stopping),
    }
    hook_resources = HookResources(hooks, hook_kinds)
    signals = ResourceSignals()
    wait_conditions = WaitConditions(url, signals)
    nested_stacks = NestedStacks(served.aws_endpoint, region, stopping, own_url=url)  # given the stack operations below, once they exist
    macros = Macros(served, operations.console, region, account_id)
    lambdas = LocalLambdas(aws_types, StackFunctions(served))
    types = TypeRouter(
        user_types,
        served_types,
        lambdas,  # a stack's inline Python functions are served too
        CustomResources(FunctionCalls(served, operations.console), responses, operations.virtual_clock, stopping=stopping),  # served or the stacks' own
        {
            **{name: hook_resources for name in hook_kinds},
            **dict.fromkeys((HANDLE_TYPE, CONDITION_TYPE), wait_conditions),
            NESTED_STACK: nested_stacks,
            MACRO_TYPE: macros,
            CDK_METADATA_TYPE: CdkMetadata(),  # no endpoint has it: the service makes nothing for it
        },
        aws_type_exists=aws_schemas.knows,
    )
    router = ResolvingProvisioners(types, EndpointValues(served.aws_endpoint, region))
    exports = Exports()
    engine = StackEngine(router, exports, region, account_id, hooks, signals)

    async def lint(body: str) -> None:
        schemas = [s.document for s in (operations.schema(t) for t in served_types()) if s is not None]
        # cfn-lint takes a core: once its turn has come, it waits for the handler calls to pause
        for warning in await lint_lines(body, schemas, region, ready=lambda: pause_in_calls(served.calls)):
            operations.console.warn(warning)

    def describe_type(type_name: str) -> Optional[Dict[str, Any]]:
        schema = operations.schema(type_name)
        if schema is None:
            return None
        return {
            "Arn": f"arn:aws:cloudformation:{region}:{account_id}:type/resource/{type_name.replace('::', '-')}",
            "Type": "RESOURCE",
            "TypeName": type_name,
            "DefaultVersionId": "00000001",
            "IsDefaultVersion": True,
            "Description": schema.document.get("description"),
            "Schema": json.dumps(schema.document),
            "ProvisioningType": "FULLY_MUTABLE",
            "DeprecatedStatus": "LIVE",
            "Visibility": "PRIVATE",
        }

    def configure_type(type_name: str, configuration: Dict[str, Any]) -> str:
        kind = "hook" if type_name in hooks.hooks else "resource"
        if kind == "hook":
            configure_hook(hooks.hooks[type_name], configuration)
        elif (schema := operations.schema(type_name)) is not None:
            check_resource_configuration(type_name, schema, configuration)  # refused: nothing is kept
            operations.type_configurations[type_name] = configuration
        else:
            raise StackError(f"The type '{type_name}' cannot be found.", "TypeNotFoundException", 404)
        return f"arn:aws:cloudformation:{region}:{account_id}:type-configuration/{kind}/{type_name.replace('::', '-')}/default"

    read_include = partial(read_snippet, served.aws_endpoint, region, url)
    ssm = SsmParameters(served.aws_endpoint, region).value if served.aws_endpoint else None
    looked_up = ParameterResources(served.aws_endpoint, region).missing if served.aws_endpoint and parameter_lookups else None
    blueprints = Blueprints(router, exports, region, account_id, fragments, read_include=read_include, ssm_parameter=ssm,
                            availability_zones=EndpointZones(served.aws_endpoint).zones, aws_value_missing=looked_up)
    store = StackStore(engine, blueprints, state)

    def stack_output(name: str, output: str) -> Optional[str]:  # Fn::GetStackOutput: KeyError when there is no such stack
        stack = store.find(name)
        if stack is None or stack.status == "DELETE_COMPLETE":
            raise KeyError(name)
        return next((str(o.value) for o in stack.outputs if o.key == output), None)

    blueprints.stack_output = stack_output
    blueprints.run_macro = macros.answered  # the answers the macros gave when CheckedStackOperations ran them

    def adopt(child_id: str, parent_id: str) -> None:  # a nested stack's ParentId and RootId, as DescribeStacks shows them
        child, parent = store.find(child_id), store.find(parent_id)
        if child is not None and parent is not None:
            child.parent_id, child.root_id = parent.stack_id, parent.root_id or parent.stack_id

    nested_stacks.adopt = adopt
    nested_stacks.child_template = lambda child_id: getattr(store.find(child_id), "template_body", None)
    drift = DriftChecks(store, operations, user_types)

    def primary_identifier(type_name: str) -> Optional[List[str]]:
        schema = operations.schema(type_name) or aws_schemas.schema(type_name)
        return property_names(schema.primary_identifier) if schema is not None else None

    summarizing = partial(summarize, modules=fragments, primary_identifier=primary_identifier, run_macro=macros.answered,
                          read_include=read_include)
    generator = IacGenerator(store, operations)
    calls = StackOperations(store, describe_type, summarizing, configure_type, drift, hooks, generator)
    nested_stacks.calls = checked = CheckedStackOperations(calls, lint, fragments, read_include, macros, nested_stacks, types.unrecognized,
                                                           partial(read_template_url, served.aws_endpoint, region, url))
    nested_stacks.store = store
    macros.stacks = lambda: store.stacks.values()
    return LocalStacks(
        store, checked, responses, drift, hooks, payloads, aws_types, operations.console, operations,
        LeftoverCheck(operations, served_types, aws_types, tuple(types.own_types), partial(_stack_status, store)), signals, generator,
        stopping, tuple(types.own_types), lambdas,
    )


def _stack_status(store: StackStore, stack_id: str) -> Optional[str]:
    stack = store.stacks.get(stack_id)
    return stack.status if stack is not None else None


def declared_transforms(body: str) -> Tuple[str, ...]:
    """The Transform section's names as the template was sent (the processed template keeps only AWS::LanguageExtensions)."""
    try:
        document = decode_template(body)
        return transform_names(document.get("Transform")) if isinstance(document, dict) else ()
    except (TemplateDecodeError, TemplateError):
        return ()


def summarize(body: str, modules: Optional[Mapping[str, Any]] = None, primary_identifier: Optional[PrimaryIdentifier] = None,
              run_macro: Optional[MacroRunner] = None, read_include: Optional[IncludeReader] = None) -> Dict[str, Any]:
    """GetTemplateSummary's (and ValidateTemplate's) view of a template (``primary_identifier``: a type's identifying
    properties, for ResourceIdentifierSummaries; ``run_macro``: the account's macros' kept answers; ``read_include``:
    where AWS::Include snippets are read, as for the stack operations)."""
    template = load_stack_template(body, module_fragments=modules, read_include=read_include, run_macro=run_macro)
    parameters = []
    for name, declared in template.parameters.items():
        constraints = {"AllowedValues": list(declared.allowed_values)} if declared.allowed_values else {}
        parameters.append(
            {
                key: value
                for key, value in {
                    "ParameterKey": name,
                    "DefaultValue": declared.default,
                    "ParameterType": declared.type,
                    "NoEcho": declared.no_echo,
                    "Description": declared.description,
                    "ParameterConstraints": constraints,
                }.items()
                if value is not None
            }
        )
    metadata = template.document.get("Metadata")
    summary: Dict[str, Any] = {
        "Parameters": parameters,
        "Description": template.description,
        "ResourceTypes": sorted({r.type for r in template.resources.values()}),
        "Version": str(template.document.get("AWSTemplateFormatVersion") or TEMPLATE_VERSION),
        "Metadata": json.dumps(metadata) if metadata is not None else None,
        "DeclaredTransforms": list(declared_transforms(body)),  # as written: the transforms that ran are gone from the template
    }
    acknowledgement = iam_acknowledgement((r.type, r.properties) for r in template.resources.values())
    if acknowledgement is not None:
        summary["Capabilities"] = [acknowledgement.capability]
        summary["CapabilitiesReason"] = acknowledgement.reason
    if primary_identifier is not None:
        types = {logical_id: r.type for logical_id, r in template.resources.items()}
        summary["ResourceIdentifierSummaries"] = identifier_summaries(types, primary_identifier)
    return {key: value for key, value in summary.items() if value is not None}
