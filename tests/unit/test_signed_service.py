from __future__ import annotations

from aiohttp.test_utils import make_mocked_request

from cfnrun.api.forwarding import signed_service


def test_the_service_is_read_from_a_sigv4_credential_scope_in_the_header_or_a_presigned_url() -> None:
    signed = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261128/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc"
    assert signed_service(make_mocked_request("GET", "/", headers={"Authorization": signed})) == "s3"
    presigned = "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261128%2Feu-west-1%2Fsqs%2Faws4_request&X-Amz-Signature=x"
    assert signed_service(make_mocked_request("GET", presigned)) == "sqs"
    assert signed_service(make_mocked_request("GET", "/", headers={"Authorization": "AWS AKID:sig"})) is None  # SigV2: not read
    assert signed_service(make_mocked_request("PUT", "/cfnrun/custom-resource/x")) is None  # unsigned: serve's own
