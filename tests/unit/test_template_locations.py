"""Where TemplateURL and AWS::Include Locations are read from: the endpoint's S3 in every URL form, else disk."""
from __future__ import annotations

import pytest

from cfnrun.app.stacks.template_locations import UnreadableLocation, s3_location

ENDPOINT = "http://127.0.0.1:5000"


@pytest.mark.parametrize("url, expected", [
    ("s3://bucket/dir/child.yaml", ("bucket", "dir/child.yaml")),
    ("https://bucket.s3.amazonaws.com/child.yaml", ("bucket", "child.yaml")),
    ("https://bucket.s3.eu-west-1.amazonaws.com/a/b.json", ("bucket", "a/b.json")),
    ("https://s3.us-east-1.amazonaws.com/bucket/key.template", ("bucket", "key.template")),  # aws cloudformation package
    ("https://s3.amazonaws.com/bucket/key", ("bucket", "key")),
    ("http://127.0.0.1:5000/bucket/key", ("bucket", "key")),
    ("child.yaml", None),
    ("/abs/child.yaml", None),
])
def test_s3_urls_name_a_bucket_and_key_and_anything_else_is_a_path(url: str, expected: object) -> None:
    assert s3_location(url, ENDPOINT) == expected


def test_an_https_url_elsewhere_is_refused_saying_where_cfnrun_reads() -> None:
    with pytest.raises(UnreadableLocation, match="neither an S3 URL nor on the AWS endpoint"):
        s3_location("https://example.com/child.yaml", ENDPOINT)


def test_serve_s_own_address_names_the_endpoint_s_s3_whichever_loopback_name_the_caller_used() -> None:
    own = "http://127.0.0.1:3001"  # sam deploy builds its TemplateURL from AWS_ENDPOINT_URL, serve's address
    assert s3_location("http://127.0.0.1:3001/managed/abc.template", ENDPOINT, own) == ("managed", "abc.template")
    assert s3_location("http://localhost:3001/managed/abc.template", ENDPOINT, own) == ("managed", "abc.template")
    with pytest.raises(UnreadableLocation):
        s3_location("http://localhost:3002/managed/abc.template", ENDPOINT, own)
