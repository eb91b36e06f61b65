"""The registry of one serve: registered extensions (resource types, hooks, modules), their versions and registrations.

A registration (``register``) runs in the background: the package is fetched from the endpoint's S3,
checked and unpacked into its own folder, its schema checked against the meta-schema, and its
handlers started on warm workers (``Handlers``, the app's side); then it is COMPLETE with a new
version (``00000001``, ``00000002``, ... per type, never reused) or FAILED with the reason, its folder
and workers gone: nothing half-registered is left. A type's first version becomes its default; later
ones only by ``set_default``. Stacks and Cloud Control use the default version (``Handlers.use``); only
it keeps warm workers: another version's go once its registration has seen them load (``Handlers.rest``),
and start again when it is made the default.
"""
from __future__ import annotations

import asyncio
import dataclasses
import datetime
import hashlib
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Coroutine, Dict, List, Optional, Protocol, Set, Tuple

from cfnrun.model.errors import CfnrunError
from cfnrun.model.schema import ResourceSchema
from cfnrun.registry.kept import KeptRegistry, KeptRegistryError, Record, moment
from cfnrun.registry.package import HOOK, MODULE, RESOURCE, PackageError, Unpacked, unpack

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
# DescribeTypeRegistration's Description while it runs and once it is done (as the service words it, from its answers seen in
# cloudformation-cli's issues and blog posts: inferred, the API reference gives no text)
DEPLOYING = "Deployment is currently in DEPLOY_STAGE of status IN_PROGRESS"
DEPLOYED = "Deployment is currently in DEPLOY_STAGE of status COMPLETED"
# A registration cfnrun refuses fails as the service's validation stage does, in its answers quoted in cloudformation-cli#403 and
# #639: the stages, then the reason after the registration's token (the reason's words are cfnrun's)
VALIDATION_FAILED = "Deployment is currently in VALIDATION_STAGE of status FAILED; Next is DEPLOY_STAGE with status CANCELLED"
STOPPED = "The registration stopped: cfnrun serve stopped before it was complete"
CRUD = ("create", "read", "delete")
# How many versions of one extension may be registered at a time (live: deregistered ones do not count), by kind. A resource
# type's 50 is RegisterType's documentation ("a maximum of 50 resource extension versions registered at a time"); a module's
# 100 is the quotas page's "Module versions"; a hook's 50 is inferred (the documentation's "extension versions").
VERSION_LIMITS = {RESOURCE: 50, HOOK: 50, MODULE: 100}
# how the service's messages name each kind of extension ("resource type" as users quote it; "hook" and "module": inferred)
KIND_NOUNS = {RESOURCE: "resource type", HOOK: "hook", MODULE: "module"}


class RegistryError(CfnrunError):
    """An error the registry's API answers with: ``code`` is the service's (CFNRegistryException, TypeNotFoundException)."""

    def __init__(self, message: str, code: str = "CFNRegistryException") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def provisioning_type(kind: str, schema: Dict[str, Any]) -> str:
    """As the service decides at registration: create, read and delete handlers make a type provisionable, update a mutable one
    (a hook or a module provisions nothing: inferred, the reference names resource types only)."""
    handlers = schema.get("handlers") or {}
    if kind != RESOURCE or not all(name in handlers for name in CRUD):
        return "NON_PROVISIONABLE"
    return "FULLY_MUTABLE" if "update" in handlers else "IMMUTABLE"


