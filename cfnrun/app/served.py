"""What one ``cfnrun serve`` serves: its providers and its templates of plain functions, and how a name finds one.

Each provider project (a resource type or a hook) and each ``--functions`` template is a source with
its own ``FunctionRegistry``: its own warm pools, reload and schema. ``Served`` holds them all and is
the one lookup the APIs on serve's port use, and the stack engine too: the served type names, a
type's project and registry (to run an ``Operation`` on ``CurrentCode``), a function by name or ARN
(a ServiceToken), the one way a function is invoked with its time limit, and where the handlers'
AWS calls go.

Naming (the serve guide's "Several providers" section says it for users): with one provider, its
functions answer to their own names (``TypeFunction``, ``TestEntrypoint``, template logical ids
and FunctionNames, ARNs of those), as when serve served one project only. A provider's function also answers, always, to its type
name with ``::`` made ``-``, a ``-`` and its name: ``Sample-Note-Resource-TypeFunction`` (the
characters Lambda allows in a function name). A bare name two providers share is ambiguous: the
call is refused with the unambiguous names. A plain function answers to its logical id and
FunctionName, which must be unique among everything served, as in one AWS account and region.
"""
from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Awaitable, Callable, Dict, List, Optional, Protocol, Sequence, Tuple

from cfnrun.model.budgets import Budget, Budgets
from cfnrun.model.action import Action
from cfnrun.model.errors import CfnrunError, ProjectError
from cfnrun.model.function_template import FunctionTemplate
from cfnrun.model.project import Project
from cfnrun.model.template import FunctionSource, called_name
from cfnrun.runtime.outcome import InvocationOutcome
from cfnrun.runtime.process import WorkerInitError
from cfnrun.runtime.registry import Adopt, FunctionRegistry, ServedFunction
from cfnrun.runtime.spec import RuntimeSettings

Warming = Dict[str, "asyncio.Task[Optional[WorkerInitError]]"]
MAX_NAMES_REMEMBERED = 256  # names looked up and remembered, at most (a client may call any number of unknown names)


def qualified_name(type_name: str, function_name: str) -> str:
    """A provider's function's unambiguous name: ``Sample::Note::Resource`` and ``TypeFunction`` → ``Sample-Note-Resource-TypeFunction``."""
    return f"{type_name.replace('::', '-')}-{function_name}"


