"""The stacks ``sam init`` ships, on ``cfnrun serve --moto``: created, updated and deleted (or rolled back) cleanly.

The templates are what ``sam init`` writes and ``sam build`` leaves (the transform kept, code by folder); SAM CLI
itself is not a test dependency, so they go through boto3's CreateStack/UpdateStack, as ``sam deploy``'s change set
would send them. The API Gateway and IAM calls that check what was made go to serve, which passes them on to its moto.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
from botocore.exceptions import WaiterError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST, outputs, settled

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]

# sam init --runtime python3.12 --app-template hello-world --package-type Zip, as sam build leaves it (SAM CLI 1.170.0)
HELLO_WORLD = """\
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Description: 'app

  Sample SAM Template for app

  '
Globals:
  Function:
    Timeout: 3
Resources:
  HelloWorldFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {code}
      Handler: app.lambda_handler
      Runtime: python3.12
      Architectures:
      - x86_64
      Events:
        HelloWorld:
          Type: Api
          Properties:
            Path: {path}
            Method: get
    Metadata:
      SamResourceId: HelloWorldFunction
Outputs:
  HelloWorldApi:
    Description: API Gateway endpoint URL for Prod stage for Hello World function
    Value: !Sub "https://${{ServerlessRestApi}}.execute-api.${{AWS::Region}}.amazonaws.com/Prod/hello/"
  HelloWorldFunction:
    Description: Hello World Lambda Function ARN
    Value: !GetAtt HelloWorldFunction.Arn
  HelloWorldFunctionIamRole:
    Description: Implicit IAM Role created for Hello World function
    Value: !GetAtt HelloWorldFunctionRole.Arn
"""

HANDLER = 'import json\n\n\ndef lambda_handler(event, context):\n    return {"statusCode": 200, "body": json.dumps({"message": "hello world"})}\n'


@pytest.fixture
def served(serve: Any, tmp_path: Path) -> Any:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    return serve(tmp_path / "note", "--no-reload", "--moto")


def _clients(server: Any) -> Dict[str, Any]:
    import boto3

    return {name: boto3.client(name, endpoint_url=server.url, **CREDENTIALS) for name in ("cloudformation", "apigateway", "iam", "lambda")}


def _physical(cloudformation: Any, stack: str) -> Dict[str, str]:
    return {r["LogicalResourceId"]: r.get("PhysicalResourceId", "") for r in cloudformation.describe_stack_resources(StackName=stack)["StackResources"]}


def _routes(apigateway: Any, api_id: str) -> Dict[str, Any]:
    return {r["path"]: sorted(r.get("resourceMethods", {})) for r in apigateway.get_resources(restApiId=api_id)["items"]}


def test_sam_init_hello_world_with_its_api_is_created_updated_and_deleted(served: Any, tmp_path: Path) -> None:
    code = tmp_path / ".aws-sam" / "build" / "HelloWorldFunction"
    code.mkdir(parents=True)
    (code / "app.py").write_text(HANDLER)
    clients = _clients(served)
    cloudformation, apigateway = clients["cloudformation"], clients["apigateway"]

    cloudformation.create_stack(StackName="app", TemplateBody=HELLO_WORLD.format(code=code, path="/hello"), Capabilities=CAPABILITIES)
    settled(cloudformation, "app", "stack_create_complete")
    made = _physical(cloudformation, "app")
    types = {r["LogicalResourceId"]: r["ResourceType"] for r in cloudformation.describe_stack_resources(StackName="app")["StackResources"]}
    assert sorted(types.values()) == sorted([
        "AWS::IAM::Role", "AWS::Lambda::Function", "AWS::ApiGateway::RestApi", "AWS::ApiGateway::Deployment",
        "AWS::ApiGateway::Stage", "AWS::Lambda::Permission"])
    api_id = made["ServerlessRestApi"]
    assert outputs(cloudformation, "app")["HelloWorldApi"] == f"https://{api_id}.execute-api.us-east-1.amazonaws.com/Prod/hello/"

    api = apigateway.get_rest_api(restApiId=api_id)
    assert api["name"] == "app"  # no Name in SAM's RestApi: the body's info.title (the stack's name), as API Gateway names it
    assert _routes(apigateway, api_id) == {"/": [], "/hello": ["GET"]}  # the OpenAPI body imported
    root = next(r["id"] for r in apigateway.get_resources(restApiId=api_id)["items"] if r["path"] == "/hello")
    integration = apigateway.get_integration(restApiId=api_id, resourceId=root, httpMethod="GET")
    assert integration["type"] == "AWS_PROXY" or integration["type"] == "aws_proxy"
    function_arn = outputs(cloudformation, "app")["HelloWorldFunction"]
    assert function_arn in integration["uri"]
    deployment = next(v for k, v in made.items() if k.startswith("ServerlessRestApiDeployment"))
    assert apigateway.get_stage(restApiId=api_id, stageName="Prod")["deploymentId"] == deployment  # the deployment's own id
    assert made["ServerlessRestApiProdStage"] == "Prod"
    created_events = cloudformation.describe_stack_events(StackName="app")["StackEvents"]
    assert any("as OpenAPI 3.0.1" in (e.get("ResourceStatusReason") or "") for e in created_events if e["LogicalResourceId"] == "ServerlessRestApi")

    # a new route: SAM makes a new deployment, the stage moves to it, the old one goes in the cleanup
    cloudformation.update_stack(StackName="app", TemplateBody=HELLO_WORLD.format(code=code, path="/hi"), Capabilities=CAPABILITIES)
    settled(cloudformation, "app", "stack_update_complete")
    updated = _physical(cloudformation, "app")
    assert updated["ServerlessRestApi"] == api_id
    assert _routes(apigateway, api_id) == {"/": [], "/hi": ["GET"]}
    moved_to = next(v for k, v in updated.items() if k.startswith("ServerlessRestApiDeployment"))
    assert moved_to != deployment
    assert apigateway.get_stage(restApiId=api_id, stageName="Prod")["deploymentId"] == moved_to

    cloudformation.delete_stack(StackName="app")
    settled(cloudformation, "app", "stack_delete_complete")
    assert apigateway.get_rest_apis()["items"] == []
    assert [r["RoleName"] for r in clients["iam"].list_roles()["Roles"]] == []
    assert clients["lambda"].list_functions()["Functions"] == []


# a role with a managed policy of the stack attached to it (SAM's connectors, sam init's web app) and an inline one,
# then a resource that fails: the rollback deletes both roles' policies with them, as the service's role delete does
ROLLED_BACK = """\
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
      Policies:
      - PolicyName: inline
        PolicyDocument: {Version: '2012-10-17', Statement: [{Effect: Allow, Action: s3:GetObject, Resource: '*'}]}
  Attached:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      Roles: [!Ref Role]
      PolicyDocument: {Version: '2012-10-17', Statement: [{Effect: Allow, Action: dynamodb:GetItem, Resource: '*'}]}
  Extra:
    Type: AWS::IAM::Policy
    Properties:
      Roles: [!Ref Role]
      PolicyName: extra
      PolicyDocument: {Version: '2012-10-17', Statement: [{Effect: Allow, Action: sqs:SendMessage, Resource: '*'}]}
  Broken:
    Type: AWS::ApiGateway::RestApi
    DependsOn: [Attached, Extra]
    Properties:
      Body: {openapi: 3.0.1, paths: {}}
