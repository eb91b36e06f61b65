"""A local stack's own Python Lambda functions, run by cfnrun's warm workers as ``--functions`` functions are.

An ``AWS::Lambda::Function`` with inline Python (``Code.ZipFile``, which SAM's ``InlineCode``
becomes) is created on the AWS endpoint as any AWS::* resource (so its Arn, role and
everything that names it exist there), and, once created, also served locally: its code is
written to a folder of its own with the ``cfnresponse`` module Lambda gives inline code, and a
registry of warm workers, added to serve's ``--functions`` registries, serves it under its
function name (its physical id), with its Handler, Timeout, MemorySize and
Environment.Variables. A custom resource whose ServiceToken is its Arn or name, and serve's
Lambda Invoke API, then run that local code. An update
serves the new code; a delete stops its workers; a stack read back from ``--state`` has its
functions served again as serve starts. Functions in other runtimes, or whose code is
on S3, stay on the endpoint only. Python code on disk (a SAM ``CodeUri`` folder, as ``sam build``
writes it; ``local_code.py``) is served from its folder the same way.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from cfnrun.app.served import Served
from cfnrun.app.stacks.aws_types import AwsTypes
from cfnrun.app.stacks.local_code import local_path
from cfnrun.model.function_template import FunctionTemplate
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.stacks.provisioning import Provisioned, ResourceWork, forward_methods
from cfnrun.stacks.blueprint import Blueprint
from cfnrun.stacks.records import Stack

LAMBDA_FUNCTION = "AWS::Lambda::Function"
CFNRESPONSE = Path(__file__).parent / "inline_support" / "cfnresponse.py"
SERVED_PROPERTIES = ("Code", "Handler", "Runtime", "Timeout", "MemorySize", "Environment")  # what serving a function reads
INLINE_MODULE = "index"  # Lambda writes ZipFile code to index.py (index.js for Node)


def _intrinsic(value: Any) -> bool:
    """Does ``value`` hold an intrinsic function (``Ref``, ``Fn::*``) anywhere?"""
    if isinstance(value, dict):
        return any(key == "Ref" or str(key).startswith("Fn::") or _intrinsic(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_intrinsic(item) for item in value)
    return False


def inline_python(properties: Dict[str, Any]) -> Optional[str]:
    """The function's inline Python source, or None when it is not an inline Python function."""
    code = properties.get("Code")
    runtime = properties.get("Runtime")
    if isinstance(code, dict) and isinstance(code.get("ZipFile"), str) and isinstance(runtime, str) and runtime.startswith("python"):
        return str(code["ZipFile"])
    return None