class UnknownFunction(CfnrunError):
    """No served function has this name, or several do (``candidates``: their unambiguous names)."""

    def __init__(self, name: str, message: str, candidates: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.candidates = list(candidates)


class UnknownType(CfnrunError):
    """No served provider has this type name."""


class CurrentCode:
    """An ``Operation``'s target: each invocation goes to the provider's type function as it is now (after a reload, the new code)."""

    def __init__(self, registry: FunctionRegistry[Project]) -> None:
        self.registry = registry

    async def invoke(self, event: Any, timeout_s: float, request_id: Optional[str] = None) -> InvocationOutcome:
        pool = self.registry.pool(self.registry.project.type_function())
        return await pool.invoke(event, timeout_s, request_id)


class RegisteredTypes(Protocol):
    """Types served from the registry on serve (RegisterType; ``app/registered_types.py``): each type's default version."""

    def provider(self, type_name: str) -> Optional[FunctionRegistry[Project]]: ...

    def type_names(self) -> List[str]:
        """The resource types registered (hooks and modules are not among them)."""
        ...

    async def close(self) -> None: ...


class Served:
    """Every source one serve serves, each with its registry; the lookup for a type name or a function name.

    ``providers``: the provider projects, the current project first when there is one;
    ``templates``: the ``--functions`` templates. ``budgets`` cut every call (``limit``).
    """

    def __init__(
        self,
        providers: Sequence[Project],
        templates: Sequence[FunctionTemplate],
        settings: RuntimeSettings,
        budgets: Budgets,
        on_note: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.settings = settings  # region, account_id, aws_endpoint: what the handlers are started with
        self.budgets = budgets
        next_port = settings.debug_port
        registries: List[FunctionRegistry[Any]] = []
        sources: List[FunctionSource] = [*providers, *templates]
        for source in sources:  # one debugger port per function across every source, in order
            registries.append(FunctionRegistry(source, dataclasses.replace(settings, debug_port=next_port), on_note=on_note))
            if next_port is not None:
                next_port += len(source.functions)
        self._providers: Tuple[FunctionRegistry[Project], ...] = tuple(registries[: len(providers)])
        self._templates: Tuple[FunctionRegistry[FunctionTemplate], ...] = tuple(registries[len(providers):])
        self._limits: Dict[Tuple[str, Optional[float], Optional[Action]], Budget] = {}
        self._found: Dict[str, ServedFunction] = {}  # by the name called, while what is served stays as it was (``_found_at``)
        self._sources_changed = 0  # templates served or no longer served
        self._found_at = self._changes()
        self.registered: Optional[RegisteredTypes] = None  # the registry's types, after the served providers' (a provider wins)

    @property
    def providers(self) -> Tuple[FunctionRegistry[Project], ...]:
        """The providers' registries, the current project's first."""
        return self._providers

    @property
    def templates(self) -> Tuple[FunctionRegistry[FunctionTemplate], ...]:
        """The registries of the ``--functions`` templates, then of the functions stacks serve (``serve_template``)."""
        return self._templates

    @property
    def registries(self) -> List[FunctionRegistry[Any]]:
        return [*self.providers, *self.templates]

    def calls(self) -> int:
        """Calls on every served function now, running or queued."""
        return sum(registry.calls() for registry in self.registries)

    def serve_template(self, registry: FunctionRegistry[FunctionTemplate]) -> None:
        """Serve ``registry``'s functions from now on (a stack's AWS::Lambda::Function): ServiceTokens, the Invoke API."""
        self._templates = (*self._templates, registry)
        self._sources_changed += 1

    def stop_serving_template(self, registry: FunctionRegistry[FunctionTemplate]) -> None:
        """No longer serve ``registry``'s functions (it is not closed here)."""
        self._templates = tuple(template for template in self._templates if template is not registry)
        self._sources_changed += 1

    # -- where the handlers' AWS calls go ---------------------------------------------------------

    @property
    def region(self) -> str:
        return self.settings.region

    @property
    def account_id(self) -> str:
        return self.settings.account_id

    @property
    def aws_endpoint(self) -> Optional[str]:
        """The URL of the handlers' AWS calls (``--aws-endpoint``, the ``--moto`` server); None: AWS itself."""
        return self.settings.aws_endpoint

    # -- types -------------------------------------------------------------------------------------

    def type_names(self) -> List[str]:
        """The resource types served (Cloud Control's, a stack's); hooks are not among them."""
        names = [registry.project.type_name for registry in self.providers if not registry.project.is_hook]
        return names + [name for name in (self.registered.type_names() if self.registered else ()) if name not in names]

    def provider(self, type_name: str) -> FunctionRegistry[Project]:
        """The registry of the provider of ``type_name`` (a resource type or a hook); its ``project`` is the project as it is now."""
        for registry in self.providers:
            if registry.project.type_name == type_name:
                return registry
        registered = self.registered.provider(type_name) if self.registered is not None else None
        if registered is not None:
            return registered
        served = ", ".join(self.type_names()) or "no resource type"
        raise UnknownType(f"The type '{type_name}' cannot be found: this endpoint serves {served}")

    def code(self, type_name: str) -> CurrentCode:
        """What an ``Operation`` on ``type_name`` invokes: its provider's type function, as the code is now."""
        return CurrentCode(self.provider(type_name))

    # -- functions ---------------------------------------------------------------------------------

    def shown_name(self, registry: FunctionRegistry[Any], name: str) -> str:
        """The name serve shows for function ``name`` of ``registry``: qualified when several providers are served."""
        if len(self.providers) > 1 and registry in self.providers:
            return qualified_name(registry.project.type_name, name)
        return name

    def function(self, name: str) -> ServedFunction:
        """The function an Invoke call (or a ServiceToken) names: a name, a qualified name or an ARN; UnknownFunction otherwise.

        Found once per name while what is served stays the same (the same registries, each with the same project:
        a reload, a registration or a stack's functions change that, and each change is counted, ``_changes``);
        every call names its function, so the search is not redone each time, nor is what is served compared.
        """
        changes = self._changes()
        if changes != self._found_at:
            self._found.clear()
            self._found_at = changes
        function = self._found.get(name)
        if function is None:
            function = self._find(name)
            if len(self._found) >= MAX_NAMES_REMEMBERED:
                self._found.clear()
            self._found[name] = function
        return function

    def _changes(self) -> int:
        """Grows with each change of what is served: a template served or no longer, any registry's project set."""
        return self._sources_changed + FunctionRegistry.projects_set

    def _find(self, name: str) -> ServedFunction:
        bare = called_name(name)
        matches: List[ServedFunction] = []
        for registry in self.providers:
            project = registry.project
            for spec in project.functions.values():
                if bare in (qualified_name(project.type_name, each) for each in spec.names):
                    return ServedFunction(qualified_name(project.type_name, spec.logical_id), spec, registry, project.type_name)
                if bare in spec.names:
                    matches.append(ServedFunction(self.shown_name(registry, spec.logical_id), spec, registry, project.type_name))
        for template in self.templates:
            plain = template.project.find_function(bare)
            if plain is not None:
                matches.append(ServedFunction(plain.logical_id, plain, template))
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise UnknownFunction(name, f"Function not found: {name}. Served functions: {', '.join(self.function_names()) or 'none'}")
        candidates = [match.name for match in matches]
        raise UnknownFunction(
            name, f"Function name {name} is ambiguous: {len(matches)} providers have it. Call one of: {', '.join(candidates)}", candidates
        )

    def function_names(self) -> List[str]:
        """Every served function's name, unambiguous (what a not-found answer lists)."""
        return [self.shown_name(registry, name) for registry in self.registries for name in registry.project.function_names()]

    def function_arn(self, function: ServedFunction) -> str:
        """The ARN a ServiceToken names ``function`` by (``function`` answers to it)."""
        return f"arn:aws:lambda:{self.region}:{self.account_id}:function:{function.name}"

    def limit(self, function: ServedFunction, action: Optional[Action]) -> Budget:
        """A call's time limit: the function's Timeout, and for a known handler action the contract budget."""
        key = (function.spec.logical_id, function.spec.timeout_s, action)
        limit = self._limits.get(key)
        if limit is None:
            limit = self._limits[key] = self.budgets.call(action, function.spec.timeout_s)
        return limit

    def invoke(
        self, function: ServedFunction, event: Any, limit: Optional[Budget] = None, request_id: Optional[str] = None,
        event_json: Optional[bytes] = None, within: Optional[Budget] = None,
    ) -> Awaitable[InvocationOutcome]:
        """Call ``function`` with ``event`` on its warm pool, cut at its ``limit``: the Invoke API's calls and the stack engine's alike.

        ``limit``: ``limit(function, action)`` of the call's action, which the caller has already (an Invoke call's);
        None: ``limit(function, None)``, the function's Timeout. ``within``: a tighter limit the caller waits no longer
        than (a Lambda hook's 30 s), when it is tighter.
        The pool's call itself, to await (not a coroutine of its own: one frame less each time the call resumes).
        """
        seconds = (limit if limit is not None else self.limit(function, None)).seconds
        if within is not None:
            seconds = min(seconds, within.seconds)
        return function.pool().invoke(event, seconds, request_id, event_json)

    # -- life --------------------------------------------------------------------------------------

    def warm_each(self, adopt: Optional[Adopt] = None, test_entrypoints: bool = True) -> Warming:
        """Start each source's first worker (``FunctionRegistry.warm_each``); the tasks by the name the console shows.

        ``adopt`` (the early start's worker) goes to the first source, the current project's.
        ``test_entrypoints=False``: a provider's TestEntrypoint, which only ``cfn test`` calls and no stack
        does, gets its worker at its first call (``stack test`` runs stacks only).
        """
        warming: Warming = {}
        for index, registry in enumerate(self.registries):
            skip = () if test_entrypoints or registry not in self.providers else _test_entrypoint(registry.project)
            for name, task in registry.warm_each(adopt=adopt if index == 0 else None, skip=skip).items():
                warming[self.shown_name(registry, name)] = task
        return warming

    def handlers(self) -> Dict[str, str]:
        """Each function's handler, by the name ``warm_each`` gives it."""
        return {self.shown_name(registry, name): spec.handler for registry in self.registries for name, spec in registry.project.functions.items()}

    def keep_spares_when_warm(self) -> None:
        for registry in self.registries:
            registry.keep_spares_when_warm()

    async def close(self) -> None:
        await asyncio.gather(*(registry.close() for registry in self.registries), *([self.registered.close()] if self.registered else []))


def _test_entrypoint(project: Project) -> Tuple[str, ...]:
    """The provider's TestEntrypoint function, where it has one apart from the function stacks call."""
    try:
        test, called = project.test_function(), project.type_function()
    except ProjectError:
        return ()
    return (test.logical_id,) if test.logical_id != called.logical_id else ()


def check_unique(providers: Sequence[Project], templates: Sequence[FunctionTemplate]) -> None:
    """CfnrunError when two providers serve one type, or a plain function's name is taken (Lambda's names are unique)."""
    seen: Dict[str, Project] = {}
    for project in providers:
        other = seen.setdefault(project.type_name, project)
        if other is not project:
            raise CfnrunError(f"two providers serve {project.type_name}: {other.root} and {project.root}; serve one of them")
    taken: Dict[str, str] = {}
    for project in providers:
        for name in project.function_names():
            taken.setdefault(name, f"provider {project.type_name} ({project.root})")
            taken[qualified_name(project.type_name, name)] = f"provider {project.type_name} ({project.root})"
    for template in templates:
        for name in template.function_names():
            if name in taken:
                raise CfnrunError(
                    f"{template.path}: function name {name} is also served by {taken[name]}; "
                    "rename it (Lambda function names are unique in an account and region)"
                )
            taken[name] = f"--functions {template.path}"
