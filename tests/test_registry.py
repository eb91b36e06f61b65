"""The extension registry on ``cfnrun serve`` (issue #34): the package ``cfn submit`` builds, registered and used offline.

The package is built once per session by cloudformation-cli itself (``cfn submit --dry-run`` on a copy of
samples/note, its pip build from a local wheel: tests/cfn_cli.py), uploaded with boto3 to serve's embedded moto S3, and registered with boto3 against a real
``cfnrun serve --moto`` that serves another type (samples/parameter): the registered type's handlers run on
serve's warm workers and a stack uses its default version.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest
from botocore.exceptions import ClientError

from cfn_cli import cfn, make_wheelhouse
from conftest import FIXTURES, LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess, cfnrun, wait_until

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.2, "MaxAttempts": 1500}
NOTE = "Cfnrun::Sample::Note"
MODULE_TYPE = "Cfnrun::Sample::Bucket::MODULE"
PARAMETER = "Cfnrun::Sample::Parameter"  # the type of samples/parameter: the --provider project the registry fixture serves
BUCKET = "cfnrun-registry-packages"
# Each test drives whole registrations, stacks and suites on a shared 2-core machine: pytest-timeout's 120 s default is
# too short when both cores are busy, so the bound follows CFNRUN_TEST_PATIENCE_S as the waits inside do.
pytestmark = pytest.mark.timeout(PATIENCE_S * 6)
NOTE_STACK = json.dumps({"Resources": {"Note": {"Type": NOTE, "Properties": {"Title": "registered, not served", "Priority": 2}}}})


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_wheelhouse(tmp_path_factory.mktemp("wheels"))


@pytest.fixture(scope="session")
def note_package(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> bytes:
    """``cfn submit --dry-run`` in a copy of samples/note: the zip cfn would upload."""
    root = tmp_path_factory.mktemp("submit") / "note"
    shutil.copytree(SAMPLES / "note", root, ignore=LOCAL_STATE)
    run = cfn(root, "submit", "--dry-run", wheelhouse=wheelhouse)
    assert run.returncode == 0, run.stdout + run.stderr
    return (root / "cfnrun-sample-note.zip").read_bytes()


class Registry:
    """A serve of samples/parameter with --moto, and boto3 clients for its CloudFormation API and moto's S3."""

    def __init__(self, server: ServerProcess, project: Path) -> None:
        import boto3

        self.server = server
        self.project = project
        announced = re.search(r"at (http://[0-9.]+:[0-9]+)", server.has_printed(r"moto server \(AWS stand-in\) at"))
        assert announced, server.output
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.s3 = boto3.client("s3", endpoint_url=announced.group(1), **CREDENTIALS)
        self.s3.create_bucket(Bucket=BUCKET)

    def upload(self, key: str, data: bytes) -> str:
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
        return f"s3://{BUCKET}/{key}"

    def register(self, key: str, data: bytes, type_name: str = NOTE, kind: str = "RESOURCE", **extra: str) -> Dict[str, Any]:
        """RegisterType of ``data`` (uploaded as ``key``; ``extra``: more of its input), waited for as cfn submit waits;
        DescribeTypeRegistration's answer."""
        package = self.upload(key, data)
        token = self.cloudformation.register_type(Type=kind, TypeName=type_name, SchemaHandlerPackage=package, **extra)["RegistrationToken"]
        try:
            self.cloudformation.get_waiter("type_registration_complete").wait(RegistrationToken=token, WaiterConfig=FAST)
        except Exception:  # noqa: B902 - FAILED ends the waiter: the answer says why
            pass
        answer = self.cloudformation.describe_type_registration(RegistrationToken=token)
        answer["token"] = token
        return answer

    def version_workers(self, token: str) -> List[int]:
        """serve's worker processes (zygotes and spares too) for the version registered with ``token``: its files are in a
        folder named by it."""
        found = []
        for pid in self.server.worker_pids():
            try:
                seen = Path(f"/proc/{pid}/environ").read_bytes() + os.readlink(f"/proc/{pid}/cwd").encode()
            except OSError:  # gone meanwhile
                continue
            if token.encode() in seen:
                found.append(pid)
        return found

    def registered_folders(self) -> list:
        folder = self.project / ".cfnrun" / "registry" / "Cfnrun-Sample-Note"
        return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []  # .cfnrun: its history


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    monkeypatch.setenv("NOTES_STATE_DIR", str(tmp_path / "notes"))  # the registered note type keeps its notes there
    monkeypatch.setenv("CFNRUN_HISTORY", "on")  # a private copy: its history is the test's to read
    server = ServerProcess(project, "--no-reload", "--moto", "--virtual-clock")
    try:
        yield Registry(server, project)
    finally:
        server.stop(timeout=PATIENCE_S)


