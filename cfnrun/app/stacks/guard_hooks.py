"""Guard hooks: an ``AWS::CloudFormation::GuardHook`` resource in a local stack activates its Guard rules for the stacks that follow.

The rules live at ``RuleLocation`` (an ``s3://`` Uri on the AWS endpoint, or a local path) and are
read again at each evaluation, as the service does, so a new version of the file applies to the
next resource without redeploying the hook. Creating the resource reads them once and refuses rules
that do not parse, or a location with nothing there, so the mistake shows on the hook's own stack.
Each target is evaluated on the Hooks user guide's Guard input (``stacks/guard_input.py``) with
``Options.InputParams`` added; a rule that is not compliant is HOOK_COMPLETE_FAILED with the rules'
custom messages, rules that can no longer be read or evaluated are HOOK_FAILED. Which targets the
hook sees is its configuration's (TargetOperations, TargetFilters, StackFilters), applied by the gate.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from cfnrun.app.stacks.hook_files import HookFiles
from cfnrun.app.stacks.hook_gate import HookOutcome
from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.errors import CfnrunError
from cfnrun.model.hook_configuration import HookConfiguration
from cfnrun.stacks.guard_input import INPUT_KEYS, guard_input, read_input_params, with_input_params
from cfnrun.stacks.guard_process import evaluated
from cfnrun.stacks.guard_rules import GuardError
from cfnrun.stacks.hooks import HookedOperation
from cfnrun.stacks.provisioning import ProvisioningFailed, property_problem

MAX_INPUT_PARAMS = 10  # S3Locations in Options.InputParams, as the resource's schema allows


def input_param_locations(properties: Dict[str, Any]) -> List[Any]:
    """``Options.InputParams``: one S3Location or a list of them."""
    options = properties.get("Options") or {}
    given = options.get("InputParams") if isinstance(options, dict) else None
    if given is None:
        return []
    return list(given) if isinstance(given, list) else [given]


class GuardHook:
    """``hook_gate.Hook``: Guard rules evaluated on each resource its configuration targets."""

    def __init__(
        self, hook_type: str, configuration: HookConfiguration, rule_location: Dict[str, Any], input_params: List[Any], files: HookFiles, limit: Budget
    ) -> None:
        self.hook_type = hook_type  # the GuardHook's Alias
        self.original_type_name: Optional[str] = "AWS::Hooks::GuardHook"  # the public hook its Alias activates (botocore's example)
        self.configuration = configuration
        self.rule_location = rule_location
        self.input_params = input_params
        self.files = files
        self.limit = limit  # how long one evaluation may run (in a process of its own: ``stacks/guard_process.py``)

    @property
    def rules_uri(self) -> str:
        return str(self.rule_location["Uri"])

    def targets(self, action: str, type_name: str) -> bool:
        return True  # a Guard hook declares no targets of its own: its TargetFilters choose

    async def read(self) -> Tuple[str, List[Tuple[str, Any]]]:
        """The rules and the input parameters, as they are now; UnreadableFile or GuardInputError says why not."""
        rules = await self.files.read(self.rule_location, "RuleLocation")
        params = []
        for index, location in enumerate(self.input_params):
            where = f"Options.InputParams[{index}]"
            text = await self.files.read(location, where)
            params.append((str(location["Uri"]), read_input_params(text, str(location["Uri"]))))
        return rules, params

    async def run(self, target: HookedOperation) -> HookOutcome:
        try:
            rules, params = await self.read()
            document = with_input_params(guard_input(target, self.hook_type), params)
            verdict = await evaluated(rules, document, self.rules_uri, self.limit)
        except CfnrunError as error:  # unreadable files, rules that no longer parse, input parameters that clash
            return HookOutcome("HOOK_FAILED", f"Hook {self.hook_type} failed: {error}")
        if verdict.passed:
            return HookOutcome("HOOK_COMPLETE_SUCCEEDED")
        return HookOutcome("HOOK_COMPLETE_FAILED", verdict.reason)


class GuardHookKind:
    """``hook_resources.HookKind`` of ``AWS::CloudFormation::GuardHook``."""

    def __init__(self, files: HookFiles, budgets: Budgets) -> None:
        self.files = files
        self.budgets = budgets

    def problem(self, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        problems = [self.files.problem(properties.get("RuleLocation"), "RuleLocation")]
        locations = input_param_locations(properties)
        if len(locations) > MAX_INPUT_PARAMS:
            problems.append(f"Options.InputParams names {len(locations)} locations, at most {MAX_INPUT_PARAMS}")
        problems += [self.files.problem(location, f"Options.InputParams[{index}]") for index, location in enumerate(locations)]
        found = [problem for problem in problems if problem is not None]
        return property_problem(logical_id, f"#/{found[0]}") if found else None

    async def build(self, alias: str, properties: Dict[str, Any], configuration: HookConfiguration) -> GuardHook:
        hook = GuardHook(alias, configuration, dict(properties["RuleLocation"]), input_param_locations(properties), self.files, self.budgets.guard_hook())
        try:
            rules, params = await hook.read()
            with_input_params(dict.fromkeys(INPUT_KEYS), params)
        except CfnrunError as error:  # a location with nothing there, input parameters that are not data or clash
            raise ProvisioningFailed(f"Guard hook {alias}: {error}") from None
        try:
            await evaluated(rules, {}, hook.rules_uri, hook.limit)  # rules that do not parse, or are empty, fail the hook's own stack
        except GuardError as error:
            raise ProvisioningFailed(f"Guard hook {alias}: {error}") from None
        return hook
