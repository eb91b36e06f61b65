"""The registry on serve (``cfnrun/registry/``) joined to what serve runs: registered versions on warm workers, in use by stacks.

A registered version's handlers run exactly as a ``--provider`` project's do: the package's
``ResourceProvider.zip``, unpacked under ``.cfnrun/registry/``, is a ``Project`` with its own
``FunctionRegistry`` (warm pools started with serve's runtime settings), and stacks and Cloud Control
reach the type's default version through ``Served.provider`` like any served type: the same invoker,
contract checks and console lines. A ``--provider`` project of the same type name wins: serve keeps
serving the source it was started with (the registry guide says so).
"""
from __future__ import annotations

import asyncio
import dataclasses
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from cfnrun.api.cloudformation.errors import StackApiError, modelled_error
from cfnrun.api.cloudformation.service import StackService
from cfnrun.app.late_parts import LateLoading, LateParts, StackServiceWhenLoaded
from cfnrun.app.served import Served, qualified_name
from cfnrun.app.type_tests import run_type_tests
from cfnrun.model.local_state import state_folder
from cfnrun.model.project import TYPE_FUNCTION, Project
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template import FunctionSpec
from cfnrun.registry.operations import ProvidedType, RegistryOperations
from cfnrun.registry.package import HOOK, MODULE, RESOURCE, SCHEMA, PackageError
from cfnrun.registry.kept import KeptRegistry
from cfnrun.registry.store import RegisteredType, RegistryError, TypeRegistry, TypeVersion
from cfnrun.runtime.registry import FunctionRegistry

REGISTRY_FOLDER = "registry"
S3 = "s3://"


def version_project(version: TypeVersion) -> Project:
    """A registered version as a provider project: its unpacked code folder, its schema, the entrypoint its .rpdk-config names."""
    package = version.package
    entrypoint = str(package.config["entrypoint"])
    test_entrypoint = package.config.get("testEntrypoint")
    return Project(
        root=package.root,
        schema=ResourceSchema(package.schema, package.root / SCHEMA),
        code_dir=package.code,
        functions={TYPE_FUNCTION: FunctionSpec(qualified_name(package.type_name, TYPE_FUNCTION), entrypoint)},
        entrypoint=entrypoint,
        test_entrypoint=test_entrypoint if isinstance(test_entrypoint, str) else None,
        artifact_type=package.kind,
    )


