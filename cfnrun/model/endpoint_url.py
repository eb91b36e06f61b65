"""URLs the user names for an endpoint (``--aws-endpoint``, ``--lambda-endpoint``): refused up front when unusable.

A URL that only fails once a handler's first AWS call goes out would surface as a handler
error deep in an operation; here it is one line naming the flag, before anything starts.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from cfnrun.model.errors import CfnrunError


def check_endpoint_url(flag: str, url: str, example: str) -> str:
    """``url`` when it is an http(s) URL with a host and a valid port; otherwise CfnrunError naming ``flag``."""
    expected = f"{flag} {url}: expected a URL such as {example}"
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port out of range or not a number
    except ValueError as error:
        raise CfnrunError(f"{expected} ({error})") from None
    if parts.scheme not in ("http", "https"):
        raise CfnrunError(expected)
    if not parts.hostname:
        raise CfnrunError(f"{expected} (no host)")
    if port == 0:
        raise CfnrunError(f"{expected} (port 0 is not one to connect to)")
    return url
