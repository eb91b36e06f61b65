"""The extension's whole life with the real ``cfn`` CLI (issue #34): fresh ``cfn init`` projects submitted to ``cfnrun serve --moto``.

Each test makes a project with ``cfn init`` (non-interactive, in a temporary folder), ``cfn submit
--set-default``s it unchanged against one serve shared by this module (``--endpoint-url`` to serve,
``AWS_ENDPOINT_URL_S3`` to serve too, which passes S3 calls on to its moto), uses the registered default version in a stack, edits the project
and submits again: version 00000002 becomes the default and the stack's update runs it. cfn's pip build
installs from a wheel of this venv's cloudformation-cli-python-lib (tests/cfn_cli.py).

The three tests share one serve, so its upload stack (``CloudFormationManagedUploadInfrastructure``) is
made by whichever submits first and found up to date by the others; the hook is configured for its own
stacks only (StackFilters), so it does not fire on the module test's bucket.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from botocore.exceptions import WaiterError

from cfn_cli import cfn, make_wheelhouse
from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.2, "MaxAttempts": 1500}
INFRASTRUCTURE = "CloudFormationManagedUploadInfrastructure"
pytestmark = pytest.mark.timeout(PATIENCE_S * 6)  # two submits, stacks and a serve on a shared 2-core machine, bound as the waits inside


class Submitting:
    """One ``cfnrun serve --moto`` (of samples/parameter: serve needs a project, and this one names none of the submitted types),
    boto3 clients for its CloudFormation API and S3 (both at serve's address: serve passes S3 calls on to its moto), and cfn's
    pip build offline."""

    def __init__(self, server: ServerProcess, wheelhouse: Path) -> None:
        import boto3

        self.server = server
        self.wheelhouse = wheelhouse
        self.cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        self.s3 = boto3.client("s3", endpoint_url=server.url, **CREDENTIALS)

    def init(self, folder: Path, *args: str) -> Path:
        """``cfn init ARGS`` in a new ``folder``, as a user runs it: the fresh project."""
        folder.mkdir()
        run = cfn(folder, "init", *args)
        assert run.returncode == 0, run.stdout + run.stderr
        return folder

    def submit(self, project: Path) -> None:
        """The real ``cfn submit --set-default`` in ``project``: its CloudFormation calls and its S3 upload to serve (the upload
        passed on to serve's moto)."""
        run = cfn(
            project, "submit", "--endpoint-url", self.server.url, "--region", "us-east-1", "--set-default",
            wheelhouse=self.wheelhouse, env={"AWS_ENDPOINT_URL_S3": self.server.url}, timeout=PATIENCE_S * 3,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    def stack(self, name: str, template: Dict[str, Any], update: bool = False) -> Dict[str, Any]:
        """CreateStack (or UpdateStack) ``name``, waited for; the stack as DescribeStacks answers, whatever its end."""
        call = self.cloudformation.update_stack if update else self.cloudformation.create_stack
        call(StackName=name, TemplateBody=json.dumps(template))
        waiter = self.cloudformation.get_waiter("stack_update_complete" if update else "stack_create_complete")
        try:
            waiter.wait(StackName=name, WaiterConfig=FAST)
        except WaiterError:  # rolled back: the events say why
            pass
        return dict(self.cloudformation.describe_stacks(StackName=name)["Stacks"][0])

    def events(self, name: str) -> List[Dict[str, Any]]:
        return list(self.cloudformation.describe_stack_events(StackName=name)["StackEvents"])


@pytest.fixture(scope="module")
def submitting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Submitting]:
    project = tmp_path_factory.mktemp("serve") / "parameter"
    shutil.copytree(SAMPLES / "parameter", project, ignore=LOCAL_STATE)
    server = ServerProcess(project, "--no-reload", "--moto", "--virtual-clock")
    try:
        yield Submitting(server, make_wheelhouse(tmp_path_factory.mktemp("wheels")))
    finally:
        server.stop(timeout=PATIENCE_S)


def _edit(path: Path, old: str, new: str) -> None:
    """Change ``old`` to ``new`` in ``path``, as a user's editor would; ``old`` must be there (cfn init's template changed otherwise)."""
    text = path.read_text()
    assert old in text, f"{path} no longer holds {old!r}"
    path.write_text(text.replace(old, new))


# The stock create handler makes an identifier but does not put it in the model (its TODO): the first edit every new project
# makes. The code it returns says which version made the resource.
STOCK_CREATE = "        # Setting Status to success will signal to cfn that the operation is complete\n"


def _tps_code(version: str) -> str:
    return f'        model.TPSCode = "TPS%08d-{version}" % (abs(hash(primary_identifier)) % 10**8)\n' + STOCK_CREATE


def test_a_fresh_resource_project_is_submitted_used_in_a_stack_and_its_second_version_updates_it(submitting: Submitting, tmp_path: Path) -> None:
    thing = "Org::Svc::Thing"
    project = submitting.init(tmp_path / "thing", "--type-name", thing, "--artifact-type", "RESOURCE", "python311", "--no-docker")
    handlers = project / "src" / "org_svc_thing" / "handlers.py"
    _edit(handlers, STOCK_CREATE, _tps_code("0001"))
    submitting.submit(project)
    cloudformation = submitting.cloudformation
    described = cloudformation.describe_type(Type="RESOURCE", TypeName=thing)
    assert (described["DefaultVersionId"], described["DeprecatedStatus"], described["Visibility"]) == ("00000001", "LIVE", "PRIVATE")
    assert described["LoggingConfig"]["LogGroupName"] == "org-svc-thing-logs"  # what cfn sent: its upload stack's role
    assert described["ExecutionRoleArn"].startswith("arn:aws:iam::123456789012:role/")  # the role stack cfn made from resource-role.yaml
    assert cloudformation.describe_stacks(StackName="org-svc-thing-role-stack")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    # the upload stack is a local stack whose bucket policies are on moto's S3, where cfn put the package
    infrastructure = cloudformation.describe_stacks(StackName=INFRASTRUCTURE)["Stacks"][0]
    assert infrastructure["StackStatus"] == "CREATE_COMPLETE" and infrastructure["EnableTerminationProtection"] is True
    bucket = next(o["OutputValue"] for o in infrastructure["Outputs"] if o["OutputKey"] == "CloudFormationManagedUploadBucketName")
    uploaded = [o["Key"] for o in submitting.s3.list_objects_v2(Bucket=bucket)["Contents"] if o["Key"].startswith("org-svc-thing-")]
    assert len(uploaded) == 1 and uploaded[0].endswith(".zip"), uploaded
    resources = cloudformation.describe_stack_resources(StackName=INFRASTRUCTURE)["StackResources"]
    policies = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::S3::BucketPolicy"}
    assert policies["ArtifactCopyPolicy"] == bucket and set(policies) == {"ArtifactCopyPolicy", "AccessLogsBucketPolicy"}
    # moto enforces policies without their Conditions: the conditional Deny statements are left out, and the events say so
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError, match="NoSuchBucketPolicy"):
        submitting.s3.get_bucket_policy(Bucket=bucket)
    logs_policy = json.loads(submitting.s3.get_bucket_policy(Bucket=policies["AccessLogsBucketPolicy"])["Policy"])
    assert [statement["Sid"] for statement in logs_policy["Statement"]] == ["S3 Server Access Logs Policy"]
    reasons = [e.get("ResourceStatusReason") or "" for e in submitting.events(INFRASTRUCTURE) if e["LogicalResourceId"] == "ArtifactCopyPolicy"]
    assert any("(Require Secure Transport)" in reason for reason in reasons), reasons

    # version 1 makes a stack's resource, on serve's warm workers
    one = {"Type": thing, "Properties": {"Title": "made by the first version", "TestCode": "NOT_STARTED"}}
    template: Dict[str, Any] = {"Resources": {"One": one}, "Outputs": {"One": {"Value": {"Fn::GetAtt": ["One", "TPSCode"]}}}}
    made = submitting.stack("things", template)
    assert made["StackStatus"] == "CREATE_COMPLETE", submitting.events("things")
    assert re.fullmatch(r"TPS[0-9]{8}-0001", made["Outputs"][0]["OutputValue"]), made["Outputs"]
    submitting.server.has_printed(r"Org-Svc-Thing-TypeFunction .*CREATE")

    # edited and submitted again: version 2 is the default (cfn finds its role and upload stacks up to date), the update runs it
    _edit(handlers, _tps_code("0001"), _tps_code("0002"))
    (project / "rpdk.log").unlink()
    submitting.submit(project)
    log = (project / "rpdk.log").read_text()  # cfn's own log
    assert f"{INFRASTRUCTURE} stack is up to date" in log and "org-svc-thing-role-stack stack is up to date" in log
    assert cloudformation.describe_type(Type="RESOURCE", TypeName=thing)["DefaultVersionId"] == "00000002"
    versions = cloudformation.list_type_versions(Type="RESOURCE", TypeName=thing)["TypeVersionSummaries"]
    assert [(v["VersionId"], v["IsDefaultVersion"]) for v in versions] == [("00000001", False), ("00000002", True)]
    template["Resources"]["Two"] = {"Type": thing, "Properties": {"Title": "made by the second version", "TestCode": "NOT_STARTED"}}
    template["Outputs"]["Two"] = {"Value": {"Fn::GetAtt": ["Two", "TPSCode"]}}
    updated = submitting.stack("things", template, update=True)
    assert updated["StackStatus"] == "UPDATE_COMPLETE", submitting.events("things")
    codes = {o["OutputKey"]: o["OutputValue"] for o in updated["Outputs"]}
    assert codes["One"] == made["Outputs"][0]["OutputValue"] and re.fullmatch(r"TPS[0-9]{8}-0002", codes["Two"]), codes


def test_a_fresh_hook_project_is_submitted_configured_fires_and_its_second_version_takes_over(submitting: Submitting, tmp_path: Path) -> None:
    guard = "Org::Svc::Guard"
    project = submitting.init(  # its target's schema from serve's registry, as the guide says
        tmp_path / "guard", "--type-name", guard, "--artifact-type", "HOOK", "--endpoint-url", submitting.server.url, "--region", "us-east-1",
        "python311", "--no-docker",
    )
    assert "BucketName" in (project / "src" / "org_svc_guard" / "target_models" / "aws_s3_bucket.py").read_text()  # its target's model
    submitting.submit(project)  # the stock handlers: pre-update refuses a change to a bucket's encryption
    cloudformation = submitting.cloudformation
    described = cloudformation.describe_type(Type="HOOK", TypeName=guard)
    assert (described["Type"], described["DefaultVersionId"], described["ProvisioningType"]) == ("HOOK", "00000001", "NON_PROVISIONABLE")
    assert described["ExecutionRoleArn"].startswith("arn:aws:iam::123456789012:role/")  # the role stack cfn made from hook-role.yaml
    assert json.loads(described["ConfigurationSchema"])["properties"]["EncryptionAlgorithm"]["default"] == "AES256"

    def bucket(algorithm: str) -> Dict[str, Any]:
        encryption = {"ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": algorithm}}]}
        return {"Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketEncryption": encryption}}}}

    def hook_results(stack: str) -> List[tuple]:
        return [(e["HookStatus"], e.get("HookStatusReason")) for e in reversed(submitting.events(stack)) if e.get("HookType") == guard]

    # registered, it is disabled until its configuration enables it (test_registry.py shows that): here for this test's stacks only
    configuration = {"CloudFormationConfiguration": {"HookConfiguration": {
        "HookInvocationStatus": "ENABLED", "TargetOperations": ["RESOURCE"], "FailureMode": "FAIL", "Properties": {"EncryptionAlgorithm": "aws:kms"},
        "StackFilters": {"FilteringCriteria": "ALL", "StackNames": {"Include": ["guarded"]}},
    }}}
    cloudformation.set_type_configuration(Type="HOOK", TypeName=guard, Configuration=json.dumps(configuration))
    assert submitting.stack("guarded", bucket("AES256"))["StackStatus"] == "CREATE_COMPLETE"
    assert hook_results("guarded")[-1][0] == "HOOK_COMPLETE_SUCCEEDED", hook_results("guarded")  # it fired: pre-create allows any bucket
    refused = submitting.stack("guarded", bucket("aws:kms"), update=True)
    assert refused["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    # the stock handler answers FAILED without an error code (not NonCompliant): the hook failed, and with FailureMode FAIL so does the update
    assert hook_results("guarded")[-1] == ("HOOK_FAILED", f"Hook {guard} failed: Encryption configuration can not be changed"), hook_results("guarded")

    # edited (its refusal now says what to do instead), submitted again: version 2 is the default and fires
    _edit(project / "src" / "org_svc_guard" / "handlers.py", '"Encryption configuration can not be changed"',
          '"Encryption configuration can not be changed: make a new bucket"')
    submitting.submit(project)
    assert cloudformation.describe_type(Type="HOOK", TypeName=guard)["DefaultVersionId"] == "00000002"
    assert submitting.stack("guarded", bucket("aws:kms"), update=True)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    expected = f"Hook {guard} failed: Encryption configuration can not be changed: make a new bucket"
    assert hook_results("guarded")[-1] == ("HOOK_FAILED", expected), hook_results("guarded")


def test_a_fresh_module_project_is_submitted_expanded_in_a_stack_and_its_second_version_updates_it(submitting: Submitting, tmp_path: Path) -> None:
    module = "Org::Svc::Bucket::MODULE"
    project = submitting.init(tmp_path / "module", "--type-name", module, "--artifact-type", "MODULE")
    submitting.submit(project)  # no role stack: a module has no handlers
    described = submitting.cloudformation.describe_type(Type="MODULE", TypeName=module)
    assert (described["DefaultVersionId"], described["ProvisioningType"]) == ("00000001", "NON_PROVISIONABLE"), described
    template: Dict[str, Any] = {"Resources": {"Logs": {"Type": module, "Properties": {"BucketName": "fresh-module-bucket"}}}}
    assert submitting.stack("moduled", template)["StackStatus"] == "CREATE_COMPLETE", submitting.events("moduled")
    [resource] = submitting.cloudformation.describe_stack_resources(StackName="moduled")["StackResources"]
    assert (resource["LogicalResourceId"], resource["ResourceType"]) == ("LogsS3Bucket", "AWS::S3::Bucket")
    assert "fresh-module-bucket" in [b["Name"] for b in submitting.s3.list_buckets()["Buckets"]]  # made on moto

    # the fragment edited (a second bucket, for copies), submitted again: version 2 is the default and the stack's update expands it
    fragment = project / "fragments" / "sample.json"
    document = json.loads(fragment.read_text())
    document["Resources"]["Copies"] = {"Type": "AWS::S3::Bucket"}
    fragment.write_text(json.dumps(document, indent=4))
    submitting.submit(project)
    assert submitting.cloudformation.describe_type(Type="MODULE", TypeName=module)["DefaultVersionId"] == "00000002"
    template["Outputs"] = {"Bucket": {"Value": {"Ref": "LogsS3Bucket"}}}
    updated = submitting.stack("moduled", template, update=True)
    assert updated["StackStatus"] == "UPDATE_COMPLETE", submitting.events("moduled")
    resources = submitting.cloudformation.describe_stack_resources(StackName="moduled")["StackResources"]
    assert sorted(r["LogicalResourceId"] for r in resources) == ["LogsCopies", "LogsS3Bucket"], resources
    copies = next(r["PhysicalResourceId"] for r in resources if r["LogicalResourceId"] == "LogsCopies")
    assert copies in [b["Name"] for b in submitting.s3.list_buckets()["Buckets"]]
