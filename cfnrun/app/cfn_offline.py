"""Run cloudformation-cli's ``cfn``, optionally offline and on a virtual clock.

``python -m cfnrun.app.cfn_offline [--sts-endpoint URL] [--virtual-clock] [--project-targets] [cfn arguments...]``,
or ``python -m cfnrun.app.cfn_offline --arguments-from FD``:

- ``--arguments-from FD``: all of the arguments below come later, as one JSON array on file
  descriptor FD, and cfn's modules load meanwhile: ``cfnrun test`` starts this process before its
  endpoint listens, whose address the arguments name. End of file instead: nothing runs, and the
  process exits 0. Until the arguments come, Ctrl-C is the caller's to handle. This process runs ``cfn test``
  alone: docker's SDK loads only if used, and ``cfn build-image`` is not offered (``_docker_when_used``).

- ``--sts-endpoint URL``: cloudformation-cli builds its STS clients with the fixed AWS
  address from ``rpdk.core.boto_helpers.get_service_endpoint``; this swaps that one
  lookup for the local endpoint, and supplies placeholder keys when the environment has no
  credentials (no AWS_ACCESS_KEY_ID, no AWS_PROFILE), since cloudformation-cli signs even
  the calls that go to the stand-in.
- ``--virtual-clock``: the contract suite sleeps every ``callbackDelaySeconds`` between
  the calls of an IN_PROGRESS operation. On the virtual clock those sleeps return at
  once and the time they would have taken is added to the suite's clock, so every
  duration the suite measures still includes them.
- ``--export NAME=VALUE`` (repeatable): the suite resolves ``{{NAME}}`` in its inputs with
  these values, instead of calling CloudFormation's ListExports.
- ``--project-targets``: for a hook, cfn test resolves wildcard ``targetNames`` with the
  registry's ListTypes and fetches every target schema the project lacks with
  DescribeType. This has it read both from the project only (``target-schemas/`` and
  ``target-info.json``), as ``cfn generate --local-only`` does, and an AWS::* target the
  project holds no schema for from the registry schema cfn-lint ships: no registry call, and
  a target neither describes is cfn's own clear error.

Always: the suite compares returned models with requested ones after the schema's
``propertyTransform``, which cfn test evaluates with jq (pyjq) but the service evaluates as
JSONata; here the suite evaluates it as JSONata too (``contract/property_transform.py``), so a
READ that returns the service's normal form is no false failure.

Always, too: cfn-lint (and sympy, which it imports) loads only if cfn lints a module's fragments,
never for ``cfn test``, which would otherwise spend about half of its start importing it
(``_cfn_lint_when_used``).

Then ``cfn`` runs unchanged, in this process, which ends as ``cfnrun`` does (``app/process_end.py``: exit
handlers run and output is flushed, but the modules are not freed one by one, ~1 s under load).
"""
from __future__ import annotations

import importlib
import os
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from cfnrun.app.loaded_objects import keep_what_loaded
from cfnrun.invoker.placeholder_keys import placeholder_variables
from cfnrun.model.hook_targets import bundled_target_schemas
from cfnrun.model.schema import ResourceSchema


class SuiteClock:
    """The contract suite's ``time``: real time plus the waits it skipped."""

    def __init__(self) -> None:
        self.skipped_s = 0.0
        self.waits = 0

    def time(self) -> float:
        return time.time() + self.skipped_s

    def sleep(self, seconds: float) -> None:
        self.skipped_s += max(0.0, float(seconds))
        self.waits += 1

    def install(self) -> None:
        from rpdk.core.contract import hook_client, resource_client

        suite_time = types.SimpleNamespace(time=self.time, sleep=self.sleep)
        for module in (resource_client, hook_client):
            module.time = suite_time  # type: ignore[attr-defined]
        resource_client.sleep = self.sleep  # type: ignore[attr-defined]

    def summary(self) -> str:
        return f"cfnrun test --virtual-clock: {self.waits} callback wait(s) skipped, {self.skipped_s:g} s counted but not waited"


