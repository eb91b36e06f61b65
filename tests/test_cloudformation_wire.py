"""The CloudFormation API's wire on serve's one port, driven by boto3, its waiters and paginators, and the aws CLI.

The HTTP layer runs in this process (a real server on 127.0.0.1, port 0) with a small stack
engine written here, so these tests show the wire: the engine itself is tested elsewhere.
"""
from __future__ import annotations

import asyncio
import datetime
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Optional

import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from cfnrun.api.cloudcontrol import CloudControlApi, CloudControlError
from cfnrun.api.cloudformation.custom_resource_responses import (
    CustomResourceResponse,
    CustomResourceResponseEndpoint,
    response_url,
)
from cfnrun.api.cloudformation.errors import modelled_error, validation_error
from cfnrun.api.cloudformation.service import CloudFormationApi
from cfnrun.api.connections import GuardedTCPSite
from cfnrun.api.lambda_api import LambdaAnswer, LambdaCall, LambdaService
from cfnrun.api.sts_standin import StsStandIn
from cfnrun.model.template import FunctionSpec
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind

ACCOUNT = "123456789012"
EVENTS_PER_STACK = 23  # more than one page
EVENTS_PAGE = 10
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "AKIDCFNRUNTEST", "AWS_SECRET_ACCESS_KEY": "cfnrun-test-secret", "AWS_DEFAULT_REGION": "us-east-1"}