class StackFunctions:
    """The stack functions served now, by function name, each a registry among serve's ``--functions`` ones."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self._folder: Optional[tempfile.TemporaryDirectory] = None  # type: ignore[type-arg]  # removed when serve ends
        self._registries: Dict[str, FunctionRegistry[FunctionTemplate]] = {}

    def _code_folder(self, name: str) -> Path:
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="cfnrun-stack-functions-")
        folder = Path(self._folder.name) / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder

    async def serve(self, name: str, properties: Dict[str, Any], source: str) -> None:
        """Serve inline code: written to a folder of its own, beside the ``cfnresponse`` module."""
        await self.stop(name)
        folder = self._code_folder(name)
        (folder / f"{INLINE_MODULE}.py").write_text(source)
        shutil.copyfile(CFNRESPONSE, folder / "cfnresponse.py")
        self.add(name, properties, folder)

    async def serve_folder(self, name: str, properties: Dict[str, Any], folder: Path) -> None:
        """Serve code on disk (a SAM ``CodeUri`` folder, ``sam build`` output) where it is."""
        await self.stop(name)
        self.add(name, properties, folder)

    def add(self, name: str, properties: Dict[str, Any], folder: Path) -> None:
        """Serve the code in ``folder`` under ``name``, as ``properties`` (an AWS::Lambda::Function's, or CreateFunction's) say."""
        environment = (properties.get("Environment") or {}).get("Variables") or {}
        timeout = properties.get("Timeout")
        spec = FunctionSpec(
            logical_id=name, handler=str(properties.get("Handler") or f"{INLINE_MODULE}.handler"),
            timeout_s=float(timeout) if timeout is not None else 3.0, memory_mb=int(properties.get("MemorySize") or 128),
            environment={str(k): str(v) for k, v in environment.items()}, function_name=name,
            runtime=str(properties.get("Runtime")), code_dir=folder,
        )
        template = FunctionTemplate(path=folder / "template.yaml", functions={name: spec})
        registry = self._registries[name] = FunctionRegistry(template, self.served.settings)
        self.served.serve_template(registry)  # served from now on: ServiceTokens, the Invoke API; closed with serve

    async def stop(self, name: str) -> None:
        registry = self._registries.pop(name, None)
        if registry is not None:
            self.served.stop_serving_template(registry)
            await registry.close()
            if self._folder is not None:
                shutil.rmtree(Path(self._folder.name) / name, ignore_errors=True)  # inline code's copy; a CodeUri folder is not under it


class LocalLambdas:
    """AwsTypes, with each inline Python ``AWS::Lambda::Function`` also served locally once the endpoint has it."""

    def __init__(self, aws_types: AwsTypes, functions: StackFunctions) -> None:
        self.aws_types = aws_types
        self.functions = functions
        forward_methods(self, aws_types)  # the endpoint's AttributeNames... methods, as isinstance sees them

    def __getattr__(self, name: str) -> Any:
        return getattr(self.aws_types, name)  # validate, shown, replacement, still_there, ...: the endpoint's

    async def create(self, work: ResourceWork) -> Provisioned:
        provisioned = await self.aws_types.create(work)
        await self._keep(work, provisioned)
        return provisioned

    async def update(self, work: ResourceWork) -> Provisioned:
        provisioned = await self.aws_types.update(work)
        await self._keep(work, provisioned)
        return provisioned

    async def delete(self, work: ResourceWork) -> None:
        await self.aws_types.delete(work)
        if work.type_name == LAMBDA_FUNCTION and work.physical_id:
            await self.functions.stop(work.physical_id)

    async def serve_kept(self, stacks: Iterable[Tuple[Stack, Optional[Blueprint]]]) -> Tuple[List[str], List[str]]:
        """After ``--state`` read ``stacks`` back: serve again each of their Python functions that exists; the names served,
        and those that are not because what serving needs is not literal in the template.

        Its properties are read from the stack's template (the resolved ones kept leave out ``Code``, which the function's
        schema makes writeOnly, and a template read back is not resolved again until its stack is updated)."""
        served: List[str] = []
        unresolved: List[str] = []
        for stack, blueprint in stacks:
            for resource in stack.resources.values():
                if blueprint is None or resource.type_name != LAMBDA_FUNCTION or not resource.exists or not resource.physical_id:
                    continue
                declared = blueprint.declaration(resource.logical_id).properties
                if any(_intrinsic(declared.get(key)) for key in SERVED_PROPERTIES):
                    if str(declared.get("Runtime", "")).startswith("python"):
                        unresolved.append(resource.physical_id)
                elif await self._serve(resource.physical_id, declared):
                    served.append(resource.physical_id)
        return served, unresolved

    async def _keep(self, work: ResourceWork, provisioned: Provisioned) -> None:
        if work.type_name == LAMBDA_FUNCTION:
            await self._serve(provisioned.physical_id, work.properties)

    async def _serve(self, name: str, properties: Dict[str, Any]) -> bool:
        """Serve a Python function's inline code or code on disk; False when its code is neither (it stays on the endpoint only)."""
        if not str(properties.get("Runtime", "")).startswith("python"):
            return False
        source = inline_python(properties)
        folder = local_path(LAMBDA_FUNCTION, properties)
        if source is not None:
            await self.functions.serve(name, properties, source)
        elif folder is not None and Path(folder).expanduser().is_dir():
            await self.functions.serve_folder(name, properties, Path(folder).expanduser().resolve())
        else:
            return False
        return True