@dataclass
class TypeVersion:
    """One registered version of an extension, unpacked in ``package.root``."""

    package: Unpacked
    version_id: str
    arn: str  # the version's ARN: the type's ARN and /VERSION
    registered: datetime.datetime
    logging_config: Optional[Dict[str, Any]] = None
    execution_role_arn: Optional[str] = None
    deprecated: bool = False
    tests_status: str = "NOT_TESTED"
    tests_description: Optional[str] = None
    public_version: Optional[str] = None  # PublishType's PublicVersionNumber, once published
    fragment: Optional[Dict[str, Any]] = None  # a module's template fragment (checked as the service checks it)

    @property
    def kind(self) -> str:
        return self.package.kind

    @property
    def type_name(self) -> str:
        return self.package.type_name

    def record(self, base: Path) -> Record:
        """What ``--state`` keeps of the version (``kept.py``): enough to answer for it, and to run it again from its folder (kept
        relative to ``base``, the state folder's registry, so the state folder may move)."""
        package = self.package
        root = package.root.relative_to(base) if package.root.is_relative_to(base) else package.root
        return {
            "version_id": self.version_id, "arn": self.arn, "registered": self.registered.isoformat(), "root": str(root),
            "config": package.config, "schema": package.schema, "configuration_schema": package.configuration_schema,
            "logging_config": self.logging_config, "execution_role_arn": self.execution_role_arn, "deprecated": self.deprecated,
            "tests_status": self.tests_status, "tests_description": self.tests_description, "public_version": self.public_version,
            "fragment": self.fragment,
        }

    @classmethod
    def from_record(cls, kind: str, type_name: str, record: Record, base: Path) -> "TypeVersion":
        package = Unpacked(base / record["root"], kind, type_name, record["config"], record["schema"], record.get("configuration_schema"))
        tests_status = record.get("tests_status") or "NOT_TESTED"
        tests_description = record.get("tests_description")
        if tests_status == IN_PROGRESS:  # serve stopped while they ran
            tests_status, tests_description = FAILED, "The contract tests stopped: cfnrun serve stopped"
        return cls(
            package, record["version_id"], record["arn"], datetime.datetime.fromisoformat(record["registered"]), record.get("logging_config"),
            record.get("execution_role_arn"), bool(record.get("deprecated")), tests_status, tests_description, record.get("public_version"),
            record.get("fragment"),
        )

    @property
    def provisioning_type(self) -> str:
        return provisioning_type(self.kind, self.package.schema)


@dataclass
class RegisteredType:
    kind: str
    type_name: str
    arn: str
    versions: Dict[str, TypeVersion] = field(default_factory=dict)  # every version ever registered, deregistered ones too
    default_id: Optional[str] = None
    numbered: int = 0  # the last version number given
    public_arn: Optional[str] = None  # once published (PublishType)
    public_versions: List[str] = field(default_factory=list)  # each PublicVersionNumber published, in order
    origin: Optional["RegisteredType"] = None  # an activated public type (ActivateType): the published type it runs
    auto_update: Optional[bool] = None  # ActivateType's AutoUpdate

    def live(self) -> List[TypeVersion]:
        return [version for version in self.versions.values() if not version.deprecated]

    @property
    def default(self) -> Optional[TypeVersion]:
        return self.versions.get(self.default_id) if self.default_id else None

    def record(self, base: Path) -> Record:
        return {
            "kind": self.kind, "type_name": self.type_name, "arn": self.arn, "default_id": self.default_id, "numbered": self.numbered,
            "public_arn": self.public_arn, "public_versions": self.public_versions, "auto_update": self.auto_update,
            "origin": [self.origin.kind, self.origin.type_name] if self.origin is not None else None,
            "versions": [version.record(base) for version in self.versions.values()],
        }


@dataclass
class Registration:
    token: str
    kind: str
    type_name: str
    type_arn: str
    status: str = IN_PROGRESS
    description: str = DEPLOYING
    version_arn: Optional[str] = None
    client_token: Optional[str] = None  # RegisterType's ClientRequestToken: the same request sent again is this registration

    def fail(self, reason: str) -> None:
        """FAILED, its Description the service's validation stage failure naming ``reason``."""
        self.status = FAILED
        self.description = f"{VALIDATION_FAILED}\nDeployment failed with error. Error message: [{self.token}] {reason}"


def registration_record(registration: Registration) -> Record:
    return dataclasses.asdict(registration)


class Handlers(Protocol):
    """What the app does for the registry: fetch a package, run a version's handlers, say which version is in use."""

    async def fetch(self, url: str) -> bytes:
        """The package at ``url`` (s3://bucket/key on the AWS endpoint); PackageError says why it cannot be read."""
        ...

    async def start(self, version: TypeVersion) -> Optional[str]:
        """Start ``version``'s handlers on warm workers: why they do not run (an import error), or None once warm."""
        ...

    async def stop(self, version: TypeVersion) -> None: ...

    def rest(self, version: TypeVersion) -> None:
        """``version`` is not its type's default: its workers may go until ``use`` makes it the default."""
        ...

    async def test(self, version: TypeVersion, log_bucket: Optional[str]) -> Tuple[bool, str]:
        """Run the contract suite on ``version``'s handlers: whether it passed, and the TypeTestsStatusDescription (the failed tests)."""
        ...

    def use(self, kind: str, type_name: str, version: Optional[TypeVersion]) -> None:
        """``version`` is the one stacks and Cloud Control use for ``type_name`` from now on (None: the type is gone)."""
        ...


