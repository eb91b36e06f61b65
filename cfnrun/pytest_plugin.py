"""The ``cfnrun`` pytest fixture: run a provider's handlers the way ``cfnrun invoke`` does, from tests.

    def test_lifecycle(cfnrun):
        p = cfnrun.provider("path/to/project", virtual_clock=True, contract="strict")
        r = p.invoke("CREATE", {"Title": "x"})
        assert r.status == "SUCCESS" and not r.violations

Warm workers are shared across the test session per project and function, and stopped when it
ends. A failing test's report shows the timeline of every operation it ran.

``cfnrun.fuzz(path, max_examples=50)`` runs ``cfnrun fuzz`` on a project within that budget: it
returns the report when nothing failed and raises ``FuzzFailure`` (an AssertionError) naming the
smallest failing case, recorded in the project's history for ``cfnrun replay``.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Generator, Iterator, List, Optional, Sequence, Union

import pytest

if TYPE_CHECKING:
    from cfnrun.app.fuzz_run import FuzzReport
    from cfnrun.app.warm_session import OperationOutcome, WarmSession


class FuzzFailure(AssertionError):
    """``cfnrun.fuzz`` found a sequence that breaks the handler; the message is its smallest case."""

    def __init__(self, message: str, report: "FuzzReport") -> None:
        super().__init__(message)
        self.report = report


class Provider:
    """One provider project, as tests drive it."""

    def __init__(self, session: "WarmSession", root: Path, options: Any, seen: List["OperationOutcome"]) -> None:
        self._session, self.root, self.options, self._seen = session, root, options, seen

    def invoke(
        self,
        action: str,
        desired: Optional[Dict[str, Any]] = None,
        *,
        previous: Optional[Dict[str, Any]] = None,
        type_configuration: Optional[Dict[str, Any]] = None,
        logical_resource_id: Optional[str] = None,
        client_request_token: Optional[str] = None,
        callback_context: Optional[Dict[str, Any]] = None,
        target: Optional[str] = None,
    ) -> "OperationOutcome":
        """Run one operation to its end (IN_PROGRESS replayed) and return its outcome.

        In a hook project ``action`` is an invocation point (``CREATE_PRE_PROVISION`` or
        ``preCreate``…), ``target`` the target type (``AWS::S3::Bucket``), ``desired`` and
        ``previous`` its resource properties, ``type_configuration`` the hook's Properties.
        """
        from cfnrun.invoker.request_files import OperationInput
        from cfnrun.model.action import action_from_argument

        request = OperationInput(
            desired=desired or {},
            previous=previous,
            type_configuration=type_configuration if type_configuration is not None else self.options.type_configuration,
            logical_resource_id=logical_resource_id,
            client_request_token=client_request_token,
            callback_context=callback_context,
            target_name=target,
        )
        outcome = self._session.run(self.root, self.options, action_from_argument(action), request)
        self._seen.append(outcome)
        return outcome


class CfnrunFixture:
    def __init__(self, session: "WarmSession", base: Path) -> None:
        self._session, self._base = session, base
        self.operations: List["OperationOutcome"] = []  # every operation this test ran, for its report

    def provider(
        self,
        path: Union[str, Path],
        *,
        virtual_clock: bool = False,
        contract: str = "warn",
        region: Optional[str] = None,
        typeconfig: Optional[Dict[str, Any]] = None,
        env: Optional[Dict[str, str]] = None,
        credentials: bool = False,
        time_scale: float = 1.0,
        log_level: str = "INFO",
        python: Optional[str] = None,
    ) -> Provider:
        """A provider project (the folder with .rpdk-config), relative paths from pytest's rootdir."""
        import sys

        from cfnrun.app.warm_session import ProviderOptions
        from cfnrun.contract.checker import ContractMode

        root = Path(path)
        options = ProviderOptions(
            virtual_clock=virtual_clock,
            contract=ContractMode(contract.lower()),
            region=region,
            type_configuration=typeconfig,
            env=tuple(sorted((env or {}).items())),
            credentials=credentials,
            time_scale=time_scale,
            log_level=log_level,
            python=python or sys.executable,
        )
        return Provider(self._session, root if root.is_absolute() else self._base / root, options, self.operations)


    def fuzz(
        self,
        path: Union[str, Path],
        *,
        max_examples: int = 50,
        max_steps: int = 10,
        seed: Optional[int] = None,
        actions: Optional[List[str]] = None,
        contract: str = "strict",
        inject: Sequence[str] = (),
        virtual_clock: bool = True,
        python: Optional[str] = None,
        shrink_time: float = 60.0,
        shrink_examples: int = 500,
        pinned: Optional[Dict[str, Any]] = None,
    ) -> "FuzzReport":
        """Fuzz a provider project (as ``cfnrun fuzz``); raises FuzzFailure with the smallest failing case."""
        import sys

        from cfnrun.app.fuzz_run import run_fuzz
        from cfnrun.app.settings.fuzz import FUZZED_ACTIONS, FuzzSettings
        from cfnrun.contract.checker import ContractMode
        from cfnrun.model.action import Action
        from cfnrun.model.faults import parse_faults

        root = Path(path) if Path(path).is_absolute() else self._base / path
        settings = FuzzSettings(
            max_examples=max_examples,
            max_steps=max_steps,
            seed=seed,
            actions=tuple(Action(name.upper()) for name in actions) if actions else FUZZED_ACTIONS,
            contract=ContractMode(contract.lower()),
            virtual_clock=virtual_clock,
            faults=parse_faults(inject),
            python=python or sys.executable,
            shrink_time_s=shrink_time,
            shrink_examples=shrink_examples,
            pins=tuple((pinned or {}).items()),
        )
        report = run_fuzz(root, settings, lambda event: None)
        if report.finding is not None:
            from cfnrun.events.fuzz import case_lines

            completed = report.completed  # its steps come described, writeOnly values masked
            lines = case_lines(completed.steps, completed.failing_step, completed.problems)
            recorded = completed.history_id
            replay = f"\n(cfnrun replay {recorded} -p {root} runs it again)" if recorded is not None else ""
            which = f"a sequence that breaks the handler, not the smallest ({completed.shrink_stopped})" if completed.shrink_stopped \
                else "the smallest sequence that breaks the handler"
            raise FuzzFailure(f"cfnrun fuzz: {which}:\n" + "\n".join(lines) + replay, report)
        return report


@pytest.fixture(scope="session")
def _cfnrun_session() -> Iterator["WarmSession"]:
    from cfnrun.app.warm_session import WarmSession

    session = WarmSession()
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def cfnrun(_cfnrun_session: "WarmSession", request: pytest.FixtureRequest) -> CfnrunFixture:
    """Run provider handlers as CloudFormation would; warm workers are shared across the session."""
    return CfnrunFixture(_cfnrun_session, Path(str(request.config.rootpath)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    fixture = getattr(item, "funcargs", {}).get("cfnrun")
    if report.failed and isinstance(fixture, CfnrunFixture) and fixture.operations:
        timelines = "\n\n".join(operation.timeline.rstrip() for operation in fixture.operations)
        report.sections.append(("cfnrun operations", timelines))
