"""The IaC generator on serve, driven by boto3: notes made through Cloud Control are scanned by the note type's LIST,
written as a template from its READ, then imported into a stack with an IMPORT change set and seen managed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
import yaml
from botocore.exceptions import ClientError

from conftest import ServerProcess, cfnrun, wait_until
from test_serve_stack_drift import FAST, client

NOTE = "Cfnrun::Sample::Note"
SECRET = "hunter2222"


def _note(cloudcontrol: Any, title: str, tag: str, **more: str) -> str:
    desired = {"Title": title, "Folder": "inbox", "AccessPassword": SECRET, "Tags": [{"Key": tag, "Value": "yes"}], **more}
    token = cloudcontrol.create_resource(TypeName=NOTE, DesiredState=json.dumps(desired))["ProgressEvent"]["RequestToken"]
    cloudcontrol.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    return str(cloudcontrol.get_resource_request_status(RequestToken=token)["ProgressEvent"]["Identifier"])


def _ended(describe: Callable[[], Dict[str, Any]], what: str) -> Dict[str, Any]:
    """``describe()``'s answer once its Status is no longer pending or in progress (the operations answer before they end)."""
    found: Dict[str, Any] = {}

    def over() -> bool:
        found.update(describe())
        return not found["Status"].endswith(("PENDING", "IN_PROGRESS"))

    wait_until(over, timeout=60, what=what)
    return found


def _scanned(cloudformation: Any, **arguments: Any) -> Dict[str, Any]:
    scan_id = cloudformation.start_resource_scan(**arguments)["ResourceScanId"]
    return _ended(lambda: cloudformation.describe_resource_scan(ResourceScanId=scan_id), "the resource scan to end")


def _generated(cloudformation: Any, name: str) -> Dict[str, Any]:
    return _ended(lambda: cloudformation.describe_generated_template(GeneratedTemplateName=name), f"generated template {name} to end")


def _error(call: Any, **arguments: Any) -> Dict[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**arguments)
    return dict(caught.value.response["Error"])


def _managed(cloudformation: Any, scan_id: str) -> Dict[str, bool]:
    pages = cloudformation.get_paginator("list_resource_scan_resources").paginate(ResourceScanId=scan_id)
    return {r["ResourceIdentifier"]["NoteId"]: r["ManagedByStack"] for page in pages for r in page["Resources"]}


