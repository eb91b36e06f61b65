"""A call moto breaks on is answered as AWS answers an internal failure, in the protocol the caller's client reads
(``app/moto_server.py``'s ``AwsShapedFailures``): botocore's own parser of each protocol finds the code and the message."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import botocore.session
import pytest
from botocore.parsers import create_parser

from cfnrun.app.moto_server import AwsShapedFailures

SIGNED = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"


def _broken(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
    raise KeyError("nope")


def _answered(environ: Dict[str, Any]) -> Tuple[int, Dict[str, str], bytes]:
    said: Dict[str, Any] = {}

    def start_response(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> None:
        said["status"], said["headers"] = int(status.split()[0]), dict(headers)

    body = b"".join(AwsShapedFailures(_broken)(environ, start_response))
    return said["status"], said["headers"], body


@pytest.mark.parametrize("service, operation, environ", [
    ("apigateway", "GetDeployment", {"REQUEST_METHOD": "GET", "PATH_INFO": "/restapis/a/deployments/nope"}),
    ("lambda", "GetFunction", {"REQUEST_METHOD": "GET", "PATH_INFO": "/2015-03-31/functions/f"}),
    ("logs", "DescribeLogGroups", {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "Logs_20140328.DescribeLogGroups",
                                   "CONTENT_TYPE": "application/x-amz-json-1.1"}),
    ("cloudformation", "DescribeStacks", {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "CONTENT_TYPE": "application/x-www-form-urlencoded"}),
    ("s3", "GetObject", {"REQUEST_METHOD": "GET", "PATH_INFO": "/bucket/key"}),
    ("route53", "GetHostedZone", {"REQUEST_METHOD": "GET", "PATH_INFO": "/2013-04-01/hostedzone/Z1"}),
], ids=lambda value: value if isinstance(value, str) else "")
def test_the_callers_client_reads_the_failure_whatever_its_protocol(service: str, operation: str, environ: Dict[str, Any]) -> None:
    model = botocore.session.get_session().get_service_model(service)
    status, headers, body = _answered({**environ, "HTTP_AUTHORIZATION": SIGNED.format(service=model.signing_name)})
    parsed = create_parser(model.protocol).parse(
        {"status_code": status, "headers": headers, "body": body}, model.operation_model(operation).output_shape)
    assert status == 500
    assert parsed["Error"]["Code"] == "InternalFailure"
    assert parsed["Error"]["Message"].startswith("moto broke answering an AWS call: KeyError: 'nope'"), parsed["Error"]