def _point_sts_at(sts_endpoint: str) -> None:
    from rpdk.core import boto_helpers

    aws_endpoint: Callable[[str, str], str] = boto_helpers.get_service_endpoint

    def endpoint(service: str, region: str) -> str:
        return sts_endpoint if service == "sts" else aws_endpoint(service, region)

    boto_helpers.get_service_endpoint = endpoint


def _targets_from_project() -> None:
    from rpdk.core.project import Project

    load_target_info: Callable[..., Dict[str, Any]] = Project._load_target_info

    def local_target_info(self: Any, endpoint_url: Any, region_name: Any, type_schemas: Any = None, local_only: bool = False, profile_name: Any = None) -> Dict[str, Any]:
        bundled = list(bundled_target_schemas(Path(self.root), ResourceSchema(self.schema or {})).values())  # cfn-lint's, offline
        return load_target_info(self, endpoint_url, region_name, [*(type_schemas or []), *bundled], True, profile_name)

    Project._load_target_info = local_target_info  # type: ignore[method-assign]


def _exports_given(exports: Dict[str, str]) -> None:
    """The suite's ``{{Export}}`` lookup answered from ``exports``: no CloudFormation call."""
    from rpdk.core import test as cfn_test

    def given(*args: Any, **kwargs: Any) -> Dict[str, str]:
        return dict(exports)

    cfn_test.get_cloudformation_exports = given


def jsonata_transform_model(client: Any, input_model: Any) -> Any:
    """cfn test's ``ResourceClient.transform_model``, evaluating ``propertyTransform`` as the service does (JSONata)."""
    from cfnrun.contract.property_transform import transformed
    from cfnrun.model.schema import ResourceSchema

    model, problems = transformed(input_model, ResourceSchema(client._schema))
    for pointer, problem in problems:
        print(f"cfnrun test: {pointer}: {problem}", flush=True)
    return model


def _transforms_as_the_service_does() -> None:
    from rpdk.core.contract.resource_client import ResourceClient

    ResourceClient.transform_model = jsonata_transform_model  # type: ignore[method-assign]


def _examples_kept_in_local_state() -> None:
    """The suite's Hypothesis keeps its example database in the project's .cfnrun/, not in a new .hypothesis/ beside the code."""
    from hypothesis.configuration import set_hypothesis_home_dir

    from cfnrun.model.local_state import state_folder

    set_hypothesis_home_dir(state_folder(Path.cwd()) / "hypothesis")


LINT_PRINTER = "rpdk.core.fragment.lint_warning_printer"  # cfn's only importer of cfn-lint


def _cfn_lint_when_used() -> None:
    """cfn imports cfn-lint as it starts, to print lint warnings about a module's fragments; here it imports it when it prints them."""
    if LINT_PRINTER in sys.modules:
        return

    def print_cfn_lint_warnings(fragment_dir: Any) -> Any:
        sys.modules.pop(LINT_PRINTER, None)  # the stand-in: the module itself, with cfn-lint, from now on
        return importlib.import_module(LINT_PRINTER).print_cfn_lint_warnings(fragment_dir)

    stand_in = types.ModuleType(LINT_PRINTER, "cfn's lint_warning_printer, imported when first used")
    stand_in.print_cfn_lint_warnings = print_cfn_lint_warnings  # type: ignore[attr-defined]
    sys.modules[LINT_PRINTER] = stand_in


BUILD_IMAGE = "rpdk.core.build_image"  # ``cfn build-image``, cfn's only importer of docker's errors as it starts


