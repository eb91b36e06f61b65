"""``cfnrun test``: cloudformation-cli's contract suite against an embedded cfnrun endpoint.

No SAM, no Docker, and by default no AWS account: cfn's STS calls go to the
server's stand-in, and placeholder credentials stand in for real ones.
"""
from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Counter, List, Optional, Tuple

from cfnrun.contract.checker import ContractMode
from cfnrun.invoker.operation import UNHASHABLE_SET_HINT
from cfnrun.model.endings import PAGINATION_LOOP_HINT
from cfnrun.model.failure_cause import failure_cause
from cfnrun.model.errors import CfnrunError
from cfnrun.model.local_state import state_folder
from cfnrun.model.hook_targets import TARGET_SCHEMAS_FOLDER, undescribed_targets
from cfnrun.model.project import Project
from cfnrun.ui.console import Console
from cfnrun.app.contract_results import MAX_SUMMARY_LINES, RESULTS_FILE, failed_tests
from cfnrun.app.loaded_objects import keep_what_loaded
from cfnrun.app.serve import Sources, aws_calls_routed, start_server
from cfnrun.app.serve_settings import ServeSettings
from cfnrun.app.suite_process import SuiteProcess
from cfnrun.stacks.store import StackError, StackStore
from cfnrun.stacks.template.errors import TemplateError


CFN_TESTS_FAILED = "rpdk.core.exceptions.SysExitRecommendedError"  # what cfn logs when tests failed, not a crash
CFN_LOG = "rpdk.log"  # where cfn writes its own traceback when it stops on an unhandled exception


@dataclass(frozen=True)
class ContractSettings:
    serve: ServeSettings
    pytest_args: List[str] = field(default_factory=list)
    use_aws: bool = False  # real credentials and the real STS instead of the stand-ins
    log_file: str = "test.log"  # in the project's .cfnrun/ (local state, ignored by git)
    virtual_clock: bool = False  # skip the suite's CallbackDelaySeconds sleeps, still counting them
    cloudformation_endpoint: Optional[str] = None  # where the suite resolves {{Export}} inputs (default: the AWS endpoint)
    exports: Tuple[Tuple[str, str], ...] = ()  # --export: {{Export}} values resolved here, no ListExports call
    stacks: Tuple[Path, ...] = ()  # --stack: templates created as local stacks first; the suite's ListExports reads theirs


def require_known_language(project: Project) -> None:
    """cfn test loads the language plugin .rpdk-config names, and crashes with a KeyError on one it no longer has."""
    from importlib.metadata import entry_points

    try:
        language = json.loads((project.root / ".rpdk-config").read_text(encoding="utf-8")).get("language")
    except (OSError, ValueError, AttributeError):
        return  # the project loader has its own word on a missing or broken .rpdk-config
    known = sorted(point.name for point in entry_points().select(group="rpdk.v1.languages"))
    if language and known and language not in known:
        raise CfnrunError(
            f".rpdk-config says language {language!r}, which the installed cloudformation-cli plugins do not know "
            f"(they know {', '.join(known)}), so cfn test would stop with KeyError: {language!r}. Set \"language\" (and "
            "settings.language) in .rpdk-config to one of those: it only picks cfn's code generator; the handler still runs "
            "under --python"
        )


def require_project_targets(project: Project) -> None:
    """Offline, cfn test finds a hook's targets in the project or stops with an unhandled exception: say it first."""
    problems = undescribed_targets(project.root, project.schema)
    if problems:
        hint = (
            f"save each target's schema as {TARGET_SCHEMAS_FOLDER}/<name>.json (aws cloudformation describe-type --type RESOURCE "
            "--type-name AWS::S3::Bucket --query Schema --output text prints one), or run with --aws to let cfn fetch them"
        )
        raise CfnrunError(
            "cfnrun test reads a hook's target schemas from the project, never from the registry, and this one lacks some:\n"
            + "".join(f"  {problem}\n" for problem in problems) + hint
        )