class DictStacks:
    """A stack engine in a dict: a stack is CREATE_COMPLETE once it has been described twice."""

    def __init__(self) -> None:
        self.stacks: Dict[str, Dict[str, Any]] = {}
        self.described: Dict[str, int] = {}
        self.calls: List[str] = []

    def operations(self) -> FrozenSet[str]:
        return frozenset({"CreateStack", "DescribeStacks", "DescribeStackEvents", "DeleteStack"})

    async def call(self, operation: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self.calls.append(operation)
        if operation == "CreateStack":
            name = params["StackName"]
            if name == "crash":
                raise RuntimeError("the engine has a bug")
            if name in self.stacks:
                raise modelled_error("AlreadyExistsException", f"Stack [{name}] already exists")
            stack_id = f"arn:aws:cloudformation:us-east-1:{ACCOUNT}:stack/{name}/0000-{len(self.stacks)}"
            self.stacks[name] = {
                "StackId": stack_id,
                "StackName": name,
                "CreationTime": datetime.datetime.now(datetime.timezone.utc),
                "StackStatus": "CREATE_IN_PROGRESS",
                "Parameters": params.get("Parameters", []),
                "Tags": params.get("Tags", []),
                "Outputs": [],
                "DisableRollback": bool(params.get("DisableRollback", False)),
            }
            return {"StackId": stack_id}
        if operation == "DescribeStacks":
            stack = self._stack(params.get("StackName"))
            self.described[stack["StackName"]] = self.described.get(stack["StackName"], 0) + 1
            if self.described[stack["StackName"]] >= 2:
                stack["StackStatus"] = "CREATE_COMPLETE"
            return {"Stacks": [stack]}
        if operation == "DescribeStackEvents":
            stack = self._stack(params["StackName"])
            start = int(params.get("NextToken", "0"))
            events = [
                {
                    "StackId": stack["StackId"],
                    "EventId": f"event-{index}",
                    "StackName": stack["StackName"],
                    "LogicalResourceId": f"Note{index}",
                    "ResourceType": "Cfnrun::Sample::Note",
                    "Timestamp": stack["CreationTime"],
                    "ResourceStatus": "CREATE_COMPLETE",
                }
                for index in range(start, min(start + EVENTS_PAGE, EVENTS_PER_STACK))
            ]
            following = start + EVENTS_PAGE
            return {"StackEvents": events, **({"NextToken": str(following)} if following < EVENTS_PER_STACK else {})}
        if operation == "DeleteStack":
            self.stacks.pop(params["StackName"], None)
            return {}
        raise AssertionError(f"not offered: {operation}")

    def _stack(self, name: Optional[str]) -> Dict[str, Any]:
        if name not in self.stacks:
            raise validation_error(f"Stack with id {name} does not exist")
        return self.stacks[str(name)]


class WaitingResponses:
    """Custom-resource requests waiting for their function's answer, by token."""

    def __init__(self, tokens: List[str]) -> None:
        self.waiting = set(tokens)
        self.answers: Dict[str, CustomResourceResponse] = {}
        self.rejected: Dict[str, str] = {}

    async def respond(self, token: str, response: CustomResourceResponse) -> bool:
        if token not in self.waiting:
            return False
        self.waiting.discard(token)
        self.answers[token] = response
        return True

    async def reject(self, token: str, reason: str) -> bool:
        if token not in self.waiting:
            return False
        self.waiting.discard(token)
        self.rejected[token] = reason
        return True


class EchoCalls:
    """The Lambda side: one function that answers what it was given."""

    def function(self, name: str) -> Optional[FunctionSpec]:
        return FunctionSpec(logical_id="TypeFunction", handler="h.handler") if name == "TypeFunction" else None

    def function_names(self) -> List[str]:
        return ["TypeFunction"]

    async def invoke(self, call: LambdaCall) -> LambdaAnswer:
        return LambdaAnswer(InvocationOutcome(OutcomeKind.RETURNED, call.request_id, 1.0, "", result={"echo": call.payload}))

    def invoke_event(self, call: LambdaCall) -> None:
        raise AssertionError("not used")


class NoResources:
    """The Cloud Control side: no resource exists."""

    async def get_resource(self, type_name: str, identifier: str) -> Any:
        raise CloudControlError("ResourceNotFoundException", f"{type_name} {identifier} was not found")


class Endpoint:
    """LambdaService's app on 127.0.0.1, port 0, its loop in a thread of its own."""

    def __init__(self, stacks: DictStacks, responses: WaitingResponses) -> None:
        self.stacks = stacks
        self.responses = responses
        self.service = LambdaService(
            EchoCalls(),
            print,
            sts=StsStandIn(ACCOUNT),
            cloud_control=CloudControlApi(NoResources()),  # type: ignore[arg-type]  # get_resource alone is used
            cloudformation=CloudFormationApi(stacks),
            custom_resource_responses=CustomResourceResponseEndpoint(responses),
        )
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.url = ""

    def __enter__(self) -> "Endpoint":
        from aiohttp import web

        self.thread.start()

        async def start() -> web.AppRunner:
            runner = web.AppRunner(self.service.app())
            await runner.setup()
            site = GuardedTCPSite(runner, "127.0.0.1", 0, self.service.connections)
            await site.start()
            return runner

        self.runner = asyncio.run_coroutine_threadsafe(start(), self.loop).result(timeout=30)
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        return self

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    def client(self, service: str, signed: bool = True) -> Any:
        import boto3

        config = Config(retries={"max_attempts": 0}, **({} if signed else {"signature_version": UNSIGNED}))
        return boto3.client(
            service,
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            config=config,
        )


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with Endpoint(DictStacks(), WaitingResponses(["token-1", "token-2"])) as running:
        yield running


@pytest.mark.parametrize("signed", [True, False], ids=["sigv4", "unsigned"])
def test_boto3_creates_waits_and_describes_a_stack(endpoint: Endpoint, signed: bool) -> None:
    client = endpoint.client("cloudformation", signed)
    created = client.create_stack(
        StackName="demo",
        TemplateBody="Resources: {}",
        Parameters=[{"ParameterKey": "Env", "ParameterValue": "dev"}],
        Tags=[{"Key": "team", "Value": "storage"}],
        DisableRollback=True,
    )
    assert created["StackId"].startswith(f"arn:aws:cloudformation:us-east-1:{ACCOUNT}:stack/demo/")
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 200 and created["ResponseMetadata"]["RequestId"]

    client.get_waiter("stack_create_complete").wait(StackName="demo", WaiterConfig={"Delay": 0.05, "MaxAttempts": 20})
    stack = client.describe_stacks(StackName="demo")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE" and stack["DisableRollback"] is True
    assert stack["Parameters"] == [{"ParameterKey": "Env", "ParameterValue": "dev"}]
    assert stack["Tags"] == [{"Key": "team", "Value": "storage"}] and stack["Outputs"] == []
    assert isinstance(stack["CreationTime"], datetime.datetime) and stack["CreationTime"].tzinfo is not None
    assert endpoint.stacks.calls.count("DescribeStacks") >= 3  # the waiter polled until the status moved


def test_describe_stack_events_pages_through_every_event(endpoint: Endpoint) -> None:
    client = endpoint.client("cloudformation")
    client.create_stack(StackName="demo", TemplateBody="Resources: {}")
    pages = list(client.get_paginator("describe_stack_events").paginate(StackName="demo"))
    assert len(pages) == 3
    assert [event["EventId"] for page in pages for event in page["StackEvents"]] == [f"event-{i}" for i in range(EVENTS_PER_STACK)]


def test_errors_are_raised_as_boto3_raises_the_services(endpoint: Endpoint) -> None:
    client = endpoint.client("cloudformation")
    client.create_stack(StackName="demo", TemplateBody="Resources: {}")
    with pytest.raises(client.exceptions.AlreadyExistsException) as exists:
        client.create_stack(StackName="demo", TemplateBody="Resources: {}")
    assert exists.value.response["Error"] == {"Type": "Sender", "Code": "AlreadyExistsException", "Message": "Stack [demo] already exists"}

    with pytest.raises(ClientError) as missing:
        client.describe_stacks(StackName="nope")
    assert missing.value.response["Error"]["Code"] == "ValidationError"
    assert missing.value.response["Error"]["Message"] == "Stack with id nope does not exist"
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400

    with pytest.raises(ClientError) as unsupported:
        client.list_exports()
    assert unsupported.value.response["Error"]["Code"] == "InvalidAction"
    assert unsupported.value.response["Error"]["Message"] == (
        "ListExports is a CloudFormation operation cfnrun does not support; it serves CreateStack, DeleteStack, DescribeStackEvents, DescribeStacks"
    )

    # Past boto3's own checks (its parameter validation off), the service's checks answer.
    import boto3

    lax = boto3.client(
        "cloudformation",
        endpoint_url=endpoint.url,
        region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, parameter_validation=False, retries={"max_attempts": 0}),
    )
    with pytest.raises(ClientError) as invalid:
        lax.create_stack(TemplateBody="{}", TimeoutInMinutes=0)
    assert invalid.value.response["Error"]["Message"] == (
        "2 validation errors detected: Value '0' at 'timeoutInMinutes' failed to satisfy constraint: Member must have value "
        "greater than or equal to 1; Value null at 'stackName' failed to satisfy constraint: Member must not be null"
    )