"""


def test_a_rollback_deletes_roles_with_the_stacks_policies_attached(served: Any) -> None:
    clients = _clients(served)
    cloudformation, iam = clients["cloudformation"], clients["iam"]
    cloudformation.create_stack(StackName="web", TemplateBody=ROLLED_BACK, Capabilities=["CAPABILITY_IAM"])
    with pytest.raises(WaiterError):
        cloudformation.get_waiter("stack_create_complete").wait(StackName="web", WaiterConfig=FAST)
    events = cloudformation.describe_stack_events(StackName="web")["StackEvents"]
    stack = cloudformation.describe_stacks(StackName="web")["Stacks"][0]
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in events]
    failed = [e for e in events if e["LogicalResourceId"] == "Broken" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert "a RestApi needs a Name, or a Body whose info.title names it" in failed[0]["ResourceStatusReason"]
    assert [e["LogicalResourceId"] for e in events if e["ResourceStatus"] == "DELETE_FAILED"] == []
    assert iam.list_roles()["Roles"] == []
    assert iam.list_policies(Scope="Local")["Policies"] == []  # the managed policy too: moto's stack delete leaves it


# SAM's HTTP API (an HttpApi event, its implicit ServerlessHttpApi and $default stage), as SAM's docs show it
HTTP_API = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: {code}
      Handler: app.lambda_handler
      Runtime: python3.12
      Events:
        Hello:
          Type: HttpApi
          Properties:
            Path: {path}
            Method: get
Outputs:
  Url:
    Value: !Sub "https://${{ServerlessHttpApi}}.execute-api.${{AWS::Region}}.amazonaws.com/"
"""