async def run_contract_tests(project: Project, settings: ContractSettings, suite: SuiteProcess) -> int:
    """Start the endpoint, run ``cfn test`` against it in ``suite`` (started, importing cfn), stop; cfn test's exit status."""
    try:
        require_known_language(project)
        if project.is_hook and not settings.use_aws:
            require_project_targets(project)
        log_path = state_folder(project.root) / settings.log_file
        return await _run_suite(project, settings, log_path, suite)
    finally:
        await suite.abandon()  # unless it ran: it exits without running anything


async def _run_suite(project: Project, settings: ContractSettings, log_path: Path, suite: SuiteProcess) -> int:
    with open(log_path, "w", encoding="utf-8") as log:
        console = Console(log, color=False)
        with aws_calls_routed(replace(settings.serve, port=0, sts_standin=not settings.use_aws), console) as serve:
            if serve.runtime.aws_endpoint:
                print(f"cfnrun test: the handlers' AWS calls and the suite's export lookups go to {serve.runtime.aws_endpoint}", flush=True)
            server = await start_server(Sources.of(project), serve, console)
            try:
                parts = await server.loaded  # all of it before the suite: an unusable schema stops here
                keep_what_loaded()
                deployed = DependencyStacks(parts.stacks.store)
                problem = await deployed.create(settings.stacks)
                if problem is not None:
                    print(f"cfnrun test: {problem}", flush=True)
                    return 1
                command: List[str] = []  # cfn_offline's arguments
                if not settings.use_aws:
                    command += ["--sts-endpoint", server.url]
                    if project.is_hook:
                        command += ["--project-targets"]
                if settings.virtual_clock:
                    command += ["--virtual-clock"]
                for name, value in settings.exports:
                    command += ["--export", f"{name}={value}"]
                command += ["test", "--endpoint", server.url, "--region", serve.runtime.region]
                exports_at = server.url if settings.stacks else (settings.cloudformation_endpoint or serve.runtime.aws_endpoint)
                if exports_at and not settings.exports:
                    command += ["--cloudformation-endpoint-url", exports_at]  # {{Export}} inputs: ListExports
                results = state_folder(project.root) / RESULTS_FILE
                with contextlib.suppress(FileNotFoundError):
                    results.unlink()  # an earlier run's: never reported as this one's
                command += ["--", f"--junitxml={results}", *settings.pytest_args]
                print(f"cfnrun test: {project.type_name} against {server.url}; handler output in {log_path}", flush=True)
                crash_log = project.root / CFN_LOG
                logged_before = crash_log.stat().st_size if crash_log.exists() else 0
                status = await suite.run(command)
                if status != 0:
                    for line in cfn_crash(crash_log, logged_before):
                        print(line, flush=True)
                left = await deployed.delete()
                if left:
                    print(f"cfnrun test: {left}", flush=True)
            finally:
                await server.stop(serve.shutdown_timeout_s)
            for line in failed_tests(results):
                print(line, flush=True)
            review = server.review
            if review is not None and review.failures_seen:
                print(failure_summary(review.failures_seen), flush=True)
            if serve.contract is not ContractMode.OFF and review is not None:
                print(violation_summary(review.violations_seen, log_path, review.requests_seen), flush=True)
            if server.loops_stopped:
                print(loop_summary(server.loops_stopped, log_path), flush=True)
            return status


