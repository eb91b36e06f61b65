"""A call's TemplateURL on ``cfnrun serve``: the template read from the AWS endpoint's S3, as ``aws cloudformation
deploy --s3-bucket`` and ``sam deploy`` send it; the URLs the service refuses, refused in its words."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from conftest import LOCAL_STATE, SAMPLES
from stack_waits import FAST

moto_server = pytest.importorskip("moto.server")

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
TEMPLATE = """\
Parameters:
  Title: {Type: String, Default: from s3}
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties: {Title: !Ref Title}
"""


def test_a_template_url_in_the_endpoints_s3_is_read_and_other_urls_are_refused_in_the_services_words(
    serve, tmp_path: Path, moto_url: str
) -> None:
    import boto3

    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    s3 = boto3.client("s3", endpoint_url=moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket="templates")
    s3.put_object(Bucket="templates", Key="app/template.yaml", Body=TEMPLATE.encode())
    server = serve(tmp_path / "note", "--no-reload", "--aws-endpoint", moto_url)
    cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)

    url = "https://templates.s3.us-east-1.amazonaws.com/app/template.yaml"  # what the aws CLI's deploy --s3-bucket sends
    assert [p["ParameterKey"] for p in cloudformation.validate_template(TemplateURL=url)["Parameters"]] == ["Title"]
    cloudformation.create_stack(StackName="from-url", TemplateURL=url)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="from-url", WaiterConfig=FAST)
    assert cloudformation.get_template(StackName="from-url")["TemplateBody"] == TEMPLATE
    cloudformation.create_change_set(StackName="from-url", ChangeSetName="again", TemplateURL=f"{moto_url}/templates/app/template.yaml",
                                     Parameters=[{"ParameterKey": "Title", "ParameterValue": "changed"}])
    cloudformation.get_waiter("change_set_create_complete").wait(StackName="from-url", ChangeSetName="again", WaiterConfig=FAST)

    # LocalStack's tests recorded against AWS (api/test_templates, test_create_stack_from_s3_template_url)
    for refused_url, message in (("s3://templates/app/template.yaml", "S3 error: Domain name specified in templates is not a valid S3 domain"),
                                 ("https://example.com/template.yaml", "TemplateURL must be a supported URL.")):
        with pytest.raises(ClientError) as refused:
            cloudformation.create_stack(StackName="refused", TemplateURL=refused_url)
        assert (refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]) == ("ValidationError", message)
    # both: the service's text as terraform's users quote it (hashicorp/terraform#4534), not the URL read and the body dropped
    for operation in (cloudformation.create_stack, cloudformation.validate_template):
        with pytest.raises(ClientError) as both:
            operation(**({"StackName": "both"} if operation == cloudformation.create_stack else {}), TemplateURL=url, TemplateBody=TEMPLATE)
        assert both.value.response["Error"]["Message"] == "You cannot specify both Template URL and Template Body."