def test_unmanaged_notes_are_scanned_generated_into_a_template_and_imported(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    server = serve(sample("note"), "--no-reload", "--virtual-clock")
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    first, second = _note(cloudcontrol, "first", "team"), _note(cloudcontrol, "second", "other")
    cloudformation.create_stack(StackName="owner", TemplateBody=json.dumps({"Resources": {"Kept": {"Type": NOTE, "Properties": {"Title": "k"}}}}))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="owner", WaiterConfig=FAST)
    in_stack = cloudformation.describe_stack_resource(StackName="owner", LogicalResourceId="Kept")["StackResourceDetail"]["PhysicalResourceId"]

    scan = _scanned(cloudformation)
    assert (scan["Status"], scan["PercentageCompleted"], scan["ResourceTypes"], scan["ResourcesScanned"]) == ("COMPLETE", 100.0, [NOTE], 3)
    assert "ScanFilters" not in scan
    server.has_printed(r"LIST \(resource scan\)")  # the note's LIST handler ran, as any served operation does
    assert _managed(cloudformation, scan["ResourceScanId"]) == {first: False, second: False, in_stack: True}
    tagged = cloudformation.list_resource_scan_resources(ResourceScanId=scan["ResourceScanId"], TagKey="team")["Resources"]
    assert tagged == [{"ResourceType": NOTE, "ResourceIdentifier": {"NoteId": first}, "ManagedByStack": False}]
    [summary] = cloudformation.list_resource_scans()["ResourceScanSummaries"]
    assert (summary["ResourceScanId"], summary["ScanType"], summary["Status"]) == (scan["ResourceScanId"], "FULL", "COMPLETE")

    resources = [
        {"ResourceType": NOTE, "LogicalResourceId": "FirstNote", "ResourceIdentifier": {"NoteId": first}},
        {"ResourceType": NOTE, "ResourceIdentifier": {"NoteId": second}},
    ]
    template_id = cloudformation.create_generated_template(GeneratedTemplateName="notes", Resources=resources)["GeneratedTemplateId"]
    assert template_id.startswith("arn:aws:cloudformation:us-east-1:") and ":generatedtemplate/" in template_id
    described = _generated(cloudformation, template_id)
    assert described["Status"] == "COMPLETE", described
    assert described["Progress"] == {"ResourcesSucceeded": 2, "ResourcesFailed": 0, "ResourcesProcessing": 0, "ResourcesPending": 0}
    assert described["TemplateConfiguration"] == {"DeletionPolicy": "RETAIN", "UpdateReplacePolicy": "RETAIN"}
    [named, generated] = described["Resources"]
    assert (named["LogicalResourceId"], named["ResourceStatus"], named["ResourceIdentifier"]) == ("FirstNote", "COMPLETE", {"NoteId": first})
    # AccessPassword is writeOnly and optional: READ cannot return it, so it is left out with the documented warning
    assert named["Warnings"] == [
        {"Type": "UNSUPPORTED_PROPERTIES", "Properties": [{"PropertyPath": "AccessPassword", "Required": False,
                                                           "Description": "Stored but never returned."}]}
    ]
    assert described["TotalWarnings"] == 2
    server.has_printed(r"READ \(IaC generator notes FirstNote\)")  # each resource READ by its handler

    body = cloudformation.get_generated_template(GeneratedTemplateName="notes")["TemplateBody"]
    assert SECRET not in body
    document = json.loads(body)
    note = document["Resources"]["FirstNote"]
    assert (note["Type"], note["DeletionPolicy"], note["UpdateReplacePolicy"]) == (NOTE, "Retain", "Retain")
    assert note["Properties"] == {"Title": "first", "Folder": "inbox", "Tags": [{"Key": "team", "Value": "yes"}]}  # no readOnly NoteId, CreatedAt
    assert document["Resources"][generated["LogicalResourceId"]]["Properties"]["Title"] == "second"
    yaml_body = cloudformation.get_generated_template(GeneratedTemplateName="notes", Format="YAML")["TemplateBody"]
    assert yaml.safe_load(yaml_body) == document

    to_import = [{k: r[k] for k in ("ResourceType", "LogicalResourceId", "ResourceIdentifier")} for r in described["Resources"]]
    cloudformation.create_change_set(StackName="imported", ChangeSetName="bring", ChangeSetType="IMPORT", TemplateBody=body,
                                     ResourcesToImport=to_import)
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="imported", ChangeSetName="bring", WaiterConfig=FAST)
    cloudformation.execute_change_set(StackName="imported", ChangeSetName="bring")
    cloudformation.get_waiter("stack_import_complete").wait(StackName="imported", WaiterConfig=FAST)
    statuses = {r["LogicalResourceId"]: (r["PhysicalResourceId"], r["ResourceStatus"])
                for r in cloudformation.describe_stack_resources(StackName="imported")["StackResources"]}
    assert statuses == {"FirstNote": (first, "IMPORT_COMPLETE"), generated["LogicalResourceId"]: (second, "IMPORT_COMPLETE")}

    rescan = _scanned(cloudformation, ClientRequestToken="again")
    assert _managed(cloudformation, rescan["ResourceScanId"]) == {first: True, second: True, in_stack: True}
    assert cloudformation.start_resource_scan(ClientRequestToken="again")["ResourceScanId"] == rescan["ResourceScanId"]
    refused = _error(cloudformation.create_generated_template, GeneratedTemplateName="again", Resources=resources[:1])
    assert (refused["Code"], refused["Message"]) == (
        "ValidationError", f"Resource {NOTE} [{first}] is managed by a stack already: the IaC generator takes unmanaged resources only"
    )


