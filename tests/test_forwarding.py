"""One address for every AWS call: serve passes the calls of services it does not answer (S3, SQS, STS with --moto…)
on to its AWS endpoint, and refuses them, saying why, when it has none. Real serve processes, boto3 and the aws CLI."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FAST = {"Delay": 0.1, "MaxAttempts": 600}


@pytest.fixture(scope="module")
def moto_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    project = tmp_path_factory.mktemp("forwarding") / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    server = ServerProcess(project, "--no-reload", "--moto")
    try:
        yield server
    finally:
        server.stop(timeout=PATIENCE_S)


def test_s3_and_sqs_calls_to_serve_reach_the_world_its_stacks_live_in(moto_serve: ServerProcess, tmp_path: Path) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=moto_serve.url, **CREDENTIALS)
    cfn = boto3.client("cloudformation", endpoint_url=moto_serve.url, **CREDENTIALS)
    template = {"Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "made-by-a-stack"}}}}
    cfn.create_stack(StackName="with-bucket", TemplateBody=json.dumps(template))
    cfn.get_waiter("stack_create_complete").wait(StackName="with-bucket", WaiterConfig=FAST)
    body = os.urandom(3 * 1024 * 1024)  # past serve's 6 MB Invoke limit is not the point: a body streamed both ways
    s3.put_object(Bucket="made-by-a-stack", Key="a/b.bin", Body=body)
    assert s3.get_object(Bucket="made-by-a-stack", Key="a/b.bin")["Body"].read() == body
    assert "made-by-a-stack" in [b["Name"] for b in s3.list_buckets()["Buckets"]]  # GET /, signed for S3: not the console's page
    sqs = boto3.client("sqs", endpoint_url=moto_serve.url, **CREDENTIALS)
    url = sqs.create_queue(QueueName="forwarded")["QueueUrl"]
    assert url.endswith("/forwarded") and any(u.endswith("/forwarded") for u in sqs.list_queues()["QueueUrls"])
    assert boto3.client("sts", endpoint_url=moto_serve.url, **CREDENTIALS).get_caller_identity()["Account"] == "123456789012"
    # the aws CLI, with one AWS_ENDPOINT_URL for every service
    env = {**os.environ, "AWS_ENDPOINT_URL": moto_serve.url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    listed = subprocess.run(["aws", "s3", "ls", "s3://made-by-a-stack", "--recursive"], env=env, capture_output=True, text=True, timeout=PATIENCE_S)
    assert listed.returncode == 0 and "a/b.bin" in listed.stdout, listed.stdout + listed.stderr
    # a TemplateURL at serve's own address (as sam deploy builds it from AWS_ENDPOINT_URL) is read from the endpoint's S3
    s3.put_object(Bucket="made-by-a-stack", Key="packaged.template", Body=json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}).encode())
    for address in (moto_serve.url, moto_serve.url.replace("127.0.0.1", "localhost")):
        name = "from-url" if "127.0.0.1" in address else "from-localhost-url"
        cfn.create_stack(StackName=name, TemplateURL=f"{address}/made-by-a-stack/packaged.template")
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=FAST)
    # an unsigned request is still serve's own: its console page
    with urllib.request.urlopen(moto_serve.url + "/") as page:
        assert page.headers.get_content_type() == "text/html"


def test_without_an_aws_endpoint_another_service_s_call_is_refused_naming_the_flags(tmp_path: Path) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = ServerProcess(tmp_path / "note", "--no-reload")
    try:
        with pytest.raises(ClientError) as refused:
            boto3.client("s3", endpoint_url=server.url, **CREDENTIALS).list_buckets()
        error = refused.value.response["Error"]
        assert error["Code"] == "NoAwsEndpoint", refused.value.response
        assert error["Message"] == (
            "cfnrun serve answers Lambda, CloudFormation, Cloud Control and STS calls; this s3 call (GET /) goes to an AWS "
            "endpoint, and none is set: start serve with --moto or --aws-endpoint URL"
        )
        with pytest.raises(ClientError) as json_protocol:
            boto3.client("sqs", endpoint_url=server.url, **CREDENTIALS).list_queues()
        assert json_protocol.value.response["Error"]["Code"] == "NoAwsEndpoint"
        assert boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS).describe_stacks()["Stacks"] == []  # its own still answer
        # STS, which CDK, SAM and cloudformation-cli ask first, is answered here when there is no endpoint to pass it to
        assert boto3.client("sts", endpoint_url=server.url, **CREDENTIALS).get_caller_identity()["Account"] == "123456789012"
    finally:
        server.stop()


def test_lambda_calls_about_a_stacks_aws_function_reach_the_endpoint_and_serves_own_stay_its_own(moto_serve: ServerProcess) -> None:
    """As `cdk deploy --hotswap` makes them: GetFunction and UpdateFunctionCode of a stack's AWS::Lambda::Function that
    lives on the endpoint only (not Python: serve runs none of its code)."""
    import io
    import zipfile

    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=moto_serve.url, **CREDENTIALS)
    awslambda = boto3.client("lambda", endpoint_url=moto_serve.url, **CREDENTIALS)
    trust = {"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    resources = {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}},
        "Fn": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": "nodejs20.x", "Handler": "index.handler", "Code": {"ZipFile": "exports.handler = async () => 1;"},
            "Role": {"Fn::GetAtt": ["Role", "Arn"]},
        }},
    }
    cfn.create_stack(StackName="with-function", TemplateBody=json.dumps({"Resources": resources}), Capabilities=["CAPABILITY_IAM"])
    cfn.get_waiter("stack_create_complete").wait(StackName="with-function", WaiterConfig=FAST)
    name = cfn.describe_stack_resource(StackName="with-function", LogicalResourceId="Fn")["StackResourceDetail"]["PhysicalResourceId"]

    before = awslambda.get_function(FunctionName=name)["Configuration"]
    assert before["FunctionName"] == name and before["Runtime"] == "nodejs20.x"
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("index.js", "exports.handler = async () => 2;")
    after = awslambda.update_function_code(FunctionName=name, ZipFile=code.getvalue())
    assert after["CodeSha256"] != before["CodeSha256"]
    # serve's own functions are still its own, and so is an Invoke of one it does not know
    with pytest.raises(ClientError, match="is served from a provider"):
        awslambda.delete_function(FunctionName="TypeFunction")
    with pytest.raises(ClientError, match="Served functions"):
        awslambda.invoke(FunctionName="nowhere")
