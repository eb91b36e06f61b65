"""--aws-endpoint / --lambda-endpoint URLs: refused up front, with the reason, when no call could reach them."""
from __future__ import annotations

import pytest

from cfnrun.model.endpoint_url import check_endpoint_url
from cfnrun.model.errors import CfnrunError


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://", "no host"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://127.0.0.1:99999", "Port out of range"),
        ("http://127.0.0.1:port", "Port could not be cast"),
        ("http://127.0.0.1:0", "port 0"),
        ("127.0.0.1:5000", "expected a URL"),
        ("ftp://127.0.0.1", "expected a URL"),
    ],
)
def test_unusable_urls_are_refused_naming_the_flag(url: str, reason: str) -> None:
    with pytest.raises(CfnrunError, match=r"--aws-endpoint .*" + reason.replace("(", r"\(")) as raised:
        check_endpoint_url("--aws-endpoint", url, "http://127.0.0.1:5000")
    assert str(raised.value).startswith(f"--aws-endpoint {url}: ")


@pytest.mark.parametrize("url", ["http://127.0.0.1:5000", "https://lambda.us-east-1.amazonaws.com", "http://[::1]:3001/", "http://localhost"])
def test_usable_urls_pass(url: str) -> None:
    assert check_endpoint_url("--lambda-endpoint", url, "http://127.0.0.1:3001") == url
