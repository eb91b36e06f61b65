"""RegisterType past the 50 versions a resource type may have registered at a time (a module: 100), on a real ``cfnrun serve``.

RegisterType's documentation: "You can have a maximum of 50 resource extension versions registered at a time ... Use
DeregisterType to deregister specific extension versions if necessary." The 51st is refused at once with the operation's
one modelled error, CFNRegistryException; deregistering a version makes room again.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess
from test_registry import FAST, MODULE_TYPE, NOTE, Registry, _module_package, note_package, wheelhouse  # noqa: F401 - fixtures

pytestmark = pytest.mark.timeout(PATIENCE_S * 8)
LIMIT = 50
FULL = (
    f"The resource type '{NOTE}' has reached the maximum of {LIMIT} registered versions. "
    "Deregister the versions you no longer use (DeregisterType with a VersionId) before registering another."
)


@pytest.fixture
def lean_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    """The registry fixture's serve with one warm worker per function: fifty versions each keep their own."""
    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    monkeypatch.setenv("NOTES_STATE_DIR", str(tmp_path / "notes"))
    server = ServerProcess(project, "--no-reload", "--moto", "--virtual-clock", "--workers", "1")
    try:
        yield Registry(server, project)
    finally:
        server.stop(timeout=PATIENCE_S)


def test_the_51st_version_is_refused_until_one_is_deregistered(lean_registry: Registry, note_package: bytes) -> None:  # noqa: F811
    cloudformation = lean_registry.cloudformation
    package = lean_registry.upload("note.zip", note_package)
    sent = {"Type": "RESOURCE", "TypeName": NOTE, "SchemaHandlerPackage": package}
    tokens = [cloudformation.register_type(**sent, ClientRequestToken="first")["RegistrationToken"]]
    tokens += [cloudformation.register_type(**sent)["RegistrationToken"] for _ in range(LIMIT - 1)]

    def refused() -> str:
        with pytest.raises(ClientError) as refusal:
            cloudformation.register_type(**sent)
        assert (refusal.value.response["Error"]["Code"], refusal.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("CFNRegistryException", 400)
        return str(refusal.value.response["Error"]["Message"])

    # registrations in progress count: each will be a version
    assert refused().startswith(f"The resource type '{NOTE}' has reached the maximum of {LIMIT} registered versions")
    for token in tokens:
        cloudformation.get_waiter("type_registration_complete").wait(RegistrationToken=token, WaiterConfig=FAST)
    versions = cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE)["TypeVersionSummaries"]
    assert [v["VersionId"] for v in versions] == [f"{n:08d}" for n in range(1, LIMIT + 1)]
    assert refused() == FULL
    assert len(cloudformation.list_type_registrations(Type="RESOURCE", TypeName=NOTE)["RegistrationTokenList"]) == LIMIT  # none was made
    # the first request sent again is that registration, not a 51st
    assert cloudformation.register_type(**sent, ClientRequestToken="first")["RegistrationToken"] == tokens[0]

    cloudformation.deregister_type(Type="RESOURCE", TypeName=NOTE, VersionId="00000050")  # room for one
    answer = lean_registry.register("note.zip", note_package)
    assert answer["ProgressStatus"] == "COMPLETE" and answer["TypeVersionArn"].endswith("/00000051"), answer
    assert refused() == FULL


def test_a_module_may_have_a_hundred_versions(lean_registry: Registry) -> None:
    """The quotas page's "Module versions": 100 per module; the 101st is refused as a resource type's 51st is."""
    cloudformation = lean_registry.cloudformation
    package = lean_registry.upload("module.zip", _module_package((SAMPLES / "module" / "fragments" / "bucket.json").read_bytes()))
    sent = {"Type": "MODULE", "TypeName": MODULE_TYPE, "SchemaHandlerPackage": package}
    tokens = [cloudformation.register_type(**sent)["RegistrationToken"] for _ in range(100)]
    for token in tokens:
        cloudformation.get_waiter("type_registration_complete").wait(RegistrationToken=token, WaiterConfig=FAST)
    with pytest.raises(ClientError) as refused:
        cloudformation.register_type(**sent)
    assert refused.value.response["Error"] == {
        "Type": "Sender", "Code": "CFNRegistryException",
        "Message": f"The module '{MODULE_TYPE}' has reached the maximum of 100 registered versions. "
                   "Deregister the versions you no longer use (DeregisterType with a VersionId) before registering another.",
    }
    listed = cloudformation.list_type_versions(Type="MODULE", TypeName=MODULE_TYPE)["TypeVersionSummaries"]
    assert len(listed) == 100
