"""Each call's boto3 session in a warm worker: its own object, that call's credentials, botocore's own handlers.

The worker shares botocore's per-session registration work between sessions (``runtime/worker/
botocore_sessions.py``) and keeps what its imports made out of the cyclic collector's sight
(``lifecycle.py``); a provider must not be able to tell, except by the time it saves.
"""
from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from cfnrun.model.project import handler_project
from cfnrun.runtime.environment import lambda_environment
from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.spec import WorkerSpec
from conftest import LIB_PROVIDER

HANDLER = "lib_sessions.sessions"


def spec() -> WorkerSpec:
    project = handler_project(HANDLER, LIB_PROVIDER / "thing.json", LIB_PROVIDER)
    function = project.type_function()
    return WorkerSpec(
        function_name="Sessions",
        handler=HANDLER,
        code_dir=LIB_PROVIDER,
        cwd=LIB_PROVIDER,
        env=lambda_environment(project, function, "eu-west-3"),
        region="eu-west-3",
    )


def read_request(credentials: Dict[str, str]) -> Dict[str, Any]:
    """A READ HandlerRequest as CloudFormation sends it, with these caller (and provider) credentials."""
    return {
        "action": "READ",
        "awsAccountId": "111122223333",
        "bearerToken": "token-1",
        "region": "eu-west-3",
        "resourceType": "Cfnrun::Test::Thing",
        "resourceTypeVersion": "00000001",
        "stackId": "arn:aws:cloudformation:eu-west-3:111122223333:stack/s/1",
        "callbackContext": None,
        "responseEndpoint": "https://cloudformation.eu-west-3.amazonaws.com",
        "requestData": {
            "callerCredentials": credentials,
            "providerCredentials": credentials,
            "resourceProperties": {"Id": "thing-1"},
            "previousResourceProperties": None,
            "logicalResourceId": "Thing",
        },
    }


def fake_credentials(n: int) -> Dict[str, str]:
    return {"accessKeyId": f"AKIDCALL{n}", "secretAccessKey": f"secret-{n}", "sessionToken": f"token-{n}"}


def botocores_own_handlers() -> Dict[str, List[str]]:
    """The handlers a new session registers in a fresh interpreter, botocore as it ships (this process's may carry test stubs)."""
    code = (
        "import json, boto3, lib_sessions\n"
        "session = boto3.session.Session(aws_access_key_id='a', aws_secret_access_key='b')\n"
        "print(json.dumps(lib_sessions.registered_handlers(session._session)))"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=LIB_PROVIDER, capture_output=True, text=True, check=True)
    return json.loads(run.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def fixture_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The fixture provider's module, imported in this process (botocore as it ships, untouched by the worker)."""
    monkeypatch.syspath_prepend(str(LIB_PROVIDER))
    before = set(sys.modules)
    yield importlib.import_module("lib_sessions")
    for name in set(sys.modules) - before:
        if name.startswith(("lib_sessions", "lib_behaviours")):
            del sys.modules[name]


@pytest.mark.parametrize("forked", [False, True], ids=["spawned", "forked"])
def test_each_call_gets_a_new_session_with_exactly_its_credentials_and_botocores_handlers(fixture_module: Any, forked: bool) -> None:
    calls = [fake_credentials(n) for n in (1, 2, 1)]

    async def run() -> List[Dict[str, Any]]:
        pool = FunctionPool(spec(), size=1, standby=forked, dependencies=["boto3", "cloudformation_cli_python_lib"] if forked else None)
        try:
            await pool.warm()
            outcomes = [await pool.invoke(read_request(credentials), 60) for credentials in calls]
        finally:
            await pool.close()
        assert all(outcome.kind is OutcomeKind.RETURNED for outcome in outcomes), [outcome.logs for outcome in outcomes]
        return [outcome.result["resourceModel"]["Labels"] for outcome in outcomes]

    seen = asyncio.run(run())

    assert len({labels["pid"] for labels in seen}) == 1  # one warm worker served every call
    digests = [fixture_module.credentials_digest(c["accessKeyId"], c["secretAccessKey"], c["sessionToken"]) for c in calls]
    assert [labels["credentials"] for labels in seen] == digests
    assert [labels["new_session"] for labels in seen] == [True, True, True]  # the third call's credentials equal the first's: still a new session
    assert all(labels["shared_registration_work"] for labels in seen)  # what is tested here is the worker's shortcut
    assert all(labels["frozen_objects"] > 1000 for labels in seen)  # the loaded modules are out of the collector's sight
    assert all(labels["previous_cycles_collected"] for labels in seen)  # what calls drop is still collected
    reference = botocores_own_handlers()
    for labels in seen:
        assert labels["handlers"] == reference