def _docker_when_used() -> None:
    """The process ``cfnrun test`` starts (``--arguments-from``), which runs ``cfn test`` and nothing else, without the
    Docker SDK: cfn imports it as it starts (about a tenth of that start) for ``cfn build-image`` and ``cfn test
    --docker-image``, which ``cfnrun test`` never runs. ``import docker`` gives a module that imports the SDK at the first
    use of any of its names; ``cfn build-image``, whose module names docker's errors as it loads, is not offered here."""
    if "docker" not in sys.modules:
        stand_in = types.ModuleType("docker", "the Docker SDK, imported when one of its names is first used")

        def first_use(name: str) -> Any:
            if sys.modules.get("docker") is stand_in:
                del sys.modules["docker"]
            return getattr(importlib.import_module("docker"), name)

        vars(stand_in)["__getattr__"] = first_use  # a module's own __getattr__ (PEP 562)
        sys.modules["docker"] = stand_in
    if BUILD_IMAGE not in sys.modules:
        left_out = types.ModuleType(BUILD_IMAGE, "cfn build-image: not offered where only cfn test runs")
        left_out.setup_subparser = lambda subparsers, parents: None  # type: ignore[attr-defined]
        sys.modules[BUILD_IMAGE] = left_out


def run_cfn(
    argv: List[str], sts_endpoint: Optional[str], virtual_clock: bool = False, project_targets: bool = False,
    exports: Optional[Dict[str, str]] = None,
) -> None:
    _cfn_lint_when_used()  # before cfn's modules load
    from rpdk.core.cli import main as cfn_main

    keep_what_loaded()  # cfn's, pytest's and boto3's modules
    _examples_kept_in_local_state()
    _transforms_as_the_service_does()
    if sts_endpoint is not None:
        _point_sts_at(sts_endpoint)
    if exports:
        _exports_given(exports)
    if project_targets:
        _targets_from_project()
    clock = SuiteClock() if virtual_clock else None
    if clock is not None:
        clock.install()
    try:
        cfn_main(args_in=argv)
    finally:
        if clock is not None:
            print(clock.summary(), flush=True)


USAGE = (
    "usage: python -m cfnrun.app.cfn_offline [--sts-endpoint URL] [--virtual-clock] [--project-targets] "
    "[--export NAME=VALUE ...] [cfn arguments...] | --arguments-from FD"
)


def offline_credentials() -> None:
    """cloudformation-cli signs its STS calls, so it needs some keys; offline, placeholders do."""
    if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return
    os.environ.update(placeholder_variables())


def arguments_later(fd: int) -> Optional[List[str]]:
    """cfn's modules loaded, then the arguments read from ``fd`` (a JSON array); None at end of file."""
    import json
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller stops this process by closing ``fd``
    _cfn_lint_when_used()
    _docker_when_used()
    import rpdk.core.cli  # noqa: F401 - loaded while the caller starts its endpoint

    with os.fdopen(fd, "rb") as given:
        text = given.read()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if not text:
        return None
    arguments = json.loads(text)
    if not isinstance(arguments, list) or not all(isinstance(argument, str) for argument in arguments):
        sys.exit(USAGE)
    return arguments


def main(argv: List[str]) -> None:
    if argv[:1] == ["--arguments-from"]:
        if len(argv) != 2 or not argv[1].isdigit():
            sys.exit(USAGE)
        later = arguments_later(int(argv[1]))
        if later is None:
            return
        argv = later
    sts_endpoint: Optional[str] = None
    virtual_clock = project_targets = False
    exports: Dict[str, str] = {}
    while argv[:1] in (["--sts-endpoint"], ["--virtual-clock"], ["--project-targets"], ["--export"]):
        if argv[0] == "--virtual-clock":
            virtual_clock, argv = True, argv[1:]
        elif argv[0] == "--project-targets":
            project_targets, argv = True, argv[1:]
        elif len(argv) < 2:
            sys.exit(USAGE)
        elif argv[0] == "--export":
            name, _, value = argv[1].partition("=")
            exports[name], argv = value, argv[2:]
        else:
            sts_endpoint, argv = argv[1], argv[2:]
    if sts_endpoint is not None:
        offline_credentials()
    run_cfn(argv, sts_endpoint, virtual_clock, project_targets, exports)


if __name__ == "__main__":
    from cfnrun.app.loaded_objects import off_while_loading
    from cfnrun.app.process_end import leave  # as cfnrun itself ends: without freeing pytest's, cfn's and boto3's modules one by one

    off_while_loading("test")  # until cfn's modules are in (run_cfn)
    try:
        main(sys.argv[1:])
    except SystemExit as exited:
        leave(exited.code)
    leave(0)