class DependencyStacks:
    """``--stack``: the templates a suite's inputs depend on, as local stacks on the suite's own serve."""

    def __init__(self, store: StackStore) -> None:
        self.store = store
        self.names: List[str] = []

    async def create(self, templates: Tuple[Path, ...]) -> Optional[str]:
        """Create each in turn; what went wrong, or None once all are CREATE_COMPLETE."""
        for path in templates:
            name = re.sub(r"[^A-Za-z0-9-]", "-", f"cfnrun-test-{path.stem}")[:128]
            try:
                body = path.read_text(encoding="utf-8")
                self.store.create_stack(name, body, {}, {})
            except OSError as error:
                return f"--stack {path}: {error.strerror or error}"
            except (StackError, TemplateError) as error:
                return f"--stack {path}: {error}"
            self.names.append(name)
            stack = await self.store.settled(name)
            if stack.status != "CREATE_COMPLETE":
                failures = [f"{e.logical_id}: {e.reason}" for e in stack.events if e.status.endswith("_FAILED") and e.reason]
                return f"--stack {path}: {stack.status} ({'; '.join(failures) or stack.reason})"
            print(f"cfnrun test: stack {name} from {path}: CREATE_COMPLETE", flush=True)
        return None

    async def delete(self) -> Optional[str]:
        """Delete what ``create`` made, last first; what was left, or None."""
        left = []
        for name in reversed(self.names):
            self.store.delete_stack(name)
            stack = await self.store.settled(name)
            if stack.status != "DELETE_COMPLETE":
                left.append(f"stack {name} is {stack.status}: {stack.reason}")
        return "; ".join(left) or None


def loop_summary(stopped: int, log_path: Path) -> str:
    """cfn test's list tests fail on a paging loop serve stopped; say why here, not only in the log."""
    return (
        f"cfnrun test: serve stopped a LIST paging loop {stopped} time(s) (answered FAILED InternalFailure): the LIST "
        f"handler returned the nextToken it was called with, so cfn test's list tests fail. {PAGINATION_LOOP_HINT} "
        f"(details in {log_path})"
    )


def violation_summary(seen: "Counter[str]", log_path: Path, requests: Optional["Counter[str]"] = None) -> str:
    """What the handler contract checks found during the suite, which cfn test itself does not report: the answers'
    violations (the handler's to fix) apart from the requests' (the suite's own input, some of it wrong on purpose)."""
    if not seen:
        lines = ["cfnrun test: no contract violations in the handlers' answers"]
    else:
        lines = [f"cfnrun test: {sum(seen.values())} contract violation(s) in the handlers' answers (details in {log_path}):"]
        lines += [f"  {line}  ×{count}" for line, count in seen.most_common()]
    if requests:
        lines.append(
            f"cfnrun test: {sum(requests.values())} contract violation(s) in the suite's own requests, not the handlers' answers "
            "(cfn test sends some on purpose, e.g. request-has-identifier: an UPDATE of a resource it never created):"
        )
        lines += [f"  {line}  ×{count}" for line, count in requests.most_common()]
    return "\n".join(lines)


def failure_summary(failures: "Counter[str]") -> str:
    """The handlers' FAILED answers during the suite, each with what may fix it: the reasons behind failed tests."""
    lines = [f"cfnrun test: the handlers answered FAILED {sum(failures.values())} time(s):"]
    hints: List[str] = []
    for line, count in failures.most_common(MAX_SUMMARY_LINES):
        lines.append(f"  {line}  ×{count}")
        cause = failure_cause("", line, "cfnrun test")
        hint = UNHASHABLE_SET_HINT if "unhashable type: 'dict'" in line else (cause.hint if cause is not None else None)
        if hint and hint not in hints:
            hints.append(hint)
    return "\n".join(lines + [f"  hint: {hint}" for hint in hints])


def cfn_crash(log: Path, offset: int) -> List[str]:
    """cfn test's own "Unhandled exception" (in the project's rpdk.log, past ``offset``): the exception and a hint."""
    try:
        with open(log, encoding="utf-8", errors="replace") as written:
            written.seek(offset)
            added = written.read()
    except OSError:
        return []
    cause = failure_cause(added, "", "cfnrun test", who="the suite (its {{Export}} lookups, or cfn's own calls)")
    if cause is None or not cause.line or cause.line.startswith(CFN_TESTS_FAILED):
        return []  # cfn's way of saying some tests failed: the summary says which
    lines = [f"cfnrun test: cfn test itself stopped on {cause.line} (in {log})"]
    return lines + ([f"  hint: {cause.hint}"] if cause.hint else [])