def _rezipped(package: bytes, change: Callable[[str, bytes], Any]) -> bytes:
    """``package`` with each member passed through ``change(name, data)``: new bytes, or None to leave the member out."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            data = change(member.filename, source.read(member))
            if data is not None:
                target.writestr(member.filename, data)
    return out.getvalue()


def test_a_submitted_package_registers_runs_in_a_stack_and_gets_versions(registry: Registry, note_package: bytes) -> None:
    cloudformation = registry.cloudformation
    first = registry.register("note-1.zip", note_package)
    assert first["ProgressStatus"] == "COMPLETE", first
    assert first["TypeArn"] == "arn:aws:cloudformation:us-east-1:123456789012:type/resource/Cfnrun-Sample-Note"
    assert first["TypeVersionArn"] == first["TypeArn"] + "/00000001"
    described = cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
    assert described["DefaultVersionId"] == "00000001" and described["IsDefaultVersion"] is True
    assert described["Arn"] == first["TypeArn"]
    assert (described["ProvisioningType"], described["DeprecatedStatus"], described["TypeTestsStatus"]) == ("FULLY_MUTABLE", "LIVE", "NOT_TESTED")
    assert json.loads(described["Schema"])["typeName"] == NOTE and described["Visibility"] == "PRIVATE"
    assert described["LastUpdated"] and described["TimeCreated"]
    assert registry.registered_folders() == [first["token"]]  # unpacked under the served project's .cfnrun/

    # a stack uses it: its handlers run on serve's warm workers, through the invoker
    cloudformation.create_stack(StackName="uses-registered", TemplateBody=NOTE_STACK)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="uses-registered", WaiterConfig=FAST)
    [resource] = cloudformation.describe_stack_resources(StackName="uses-registered")["StackResources"]
    assert resource["ResourceType"] == NOTE and resource["PhysicalResourceId"]
    import boto3

    cloudcontrol = boto3.client("cloudcontrol", endpoint_url=registry.server.url, **CREDENTIALS)  # Cloud Control reaches it too
    read = cloudcontrol.get_resource(TypeName=NOTE, Identifier=resource["PhysicalResourceId"])["ResourceDescription"]
    assert json.loads(read["Properties"])["Title"] == "registered, not served"
    registry.server.has_printed(r"Cfnrun-Sample-Note-TypeFunction .*CREATE")
    history = cfnrun("history", "--project", str(registry.project / ".cfnrun" / "registry" / "Cfnrun-Sample-Note"))
    assert history.returncode == 0 and "CREATE" in history.stdout, history.stdout + history.stderr  # recorded as a provider's calls are

    # a second version is registered but not the default until SetTypeDefaultVersion (what `cfn submit --set-default` calls)
    second = registry.register("note-2.zip", note_package)
    assert second["ProgressStatus"] == "COMPLETE" and second["TypeVersionArn"].endswith("/00000002")
    versions = cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE)["TypeVersionSummaries"]
    assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [("00000001", True), ("00000002", False)]
    assert cloudformation.describe_type(Arn=second["TypeVersionArn"])["IsDefaultVersion"] is False
    # only the default version keeps warm workers: the second's go once its registration saw them load
    wait_until(lambda: not registry.version_workers(second["token"]), timeout=PATIENCE_S, what="the second version's workers to go")
    assert registry.version_workers(first["token"])
    cloudformation.set_type_default_version(Arn=second["TypeVersionArn"])
    wait_until(lambda: registry.version_workers(second["token"]) and not registry.version_workers(first["token"]),
               timeout=PATIENCE_S, what="the new default version's workers to start and the old one's to go")
    described = cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
    assert described["DefaultVersionId"] == "00000002"
    [summary, provided] = cloudformation.list_types(Visibility="PRIVATE", Type="RESOURCE")["TypeSummaries"]
    assert (summary["TypeName"], summary["DefaultVersionId"], summary["TypeArn"]) == (NOTE, "00000002", first["TypeArn"])
    # the --provider project serve runs is listed too, PRIVATE and not versioned; DescribeType says where it comes from
    assert (provided["Type"], provided["TypeName"], "DefaultVersionId" in provided) == ("RESOURCE", PARAMETER, False), provided
    assert provided["TypeArn"] == "arn:aws:cloudformation:us-east-1:123456789012:type/resource/Cfnrun-Sample-Parameter"
    served = cloudformation.describe_type(Type="RESOURCE", TypeName=PARAMETER)
    assert (served["Visibility"], served["SourceUrl"], "DefaultVersionId" in served) == ("PRIVATE", registry.project.resolve().as_uri(), False)
    assert json.loads(served["Schema"])["typeName"] == PARAMETER and served["ProvisioningType"] == "FULLY_MUTABLE"
    tokens = cloudformation.list_type_registrations(Type="RESOURCE", TypeName=NOTE)["RegistrationTokenList"]
    assert tokens == [first["token"], second["token"]]
    listed = cfnrun("registry", "list", "--endpoint", registry.server.url)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert [line.split()[:3] for line in listed.stdout.splitlines()] == [
        ["RESOURCE", NOTE], ["00000001", "tests", "NOT_TESTED"], ["00000002", "default", "tests"], ["RESOURCE", PARAMETER, "(served"],
    ], listed.stdout
    assert f"(served from --provider {registry.project.resolve()}, not registered)" in listed.stdout
    if shutil.which("aws"):  # the aws CLI reads the same answers
        described = subprocess.run(
            ["aws", "--endpoint-url", registry.server.url, "--region", "us-east-1", "--output", "json", "cloudformation",
             "describe-type-registration", "--registration-token", second["token"]],
            capture_output=True, text=True, timeout=120, env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
        )
        assert described.returncode == 0, described.stderr
        assert json.loads(described.stdout)["ProgressStatus"] == "COMPLETE"

    # the stack's update runs on the new default version; the default cannot go while another version is registered
    cloudformation.update_stack(StackName="uses-registered", TemplateBody=NOTE_STACK.replace("registered, not served", "version two"))
    cloudformation.get_waiter("stack_update_complete").wait(StackName="uses-registered", WaiterConfig=FAST)
    with pytest.raises(ClientError) as refused:
        cloudformation.deregister_type(Type="RESOURCE", TypeName=NOTE, VersionId="00000002")
    assert (refused.value.response["Error"]["Code"], refused.value.response["ResponseMetadata"]["HTTPStatusCode"]) == ("CFNRegistryException", 400)
    assert refused.value.response["Error"]["Message"] == (  # the service's words, as users quote them (terraform-provider-aws#38850)
        f"Version '00000002' is the default version and cannot be deregistered. Deregister the resource type '{NOTE}' instead."
    )
    cloudformation.deregister_type(Type="RESOURCE", TypeName=NOTE, VersionId="00000001")
    assert registry.registered_folders() == [second["token"]]  # the deregistered version's files are gone
    live = cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE)["TypeVersionSummaries"]
    assert [v["VersionId"] for v in live] == ["00000002"]
    gone = cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE, DeprecatedStatus="DEPRECATED")["TypeVersionSummaries"]
    assert [v["VersionId"] for v in gone] == ["00000001"]
    with pytest.raises(cloudformation.exceptions.TypeNotFoundException):
        cloudformation.describe_type(Type="RESOURCE", TypeName="Cfnrun::Sample::Nothing")
    # the default goes with the type, not by its VersionId, even as the last LIVE version (AWS's own ResourceVersion handler
    # deregisters the type for it; terraform-provider-aws does when this refusal answers its last version)
    with pytest.raises(ClientError) as last:
        cloudformation.deregister_type(Arn=second["TypeVersionArn"])
    assert last.value.response["Error"]["Message"].startswith("Version '00000002' is the default version and cannot be deregistered.")
    removed = cfnrun("registry", "remove", NOTE, "--endpoint", registry.server.url)  # the others by VersionId, then the type
    assert removed.returncode == 0 and "removed Cfnrun::Sample::Note (1 version(s))" in removed.stdout, removed.stdout + removed.stderr
    assert [summary["TypeName"] for summary in cloudformation.list_types(Visibility="PRIVATE")["TypeSummaries"]] == [PARAMETER]
    assert registry.registered_folders() == []


def test_bad_packages_fail_their_registration_with_the_reason_and_leave_nothing(registry: Registry, note_package: bytes, tmp_path: Path) -> None:
    def breaking_the_handlers(name: str, data: bytes) -> bytes:
        if name != "ResourceProvider.zip":
            return data
        return _rezipped(data, lambda inner, code: b"raise ImportError('no such dependency')\n" if inner.endswith("cfnrun_sample_note/handlers.py") else code)

    def bad_schema(name: str, data: bytes) -> bytes:
        if name != "schema.json":
            return data
        schema = json.loads(data)
        del schema["primaryIdentifier"]
        return json.dumps(schema).encode()

    escaping = io.BytesIO()
    with zipfile.ZipFile(escaping, "w") as archive:
        archive.writestr(".rpdk-config", "{}")
        archive.writestr("../../escaped.txt", "outside")
    cases = {
        "not-a-zip.zip": (b"this is not a zip", "not a zip file"),
        "no-config.zip": (_rezipped(note_package, lambda name, data: None if name == ".rpdk-config" else data), "has no .rpdk-config"),
        "no-handlers.zip": (_rezipped(note_package, lambda name, data: None if name == "ResourceProvider.zip" else data), "has no handlers"),
        "slip.zip": (escaping.getvalue(), "outside its own folder"),
        "bad-schema.zip": (_rezipped(note_package, bad_schema), "primaryIdentifier"),
        "no-import.zip": (_rezipped(note_package, breaking_the_handlers), "no such dependency"),
    }
    for key, (data, reason) in cases.items():
        answer = registry.register(key, data)
        assert answer["ProgressStatus"] == "FAILED", (key, answer)
        stages, refusal = answer["Description"].split("\n")  # as the service's validation stage words a failure (cloudformation-cli#403)
        assert stages == "Deployment is currently in VALIDATION_STAGE of status FAILED; Next is DEPLOY_STAGE with status CANCELLED", key
        assert refusal.startswith(f"Deployment failed with error. Error message: [{answer['token']}] ") and reason in refusal, (key, refusal)
        assert "TypeVersionArn" not in answer and "TypeArn" not in answer, (key, answer)  # null unless COMPLETE (the model)
    assert registry.registered_folders() == []  # nothing half-registered: every FAILED package's files are gone
    assert not any(p.name == "escaped.txt" for p in tmp_path.rglob("escaped.txt"))
    failed = registry.cloudformation.list_type_registrations(Type="RESOURCE", TypeName=NOTE, RegistrationStatusFilter="FAILED")
    assert len(failed["RegistrationTokenList"]) == len(cases)
    with pytest.raises(registry.cloudformation.exceptions.TypeNotFoundException):
        registry.cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
    # a TypeName names the package's folder: one that would lead out of .cfnrun/registry/ is refused by the model's pattern
    with pytest.raises(ClientError, match="failed to satisfy constraint") as refused:
        registry.cloudformation.register_type(Type="RESOURCE", TypeName="../../Org::Svc::Thing", SchemaHandlerPackage=f"s3://{BUCKET}/x.zip")
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    # the server keeps serving: a good package registers after all of them
    assert registry.register("good.zip", note_package)["TypeVersionArn"].endswith("/00000001")
    assert len(registry.registered_folders()) == 1
    # the same request sent twice (one ClientRequestToken) is one registration, not a second version
    sent = {"Type": "RESOURCE", "TypeName": NOTE, "SchemaHandlerPackage": f"s3://{BUCKET}/good.zip", "ClientRequestToken": "release-42"}
    once, twice = (registry.cloudformation.register_type(**sent)["RegistrationToken"] for _ in range(2))
    assert once == twice
    registry.cloudformation.get_waiter("type_registration_complete").wait(RegistrationToken=once, WaiterConfig=FAST)
    versions = registry.cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE)["TypeVersionSummaries"]
    assert [v["VersionId"] for v in versions] == ["00000001", "00000002"]
    registry.server.stop_cleanly(timeout=PATIENCE_S)
    assert registry.registered_folders() == []  # registrations last as long as serve: their files go when it stops


def _hook_package(project: Path) -> bytes:
    """A hook project packaged as ``cfn submit`` packages one: settings, schema, and the handler bundle (its src/)."""
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        for path in sorted((project / "src").rglob("*.py")):
            archive.write(path, str(path.relative_to(project / "src")))
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w") as archive:
        archive.write(project / ".rpdk-config", ".rpdk-config")
        archive.write(project / "cfnrun-test-versioningguard.json", "schema.json")
        archive.writestr("ResourceProvider.zip", bundle.getvalue())
    return package.getvalue()


def test_a_registered_hook_fires_in_stacks_once_its_configuration_enables_it(registry: Registry) -> None:
    hook = "Cfnrun::Test::VersioningGuard"
    answer = registry.register("hook.zip", _hook_package(FIXTURES / "versioning_hook"), type_name=hook, kind="HOOK")
    assert answer["ProgressStatus"] == "COMPLETE", answer
    assert answer["TypeVersionArn"] == "arn:aws:cloudformation:us-east-1:123456789012:type/hook/Cfnrun-Test-VersioningGuard/00000001"
    described = registry.cloudformation.describe_type(Type="HOOK", TypeName=hook)
    assert (described["Type"], described["DefaultVersionId"], described["ProvisioningType"]) == ("HOOK", "00000001", "NON_PROVISIONABLE")
    bucket = json.dumps({"Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"VersioningConfiguration": {"Status": "Suspended"}}}}})
    cloudformation = registry.cloudformation
    cloudformation.create_stack(StackName="before-activation", TemplateBody=bucket)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="before-activation", WaiterConfig=FAST)  # registered, not enabled
    document = {"CloudFormationConfiguration": {"HookConfiguration": {"HookInvocationStatus": "ENABLED", "TargetOperations": ["RESOURCE"], "FailureMode": "FAIL", "Properties": {}}}}
    configured = cloudformation.set_type_configuration(Type="HOOK", TypeName=hook, Configuration=json.dumps(document))
    assert configured["ConfigurationArn"].startswith("arn:aws:cloudformation:us-east-1:123456789012:type-configuration/hook/Cfnrun-Test-VersioningGuard/")
    described = cloudformation.batch_describe_type_configurations(
        TypeConfigurationIdentifiers=[{"Type": "HOOK", "TypeName": hook}, {"TypeConfigurationArn": configured["ConfigurationArn"]}, {"TypeName": NOTE}]
    )
    assert [c["Arn"] for c in described["TypeConfigurations"]] == [configured["ConfigurationArn"]] * 2
    assert json.loads(described["TypeConfigurations"][0]["Configuration"]) == document and described["TypeConfigurations"][0]["IsDefaultConfiguration"]
    assert [(e["ErrorCode"], e["TypeConfigurationIdentifier"]["TypeName"]) for e in described["Errors"]] == [("TypeConfigurationNotFoundException", NOTE)]
    cloudformation.create_stack(StackName="hooked", TemplateBody=bucket)
    with pytest.raises(Exception):  # noqa: B017 - the waiter's failure: the stack rolls back
        cloudformation.get_waiter("stack_create_complete").wait(StackName="hooked", WaiterConfig=FAST)
    events = cloudformation.describe_stack_events(StackName="hooked")["StackEvents"]
    reasons = [e.get("HookStatusReason") for e in events if e.get("HookType") == hook and e.get("HookStatus") == "HOOK_COMPLETE_FAILED"]
    assert reasons == ["Hook failed with message: bucket versioning must be Enabled (found Suspended)"], events


def _wait_for_tests(cloudformation: Any, arn: str) -> Dict[str, Any]:
    """DescribeType of a version until its TypeTestsStatus is no longer IN_PROGRESS (the suite runs in the background)."""
    from conftest import wait_until

    seen: Dict[str, Any] = {}

    def finished() -> bool:
        seen.update(cloudformation.describe_type(Arn=arn))
        return seen["TypeTestsStatus"] != "IN_PROGRESS"

    wait_until(finished, timeout=PATIENCE_S * 3, what="TestType to finish")
    return seen


def test_test_type_runs_the_contract_suite_and_publish_type_follows_its_status(registry: Registry, note_package: bytes) -> None:
    cloudformation = registry.cloudformation
    registry.s3.create_bucket(Bucket="test-logs")

    def delete_that_deletes_nothing(name: str, data: bytes) -> bytes:
        if name != "ResourceProvider.zip":
            return data
        broken = b'        del state["notes"][record["NoteId"]]\n'
        return _rezipped(data, lambda inner, code: code.replace(broken, b"        pass\n") if inner.endswith("cfnrun_sample_note/handlers.py") else code)

    good = registry.register("good.zip", note_package)["TypeVersionArn"]
    bad = registry.register("bad.zip", _rezipped(note_package, delete_that_deletes_nothing))["TypeVersionArn"]
    with pytest.raises(ClientError) as early:  # no publisher yet, no tests passed yet
        cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)
    assert early.value.response["Error"]["Code"] == "CFNRegistryException"
    publisher = cloudformation.register_publisher(AcceptTermsAndConditions=True)["PublisherId"]
    assert cloudformation.describe_publisher()["PublisherId"] == publisher
    with pytest.raises(ClientError, match="TypeTestsStatus is NOT_TESTED"):
        cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)

    assert cloudformation.test_type(Arn=good, LogDeliveryBucket="test-logs")["TypeVersionArn"] == good
    assert cloudformation.describe_type(Arn=good)["TypeTestsStatus"] == "IN_PROGRESS"
    cloudformation.test_type(Arn=bad)
    passed, failed = _wait_for_tests(cloudformation, good), _wait_for_tests(cloudformation, bad)
    assert passed["TypeTestsStatus"] == "PASSED", passed.get("TypeTestsStatusDescription")
    assert failed["TypeTestsStatus"] == "FAILED"
    assert "contract_delete_read" in failed["TypeTestsStatusDescription"], failed["TypeTestsStatusDescription"]
    logs = registry.s3.list_objects_v2(Bucket="test-logs")["Contents"]
    assert [log["Key"] for log in logs] == ["Cfnrun-Sample-Note/00000001/test.log"]

    with pytest.raises(ClientError) as numbered:  # a first publication is 1.0.0: no number may be given (the model)
        cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE, PublicVersionNumber="2.0.0")
    assert numbered.value.response["Error"] == {  # the service's answer, as DataDog/datadog-cloudformation-resources#164 quotes it
        "Type": "Sender", "Code": "CFNRegistryException", "Message": "PublicVersionNumber can't be set for publishing a type for the first time",
    }
    published = cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)  # the default version, 00000001, passed
    assert published["PublicTypeArn"] == f"arn:aws:cloudformation:us-east-1::type/resource/{publisher}/Cfnrun-Sample-Note"
    # DescribeType of the public type, by its ARN or by publisher and name: PUBLIC, its public versions, none of a private type's
    public = cloudformation.describe_type(Arn=published["PublicTypeArn"])
    assert (public["Visibility"], public["PublisherId"], public["PublicVersionNumber"], public["LatestPublicVersion"]) == ("PUBLIC", publisher, "1.0.0", "1.0.0")
    assert (public["Arn"], public["IsActivated"]) == (published["PublicTypeArn"], False) and not {"DefaultVersionId", "TypeTestsStatus"} & set(public)
    assert cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE, PublisherId=publisher)["Arn"] == published["PublicTypeArn"]
    with pytest.raises(cloudformation.exceptions.TypeNotFoundException):
        cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE, PublisherId=publisher, PublicVersionNumber="9.0.0")
    cloudformation.set_type_default_version(Arn=bad)
    with pytest.raises(ClientError, match="TypeTestsStatus is FAILED"):
        cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)

    # the published type, activated under an alias, is a type of its own that a stack uses by that name
    alias = "Acme::Notes::Note"
    activated = cloudformation.activate_type(Type="RESOURCE", PublicTypeArn=published["PublicTypeArn"], TypeNameAlias=alias, AutoUpdate=False)
    assert activated["Arn"] == "arn:aws:cloudformation:us-east-1:123456789012:type/resource/Acme-Notes-Note"
    described = cloudformation.describe_type(Type="RESOURCE", TypeName=alias)
    assert (described["IsActivated"], described["OriginalTypeName"], described["OriginalTypeArn"]) == (True, NOTE, published["PublicTypeArn"])
    assert described["PublicVersionNumber"] == "1.0.0" and json.loads(described["Schema"])["typeName"] == alias
    assert described["AutoUpdate"] is False
    # a third-party public extension, activated: its default version and its tests are its publisher's, null here (the model)
    assert described["PublisherId"] == publisher and not {"DefaultVersionId", "IsDefaultVersion", "TypeTestsStatus"} & set(described)
    [summary] = [s for s in cloudformation.list_types(Visibility="PRIVATE")["TypeSummaries"] if s["TypeName"] == alias]
    assert (summary["PublisherId"], summary["IsActivated"], "DefaultVersionId" in summary) == (publisher, True, False), summary

    def listed_names(visibility: str, **filters: str) -> list:  # ListTypes with TypeFilters' Category or PublisherId
        return [t["TypeName"] for t in cloudformation.list_types(Visibility=visibility, Type="RESOURCE", Filters=filters)["TypeSummaries"]]

    assert (listed_names("PRIVATE", Category="ACTIVATED"), listed_names("PRIVATE", Category="REGISTERED")) == ([alias], [NOTE, PARAMETER])
    assert (listed_names("PRIVATE", Category="AWS_TYPES"), listed_names("PRIVATE", PublisherId=publisher)) == ([], [alias])
    assert (listed_names("PUBLIC", Category="THIRD_PARTY"), listed_names("PUBLIC", PublisherId=publisher)) == ([NOTE], [NOTE])
    assert "AWS::S3::Bucket" in listed_names("PUBLIC", Category="AWS_TYPES", TypeNamePrefix="AWS::S3::")
    assert listed_names("PUBLIC", Category="AWS_TYPES", TypeNamePrefix="Cfnrun::") == []
    [version] = cloudformation.list_type_versions(Type="RESOURCE", TypeName=alias)["TypeVersionSummaries"]
    assert (version["PublicVersionNumber"], "IsDefaultVersion" in version) == ("1.0.0", False), version
    listed = cfnrun("registry", "list", "--endpoint", registry.server.url)  # an activated type, not a --provider's: no DefaultVersionId either
    assert f"RESOURCE {alias} (activated {NOTE})\n  00000001  public 1.0.0  activated " in listed.stdout, listed.stdout + listed.stderr
    configured = {"Type": "RESOURCE", "TypeName": alias}
    cloudformation.set_type_configuration(**configured, Configuration="{}", ConfigurationAlias="default")
    assert len(cloudformation.batch_describe_type_configurations(TypeConfigurationIdentifiers=[configured])["TypeConfigurations"]) == 1
    # a second public version (a third registration, tested, the default): ActivateType again with VersionBump takes the
    # activated type to it (the model: VersionBump updates a previously-activated type)
    third = registry.register("third.zip", note_package)["TypeVersionArn"]
    cloudformation.test_type(Arn=third)
    assert _wait_for_tests(cloudformation, third)["TypeTestsStatus"] == "PASSED"
    cloudformation.set_type_default_version(Arn=third)
    assert cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)["PublicTypeArn"] == published["PublicTypeArn"]
    bumped = cloudformation.activate_type(Type="RESOURCE", PublicTypeArn=published["PublicTypeArn"], TypeNameAlias=alias, VersionBump="MINOR")
    assert bumped["Arn"] == activated["Arn"]
    described = cloudformation.describe_type(Type="RESOURCE", TypeName=alias)
    assert (described["PublicVersionNumber"], described["AutoUpdate"]) == ("1.1.0", False)  # AutoUpdate stays as it was: not given
    cloudformation.create_stack(StackName="aliased", TemplateBody=NOTE_STACK.replace(NOTE, alias))  # the bumped version runs it
    cloudformation.get_waiter("stack_create_complete").wait(StackName="aliased", WaiterConfig=FAST)
    cloudformation.delete_stack(StackName="aliased")
    cloudformation.get_waiter("stack_delete_complete").wait(StackName="aliased", WaiterConfig=FAST)
    cloudformation.deactivate_type(Type="RESOURCE", TypeName=alias)
    with pytest.raises(cloudformation.exceptions.TypeNotFoundException):
        cloudformation.describe_type(Type="RESOURCE", TypeName=alias)
    gone = cloudformation.batch_describe_type_configurations(TypeConfigurationIdentifiers=[configured])  # deactivating deletes it (the model)
    assert (gone["TypeConfigurations"], [e["ErrorCode"] for e in gone["Errors"]]) == ([], ["TypeConfigurationNotFoundException"])
    # activated without AutoUpdate: it is on, the model's default
    other = {"Type": "RESOURCE", "TypeName": "Acme::Notes::Other"}
    cloudformation.activate_type(Type="RESOURCE", PublicTypeArn=published["PublicTypeArn"], TypeNameAlias=other["TypeName"])
    assert cloudformation.describe_type(**other)["AutoUpdate"] is True
    # with AutoUpdate a new minor version is taken up as it is published, a new major one is not (the model)
    cloudformation.set_type_default_version(Arn=good)
    cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE)  # 1.2.0, of version 00000001
    described = cloudformation.describe_type(**other)
    assert (described["PublicVersionNumber"], described["LatestPublicVersion"]) == ("1.2.0", "1.2.0")
    assert [v["VersionId"] for v in cloudformation.list_type_versions(**other)["TypeVersionSummaries"]] == ["00000002"]
    cloudformation.publish_type(Type="RESOURCE", TypeName=NOTE, PublicVersionNumber="2.0.0")
    described = cloudformation.describe_type(**other)
    assert (described["PublicVersionNumber"], described["LatestPublicVersion"]) == ("1.2.0", "2.0.0")
    cloudformation.create_stack(StackName="auto-updated", TemplateBody=NOTE_STACK.replace(NOTE, other["TypeName"]))  # the new one runs it
    cloudformation.get_waiter("stack_create_complete").wait(StackName="auto-updated", WaiterConfig=FAST)


def test_a_provider_of_the_same_type_wins_over_its_registered_version(tmp_path: Path, note_package: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    monkeypatch.setenv("NOTES_STATE_DIR", str(tmp_path / "notes"))
    server = ServerProcess(project, "--no-reload", "--moto", "--virtual-clock")
    try:
        served = Registry(server, project)
        assert served.register("note.zip", note_package)["ProgressStatus"] == "COMPLETE"
        served.cloudformation.create_stack(StackName="provided", TemplateBody=NOTE_STACK)
        served.cloudformation.get_waiter("stack_create_complete").wait(StackName="provided", WaiterConfig=FAST)
        server.has_printed(r"^\S+ TypeFunction +CREATE")  # the provider's own function, not Cfnrun-Sample-Note-TypeFunction
        assert not [line for line in server.output if "Cfnrun-Sample-Note-TypeFunction" in line and "CREATE" in line]
        # the registry's API answers for the registration (its versions), listed once
        described = served.cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
        assert (described["DefaultVersionId"], described["SourceUrl"]) == ("00000001", "https://example.com/cfnrun/samples/note")  # its schema's
        assert [s["TypeName"] for s in served.cloudformation.list_types(Visibility="PRIVATE")["TypeSummaries"]] == [NOTE]
    finally:
        server.stop(timeout=PATIENCE_S)


def test_a_registered_module_expands_in_stacks_and_a_broken_fragment_fails(registry: Registry) -> None:
    module, package = MODULE_TYPE, _module_package
    fragment = (SAMPLES / "module" / "fragments" / "bucket.json").read_bytes()
    broken = registry.register("broken-module.zip", package(fragment.replace(b'"Resources"', b'"Transform": "AWS::Serverless-2016-10-31", "Resources"')), module, "MODULE")
    assert broken["ProgressStatus"] == "FAILED" and "Transform" in broken["Description"], broken
    answer = registry.register("module.zip", package(fragment), module, "MODULE")
    assert answer["ProgressStatus"] == "COMPLETE" and answer["TypeVersionArn"].endswith("type/module/Cfnrun-Sample-Bucket-MODULE/00000001"), answer
    template = {"Resources": {"Logs": {"Type": module, "Properties": {"BucketName": "registered-module-bucket"}}}}
    registry.cloudformation.create_stack(StackName="moduled", TemplateBody=json.dumps(template))
    registry.cloudformation.get_waiter("stack_create_complete").wait(StackName="moduled", WaiterConfig=FAST)
    [resource] = registry.cloudformation.describe_stack_resources(StackName="moduled")["StackResources"]
    assert resource["LogicalResourceId"] == "LogsS3Bucket" and resource["ResourceType"] == "AWS::S3::Bucket"
    assert "registered-module-bucket" in [b["Name"] for b in registry.s3.list_buckets()["Buckets"]]

    # TestType of a module checks its model (the model's documentation), so a module is published and activated as a resource type is
    cloudformation = registry.cloudformation
    assert cloudformation.test_type(Type="MODULE", TypeName=module)["TypeVersionArn"] == answer["TypeVersionArn"]
    assert _wait_for_tests(cloudformation, answer["TypeVersionArn"])["TypeTestsStatus"] == "PASSED"
    cloudformation.register_publisher(AcceptTermsAndConditions=True)
    public_arn = cloudformation.publish_type(Type="MODULE", TypeName=module)["PublicTypeArn"]
    listed = cloudformation.list_types(Visibility="PUBLIC", Type="MODULE")["TypeSummaries"]
    assert [(t["TypeName"], t["TypeArn"]) for t in listed] == [(module, public_arn)]
    alias = "Acme::Storage::Logs::MODULE"
    cloudformation.activate_type(Type="MODULE", PublicTypeArn=public_arn, TypeNameAlias=alias)
    template["Resources"]["Logs"].update(Type=alias, Properties={"BucketName": "activated-module-bucket"})
    cloudformation.create_stack(StackName="activated-module", TemplateBody=json.dumps(template))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="activated-module", WaiterConfig=FAST)
    assert "activated-module-bucket" in [b["Name"] for b in registry.s3.list_buckets()["Buckets"]]


@pytest.fixture(scope="session")
def guard_package(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> bytes:
    """``cfn submit --dry-run`` in a copy of samples/hook, with its own target schemas (AWS::S3::Bucket) and contract test inputs."""
    root = tmp_path_factory.mktemp("submit-hook") / "hook"
    shutil.copytree(SAMPLES / "hook", root, ignore=LOCAL_STATE)
    run = cfn(root, "submit", "--dry-run", wheelhouse=wheelhouse)
    assert run.returncode == 0, run.stdout + run.stderr
    return (root / "cfnrun-sample-bucketguard.zip").read_bytes()


def test_test_type_on_a_hook_runs_the_hooks_contract_tests(registry: Registry, guard_package: bytes) -> None:
    """TestType of a HOOK version runs cloudformation-cli's hook contract tests (pre-create, pre-update, pre-delete, with the
    package's inputs) on its own code: a hook that refuses a compliant delete FAILS, naming the test."""
    guard = "Cfnrun::Sample::BucketGuard"
    allowed = b'    return ProgressEvent(status=OperationStatus.SUCCESS, message=f"{context.targetLogicalId} may be deleted")\n'

    def refusing_every_delete(name: str, data: bytes) -> bytes:
        if name != "ResourceProvider.zip":
            return data
        refused = b'    return ProgressEvent.failed(HandlerErrorCode.NonCompliant, "every delete is refused")\n'
        return _rezipped(data, lambda inner, code: code.replace(allowed, refused) if inner.endswith("cfnrun_sample_bucketguard/handlers.py") else code)

    assert allowed in (SAMPLES / "hook" / "src" / "cfnrun_sample_bucketguard" / "handlers.py").read_bytes()
    good = registry.register("guard.zip", guard_package, guard, "HOOK")
    bad = registry.register("guard-bad.zip", _rezipped(guard_package, refusing_every_delete), guard, "HOOK")
    assert (good["ProgressStatus"], bad["ProgressStatus"]) == ("COMPLETE", "COMPLETE"), (good, bad)
    cloudformation = registry.cloudformation
    registry.s3.create_bucket(Bucket="hook-test-logs")
    assert cloudformation.test_type(Arn=good["TypeVersionArn"], LogDeliveryBucket="hook-test-logs")["TypeVersionArn"] == good["TypeVersionArn"]
    cloudformation.test_type(Arn=bad["TypeVersionArn"])
    passed, failed = _wait_for_tests(cloudformation, good["TypeVersionArn"]), _wait_for_tests(cloudformation, bad["TypeVersionArn"])
    log = registry.s3.get_object(Bucket="hook-test-logs", Key="Cfnrun-Sample-BucketGuard/00000001/test.log")["Body"].read().decode()
    assert (passed["TypeTestsStatus"], passed["TypeTestsStatusDescription"]) == ("PASSED", "All contract tests passed."), log[-6000:]
    assert re.search(r"contract_pre_delete_success PASSED", log), log[-6000:]
    assert failed["TypeTestsStatus"] == "FAILED"
    assert failed["TypeTestsStatusDescription"] == "1 contract test(s) failed: contract_pre_delete_success", failed["TypeTestsStatusDescription"]
    registry.cloudformation.register_publisher(AcceptTermsAndConditions=True)
    assert registry.cloudformation.publish_type(Type="HOOK", TypeName=guard)["PublicTypeArn"].endswith("/Cfnrun-Sample-BucketGuard")  # 1 PASSED