def test_a_template_is_updated_refused_and_deleted_as_the_service_does(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    server = serve(sample("note"), "--no-reload", "--virtual-clock")
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    note_id = _note(cloudcontrol, "only", "team")
    one: List[Dict[str, Any]] = [{"ResourceType": NOTE, "LogicalResourceId": "Only", "ResourceIdentifier": {"NoteId": note_id}}]

    def refused(call: Any, **arguments: Any) -> tuple:
        error = _error(call, **arguments)
        return error["Code"], error["Message"]

    assert refused(cloudformation.start_resource_scan, ScanFilters=[{"Types": ["AWS::*::Bucket"]}])[0] == "ValidationError"
    assert refused(cloudformation.describe_resource_scan, ResourceScanId="arn:aws:cloudformation:us-east-1:1:resourceScan/x") == (
        "ResourceScanNotFound", "Resource scan [arn:aws:cloudformation:us-east-1:1:resourceScan/x] not found"
    )
    assert refused(cloudformation.create_generated_template, GeneratedTemplateName="t",
                   Resources=[{"ResourceType": NOTE, "ResourceIdentifier": {"Id": note_id}}]) == (
        "ValidationError", f"ResourceIdentifier of {NOTE} must name its primaryIdentifier properties [NoteId]; got [Id]"
    )
    named_badly = [{**one[0], "LogicalResourceId": "my-note"}]
    assert refused(cloudformation.create_generated_template, GeneratedTemplateName="t", Resources=named_badly) == (
        "ValidationError", "Logical resource id [my-note] is not valid: it must be alphanumeric (A-Za-z0-9) and at most 255 characters"
    )
    bucket = [{"ResourceType": "AWS::S3::Bucket", "ResourceIdentifier": {"BucketName": "b"}}]
    assert "not supported" in refused(cloudformation.create_generated_template, GeneratedTemplateName="t", Resources=bucket)[1]

    cloudformation.create_generated_template(GeneratedTemplateName="t", Resources=one, TemplateConfiguration={"DeletionPolicy": "DELETE"})
    assert refused(cloudformation.create_generated_template, GeneratedTemplateName="t") == (
        "AlreadyExistsException", "Generated template [t] already exists"
    )
    assert _generated(cloudformation, "t")["Status"] == "COMPLETE"
    document = json.loads(cloudformation.get_generated_template(GeneratedTemplateName="t")["TemplateBody"])
    assert (document["Resources"]["Only"]["DeletionPolicy"], document["Resources"]["Only"]["UpdateReplacePolicy"]) == ("Delete", "Retain")

    # renamed, its policy changed, a resource no READ finds added: FAILED, and GetGeneratedTemplate keeps the last COMPLETE one
    missing = [{"ResourceType": NOTE, "LogicalResourceId": "Gone", "ResourceIdentifier": {"NoteId": "note-000000000000"}}]
    cloudformation.update_generated_template(GeneratedTemplateName="t", NewGeneratedTemplateName="u", AddResources=missing,
                                             TemplateConfiguration={"UpdateReplacePolicy": "DELETE"})
    failed = _generated(cloudformation, "u")
    assert (failed["Status"], failed["StatusReason"]) == ("FAILED", "1 resource(s) could not be read: Gone")
    gone = {r["LogicalResourceId"]: r for r in failed["Resources"]}["Gone"]
    assert gone["ResourceStatus"] == "FAILED" and "(HandlerErrorCode: NotFound)" in gone["ResourceStatusReason"]
    assert json.loads(cloudformation.get_generated_template(GeneratedTemplateName="u")["TemplateBody"]) == document

    assert refused(cloudformation.update_generated_template, GeneratedTemplateName="u", RemoveResources=["Nope"]) == (
        "ValidationError", "The following resource(s) are not in generated template [u]: [Nope]"
    )
    cloudformation.update_generated_template(GeneratedTemplateName="u", RemoveResources=["Gone"])
    assert _generated(cloudformation, "u")["Status"] == "COMPLETE"
    only = json.loads(cloudformation.get_generated_template(GeneratedTemplateName="u")["TemplateBody"])["Resources"]["Only"]
    assert (only["DeletionPolicy"], only["UpdateReplacePolicy"]) == ("Delete", "Delete")
    assert [s["GeneratedTemplateName"] for s in cloudformation.list_generated_templates()["Summaries"]] == ["u"]

    cloudformation.delete_generated_template(GeneratedTemplateName="u")
    assert refused(cloudformation.describe_generated_template, GeneratedTemplateName="u") == (
        "GeneratedTemplateNotFound", "Generated template [u] not found"
    )


def test_a_partial_scan_and_a_template_built_on_a_stack(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CFNRUN_HISTORY", "on")
    project = sample("note")
    schema_file = project / "cfnrun-sample-note.json"
    schema = json.loads(schema_file.read_text())  # a note's Content names another note by its Title
    schema["properties"]["Content"]["relationshipRef"] = {"typeName": NOTE, "propertyPath": "/properties/Title"}
    schema_file.write_text(json.dumps(schema))
    server = serve(project, "--no-reload", "--virtual-clock")
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    note_id = _note(cloudcontrol, "loose", "team")
    pointing = _note(cloudcontrol, "pointer", "team", Content="loose")
    base = {"Parameters": {"Title": {"Type": "String"}}, "Resources": {"Kept": {"Type": NOTE, "Properties": {"Title": {"Ref": "Title"}}}}}
    cloudformation.create_stack(StackName="base", TemplateBody=json.dumps(base), Parameters=[{"ParameterKey": "Title", "ParameterValue": "k"}])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="base", WaiterConfig=FAST)

    notes = _scanned(cloudformation, ScanFilters=[{"Types": ["Cfnrun::Sample::*"]}])
    assert (notes["Status"], notes["ResourceTypes"], notes["ScanFilters"]) == ("COMPLETE", [NOTE], [{"Types": ["Cfnrun::Sample::*"]}])
    buckets = _scanned(cloudformation, ScanFilters=[{"Types": ["AWS::S3::*"]}])  # AWS::* resources have no LIST cfnrun runs
    assert (buckets["Status"], buckets["ResourceTypes"], buckets["ResourcesScanned"]) == ("COMPLETE", [], 0)
    assert cloudformation.list_resource_scans()["ResourceScanSummaries"] == []  # FULL scans unless ScanTypeFilter says otherwise
    partial = cloudformation.list_resource_scans(ScanTypeFilter="PARTIAL")["ResourceScanSummaries"]
    assert [s["ResourceScanId"] for s in partial] == [buckets["ResourceScanId"], notes["ResourceScanId"]]  # newest first

    loose = [{"ResourceType": NOTE, "LogicalResourceId": "Loose", "ResourceIdentifier": {"NoteId": note_id}}]
    cloudformation.create_generated_template(GeneratedTemplateName="grown", StackName="base", Resources=loose)
    described = _generated(cloudformation, "grown")
    assert described["StackId"] == cloudformation.describe_stacks(StackName="base")["Stacks"][0]["StackId"]
    document = json.loads(cloudformation.get_generated_template(GeneratedTemplateName="grown")["TemplateBody"])
    assert document["Parameters"] == base["Parameters"]
    assert document["Resources"]["Kept"] == base["Resources"]["Kept"]  # the stack's resources, as its template declares them
    assert document["Resources"]["Loose"]["Properties"]["Title"] == "loose"
    # the whole stack's template: the loose note is imported into the base stack, whose own note stays as it is
    cloudformation.create_change_set(
        StackName="base", ChangeSetName="grow", ChangeSetType="IMPORT", TemplateBody=json.dumps(document), ResourcesToImport=loose,
        Parameters=[{"ParameterKey": "Title", "UsePreviousValue": True}],
    )
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="base", ChangeSetName="grow", WaiterConfig=FAST)
    cloudformation.execute_change_set(StackName="base", ChangeSetName="grow")
    cloudformation.get_waiter("stack_import_complete").wait(StackName="base", WaiterConfig=FAST)
    imported = cloudformation.describe_stack_resource(StackName="base", LogicalResourceId="Loose")["StackResourceDetail"]
    assert (imported["PhysicalResourceId"], imported["ResourceStatus"]) == (note_id, "IMPORT_COMPLETE")
    def related(of: str) -> List[str]:
        given = [{"ResourceType": NOTE, "ResourceIdentifier": {"NoteId": of}}]
        found = cloudformation.list_resource_scan_related_resources(ResourceScanId=notes["ResourceScanId"], Resources=given)
        return [r["ResourceIdentifier"]["NoteId"] for r in found["RelatedResources"]]

    assert (related(note_id), related(pointing)) == ([pointing], [note_id])  # either way, through the relationshipRef

    # each LIST and READ is in the provider's history, as any served operation is (serve writes it as it goes), and replays
    records: Dict[Tuple[str, str], int] = {}

    def recorded() -> bool:
        lines = cfnrun("history", "--json", cwd=project).stdout.splitlines()
        records.update({(r["source"], r["action"]): r["id"] for r in map(json.loads, lines) if r["status"] == "SUCCESS"})
        return {("iac-generator", "LIST"), ("iac-generator", "READ")} <= set(records)

    wait_until(recorded, timeout=60, what="the LIST and READ in the history")
    replayed = cfnrun("replay", str(records[("iac-generator", "READ")]), cwd=project)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def _gated(project: Path, gate: Path) -> None:
    """The note's LIST and READ handlers wait until ``gate`` exists: a scan and a generation stay in progress until then."""
    handlers = project / "src" / "cfnrun_sample_note" / "handlers.py"
    wait = f"    import pathlib, time\n    while not pathlib.Path({str(gate)!r}).exists():\n        time.sleep(0.01)\n"
    source = handlers.read_text()
    for handler in ("read_handler", "list_handler"):
        signature_end = source.index(") -> ProgressEvent:\n", source.index(f"def {handler}(")) + len(") -> ProgressEvent:\n")
        source = source[:signature_end] + wait + source[signature_end:]
    handlers.write_text(source)