def type_arn(region: str, account_id: str, kind: str, type_name: str) -> str:
    return f"arn:aws:cloudformation:{region}:{account_id}:type/{kind.lower()}/{type_name.replace('::', '-')}"


class TypeRegistry:
    def __init__(
        self, handlers: Handlers, folder: Callable[[], Path], region: str, account_id: str, kept: Optional[KeptRegistry] = None,
        on_note: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.handlers = handlers
        self.kept = kept  # with --state: each change is written there, and read back by the next serve (``restore``)
        self.on_note = on_note
        self.folder = folder  # made on first use: each registration's package is unpacked in a folder of its own below it
        self.region = region
        self.account_id = account_id
        self.types: Dict[Tuple[str, str], RegisteredType] = {}
        self.registrations: Dict[str, Registration] = {}
        self._running: Set["asyncio.Task[None]"] = set()
        self._registering: Dict[str, "asyncio.Task[None]"] = {}  # each registration's work, by token: what DescribeTypeRegistration waits on
        self.publisher_id: Optional[str] = None  # once RegisterPublisher is called
        self._by_client_token: Dict[str, Registration] = {}  # RegisterType's ClientRequestToken: one registration each
        self._restoring: Optional["asyncio.Future[None]"] = None
        # each SetTypeConfiguration the stacks accepted, by its ConfigurationArn: {"arn", "params" (the call's), "set" (when)}
        self.configurations: Dict[str, Record] = {}

    def arn(self, kind: str, type_name: str) -> str:
        return type_arn(self.region, self.account_id, kind, type_name)

    # -- kept across restarts (--state) --------------------------------------------------------

    def _changed(self) -> None:
        """Write the registry to ``--state`` (when serve has one); a file that cannot be written is warned about, the change stands."""
        if self.kept is None:
            return
        try:
            self.kept.save(
                [registered.record(self.folder()) for registered in self.types.values()],
                [registration_record(registration) for registration in self.registrations.values()],
                self.publisher_id,
                list(self.configurations.values()),
            )
        except KeptRegistryError as error:
            self._note(f"registry: not kept for the next serve: {error}")

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def restore_in_background(self, on_restored: Callable[[List[RegisteredType]], None]) -> None:
        """``restore`` while serve starts; the API's calls wait for it (``ready``), ``on_restored`` is told what was read back."""
        async def restoring() -> None:
            try:
                restored = await self.restore()
            except (KeyError, TypeError, ValueError) as error:  # a record this cfnrun cannot read: serve goes on, with an empty registry
                for registered in self.types.values():
                    for version in registered.live():
                        await self.handlers.stop(version)
                self.types.clear()
                self.registrations.clear()
                self.configurations.clear()
                self._note(f"registry: {self.kept.path if self.kept else 'the state folder'} cannot be read back ({type(error).__name__}: "
                           f"{error}); this serve's registrations are not kept")
                if self.kept is not None:
                    self.kept.close()
                self.kept = None  # what is there is left as it is
                return
            on_restored(restored)

        self._restoring = asyncio.ensure_future(restoring())
        self._running.add(self._restoring)
        self._restoring.add_done_callback(self._running.discard)

    async def ready(self) -> None:
        """Once what ``--state`` kept is read back (at once without it; a file that cannot be read leaves the registry empty, said)."""
        if self._restoring is not None:
            await asyncio.shield(self._restoring)

    async def restore(self) -> List[RegisteredType]:
        """Read back what an earlier serve with the same ``--state`` kept and run each type's default version again; the types read.

        A live version whose folder is gone is read back deregistered, and said so."""
        if self.kept is None:
            return []
        try:
            kept = self.kept.load()  # on the loop's thread, as each save is: one connection
        except KeptRegistryError as error:  # the file is left as it is for the user to look at: nothing is written over it
            self.kept = None
            self._note(f"registry: {error}; this serve's registrations are not kept")
            return []
        self.publisher_id = kept.publisher_id
        self.configurations = {record["arn"]: record for record in kept.configurations}  # set again on the stacks by the app
        for record in kept.registrations:
            registration = Registration(**record)
            if registration.status == IN_PROGRESS:  # serve stopped before it was done: nothing of it was kept
                registration.fail(STOPPED)
            self.registrations[registration.token] = registration
            if registration.client_token:
                self._by_client_token[registration.client_token] = registration
        restored: List[RegisteredType] = []
        for record in sorted(kept.types, key=lambda r: r.get("origin") is not None):  # published types before the types activated from them
            origin = self.types.get(tuple(record["origin"])) if record.get("origin") else None  # type: ignore[arg-type]
            registered = RegisteredType(
                record["kind"], record["type_name"], record["arn"], default_id=record.get("default_id"), numbered=int(record.get("numbered") or 0),
                public_arn=record.get("public_arn"), public_versions=list(record.get("public_versions") or []), origin=origin,
                auto_update=record.get("auto_update"),
            )
            for kept in record.get("versions") or []:
                version = TypeVersion.from_record(registered.kind, registered.type_name, kept, self.folder())
                registered.versions[version.version_id] = version
                if not version.deprecated and not version.package.root.is_dir():
                    version.deprecated = True
                    self._note(f"registry: {registered.type_name} version {version.version_id} is deregistered: its files in "
                               f"{version.package.root} are gone")
            self.types[(registered.kind, registered.type_name)] = registered
            restored.append(registered)
        for registered in restored:
            for version in registered.live():
                if version.kind != MODULE:
                    problem = await self.handlers.start(version)
                    if problem is not None:
                        self._note(f"registry: {registered.type_name} version {version.version_id} does not run: {problem}")
            if registered.default is not None and not registered.default.deprecated:
                self.handlers.use(registered.kind, registered.type_name, registered.default)
            for version in registered.live():
                if version.kind != MODULE and version is not registered.default:
                    self.handlers.rest(version)
        self._changed()
        return restored

    def configure(self, configuration_arn: str, params: Dict[str, Any]) -> None:
        """Keep a SetTypeConfiguration the stacks accepted (``params``: the call's), for BatchDescribeTypeConfigurations and the next serve."""
        self.configurations[configuration_arn] = {"arn": configuration_arn, "params": params, "set": moment(now())}
        self._changed()

    def forget_configuration(self, configuration_arn: str) -> None:
        if self.configurations.pop(configuration_arn, None) is not None:
            self._changed()

    # -- registering ---------------------------------------------------------------------------

    def _background(self, work: "Coroutine[Any, Any, None]") -> "asyncio.Task[None]":
        task = asyncio.ensure_future(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    def register(
        self, kind: str, type_name: str, url: str, logging_config: Optional[Dict[str, Any]] = None, role: Optional[str] = None,
        client_token: Optional[str] = None,
    ) -> Registration:
        """Start registering the package at ``url`` as a new version of ``type_name``; its progress is the returned registration's.

        A ClientRequestToken seen before is the same request sent again: its registration, not a second version.
        """
        if client_token:
            earlier = self._by_client_token.get(client_token)
            if earlier is not None:
                if (earlier.kind, earlier.type_name) != (kind, type_name):
                    raise RegistryError(f"ClientRequestToken '{client_token}' was used to register {earlier.type_name}: use a new token.")
                return earlier
        self._require_room(kind, type_name)
        registration = Registration(str(uuid.uuid4()), kind, type_name, self.arn(kind, type_name), client_token=client_token or None)
        self.registrations[registration.token] = registration
        if client_token:
            self._by_client_token[client_token] = registration
        self._changed()  # its token is known to the next serve, FAILED if this one stops before it is done
        running = self._registering[registration.token] = self._background(self._register(registration, url, logging_config, role))
        running.add_done_callback(lambda _: self._registering.pop(registration.token, None))
        return registration

    def _require_room(self, kind: str, type_name: str) -> None:
        """Refuse a registration that would take ``type_name`` past its kind's VERSION_LIMITS: its live versions and the
        registrations of it still in progress (each would be a version) count."""
        registered = self.types.get((kind, type_name))
        live = len(registered.live()) if registered is not None else 0
        running = sum(1 for r in self.registrations.values() if (r.kind, r.type_name, r.status) == (kind, type_name, IN_PROGRESS))
        limit = VERSION_LIMITS[kind]
        if live + running >= limit:
            raise RegistryError(
                f"The {KIND_NOUNS[kind]} '{type_name}' has reached the maximum of {limit} registered versions"
                f"{f' ({running} of them registering)' if running else ''}. "
                "Deregister the versions you no longer use (DeregisterType with a VersionId) before registering another."
            )

    async def settled(self, token: str, within: float) -> None:
        """Once the registration ``token`` is no longer IN_PROGRESS, or ``within`` seconds have passed (it goes on either way)."""
        running = self._registering.get(token)
        if running is not None and within > 0:
            await asyncio.wait({running}, timeout=within)

    async def _register(self, registration: Registration, url: str, logging_config: Optional[Dict[str, Any]], role: Optional[str]) -> None:
        version: Optional[TypeVersion] = None
        root = Path(registration.token)  # until the folder is known: nothing there to remove
        try:
            data = await self.handlers.fetch(url)
            root = self.folder() / registration.type_name.replace("::", "-") / registration.token
            package = await asyncio.to_thread(unpack, data, root, registration.kind, registration.type_name)
            _require_valid_schema(package)
            version = TypeVersion(package, "", "", now(), logging_config, role)
            if registration.kind == MODULE:
                version.fragment = _module_fragment(package)
            if registration.kind != MODULE:
                problem = await self.handlers.start(version)
                if problem is not None:
                    raise PackageError(problem)
        except BaseException as error:  # FAILED once nothing of it is left: its workers stopped, its files removed
            if version is not None:
                await self.handlers.stop(version)
            if root.is_absolute():
                await asyncio.to_thread(shutil.rmtree, root, True)
            if isinstance(error, PackageError):
                registration.fail(str(error))
            elif isinstance(error, OSError):
                registration.fail(f"The package cannot be unpacked: {error}")
            else:
                registration.fail(STOPPED)
            if isinstance(error, (PackageError, OSError)):
                self._changed()
                return
            raise
        earlier = self.types.get((registration.kind, registration.type_name))
        registered = earlier
        if registered is None or not registered.live():  # new, or every version deregistered: registered afresh, numbers go on
            registered = self.types[(registration.kind, registration.type_name)] = RegisteredType(
                registration.kind, registration.type_name, registration.type_arn, numbered=earlier.numbered if earlier else 0
            )
        registered.numbered += 1
        version.version_id = f"{registered.numbered:08d}"
        version.arn = f"{registered.arn}/{version.version_id}"
        registered.versions[version.version_id] = version
        if registered.default_id is None:
            self._make_default(registered, version)
        elif version.kind != MODULE:
            self.handlers.rest(version)  # its handlers load (checked above); only the default version's keep warm workers
        registration.status, registration.description, registration.version_arn = COMPLETE, DEPLOYED, version.arn
        self._changed()

    def registration(self, token: str) -> Registration:
        found = self.registrations.get(token)
        if found is None:
            raise RegistryError(f"Registration token '{token}' not found")
        return found

    # -- finding -------------------------------------------------------------------------------

    def find(self, kind: Optional[str], type_name: Optional[str], arn: Optional[str], version_id: Optional[str] = None) -> Tuple[RegisteredType, Optional[str]]:
        """The type named by Type and TypeName, or by Arn (a type's or a version's), and the version the call names (None: none named)."""
        if arn:
            for registered in self.types.values():
                if arn == registered.arn:
                    return registered, version_id
                if arn.startswith(registered.arn + "/") and arn.rsplit("/", 1)[1] in registered.versions:
                    return registered, arn.rsplit("/", 1)[1]
            raise RegistryError(f"The type '{arn}' cannot be found.", "TypeNotFoundException")
        if not kind or not type_name:
            raise RegistryError("You must specify either TypeName and Type, or Arn.", "ValidationError")
        named = self.types.get((kind, type_name))
        if named is None:
            raise RegistryError(f"The type '{type_name}' cannot be found.", "TypeNotFoundException")
        return named, version_id

    def version(self, registered: RegisteredType, version_id: Optional[str]) -> TypeVersion:
        """The version ``version_id`` of ``registered`` (its default when None)."""
        found = registered.versions.get(version_id) if version_id else registered.default
        if found is None:
            if version_id:
                raise RegistryError(f"The type '{registered.type_name}' with version '{version_id}' cannot be found.", "TypeNotFoundException")
            found = max(registered.versions.values(), key=lambda v: v.version_id)  # every version deregistered: the last one, DEPRECATED
        return found

    # -- changing ------------------------------------------------------------------------------

    def set_default(self, registered: RegisteredType, version_id: Optional[str]) -> None:
        if not version_id:
            raise RegistryError("VersionId is required (or an Arn of a type version).", "ValidationError")
        version = self.version(registered, version_id)
        if version.deprecated:
            raise RegistryError(f"Version '{version_id}' of type '{registered.type_name}' is deprecated and cannot be set as the default version.")
        self._make_default(registered, version)
        self._changed()

    def _make_default(self, registered: RegisteredType, version: TypeVersion) -> None:
        registered.default_id = version.version_id
        self.handlers.use(registered.kind, registered.type_name, version)

    async def deregister(self, registered: RegisteredType, version_id: Optional[str]) -> None:
        """Deregister one version that is not the default, or the type when it has one live version left. The default version is
        refused by its VersionId even when it is the last (and once deregistered), as the service refuses it: AWS's own
        AWS::CloudFormation::ResourceVersion handler deregisters the type for its default version, terraform-provider-aws does
        when this refusal answers the last LIVE version."""
        if registered.origin is not None:
            raise RegistryError(f"Type '{registered.type_name}' is an activated public type: deactivate it with DeactivateType.")
        live = registered.live()
        if version_id is None:
            if len(live) > 1:
                raise RegistryError(
                    f"Type '{registered.type_name}' has {len(live)} registered versions: deregister each version that is not the default "
                    "first (VersionId), then the type"
                )
            targets = live
        else:
            version = self.version(registered, version_id)
            if version.version_id == registered.default_id:  # the service's words, as users quote them
                raise RegistryError(
                    f"Version '{version.version_id}' is the default version and cannot be deregistered. "
                    f"Deregister the {KIND_NOUNS[registered.kind]} '{registered.type_name}' instead."
                )
            if version.deprecated:
                raise RegistryError(f"Version '{version_id}' of type '{registered.type_name}' is already deregistered.", "TypeNotFoundException")
            targets = [version]
        for version in targets:
            version.deprecated = True
            if version.version_id == registered.default_id:
                self.handlers.use(registered.kind, registered.type_name, None)
            await self.handlers.stop(version)
            await asyncio.to_thread(shutil.rmtree, version.package.root, True)
        if not registered.live():  # the type is deregistered: its configuration goes with it (inferred, as DeactivateType's does)
            self._forget_configurations(registered)
        self._changed()

    # -- testing and publishing ----------------------------------------------------------------

    def test(self, registered: RegisteredType, version_id: Optional[str], log_bucket: Optional[str]) -> TypeVersion:
        """Start the contract suite on a version (the default when none is named), or for a module the check of its model; its
        TypeTestsStatus says how it went."""
        version = self.version(registered, version_id)
        if version.deprecated:
            raise RegistryError(f"Version '{version.version_id}' of type '{registered.type_name}' is deregistered and cannot be tested.")
        if version.tests_status == IN_PROGRESS:
            raise RegistryError(f"Tests of version '{version.version_id}' of type '{registered.type_name}' are already in progress.")
        version.tests_status, version.tests_description = IN_PROGRESS, "The contract tests are in progress."
        self._background(self._test(version, log_bucket))
        return version

    async def _test(self, version: TypeVersion, log_bucket: Optional[str]) -> None:
        try:
            if version.kind == MODULE:  # the model: testing a module determines whether its model meets the requirements
                passed, description = await asyncio.to_thread(_test_module, version.package)
            else:
                passed, description = await self.handlers.test(version, log_bucket)
        except (CfnrunError, OSError) as error:
            passed, description = False, f"The contract tests could not run: {error}"
        except BaseException:
            version.tests_status, version.tests_description = FAILED, "The contract tests stopped: cfnrun serve stopped"
            raise
        version.tests_status, version.tests_description = ("PASSED" if passed else FAILED), description
        self._changed()

    def register_publisher(self) -> str:
        """This account's publisher id (the same on every call: one account, one publisher)."""
        if self.publisher_id is None:
            self.publisher_id = hashlib.sha1(f"cfnrun-publisher-{self.account_id}".encode()).hexdigest()  # noqa: S324 - an id, not a secret
            self._changed()
        return self.publisher_id

    async def publish(self, registered: RegisteredType, public_version: Optional[str]) -> str:
        """Publish the default version, once its tests PASSED; the public type's ARN. Each type activated from it with AutoUpdate
        then runs it, when its major version is the one that type runs (the model: major versions are updated by hand)."""
        if self.publisher_id is None:
            raise RegistryError("You must register as a publisher (RegisterPublisher) before you can publish an extension.")
        version = self.version(registered, None)
        if version.deprecated:
            raise RegistryError(f"Type '{registered.type_name}' is deregistered and cannot be published.")
        if version.tests_status != "PASSED":
            raise RegistryError(
                f"Version '{version.version_id}' of type '{registered.type_name}' cannot be published: its TypeTestsStatus is "
                f"{version.tests_status}. Test it with TestType and publish it once its tests have PASSED."
            )
        if public_version and not registered.public_versions:  # the model: a first publication is 1.0.0, no number may be given
            raise RegistryError("PublicVersionNumber can't be set for publishing a type for the first time")  # the service's words
        number = public_version or _next_public(registered.public_versions)
        if not SEMANTIC.match(number):
            raise RegistryError(f"PublicVersionNumber '{number}' is not MAJOR.MINOR.PATCH.", "ValidationError")
        if registered.public_versions and _semantic(number) <= _semantic(registered.public_versions[-1]):
            raise RegistryError(f"PublicVersionNumber '{number}' must be greater than the latest published version, {registered.public_versions[-1]}.")
        registered.public_versions.append(number)
        version.public_version = number
        registered.public_arn = (
            f"arn:aws:cloudformation:{self.region}::type/{registered.kind.lower()}/{self.publisher_id}/{registered.type_name.replace('::', '-')}"
        )
        self._changed()
        for activated in [t for t in self.types.values() if t.origin is registered and t.auto_update and t.default is not None]:
            try:
                await self._run_latest_public(activated, registered, _major(activated.default))
            except RegistryError as error:
                self._note(f"registry: {activated.type_name} is not updated to {number}: {error}")
        self._changed()
        return registered.public_arn

    # -- activating published types -------------------------------------------------------------

    def published(self, kind: Optional[str], public_arn: Optional[str], publisher_id: Optional[str], type_name: Optional[str]) -> RegisteredType:
        """The published type a PublicTypeArn names, or PublisherId and TypeName."""
        for registered in self.types.values():
            if registered.public_arn is None or (kind and registered.kind != kind):
                continue
            if registered.public_arn == public_arn or (publisher_id == self.publisher_id and type_name == registered.type_name):
                return registered
        raise RegistryError(f"The type '{public_arn or type_name}' cannot be found among the published types.", "TypeNotFoundException")

    async def activate(
        self, published: RegisteredType, alias: Optional[str], auto_update: Optional[bool], version_bump: Optional[str] = None,
    ) -> RegisteredType:
        """Activate the latest public version of ``published`` as ``alias`` (its own name when none): a type of this account, on
        workers of its own, that stacks use under that name. The same call on a type activated from it before updates that type
        (the model's VersionBump and AutoUpdate): a VersionBump runs the latest public version, AutoUpdate is set when given."""
        name = alias or published.type_name
        taken = self.types.get((published.kind, name))
        if taken is not None and taken.live():
            if taken.origin is not published:
                raise RegistryError(f"Type '{name}' already exists in this account and Region: choose another TypeNameAlias.")
            if auto_update is not None:
                taken.auto_update = auto_update
            if version_bump:  # MINOR: the latest of the major version it runs; MAJOR: the latest
                await self._run_latest_public(taken, published, _major(taken.default) if version_bump == "MINOR" else None)
            self._changed()
            return taken
        activated = RegisteredType(  # AutoUpdate is true unless the call says otherwise (the model's default)
            published.kind, name, self.arn(published.kind, name), origin=published, auto_update=True if auto_update is None else auto_update,
        )
        await self._run_latest_public(activated, published)
        self.types[(published.kind, name)] = activated
        self._changed()
        return activated

    async def _run_latest_public(self, activated: RegisteredType, origin: RegisteredType, major: Optional[int] = None) -> None:
        """The latest public version of ``origin`` (the published type ``activated`` comes from; of ``major`` when given), as
        ``activated``'s next version: started on workers of its own and made its default; the version it replaces is stopped (its
        files are the published version's: they stay). Nothing changes when it runs that one already."""
        name = activated.type_name
        public = max(
            (v for v in origin.versions.values() if v.public_version and major in (None, _semantic(v.public_version)[0])),
            key=lambda v: _semantic(v.public_version or "0.0.0"), default=None,
        )
        if public is None:  # no public version of that major left
            return
        replaced = activated.default
        if replaced is not None and replaced.public_version and _semantic(public.public_version or "") <= _semantic(replaced.public_version):
            return  # it runs that one, or a later one, already
        if replaced is not None and replaced.package.root == public.package.root:  # the same registered version (published again)
            replaced.public_version = public.public_version
            return
        package = dataclasses.replace(public.package, type_name=name, schema={**public.package.schema, "typeName": name})
        version_id = f"{activated.numbered + 1:08d}"
        version = TypeVersion(
            package, version_id, f"{activated.arn}/{version_id}", now(), tests_status=public.tests_status, fragment=public.fragment,
        )
        version.public_version = public.public_version
        problem = await self.handlers.start(version) if version.kind != MODULE else None  # a module has no handlers: its fragment
        if problem is not None:
            await self.handlers.stop(version)
            raise RegistryError(f"Type '{name}' cannot be activated: {problem}")
        activated.numbered += 1
        activated.versions[version_id] = version
        self._make_default(activated, version)
        if replaced is not None:
            replaced.deprecated = True
            await self.handlers.stop(replaced)

    async def deactivate(self, registered: RegisteredType) -> None:
        if registered.origin is None:
            raise RegistryError(f"Type '{registered.type_name}' is not an activated public type: deregister it with DeregisterType.")
        for version in registered.live():
            version.deprecated = True
            self.handlers.use(registered.kind, registered.type_name, None)
            await self.handlers.stop(version)  # its files are the published version's: they stay
        del self.types[(registered.kind, registered.type_name)]
        self._forget_configurations(registered)  # the model: deactivating deletes its configuration
        self._changed()

    def _forget_configurations(self, registered: RegisteredType) -> None:
        """Forget each configuration of a type that is gone (the stacks dropped theirs with it: ``Handlers.use``)."""
        configured = registered.arn.replace(":type/", ":type-configuration/", 1) + "/"
        for configuration_arn in [arn for arn in self.configurations if arn.startswith(configured)]:
            self.forget_configuration(configuration_arn)

    async def close(self) -> None:
        """Serve stops: registrations still running end (FAILED), every version's workers stop."""
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for registered in self.types.values():
            for version in registered.live():
                await self.handlers.stop(version)
                if registered.origin is None and self.kept is None:  # without --state registrations last as long as serve: their files
                    await asyncio.to_thread(shutil.rmtree, version.package.root, True)  # go with it (the type's history stays)
        if self.kept is not None:
            self.kept.close()


SEMANTIC = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def _semantic(number: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def _major(version: Optional[TypeVersion]) -> Optional[int]:
    """The major version of the public version ``version`` runs (None: any)."""
    return _semantic(version.public_version)[0] if version is not None and version.public_version else None


def _next_public(published: List[str]) -> str:
    """The PublicVersionNumber when none is given: 1.0.0 first, then the latest's minor version plus one (inferred)."""
    if not published:
        return "1.0.0"
    major, minor, _ = _semantic(published[-1])
    return f"{major}.{minor + 1}.0"


def _module_fragment(package: Unpacked) -> Dict[str, Any]:
    """A module package's one fragment under ``fragments/``, checked by the rules a module project is (``cfnrun validate``)."""
    from cfnrun.model.errors import ProjectError
    from cfnrun.model.module_fragment import read_module_fragment

    try:
        return dict(read_module_fragment(package.root).document)
    except ProjectError as error:
        raise PackageError(f"The module's fragment cannot be registered: {error}") from None


def _test_module(package: Unpacked) -> Tuple[bool, str]:
    """TestType of a module version: its fragment checked again by the module rules (what its registration checked)."""
    try:
        _module_fragment(package)
    except PackageError as error:
        return False, str(error)
    return True, "The module's fragment meets the module rules."


def _require_valid_schema(package: Unpacked) -> None:
    """A schema that fails the meta-schema fails the registration, naming each problem."""
    if package.kind == MODULE:
        return
    from cfnrun.model.schema_check import check_schema  # jsonschema: loaded by the first registration, not as serve starts

    problems = [p for p in check_schema(ResourceSchema(package.schema), hook=package.kind == HOOK) if p.severity == "error"]
    if problems:
        listed = "; ".join(problem.line() for problem in problems)
        raise PackageError(f"The schema of {package.type_name} is not valid against the {package.kind.lower()} meta-schema: {listed}")