def test_a_sam_http_api_is_made_on_api_gateway_v2_updated_with_its_stage_kept_and_deleted(served: Any, tmp_path: Path) -> None:
    import boto3

    code = tmp_path / "hello"
    code.mkdir()
    (code / "app.py").write_text(HANDLER)
    cloudformation = _clients(served)["cloudformation"]
    apis = boto3.client("apigatewayv2", endpoint_url=served.url, **CREDENTIALS)

    cloudformation.create_stack(StackName="http", TemplateBody=HTTP_API.format(code=code, path="/hello"), Capabilities=CAPABILITIES)
    settled(cloudformation, "http", "stack_create_complete")
    made = _physical(cloudformation, "http")
    api_id = made["ServerlessHttpApi"]
    assert outputs(cloudformation, "http")["Url"] == f"https://{api_id}.execute-api.us-east-1.amazonaws.com/"
    assert apis.get_api(ApiId=api_id)["Name"] == "http"  # the body's info.title: the stack's name
    assert [r["RouteKey"] for r in apis.get_routes(ApiId=api_id)["Items"]] == ["GET /hello"]
    integration = apis.get_integrations(ApiId=api_id)["Items"][0]
    assert made["HelloFunction"] in integration["IntegrationUri"] and integration["PayloadFormatVersion"] == "2.0"
    assert made["ServerlessHttpApiApiGatewayDefaultStage"] == "$default"
    assert [(s["StageName"], s["AutoDeploy"]) for s in apis.get_stages(ApiId=api_id)["Items"]] == [("$default", True)]

    cloudformation.update_stack(StackName="http", TemplateBody=HTTP_API.format(code=code, path="/hi"), Capabilities=CAPABILITIES)
    settled(cloudformation, "http", "stack_update_complete")
    assert _physical(cloudformation, "http")["ServerlessHttpApi"] == api_id
    assert [r["RouteKey"] for r in apis.get_routes(ApiId=api_id)["Items"]] == ["GET /hi"]
    assert [s["StageName"] for s in apis.get_stages(ApiId=api_id)["Items"]] == ["$default"]  # moto's reimport dropped it: made again

    cloudformation.delete_stack(StackName="http")
    settled(cloudformation, "http", "stack_delete_complete")
    assert apis.get_apis()["Items"] == []


# an HTTP API written by hand: its integration, route and stage as resources of their own
HAND_WRITTEN = """\
Resources:
  Api:
    Type: AWS::ApiGatewayV2::Api
    Properties: {{Name: by-hand, ProtocolType: HTTP, Description: written by hand}}
  Backend:
    Type: AWS::ApiGatewayV2::Integration
    Properties: {{ApiId: !Ref Api, IntegrationType: HTTP_PROXY, IntegrationMethod: GET, IntegrationUri: https://example.com/, PayloadFormatVersion: '1.0'}}
  Route:
    Type: AWS::ApiGatewayV2::Route
    Properties: {{ApiId: !Ref Api, RouteKey: '{route}', Target: !Sub 'integrations/${{Backend}}'}}
  Stage:
    Type: AWS::ApiGatewayV2::Stage
    Properties: {{ApiId: !Ref Api, StageName: dev, AutoDeploy: true, StageVariables: {{color: {color}}}}}
Outputs:
  Endpoint:
    Value: !GetAtt Api.ApiEndpoint
"""


def test_an_http_api_written_by_hand_is_made_updated_and_deleted_part_by_part(served: Any) -> None:
    import boto3

    cloudformation = _clients(served)["cloudformation"]
    apis = boto3.client("apigatewayv2", endpoint_url=served.url, **CREDENTIALS)
    cloudformation.create_stack(StackName="hand", TemplateBody=HAND_WRITTEN.format(route="GET /one", color="blue"))
    settled(cloudformation, "hand", "stack_create_complete")
    made = _physical(cloudformation, "hand")
    api = apis.get_api(ApiId=made["Api"])
    assert (api["Name"], api["Description"]) == ("by-hand", "written by hand")
    assert outputs(cloudformation, "hand")["Endpoint"] == api["ApiEndpoint"]
    route = apis.get_route(ApiId=made["Api"], RouteId=made["Route"])
    assert (route["RouteKey"], route["Target"]) == ("GET /one", f"integrations/{made['Backend']}")
    assert apis.get_stage(ApiId=made["Api"], StageName="dev")["StageVariables"] == {"color": "blue"}

    cloudformation.update_stack(StackName="hand", TemplateBody=HAND_WRITTEN.format(route="GET /two", color="green"))
    settled(cloudformation, "hand", "stack_update_complete")
    assert _physical(cloudformation, "hand") == made  # updated in place
    assert apis.get_route(ApiId=made["Api"], RouteId=made["Route"])["RouteKey"] == "GET /two"
    assert apis.get_stage(ApiId=made["Api"], StageName="dev")["StageVariables"] == {"color": "green"}
    events = cloudformation.describe_stack_events(StackName="hand")["StackEvents"]
    assert any("cannot update a stage" in (e.get("ResourceStatusReason") or "") for e in events if e["LogicalResourceId"] == "Stage")

    cloudformation.delete_stack(StackName="hand")
    settled(cloudformation, "hand", "stack_delete_complete")
    assert apis.get_apis()["Items"] == []
