"""The account's macros: ``AWS::CloudFormation::Macro`` resources of local stacks, run on serve's warm workers.

A stack's ``AWS::CloudFormation::Macro`` is kept here (not on the AWS endpoint): its ``Name`` is
callable from ``Transform`` and ``Fn::Transform`` in every later template of this serve, its
``FunctionName`` (a name or ARN) one of serve's functions: a ``--functions`` one, or an
``AWS::Lambda::Function`` of a local stack that cfnrun serves (``stack_functions.py``). A name
defined twice is refused, as the service refuses it; deleting the resource ends the macro. A
stack read back from ``--state`` keeps its macros defined; their functions must be served again
(``--functions`` ones are, and a stack's own functions are served again as its stack is read back).

A macro's call is the service's request (region, accountId, fragment, transformId
``<account>::<Name>``, params, requestId, templateParameterValues) and its answer must be
``{requestId, status: success, fragment}``; anything else fails the operation with the
service's words (``Transform <account>::<Name> failed with: <errorMessage>``).

Reading a template is synchronous (``stacks/template/loading.py``) and invoking a function is
not, so a stack operation runs its template's transforms twice: first off the event loop
(``calling``: each macro call goes to its function on the loop, its answer is kept), then as
the engine reads the template (``answered``: the kept answer of the same call).
"""
from __future__ import annotations

import asyncio
import copy
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional

from cfnrun.app.served import Served, UnknownFunction
from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.stacks.records import Stack, values_mask
from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork, property_problem, required_key
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.macros import MACRO_TYPE, MacroCall, MacroRunner, TransformFailed
from cfnrun.ui.console import Console

KEPT_ANSWERS = 256  # the answers kept for the engine's second reading (the newest; a miss says to try again)


@dataclass(frozen=True)
class MacroDefinition:
    name: str
    function_name: str
    stack_id: str
    logical_id: str


class Macros:
    """The ``Provisioner`` of ``AWS::CloudFormation::Macro``, and the runner of the macros it defines."""

    def __init__(self, served: Served, console: Console, region: str, account_id: str) -> None:
        self.served = served
        self.console = console
        self.region = region
        self.account_id = account_id
        self.defined: Dict[str, MacroDefinition] = {}
        self.stacks: Callable[[], Iterable[Stack]] = lambda: ()  # the stacks (--state restores them), given once they exist
        self._answers: "OrderedDict[str, Any]" = OrderedDict()

    # -- the resource ----------------------------------------------------------------------------

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        for name in ("Name", "FunctionName"):
            if not isinstance(properties.get(name), str) or not properties[name]:
                return property_problem(logical_id, required_key(name))
        return None

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.ALWAYS if property_path == "Name" else Replacement.NEVER

    async def create(self, work: ResourceWork) -> Provisioned:
        name = str(work.properties["Name"])
        if self.definition(name) is not None:
            raise ProvisioningFailed(f"Resource of type '{MACRO_TYPE}' with identifier '{name}' already exists.")
        return self._define(work, name)

    async def update(self, work: ResourceWork) -> Provisioned:
        return self._define(work, str(work.properties["Name"]))

    async def delete(self, work: ResourceWork) -> None:
        defined = self.definition(str(work.physical_id))
        if defined is not None and defined.stack_id == work.stack.stack_id:
            del self.defined[defined.name]

    def _define(self, work: ResourceWork, name: str) -> Provisioned:
        self.defined[name] = MacroDefinition(name, str(work.properties["FunctionName"]), work.stack.stack_id, work.logical_id)
        return Provisioned(name, name)

    # -- running one -----------------------------------------------------------------------------

    def definition(self, name: str) -> Optional[MacroDefinition]:
        """The macro named ``name``: defined since serve started, or by a stack read back from ``--state``."""
        if name not in self.defined:
            for stack in self.stacks():
                for resource in stack.resources.values():
                    properties = resource.properties or {}
                    if resource.type_name == MACRO_TYPE and resource.exists and resource.physical_id == name and properties.get("FunctionName"):
                        self.defined[name] = MacroDefinition(name, str(properties["FunctionName"]), stack.stack_id, resource.logical_id)
        return self.defined.get(name)

    def transform_id(self, name: str) -> str:
        return f"{self.account_id}::{name}"

    def calling(self, loop: asyncio.AbstractEventLoop) -> MacroRunner:
        """A runner for a thread off ``loop``: each call invokes the macro's function on the loop, and its answer is kept."""
        def run(call: MacroCall) -> Any:
            fragment = asyncio.run_coroutine_threadsafe(self.invoke(call), loop).result()
            self._answers[call.key()] = copy.deepcopy(fragment)  # the template's reading may change what it is given
            while len(self._answers) > KEPT_ANSWERS:
                self._answers.popitem(last=False)
            return fragment
        return run

    def answered(self, call: MacroCall) -> Any:
        """The kept answer of ``call`` (the engine's reading, after ``calling`` ran the macro)."""
        key = call.key()
        if key not in self._answers:
            if self.definition(call.name) is None:
                raise TemplateError(f"No transform named {self.transform_id(call.name)} found.", call.where)
            raise TemplateError(f"Transform {self.transform_id(call.name)} has not run for this template here: cfnrun runs a "
                                "macro when a stack operation (CreateStack, UpdateStack, CreateChangeSet) reads the template; "
                                "call that operation again", call.where)
        self._answers.move_to_end(key)
        return copy.deepcopy(self._answers[key])

    async def invoke(self, call: MacroCall) -> Any:
        """The fragment the macro's function answers ``call`` with; TemplateError in the service's words otherwise."""
        transform_id = self.transform_id(call.name)
        defined = self.definition(call.name)
        if defined is None:
            raise TransformFailed(f"No transform named {transform_id} found.", call.where)
        try:
            function = self.served.function(defined.function_name)
        except UnknownFunction:
            raise TransformFailed(f"Transform {transform_id} failed with: its function {defined.function_name} is not served by "
                                "cfnrun (a --functions function, or a Python AWS::Lambda::Function of a local stack)", call.where) from None
        request_id = str(uuid.uuid4())
        event = {"region": self.region, "accountId": self.account_id, "fragment": call.fragment, "transformId": transform_id,
                 "params": dict(call.params), "requestId": request_id, "templateParameterValues": dict(call.template_parameter_values)}
        outcome = await self.served.invoke(function, event)
        self.console.call(function.name, f"macro {call.name}", outcome, mask=values_mask(call.secrets))
        if outcome.kind is not OutcomeKind.RETURNED:  # the service's words (LocalStack's AWS-recorded test_failed_state); why: the console
            raise TransformFailed(f"Received malformed response from transform {transform_id}", call.where)
        answer = outcome.result
        if not isinstance(answer, dict):
            raise TransformFailed(f"Transform {transform_id} failed with: the function's response is not an object "
                                "({requestId, status, fragment})", call.where)
        if str(answer.get("status", "")).lower() != "success":
            message = answer.get("errorMessage")
            raise TransformFailed(f"Transform {transform_id} failed with: {message}" if message else
                                f"Transform {transform_id} failed without an error message.", call.where)
        if answer.get("requestId") != request_id:
            raise TransformFailed(f"Transform {transform_id} failed with: the response's requestId is not the request's "
                                f"({request_id})", call.where)
        if "fragment" not in answer:
            raise TransformFailed(f"Transform {transform_id} failed with: the response has no fragment", call.where)
        return answer["fragment"]
