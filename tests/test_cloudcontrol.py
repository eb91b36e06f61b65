"""The Cloud Control API on ``cfnrun serve``, driven by boto3's cloudcontrol client and the aws CLI."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError, WaiterError

from conftest import ServerProcess, pid_alive, wait_until

NOTE = "Cfnrun::Sample::Note"
CLUSTER = "Cfnrun::Sample::Cluster"
FAST = {"Delay": 0.05, "MaxAttempts": 400}  # the waiter polls every 50 ms instead of 5 s


def cloudcontrol(server: ServerProcess) -> Any:
    import boto3

    return boto3.client(
        "cloudcontrol",
        endpoint_url=server.url,
        region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 0}),
    )


def code_of(error: ClientError) -> str:
    return str(error.response["Error"]["Code"])


def wait_success(client: Any, response: Dict[str, Any]) -> Dict[str, Any]:
    token = response["ProgressEvent"]["RequestToken"]
    client.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    return dict(client.get_resource_request_status(RequestToken=token)["ProgressEvent"])


def create(client: Any, type_name: str, desired: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    return dict(client.create_resource(TypeName=type_name, DesiredState=json.dumps(desired), **extra))


def patch(client: Any, type_name: str, identifier: str, operations: List[Dict[str, Any]]) -> Dict[str, Any]:
    return dict(client.update_resource(TypeName=type_name, Identifier=identifier, PatchDocument=json.dumps(operations)))


@pytest.mark.parametrize(
    "name, type_name, desired, change, flags",
    [
        ("note", NOTE, {"Title": "groceries", "Folder": "home", "AccessPassword": "s3cret-pass"}, ("/Title", "shopping"), ()),
        ("cluster", CLUSTER, {"Name": "demo", "NodeCount": 3}, ("/NodeCount", 5), ("--virtual-clock",)),
    ],
)
def test_lifecycle_with_boto3_create_wait_get_patch_list_delete(
    sample: Callable[[str], Path],
    serve: Callable[..., ServerProcess],
    name: str,
    type_name: str,
    desired: Dict[str, Any],
    change: "tuple[str, Any]",
    flags: "tuple[str, ...]",
) -> None:
    server = serve(sample(name), "--no-reload", *flags)
    client = cloudcontrol(server)

    started = create(client, type_name, desired)["ProgressEvent"]
    assert started["OperationStatus"] in ("PENDING", "IN_PROGRESS") and started["Operation"] == "CREATE"
    created = wait_success(client, {"ProgressEvent": started})
    identifier = created["Identifier"]
    model = json.loads(created["ResourceModel"])
    assert created["OperationStatus"] == "SUCCESS" and identifier
    assert "AccessPassword" not in model  # writeOnly values are never shown

    got = client.get_resource(TypeName=type_name, Identifier=identifier)["ResourceDescription"]
    assert got["Identifier"] == identifier
    assert {k: v for k, v in json.loads(got["Properties"]).items() if k in desired} == {
        k: v for k, v in desired.items() if k != "AccessPassword"
    }

    pointer, value = change
    updated = wait_success(client, patch(client, type_name, identifier, [{"op": "replace", "path": pointer, "value": value}]))
    assert updated["Operation"] == "UPDATE" and updated["Identifier"] == identifier
    got = json.loads(client.get_resource(TypeName=type_name, Identifier=identifier)["ResourceDescription"]["Properties"])
    assert got[pointer[1:]] == value

    listed = client.list_resources(TypeName=type_name)["ResourceDescriptions"]
    assert [d["Identifier"] for d in listed] == [identifier]

    deleted = wait_success(client, dict(client.delete_resource(TypeName=type_name, Identifier=identifier)))
    assert deleted["Operation"] == "DELETE"
    with pytest.raises(client.exceptions.ResourceNotFoundException) as raised:
        client.get_resource(TypeName=type_name, Identifier=identifier)
    assert identifier in str(raised.value)  # the handler's own message

    if name == "cluster":  # every IN_PROGRESS round went through the invoker: 3 calls per mutating operation
        for _ in range(9):
            server.wait_for_line(r"TypeFunction (CREATE|UPDATE|DELETE) \(Cloud Control", timeout=30)


def test_virtual_clock_skips_callback_delays_real_clock_waits_them(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    project = sample("cluster")
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "60"'))
    virtual = cloudcontrol(serve(project, "--no-reload", "--virtual-clock"))
    began = time.monotonic()
    wait_success(virtual, create(virtual, CLUSTER, {"Name": "fast", "NodeCount": 1}))
    assert time.monotonic() - began < 60  # two 60 s CallbackDelaySeconds skipped

    real = cloudcontrol(serve(project, "--no-reload"))
    started = create(real, CLUSTER, {"Name": "slow", "NodeCount": 1})["ProgressEvent"]
    token = started["RequestToken"]
    wait_until(lambda: "StatusMessage" in real.get_resource_request_status(RequestToken=token)["ProgressEvent"], what="first round")
    event = real.get_resource_request_status(RequestToken=token)["ProgressEvent"]
    assert event["OperationStatus"] == "IN_PROGRESS"
    assert event["StatusMessage"] == "creating: 2 status check(s) to go"
    assert event["Identifier"].startswith("cl-") and json.loads(event["ResourceModel"])["Status"] == "CREATING"
    assert event["RetryAfter"] > event["EventTime"]


def test_cancel_stops_reinvoking_and_ends_cancel_complete(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    server = serve(sample("cluster"), "--no-reload")
    client = cloudcontrol(server)
    token = create(client, CLUSTER, {"Name": "gone", "NodeCount": 2})["ProgressEvent"]["RequestToken"]
    wait_until(lambda: "StatusMessage" in client.get_resource_request_status(RequestToken=token)["ProgressEvent"], what="first round")

    identifier = client.get_resource_request_status(RequestToken=token)["ProgressEvent"]["Identifier"]
    with pytest.raises(client.exceptions.ConcurrentOperationException):
        client.delete_resource(TypeName=CLUSTER, Identifier=identifier)

    cancelling = client.cancel_resource_request(RequestToken=token)["ProgressEvent"]
    assert cancelling["OperationStatus"] == "CANCEL_IN_PROGRESS"
    server.wait_for_line(f"request {token}: CANCEL_COMPLETE", timeout=30)
    with pytest.raises(WaiterError):  # CANCEL_COMPLETE is a failure state of the waiter
        client.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    assert client.get_resource_request_status(RequestToken=token)["ProgressEvent"]["OperationStatus"] == "CANCEL_COMPLETE"
    rounds = [line for line in server.output if f"(Cloud Control {token[:8]})" in line]
    assert len(rounds) == 1, rounds  # the 2 s callback was never made

    with pytest.raises(ClientError) as finished:
        client.cancel_resource_request(RequestToken=token)
    assert code_of(finished.value) == "ValidationException"
    with pytest.raises(client.exceptions.RequestTokenNotFoundException):
        client.cancel_resource_request(RequestToken="no-such-token")
    with pytest.raises(client.exceptions.RequestTokenNotFoundException):
        client.get_resource_request_status(RequestToken="no-such-token")


def test_timeout_in_minutes_ends_the_request_failed(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    # --time-scale 0.001: the 10 min create timeout becomes 0.6 s, shorter than one 2 s callback delay
    # (--invocation-timeout keeps a slow machine's first call clear of the scaled 60 s budget).
    client = cloudcontrol(serve(sample("cluster"), "--no-reload", "--time-scale", "0.001", "--invocation-timeout", "30"))
    token = create(client, CLUSTER, {"Name": "late", "NodeCount": 1})["ProgressEvent"]["RequestToken"]
    with pytest.raises(WaiterError):
        client.get_waiter("resource_request_success").wait(RequestToken=token, WaiterConfig=FAST)
    event = client.get_resource_request_status(RequestToken=token)["ProgressEvent"]
    assert event["OperationStatus"] == "FAILED" and event["ErrorCode"] == "NotStabilized"
    assert "timeoutInMinutes" in event["StatusMessage"]


def test_validation_type_identifier_and_idempotency_errors(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    client = cloudcontrol(serve(sample("note"), "--no-reload"))

    def error(call: Callable[..., Any], **params: Any) -> "tuple[str, str]":
        with pytest.raises(ClientError) as raised:
            call(**params)
        return code_of(raised.value), str(raised.value.response["Error"]["Message"])

    code, message = error(client.create_resource, TypeName=NOTE, DesiredState=json.dumps({"Title": "x", "Colour": "red"}))
    assert code == "ValidationException" and message.startswith("Model validation failed") and "Colour" in message
    code, message = error(client.create_resource, TypeName=NOTE, DesiredState=json.dumps({"Title": 7}))
    assert code == "ValidationException" and "#/Title" in message
    assert error(client.create_resource, TypeName=NOTE, DesiredState="{not json")[0] == "ValidationException"
    assert error(client.create_resource, TypeName="Other::Type::Name", DesiredState="{}")[0] == "TypeNotFoundException"
    assert error(client.get_resource, TypeName="Other::Type::Name", Identifier="x")[0] == "TypeNotFoundException"
    assert error(client.list_resources, TypeName="Other::Type::Name")[0] == "TypeNotFoundException"

    first = create(client, NOTE, {"Title": "once"}, ClientToken="token-1")["ProgressEvent"]
    again = create(client, NOTE, {"Title": "once"}, ClientToken="token-1")["ProgressEvent"]
    assert again["RequestToken"] == first["RequestToken"]
    code, _ = error(client.create_resource, TypeName=NOTE, DesiredState=json.dumps({"Title": "twice"}), ClientToken="token-1")
    assert code == "ClientTokenConflictException"
    created = wait_success(client, {"ProgressEvent": first})
    assert len(client.list_resources(TypeName=NOTE)["ResourceDescriptions"]) == 1  # one note, not two

    # The identifier as a JSON object naming the primary identifier works like the plain value.
    by_json = client.get_resource(TypeName=NOTE, Identifier=json.dumps({"NoteId": created["Identifier"]}))
    assert by_json["ResourceDescription"]["Identifier"] == created["Identifier"]
    assert error(client.get_resource, TypeName=NOTE, Identifier='{"Title": "x"}')[0] == "ValidationException"
    deleting = client.delete_resource(TypeName=NOTE, Identifier=json.dumps({"NoteId": created["Identifier"]}))["ProgressEvent"]
    assert deleting["Identifier"] == created["Identifier"]  # reported in its plain form


def test_patch_errors_fail_the_whole_request_and_change_nothing(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    client = cloudcontrol(serve(sample("note"), "--no-reload"))
    identifier = wait_success(client, create(client, NOTE, {"Title": "keep", "Folder": "box", "Priority": 1}))["Identifier"]

    cases: List["tuple[List[Dict[str, Any]], str]"] = [
        ([{"op": "replace", "path": "/Folder", "value": "other"}], "NotUpdatableException"),
        ([{"op": "replace", "path": "/NoteId", "value": "note-000000000000"}], "ValidationException"),
        ([{"op": "remove", "path": "/CreatedAt"}], "ValidationException"),
        ([{"op": "replace", "path": "/Title", "value": "changed"}, {"op": "test", "path": "/Priority", "value": 4}], "ValidationException"),
        ([{"op": "frobnicate", "path": "/Title"}], "ValidationException"),
        ([{"op": "remove", "path": "/Content"}], "ValidationException"),  # no such member
        ([{"op": "add", "path": "/Priority", "value": "high"}], "ValidationException"),  # patched model invalid
        ([{"op": "add", "path": "/Unknown", "value": 1}], "ValidationException"),
    ]
    for operations, expected in cases:
        with pytest.raises(ClientError) as raised:
            patch(client, NOTE, identifier, operations)
        assert code_of(raised.value) == expected, operations
    with pytest.raises(ClientError) as not_array:
        client.update_resource(TypeName=NOTE, Identifier=identifier, PatchDocument='{"op": "add"}')
    assert code_of(not_array.value) == "ValidationException"
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        patch(client, NOTE, "note-0123456789ab", [{"op": "replace", "path": "/Title", "value": "x"}])

    current = json.loads(client.get_resource(TypeName=NOTE, Identifier=identifier)["ResourceDescription"]["Properties"])
    assert (current["Title"], current["Priority"]) == ("keep", 1)
    assert client.list_resource_requests(ResourceRequestStatusFilter={"Operations": ["UPDATE"]})["ResourceRequestStatusSummaries"] == []

    # test and add/remove together: a passing test lets the patch through.
    done = wait_success(
        client,
        patch(client, NOTE, identifier, [{"op": "test", "path": "/Priority", "value": 1}, {"op": "add", "path": "/Tags/-", "value": {"Key": "k", "Value": "v"}}]),
    )
    assert json.loads(done["ResourceModel"])["Tags"] == [{"Key": "k", "Value": "v"}]


def test_list_pages_and_request_filters(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    client = cloudcontrol(serve(sample("note"), "--no-reload"))
    ids = sorted(wait_success(client, create(client, NOTE, {"Title": f"n{i}"}))["Identifier"] for i in range(3))
    first = client.list_resources(TypeName=NOTE, MaxResults=2)
    second = client.list_resources(TypeName=NOTE, MaxResults=2, NextToken=first["NextToken"])
    assert "NextToken" not in second
    with pytest.raises(ClientError) as forged:
        client.list_resources(TypeName=NOTE, NextToken="bm90LWFuLW9mZnNldA==")
    assert code_of(forged.value) == "ValidationException"
    assert [d["Identifier"] for d in first["ResourceDescriptions"] + second["ResourceDescriptions"]] == ids
    paginated = [d["Identifier"] for page in client.get_paginator("list_resources").paginate(TypeName=NOTE, PaginationConfig={"PageSize": 1}) for d in page["ResourceDescriptions"]]
    assert paginated == ids
    only = client.list_resources(TypeName=NOTE, ResourceModel=json.dumps({"Title": "n0"}))  # the handler gets the model
    assert len(only["ResourceDescriptions"]) == 3  # the sample's LIST ignores it, as it may

    wait_success(client, dict(client.delete_resource(TypeName=NOTE, Identifier=ids[0])))
    failed = client.delete_resource(TypeName=NOTE, Identifier=ids[0])["ProgressEvent"]["RequestToken"]
    with pytest.raises(WaiterError):
        client.get_waiter("resource_request_success").wait(RequestToken=failed, WaiterConfig=FAST)
    gone = client.get_resource_request_status(RequestToken=failed)["ProgressEvent"]
    assert (gone["OperationStatus"], gone["ErrorCode"]) == ("FAILED", "NotFound")

    def summaries(**status_filter: List[str]) -> List[Dict[str, Any]]:
        return list(client.list_resource_requests(ResourceRequestStatusFilter=status_filter)["ResourceRequestStatusSummaries"])

    assert len(summaries(Operations=["CREATE"])) == 3
    assert [s["RequestToken"] for s in summaries(OperationStatuses=["FAILED"])] == [failed]
    assert len(summaries(Operations=["DELETE"], OperationStatuses=["SUCCESS"])) == 1
    assert len(summaries()) == 5
    paged = client.list_resource_requests(MaxResults=2)
    assert len(paged["ResourceRequestStatusSummaries"]) == 2 and paged["NextToken"]


def test_aws_cli_drives_cloud_control(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    aws = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")
    if aws is None:
        pytest.skip("the aws CLI is not installed")
    server = serve(sample("note"), "--no-reload")

    def cli(*args: str) -> Dict[str, Any]:
        completed = subprocess.run(
            [aws, "cloudcontrol", *args, "--endpoint-url", server.url, "--no-sign-request", "--region", "us-east-1", "--output", "json"],
            capture_output=True, text=True, timeout=60,
        )
        assert completed.returncode == 0, completed.stderr
        return dict(json.loads(completed.stdout)) if completed.stdout.strip() else {}

    token = cli("create-resource", "--type-name", NOTE, "--desired-state", '{"Title": "from the cli"}')["ProgressEvent"]["RequestToken"]
    cli("wait", "resource-request-success", "--request-token", token)
    identifier = cli("get-resource-request-status", "--request-token", token)["ProgressEvent"]["Identifier"]
    got = cli("get-resource", "--type-name", NOTE, "--identifier", identifier)
    assert json.loads(got["ResourceDescription"]["Properties"])["Title"] == "from the cli"
    completed = subprocess.run(
        [aws, "cloudcontrol", "get-resource", "--type-name", NOTE, "--identifier", "note-0123456789ab",
         "--endpoint-url", server.url, "--no-sign-request", "--region", "us-east-1"],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode != 0 and "ResourceNotFoundException" in completed.stderr


def test_stop_with_a_request_in_flight_leaves_no_workers(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    project = sample("cluster")
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "120"'))
    server = serve(project, "--no-reload")
    client = cloudcontrol(server)
    token = create(client, CLUSTER, {"Name": "busy", "NodeCount": 2})["ProgressEvent"]["RequestToken"]
    wait_until(lambda: "StatusMessage" in client.get_resource_request_status(RequestToken=token)["ProgressEvent"], what="first round")
    workers = server.worker_pids()
    server.stop_cleanly(timeout=60)  # the 120 s callback wait is not sat out
    server.wait_for_line(f"request {token}: CANCEL_COMPLETE")  # the request ended cancelled, not abandoned
    wait_until(lambda: not any(pid_alive(pid) for pid in workers), timeout=30, what="workers to exit")


# -- the pieces below the wire: JSON Patch and identifiers -------------------------------


def test_json_patch_follows_rfc_6902() -> None:
    from cfnrun.model.json_patch import PatchError, apply_patch

    document = {"a": {"b": [1, 2]}, "c": "x", "k/e~y": 1}
    patched = apply_patch(
        document,
        [
            {"op": "add", "path": "/a/b/1", "value": 9},
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "replace", "path": "/c", "value": {"d": True}},
            {"op": "copy", "from": "/c", "path": "/e"},
            {"op": "move", "from": "/a/b", "path": "/f"},
            {"op": "remove", "path": "/k~1e~0y"},
            {"op": "test", "path": "/f", "value": [1.0, 9, 2, 3]},
        ],
    )
    assert patched == {"a": {}, "c": {"d": True}, "e": {"d": True}, "f": [1, 9, 2, 3]}
    assert document == {"a": {"b": [1, 2]}, "c": "x", "k/e~y": 1}  # the original is untouched
    failing = [
        [{"op": "test", "path": "/c", "value": "y"}],
        [{"op": "test", "path": "/a/b/0", "value": True}],  # true is not 1 in JSON
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "remove", "path": "/a/b/2"}],
        [{"op": "add", "path": "/a/b/01", "value": 1}],
        [{"op": "move", "from": "/a", "path": "/a/z"}],
        [{"op": "add", "path": "a", "value": 1}],
        [{"op": "add", "path": "/x"}],
        [{"op": "copy", "path": "/x"}],
        [{"op": "nope", "path": "/x"}],
        {"op": "add", "path": "/x", "value": 1},
    ]
    for patch_document in failing:
        with pytest.raises(PatchError):
            apply_patch(document, patch_document)


def test_identifiers_plain_composite_and_json() -> None:
    from cfnrun.model.identifiers import IdentifierError, identifier_model, identifier_of
    from cfnrun.model.schema import ResourceSchema

    schema = ResourceSchema(
        {
            "typeName": "Abc::Def::Ghi",
            "properties": {"Region": {"type": "string"}, "Number": {"type": "integer"}},
            "primaryIdentifier": ["/properties/Region", "/properties/Number"],
        }
    )
    assert identifier_model(schema, "eu-west-1|42") == {"Region": "eu-west-1", "Number": 42}
    assert identifier_model(schema, '{"Number": 42, "Region": "eu-west-1"}') == {"Region": "eu-west-1", "Number": 42}
    assert identifier_of(schema, {"Region": "eu-west-1", "Number": 42, "Other": 1}) == "eu-west-1|42"
    assert identifier_of(schema, {"Region": "eu-west-1"}) is None
    for bad in ("eu-west-1", "eu-west-1|x", '{"Region": "eu-west-1"}', "a|1|2"):
        with pytest.raises(IdentifierError):
            identifier_model(schema, bad)


def test_reload_during_a_request_its_next_call_runs_the_new_code(sample: Callable[[str], Path], serve: Callable[..., ServerProcess]) -> None:
    project = sample("cluster")
    template = project / "template.yml"  # a 3 s CallbackDelaySeconds: time for the reload to land between rounds
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "3"'))
    server = serve(project)  # reload on
    client = cloudcontrol(server)
    token = create(client, CLUSTER, {"Name": "hot", "NodeCount": 1})["ProgressEvent"]["RequestToken"]
    wait_until(lambda: "StatusMessage" in client.get_resource_request_status(RequestToken=token)["ProgressEvent"], what="first round")
    handlers = next(project.glob("src/*/handlers.py"))
    handlers.write_text(handlers.read_text().replace("status check(s) to go", "check(s) left, new code"))
    server.wait_for_line(r"reload: new code live")
    # The 3 s CallbackDelaySeconds is still running: the next round goes to the new code.
    wait_until(
        lambda: "new code" in client.get_resource_request_status(RequestToken=token)["ProgressEvent"].get("StatusMessage", ""),
        timeout=10,
        what="the second round on the new code",
    )
    assert wait_success(client, {"ProgressEvent": {"RequestToken": token}})["OperationStatus"] == "SUCCESS"


def test_wire_errors_are_json_1_0_and_sts_still_answers_on_the_same_path(
    sample: Callable[[str], Path], serve: Callable[..., ServerProcess]
) -> None:
    import urllib.error
    import urllib.request

    server = serve(sample("note"), "--no-reload", "--sts-standin")

    def post(body: bytes, headers: Dict[str, str]) -> "tuple[int, str, bytes]":
        request = urllib.request.Request(server.url + "/", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers.get("Content-Type", ""), response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Content-Type", ""), error.read()

    json_headers = {"Content-Type": "application/x-amz-json-1.0"}
    status, content_type, body = post(b"{}", {**json_headers, "X-Amz-Target": "CloudApiService.DescribeEverything"})
    assert (status, content_type, json.loads(body)["__type"]) == (400, "application/x-amz-json-1.0", "UnknownOperationException")
    status, _, body = post(b"{not json", {**json_headers, "X-Amz-Target": "CloudApiService.GetResource"})
    assert (status, json.loads(body)["__type"]) == (400, "SerializationException")
    status, _, body = post(b"{}", {**json_headers, "X-Amz-Target": "CloudApiService.GetResource"})
    assert json.loads(body) == {
        "__type": "ValidationException",
        "message": "1 validation error detected: Value null at 'TypeName' failed to satisfy constraint: Member must not be null",
    }
    status, _, body = post(b"Action=GetCallerIdentity&Version=2011-06-15", {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and b"<Account>123456789012</Account>" in body
