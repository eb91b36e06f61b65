"""Templates and snippets named by location: an object in the AWS endpoint's S3, or a file on disk.

What ``TemplateURL`` (nested stacks) and ``AWS::Include``'s ``Location`` name: an S3 URL
(``s3://b/k``, ``https://b.s3[.region].amazonaws.com/k``, ``https://s3[.region].amazonaws.com/b/k``,
or the endpoint's or serve's own ``http://host:port/b/k``), read from the endpoint's S3; anything else is a
path, absolute or relative to the folder serve runs in (the API gets a template's text, not its place).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Tuple
from urllib.parse import ParseResult, urlparse

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.template.errors import TemplateError

S3_HOSTS = re.compile(r"^(?:(?P<bucket>.+)\.)?s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com(?:\.cn)?$")


class UnreadableLocation(Exception):
    """Why a location could not be read; its text is the message."""


LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _at(parsed: ParseResult, address: Optional[str]) -> bool:
    """Is ``parsed`` at ``address`` (a base URL)? A loopback host stands for any other at the same port."""
    if address is None:
        return False
    other = urlparse(address)
    if parsed.netloc == other.netloc:
        return True
    return parsed.port == other.port and {parsed.hostname, other.hostname} <= LOOPBACK


def s3_location(url: str, endpoint_url: Optional[str], own_url: Optional[str] = None) -> Optional[Tuple[str, str]]:
    """(bucket, key) when ``url`` names an object in S3 (AWS's, the endpoint's, or — ``own_url`` — serve's own address,
    which passes S3 calls on to the endpoint: ``api/forwarding.py``), else None (a path on disk)."""
    parsed = urlparse(url)
    if parsed.scheme == "s3":
        return parsed.netloc, parsed.path.lstrip("/")
    if parsed.scheme not in ("http", "https"):
        return None
    host = S3_HOSTS.match(parsed.hostname or "")
    if host is not None and host.group("bucket"):
        return host.group("bucket"), parsed.path.lstrip("/")
    bucket, _, key = parsed.path.lstrip("/").partition("/")
    if host is not None or _at(parsed, endpoint_url) or _at(parsed, own_url):
        return bucket, key
    raise UnreadableLocation(f"{url} is neither an S3 URL nor on the AWS endpoint {endpoint_url}: cfnrun reads it from the "
                             "endpoint's S3 or from disk")


def read_location(url: str, endpoint_url: Optional[str], region: str, own_url: Optional[str] = None) -> str:
    """The text at ``url``; UnreadableLocation saying why not."""
    location = s3_location(url, endpoint_url, own_url)
    if location is None:
        path = Path(url).expanduser()
        if not path.is_file():
            raise UnreadableLocation(f"{url}: no such file (a path is read from the folder serve runs in, {Path.cwd()})")
        return path.read_text()
    if endpoint_url is None:
        raise UnreadableLocation(f"{url} is in S3: start serve with --moto or --aws-endpoint to read it from there")
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, key = location
    s3 = boto3.client("s3", endpoint_url=endpoint_url, region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")
    try:
        return str(s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode())
    except (BotoCoreError, ClientError) as error:
        raise UnreadableLocation(f"s3://{bucket}/{key} could not be read from the AWS endpoint: {error}") from None


def read_snippet(endpoint_url: Optional[str], region: str, own_url: Optional[str], location: str) -> Any:
    """An ``AWS::Include`` snippet, decoded (JSON or YAML); TemplateError as the service words a snippet it cannot use."""
    try:
        text = read_location(location, endpoint_url, region, own_url)
    except UnreadableLocation as error:
        raise TemplateError(f"Transform AWS::Include failed with: {error}") from None
    try:
        return decode_template(text)
    except TemplateDecodeError as error:
        raise TemplateError(f"Transform AWS::Include failed with: the snippet at {location} is not well-formed {error.syntax}: "
                            f"{error.problem}") from None


class RefusedTemplateUrl(Exception):
    """A CreateStack/UpdateStack/CreateChangeSet/ValidateTemplate/GetTemplateSummary TemplateURL the service refuses;
    its text is the service's message."""


def read_template_url(endpoint_url: Optional[str], region: str, own_url: Optional[str], url: str) -> str:
    """The template a call's ``TemplateURL`` names: an https URL of an S3 object (AWS's forms, or the endpoint's or
    serve's own ``http://host:port/bucket/key``, as ``sam deploy`` builds it from AWS_ENDPOINT_URL), read from the endpoint's S3. The service refuses an ``s3://`` URL ("S3 error:
    Domain name specified in <bucket> is not a valid S3 domain") and any other URL ("TemplateURL must be a supported
    URL."), as LocalStack's tests recorded against AWS show (api/test_templates, test_create_stack_from_s3_template_url);
    an object that cannot be read is "S3 error: " and why (inferred)."""
    parsed = urlparse(url)
    if parsed.scheme == "s3":
        raise RefusedTemplateUrl(f"S3 error: Domain name specified in {parsed.netloc} is not a valid S3 domain")
    try:
        location = s3_location(url, endpoint_url, own_url) if parsed.scheme in ("http", "https") else None
    except UnreadableLocation:
        location = None
    if location is None:
        raise RefusedTemplateUrl("TemplateURL must be a supported URL.")
    try:
        return read_location(url, endpoint_url, region, own_url)
    except UnreadableLocation as error:
        raise RefusedTemplateUrl(f"S3 error: {error}") from None