def test_what_is_in_progress_refuses_another_scan_a_listing_and_a_sixth_generation(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    project, gate = sample("note"), tmp_path / "gate"
    _gated(project, gate)
    server = serve(project, "--no-reload", "--virtual-clock")
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    note_id = _note(cloudcontrol, "held", "team")

    scan_id = cloudformation.start_resource_scan()["ResourceScanId"]
    running = cloudformation.describe_resource_scan(ResourceScanId=scan_id)
    assert (running["Status"], running["PercentageCompleted"]) == ("IN_PROGRESS", 0.0) and "ResourceTypes" not in running
    another = _error(cloudformation.start_resource_scan)
    assert (another["Code"], another["Message"]) == (
        "ResourceScanInProgress", f"A resource scan is already in progress ({scan_id}): only one runs at a time in an account and Region"
    )
    assert _error(cloudformation.list_resource_scan_resources, ResourceScanId=scan_id)["Code"] == "ResourceScanInProgress"

    one = [{"ResourceType": NOTE, "ResourceIdentifier": {"NoteId": note_id}}]
    for number in range(5):
        cloudformation.create_generated_template(GeneratedTemplateName=f"t{number}", Resources=one)
    sixth = _error(cloudformation.create_generated_template, GeneratedTemplateName="t5", Resources=one)
    assert sixth["Code"] == "ConcurrentResourcesLimitExceeded"
    assert _error(cloudformation.delete_generated_template, GeneratedTemplateName="t0")["Code"] == "ConcurrentResourcesLimitExceeded"
    assert _error(cloudformation.update_generated_template, GeneratedTemplateName="t0", RefreshAllResources=True)["Code"] == (
        "ConcurrentResourcesLimitExceeded"
    )
    assert cloudformation.get_generated_template(GeneratedTemplateName="t0")["TemplateBody"] == "{}"  # never COMPLETE yet

    gate.touch()
    assert _ended(lambda: cloudformation.describe_resource_scan(ResourceScanId=scan_id), "the scan")["Status"] == "COMPLETE"
    assert [_generated(cloudformation, f"t{n}")["Status"] for n in range(5)] == ["COMPLETE"] * 5
    cloudformation.delete_generated_template(GeneratedTemplateName="t0")


def test_scans_and_templates_are_listed_again_after_a_restart_with_state(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    project, state = sample("note"), tmp_path / "state"
    server = serve(project, "--no-reload", "--virtual-clock", "--state", str(state))
    cloudformation, cloudcontrol = client(server, "cloudformation"), client(server, "cloudcontrol")
    loose = _note(cloudcontrol, "loose", "team")
    cloudformation.create_stack(StackName="owner", TemplateBody=json.dumps({"Resources": {"Kept": {"Type": NOTE, "Properties": {"Title": "k"}}}}))
    cloudformation.get_waiter("stack_create_complete").wait(StackName="owner", WaiterConfig=FAST)
    scan = _scanned(cloudformation)
    listed = _managed(cloudformation, scan["ResourceScanId"])
    definitions = [{"ResourceType": NOTE, "LogicalResourceId": "Loose", "ResourceIdentifier": {"NoteId": loose}}]
    cloudformation.create_generated_template(GeneratedTemplateName="kept", StackName="owner", Resources=definitions)
    cloudformation.create_generated_template(GeneratedTemplateName="gone", Resources=definitions)
    kept, _ = _generated(cloudformation, "kept"), _generated(cloudformation, "gone")
    body = cloudformation.get_generated_template(GeneratedTemplateName="kept")["TemplateBody"]
    cloudformation.delete_generated_template(GeneratedTemplateName="gone")
    server.stop_cleanly()
    assert SECRET not in (state / "stacks.sqlite3").read_bytes().decode("latin-1")  # the note's writeOnly AccessPassword

    again = serve(project, "--no-reload", "--virtual-clock", "--state", str(state))
    cloudformation = client(again, "cloudformation")
    [summary] = cloudformation.list_resource_scans()["ResourceScanSummaries"]
    assert (summary["ResourceScanId"], summary["Status"]) == (scan["ResourceScanId"], "COMPLETE")
    assert _managed(cloudformation, scan["ResourceScanId"]) == listed
    described = cloudformation.describe_generated_template(GeneratedTemplateName="kept")
    assert {k: described[k] for k in ("GeneratedTemplateId", "Status", "Resources")} == {k: kept[k] for k in ("GeneratedTemplateId", "Status", "Resources")}
    assert described["StackId"] == kept["StackId"]
    assert cloudformation.get_generated_template(GeneratedTemplateName="kept")["TemplateBody"] == body
    assert [t["GeneratedTemplateName"] for t in cloudformation.list_generated_templates()["Summaries"]] == ["kept"]
    assert _error(cloudformation.describe_generated_template, GeneratedTemplateName="gone")["Code"] == "GeneratedTemplateNotFound"