def test_a_failure_of_cfnrun_itself_is_a_500_in_the_query_error_shape(endpoint: Endpoint, capsys: pytest.CaptureFixture[str]) -> None:
    client = endpoint.client("cloudformation")
    with pytest.raises(ClientError) as failed:
        client.create_stack(StackName="crash", TemplateBody="Resources: {}")
    assert failed.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert failed.value.response["Error"] == {"Type": "Receiver", "Code": "ServiceException", "Message": "cfnrun internal error: RuntimeError"}
    assert "RuntimeError: the engine has a bug" in capsys.readouterr().out  # the traceback went to serve's console


def test_a_form_with_a_wrong_version_or_action_is_answered_by_cloudformation(endpoint: Endpoint) -> None:
    def post(body: bytes) -> "tuple[int, str]":
        request = urllib.request.Request(endpoint.url + "/", data=body, method="POST", headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    status, body = post(b"Action=DescribeStacks&Version=2011-01-01")
    assert status == 400 and "<Code>InvalidAction</Code>" in body and "version 2011-01-01" in body and "2010-05-15" in body
    status, body = post(b"Action=DescribeStackz&Version=2010-05-15")
    assert status == 400 and "<Message>Could not find operation DescribeStackz for version 2010-05-15</Message>" in body
    status, body = post(b"Action=CreateStack&Version=2010-05-15")
    assert status == 400 and "Value null at 'stackName' failed to satisfy constraint: Member must not be null" in body
    status, body = post(b"Action=GetCallerIdentity&Version=2011-06-15")  # still STS's
    assert status == 200 and f"<Account>{ACCOUNT}</Account>" in body


def test_the_aws_cli_describes_stacks(endpoint: Endpoint, tmp_path: Path) -> None:
    aws = shutil.which("aws") or str(Path(sys.executable).parent / "aws")
    endpoint.client("cloudformation").create_stack(StackName="demo", TemplateBody="Resources: {}")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **DUMMY_CREDENTIALS,
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }
    run = subprocess.run(
        [aws, "cloudformation", "describe-stacks", "--stack-name", "demo", "--endpoint-url", endpoint.url, "--output", "json"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    stacks = json.loads(run.stdout)["Stacks"]
    assert [(s["StackName"], s["StackStatus"]) for s in stacks] == [("demo", "CREATE_IN_PROGRESS")]

    missing = subprocess.run(
        [aws, "cloudformation", "describe-stacks", "--stack-name", "nope", "--endpoint-url", endpoint.url],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert missing.returncode in (254, 255)  # the aws CLI v2 and v1 exit codes for a service error
    assert "An error occurred (ValidationError) when calling the DescribeStacks operation: Stack with id nope does not exist" in missing.stderr


def test_lambda_cloud_control_and_sts_still_answer_on_the_same_port(endpoint: Endpoint) -> None:
    answer = endpoint.client("lambda").invoke(FunctionName="TypeFunction", Payload=b'{"x": 1}')
    assert json.loads(answer["Payload"].read()) == {"echo": {"x": 1}}
    control = endpoint.client("cloudcontrol")
    with pytest.raises(control.exceptions.ResourceNotFoundException):
        control.get_resource(TypeName="Cfnrun::Sample::Note", Identifier="n-1")
    assert endpoint.client("sts").get_caller_identity()["Account"] == ACCOUNT
    assert endpoint.client("sts", signed=False).get_caller_identity()["Account"] == ACCOUNT


def test_while_serve_stops_a_cloudformation_call_is_refused_in_its_own_error_shape(endpoint: Endpoint) -> None:
    endpoint.service.refuse_new_calls()
    client = endpoint.client("cloudformation")
    with pytest.raises(ClientError) as refused:
        client.describe_stacks()
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert refused.value.response["Error"]["Code"] == "ServiceException"
    assert "cfnrun serve is stopping" in refused.value.response["Error"]["Message"]


def _custom_response(**changes: Any) -> bytes:
    body = {
        "Status": "SUCCESS",
        "Reason": "See the details in CloudWatch Log Stream: 2026/11/24/[$LATEST]abc",
        "PhysicalResourceId": "custom-1",
        "StackId": f"arn:aws:cloudformation:us-east-1:{ACCOUNT}:stack/demo/0000-0",
        "RequestId": "4f0b3f3c",
        "LogicalResourceId": "Custom",
        "NoEcho": False,
        "Data": {"Answer": "42"},
    }
    body.update(changes)
    return json.dumps(body).encode()


def _put(url: str, body: bytes) -> "tuple[int, str]":
    """As cfn-response sends it: PUT, an empty content type, the length given."""
    request = urllib.request.Request(url, data=body, method="PUT", headers={"content-type": "", "content-length": str(len(body))})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_response_url_takes_a_custom_resource_answer_as_cfn_response_puts_it(endpoint: Endpoint) -> None:
    import urllib3

    presigned = response_url(endpoint.url, "token-1") + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=7200"
    assert _put(presigned, _custom_response()) == (200, "")
    answer = endpoint.responses.answers["token-1"]
    assert (answer.status, answer.physical_resource_id, answer.data, answer.logical_resource_id) == ("SUCCESS", "custom-1", {"Answer": "42"}, "Custom")

    status, body = _put(response_url(endpoint.url, "token-1"), _custom_response())
    assert status == 404 and "<Code>NoSuchUpload</Code>" in body and "token-1" in body  # answered already

    body = _custom_response(Status="DONE")
    pool = urllib3.PoolManager()  # cfn-response's own client and headers
    bad = pool.request("PUT", response_url(endpoint.url, "token-2"), headers={"content-type": "", "content-length": str(len(body))}, body=body)
    assert bad.status == 400 and b"<Code>InvalidArgument</Code>" in bad.data and b"got 'DONE'" in bad.data
    assert endpoint.responses.rejected["token-2"] == "Invalid response object: Status must be SUCCESS or FAILED, got 'DONE'"

    assert _put(response_url(endpoint.url, "never-issued"), b"[]")[0] == 404
    get = urllib.request.Request(response_url(endpoint.url, "token-1"), method="GET")
    with pytest.raises(urllib.error.HTTPError) as not_put:
        urllib.request.urlopen(get, timeout=10)
    assert not_put.value.code == 405