def test_cfn_submit_of_a_hook_reads_its_targets_from_serves_registry_and_the_package_registers(registry: Registry, tmp_path: Path, wheelhouse: Path) -> None:
    """cfn submit packages a hook with its targets' schemas, which it asks the registry for: serve answers for AWS's public types."""
    project = tmp_path / "hook"
    shutil.copytree(SAMPLES / "hook", project, ignore=LOCAL_STATE)
    shutil.rmtree(project / "target-schemas")
    (project / "target-info.json").unlink()
    run = cfn(project, "submit", "--dry-run", "--endpoint-url", registry.server.url, "--region", "us-east-1", wheelhouse=wheelhouse)
    assert run.returncode == 0, run.stdout + run.stderr
    package = (project / "cfnrun-sample-bucketguard.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        target = json.loads(archive.read("target-schemas/aws-s3-bucket.json"))
    assert target["typeName"] == "AWS::S3::Bucket" and "BucketName" in target["properties"]
    answer = registry.register("bucketguard.zip", package, "Cfnrun::Sample::BucketGuard", "HOOK")
    assert answer["ProgressStatus"] == "COMPLETE", answer
    public = registry.cloudformation.list_types(Visibility="PUBLIC", Type="RESOURCE", Filters={"TypeNamePrefix": "AWS::S3::Bucket"})
    assert "AWS::S3::Bucket" in [summary["TypeName"] for summary in public["TypeSummaries"]]


def test_registrations_are_kept_across_a_restart_with_state(tmp_path: Path, note_package: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``--state``, types, versions, the default version, registrations and the publisher are read back by the next serve,
    whose workers run the default version again; version numbers go on from where they were."""
    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    monkeypatch.setenv("NOTES_STATE_DIR", str(tmp_path / "notes"))
    state = tmp_path / "kept"
    arguments = ("--no-reload", "--moto", "--virtual-clock", "--state", str(state))
    first = Registry(ServerProcess(project, *arguments), project)
    try:
        one = first.register("note-1.zip", note_package)
        two = first.register("note-2.zip", note_package)
        assert (one["ProgressStatus"], two["ProgressStatus"]) == ("COMPLETE", "COMPLETE"), (one, two)
        first.cloudformation.set_type_default_version(Arn=two["TypeVersionArn"])
        publisher = first.cloudformation.register_publisher(AcceptTermsAndConditions=True)["PublisherId"]
    finally:
        first.server.stop_cleanly(timeout=PATIENCE_S)
    kept_folders = sorted(p.name for p in (state / "registry" / "Cfnrun-Sample-Note").iterdir() if not p.name.startswith("."))
    assert kept_folders == sorted([one["token"], two["token"]])  # the packages stay unpacked in the state folder
    state = state.rename(tmp_path / "moved")  # a state folder may move: what it keeps is found relative to it
    arguments = (*arguments[:-1], str(state))

    second = Registry(ServerProcess(project, *arguments), project)
    try:
        second.server.has_printed(r"registry: RESOURCE Cfnrun::Sample::Note read back from .*versions 00000001, 00000002; default 00000002")
        cloudformation = second.cloudformation
        described = cloudformation.describe_type(Type="RESOURCE", TypeName=NOTE)
        assert (described["DefaultVersionId"], described["DeprecatedStatus"]) == ("00000002", "LIVE")
        assert json.loads(described["Schema"])["typeName"] == NOTE
        versions = cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE)["TypeVersionSummaries"]
        assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [("00000001", False), ("00000002", True)]
        assert cloudformation.describe_type_registration(RegistrationToken=one["token"])["TypeVersionArn"] == one["TypeVersionArn"]
        assert cloudformation.describe_publisher()["PublisherId"] == publisher
        cloudformation.create_stack(StackName="after-restart", TemplateBody=NOTE_STACK)  # the default version runs again
        cloudformation.get_waiter("stack_create_complete").wait(StackName="after-restart", WaiterConfig=FAST)
        second.server.has_printed(r"Cfnrun-Sample-Note-TypeFunction .*CREATE")
        three = second.register("note-3.zip", note_package)  # the embedded moto starts empty: uploaded again
        assert three["TypeVersionArn"].endswith("/00000003"), three
        cloudformation.deregister_type(Type="RESOURCE", TypeName=NOTE, VersionId="00000001")
    finally:
        second.server.stop_cleanly(timeout=PATIENCE_S)
    third = Registry(ServerProcess(project, *arguments), project)
    try:
        third.server.has_printed(r"registry: RESOURCE Cfnrun::Sample::Note read back from .*versions 00000002, 00000003; default 00000002")
        gone = third.cloudformation.list_type_versions(Type="RESOURCE", TypeName=NOTE, DeprecatedStatus="DEPRECATED")["TypeVersionSummaries"]
        assert [v["VersionId"] for v in gone] == ["00000001"]
    finally:
        third.server.stop(timeout=PATIENCE_S)


def _garbage(state: Path) -> None:
    (state / "registry.sqlite3").write_bytes(b"this is not a database, but someone's file" * 100)


def _unreadable_record(state: Path) -> None:
    from cfnrun.registry.kept import KeptRegistry

    kept = KeptRegistry(state)
    kept.save([{"kind": "RESOURCE", "type_name": "Org::Svc::Thing"}], [], None)  # a type record without its ARN and versions
    kept.close()


@pytest.mark.parametrize(("damage", "named"), [
    (_garbage, r"registry\.sqlite3: cannot use the registry kept there.*move it aside.*not kept"),
    (_unreadable_record, r"registry\.sqlite3 cannot be read back \(KeyError: 'arn'\); this serve's registrations are not kept"),
])
def test_a_damaged_kept_registry_is_named_left_as_it_is_and_serve_goes_on(tmp_path: Path, damage: Callable[[Path], None], named: str) -> None:
    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    state = tmp_path / "kept"
    state.mkdir()
    damage(state)
    damaged = (state / "registry.sqlite3").read_bytes()
    server = ServerProcess(project, "--no-reload", "--moto", "--state", str(state))
    try:
        server.has_printed(named)
        served = Registry(server, project)
        summaries = served.cloudformation.list_types(Visibility="PRIVATE")["TypeSummaries"]
        assert [summary["TypeName"] for summary in summaries] == [PARAMETER]  # serving, with an empty registry
    finally:
        server.stop(timeout=PATIENCE_S)
    assert (state / "registry.sqlite3").read_bytes() == damaged  # nothing written over it


def _module_package(fragment: bytes) -> bytes:
    """samples/module packaged as cfn submit packages a module: settings, schema, its one fragment."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.write(SAMPLES / "module" / ".rpdk-config", ".rpdk-config")
        archive.writestr("schema.json", json.dumps({"typeName": MODULE_TYPE, "description": "a bucket", "properties": {}}))
        archive.writestr("fragments/bucket.json", fragment)
    return out.getvalue()


def test_a_registered_hook_and_module_are_back_in_stacks_after_a_restart_with_state(tmp_path: Path) -> None:
    """With ``--state``, a registered hook comes back with the configuration SetTypeConfiguration gave it (it fires at once), a module
    with its fragment, and a RegisterType sent again with the same ClientRequestToken is the registration made before the restart."""
    project = tmp_path / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    arguments = ("--no-reload", "--moto", "--state", str(tmp_path / "kept"))
    hook = "Cfnrun::Test::VersioningGuard"
    document = {"CloudFormationConfiguration": {"HookConfiguration": {"HookInvocationStatus": "ENABLED", "TargetOperations": ["RESOURCE"], "FailureMode": "FAIL", "Properties": {}}}}
    first = Registry(ServerProcess(project, *arguments), project)
    try:
        assert first.register("hook.zip", _hook_package(FIXTURES / "versioning_hook"), hook, "HOOK")["ProgressStatus"] == "COMPLETE"
        module = _module_package((SAMPLES / "module" / "fragments" / "bucket.json").read_bytes())
        registered = first.register("module.zip", module, MODULE_TYPE, "MODULE", ClientRequestToken="release-7")
        assert registered["ProgressStatus"] == "COMPLETE"
        configured = first.cloudformation.set_type_configuration(Type="HOOK", TypeName=hook, Configuration=json.dumps(document))["ConfigurationArn"]
    finally:
        first.server.stop_cleanly(timeout=PATIENCE_S)
    second = Registry(ServerProcess(project, *arguments), project)
    try:
        cloudformation = second.cloudformation
        # the module's fragment expands again (the calls wait until the registry is read back)
        template = {"Resources": {"Logs": {"Type": MODULE_TYPE, "Properties": {"BucketName": "module-after-restart"}}}}
        cloudformation.create_stack(StackName="moduled", TemplateBody=json.dumps(template))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="moduled", WaiterConfig=FAST)
        assert "module-after-restart" in [b["Name"] for b in second.s3.list_buckets()["Buckets"]]
        second.server.has_printed(r"registry: HOOK Cfnrun::Test::VersioningGuard read back from .*default 00000001")
        # the same RegisterType sent again (one ClientRequestToken) is the registration made before: no new version, nothing fetched
        again = cloudformation.register_type(
            Type="MODULE", TypeName=MODULE_TYPE, SchemaHandlerPackage=f"s3://{BUCKET}/module.zip", ClientRequestToken="release-7",
        )["RegistrationToken"]
        assert again == registered["token"]
        assert [v["VersionId"] for v in cloudformation.list_type_versions(Type="MODULE", TypeName=MODULE_TYPE)["TypeVersionSummaries"]] == ["00000001"]
        # the hook is back in the stacks' hooks with the configuration it was given: it fires without SetTypeConfiguration again
        [kept] = cloudformation.batch_describe_type_configurations(TypeConfigurationIdentifiers=[{"Type": "HOOK", "TypeName": hook}])["TypeConfigurations"]
        assert (kept["Arn"], json.loads(kept["Configuration"])) == (configured, document)
        bucket = {"Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"VersioningConfiguration": {"Status": "Suspended"}}}}}
        cloudformation.create_stack(StackName="hooked", TemplateBody=json.dumps(bucket))
        with pytest.raises(Exception):  # noqa: B017 - the waiter's failure: the hook refuses the bucket
            cloudformation.get_waiter("stack_create_complete").wait(StackName="hooked", WaiterConfig=FAST)
        events = cloudformation.describe_stack_events(StackName="hooked")["StackEvents"]
        assert [e.get("HookStatusReason") for e in events if e.get("HookType") == hook and e.get("HookStatus") == "HOOK_COMPLETE_FAILED"] == [
            "Hook failed with message: bucket versioning must be Enabled (found Suspended)"
        ], events
    finally:
        second.server.stop(timeout=PATIENCE_S)