class RegisteredHandlers:
    """The registry's ``Handlers`` and ``Served``'s registered types: each version's warm workers, and the default version of each type."""

    def __init__(self, served: Served, late: Optional[LateLoading] = None, on_note: Optional[Callable[[str], None]] = None) -> None:
        self.served = served
        self.late = late  # the local stacks: a registered hook joins their hooks, each type's operations record in its history
        self.on_note = on_note
        self._running: Dict[Tuple[Path, str], FunctionRegistry[Project]] = {}  # by the version's folder and type name (an alias shares the folder)
        self._in_use: Dict[str, FunctionRegistry[Project]] = {}  # by type name: the default versions
        self._client: Any = None
        self._modules: Set[str] = set()  # the modules whose fragments the registry put in the stacks' (not a --provider module's)
        self.registry: Optional[TypeRegistry] = None  # whose registrations still running stop first, on close
        self._resting: Set["asyncio.Task[None]"] = set()  # versions no longer in use letting their workers go

    async def fetch(self, url: str) -> bytes:
        endpoint = self.served.aws_endpoint
        if not url.startswith(S3) or "/" not in url[len(S3):]:
            raise PackageError(f"SchemaHandlerPackage {url} is not an S3 object: cfnrun reads s3://bucket/key from the AWS endpoint")
        if endpoint is None:
            raise PackageError(f"SchemaHandlerPackage {url} is on S3: start serve with --moto (an embedded moto) or --aws-endpoint URL")
        bucket, key = url[len(S3):].split("/", 1)
        return await asyncio.to_thread(self._download, endpoint, bucket, key)

    def _s3(self, endpoint: str) -> Any:
        if self._client is None:
            import boto3  # imported once a package is registered

            self._client = boto3.client(
                "s3", endpoint_url=endpoint, region_name=self.served.region, aws_access_key_id="testing", aws_secret_access_key="testing"
            )
        return self._client

    def _download(self, endpoint: str, bucket: str, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return bytes(self._s3(endpoint).get_object(Bucket=bucket, Key=key)["Body"].read())
        except ClientError as error:
            detail = error.response.get("Error", {})
            raise PackageError(f"SchemaHandlerPackage s3://{bucket}/{key} cannot be read from {endpoint}: {detail.get('Code')}: {detail.get('Message')}") from None
        except BotoCoreError as error:
            raise PackageError(f"SchemaHandlerPackage s3://{bucket}/{key} cannot be read from {endpoint}: {error}") from None

    async def start(self, version: TypeVersion) -> Optional[str]:
        settings = dataclasses.replace(self.served.settings, debug_port=None)  # the --debug-port ports are the served projects'
        registry = FunctionRegistry(version_project(version), settings, on_note=self.on_note)
        self._running[(version.package.root, version.type_name)] = registry
        for warming in registry.warm_each().values():
            error = await warming
            if error is not None:
                logs = error.logs.strip().splitlines()
                last = f" ({logs[-1]})" if logs else ""
                return (
                    f"The handler package does not load under {self.served.settings.python}: "
                    f"{error.error.error_type}: {error}{last}"
                )
        registry.keep_spares_when_warm()
        return None

    async def stop(self, version: TypeVersion) -> None:
        registry = self._running.pop((version.package.root, version.type_name), None)
        if registry is not None:
            if self._in_use.get(version.type_name) is registry:
                del self._in_use[version.type_name]
            await registry.close()

    def rest(self, version: TypeVersion) -> None:
        registry = self._running.get((version.package.root, version.type_name))
        if registry is not None and self._in_use.get(version.type_name) is not registry:
            self._let_rest(registry)

    def _let_rest(self, registry: FunctionRegistry[Project]) -> None:
        task = asyncio.ensure_future(registry.rest())
        self._resting.add(task)
        task.add_done_callback(self._resting.discard)

    async def test(self, version: TypeVersion, log_bucket: Optional[str]) -> Tuple[bool, str]:
        passed, description, log = await run_type_tests(version, self.served.aws_endpoint)
        if log_bucket:
            await asyncio.to_thread(self._deliver_log, log_bucket, f"{version.type_name.replace('::', '-')}/{version.version_id}/test.log", log)
        return passed, description

    def _deliver_log(self, bucket: str, key: str, log: bytes) -> None:
        """The suite's output to the LogDeliveryBucket on the AWS endpoint; a bucket that cannot take it is warned about."""
        from botocore.exceptions import BotoCoreError, ClientError

        endpoint = self.served.aws_endpoint
        if endpoint is None:
            self._note(f"TestType: the test log is not delivered to s3://{bucket}: serve has no --moto or --aws-endpoint")
            return
        try:
            self._s3(endpoint).put_object(Bucket=bucket, Key=key, Body=log)
        except (ClientError, BotoCoreError) as error:
            self._note(f"TestType: the test log cannot be delivered to s3://{bucket}/{key}: {error}")

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def use(self, kind: str, type_name: str, version: Optional[TypeVersion]) -> None:
        registry = self._running.get((version.package.root, version.type_name)) if version is not None else None
        previous = self._in_use.get(type_name)
        if registry is None:
            self._in_use.pop(type_name, None)
        else:
            self._in_use[type_name] = registry
            registry.wake()  # a version that rested since its registration warms again
        if previous is not None and previous is not registry and previous in self._running.values():
            self._let_rest(previous)  # the version it replaces keeps no warm workers (deregistering it stops them for good)
        if self.late is not None and not any(p.project.type_name == type_name for p in self.served.providers):  # a --provider wins
            self.late.then(partial(_in_stacks, self._modules, kind, type_name, version))

    # -- Served's registered types ------------------------------------------------------------------

    def provider(self, type_name: str) -> Optional[FunctionRegistry[Project]]:
        return self._in_use.get(type_name)

    def type_names(self) -> List[str]:
        return [name for name, registry in self._in_use.items() if registry.project.artifact_type == RESOURCE]

    async def close(self) -> None:
        if self.registry is not None:
            await self.registry.close()
        running, self._running = list(self._running.values()), {}
        self._in_use.clear()
        await asyncio.gather(*self._resting, return_exceptions=True)
        await asyncio.gather(*(registry.close() for registry in running))


def _in_stacks(modules: Set[str], kind: str, type_name: str, version: Optional[TypeVersion], parts: LateParts) -> None:
    """The local stacks see ``version`` as ``type_name``'s: a hook joins their hooks (disabled until SetTypeConfiguration enables it,
    as an activated hook is), and the type's operations are recorded in its history (``.cfnrun/registry/TYPE/.cfnrun/``)."""
    from cfnrun.app.stacks.hook_gate import CustomHook
    from cfnrun.history.store import HistoryStore
    from cfnrun.model.hook_configuration import HookConfiguration

    stacks = parts.stacks
    fragments = [stacks.store.blueprints.module_fragments, stacks.calls.modules]  # what reads templates: the engine's and the checks'
    if version is None:  # the type is gone (deregistered, deactivated): so is what the stacks keep of it, its configuration too
        stacks.operations.histories.pop(type_name, None)
        stacks.operations.type_configurations.pop(type_name, None)
        if kind == HOOK:
            stacks.hooks.remove(type_name)
        for known in fragments:
            if isinstance(known, dict) and type_name in modules:
                known.pop(type_name, None)
        modules.discard(type_name)
        return
    if kind == MODULE:
        for known in fragments:
            if isinstance(known, dict) and (type_name not in known or type_name in modules):  # a --provider module wins
                known[type_name] = version.fragment
        modules.add(type_name)
        return
    history = HistoryStore.for_recording(version.package.root.parent)
    if history is not None:
        stacks.operations.histories[type_name] = history
    if kind == HOOK and type_name not in stacks.hooks.hooks:
        stacks.hooks.add(CustomHook(type_name, stacks.operations, HookConfiguration(enabled=False), stacks.payloads, stacks.stopping))


class RegistryAndStacks:
    """The CloudFormation API's ``StackService``: the registry's operations, the local stacks' for the rest.

    DescribeType goes to the registry for a registered type, a ``--provider`` project's or a public AWS type; to the stacks
    otherwise. Every call waits until what ``--state`` kept of the registry is read back.
    """

    def __init__(self, stacks: StackService, registry: RegistryOperations, on_note: Optional[Callable[[str], None]] = None) -> None:
        self.stacks = stacks
        self.registry = registry
        self.on_note = on_note
        self._configured_again: Optional["asyncio.Future[None]"] = None  # the kept configurations set on the stacks again, once

    def operations(self) -> FrozenSet[str]:
        return self.stacks.operations() | self.registry.operations()

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        await self.registry.registry.ready()  # what --state kept is read back first: a stack may use a registered type
        if self._configured_again is None:
            self._configured_again = asyncio.ensure_future(self._configure_again())
        await asyncio.shield(self._configured_again)
        if operation == "SetTypeConfiguration":  # the stacks apply it; the registry describes it (BatchDescribeTypeConfigurations)
            result = await self.stacks.call(operation, params)
            self.registry.configured(params, result["ConfigurationArn"])
            return result
        if operation not in self.registry.operations():
            return await self.stacks.call(operation, params)
        try:
            if operation == "DescribeType" and not self.registry.knows(params):
                return await self.stacks.call(operation, params)
            return await self.registry.call(operation, params)
        except RegistryError as error:
            if error.code == "ValidationError":
                raise StackApiError(error.code, error.message) from None
            raise modelled_error(error.code, error.message) from None

    async def _configure_again(self) -> None:
        """Each SetTypeConfiguration ``--state`` kept, set on the stacks again (a hook read back is disabled until then); one that
        no longer applies (its type gone, its document refused) is said and forgotten."""
        for arn, record in list(self.registry.registry.configurations.items()):
            try:
                await self.stacks.call("SetTypeConfiguration", record["params"])
            except StackApiError as error:
                self.registry.registry.forget_configuration(arn)
                if self.on_note is not None:
                    self.on_note(f"registry: the configuration {arn} kept in --state is not set again: {error}")


def with_registry(
    served: Served, late: LateLoading, on_note: Optional[Callable[[str], None]] = None, state: Optional[Path] = None,
    on_info: Optional[Callable[[str], None]] = None,
) -> RegistryAndStacks:
    """The CloudFormation API's service on serve: the local stacks (once ``late`` has loaded them) and a registry whose default
    versions ``served`` serves. With ``state`` (``--state``) the registry and its packages are kept there and read back as serve starts."""
    stacks = StackServiceWhenLoaded(late)
    handlers = RegisteredHandlers(served, late, on_note)
    served.registered = handlers
    base = served.providers[0].project.root if served.providers else Path.cwd()
    folder = (lambda: state / REGISTRY_FOLDER) if state is not None else (lambda: state_folder(base) / REGISTRY_FOLDER)
    kept = KeptRegistry(state) if state is not None else None
    registry = handlers.registry = TypeRegistry(handlers, folder, served.region, served.account_id, kept, on_note)
    if state is not None:
        registry.restore_in_background(partial(_say_restored, on_info or on_note, state))
    return RegistryAndStacks(stacks, RegistryOperations(registry, partial(_provided, served)), on_note)


def _provided(served: Served) -> List[ProvidedType]:
    """The --provider projects' types (resource types and hooks), as each is now."""
    return [
        ProvidedType(provider.project.artifact_type, provider.project.type_name, provider.project.schema.document, provider.project.root)
        for provider in served.providers
    ]


def _say_restored(say: Optional[Callable[[str], None]], state: Path, restored: List[RegisteredType]) -> None:
    if say is not None and restored:
        for registered in restored:
            live = [version.version_id for version in registered.live()]
            say(f"registry: {registered.kind} {registered.type_name} read back from {state} "
                f"(versions {', '.join(live) or 'none live'}; default {registered.default_id or 'none'})")
