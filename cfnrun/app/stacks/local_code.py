"""Code on disk for the AWS endpoint: a SAM ``CodeUri``/``ContentUri`` folder zipped into the endpoint's S3 (and a
function's inline ``ZipFile`` too).

``sam build`` output names each function's code by a local path, which the SAM translation
keeps as ``S3Bucket: cfnrun-local-code, S3Key: <path>`` (``stacks/template/serverless.py``).
Before such an ``AWS::Lambda::Function`` (or ``AWS::Lambda::LayerVersion``) is created on the
endpoint, the folder (or one file) is zipped and put in the endpoint's bucket of that name,
under a key made of its content's hash, so changed code is an update and unchanged code is not;
the zip is put once (functions sharing a folder share the object), never again while it is there.
A relative path is read from the folder serve runs in; the user pointed at it by naming it.
"""
from __future__ import annotations

import asyncio
import copy
import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from cfnrun.stacks.provisioning import ProvisioningFailed
from cfnrun.stacks.template.serverless import LOCAL_CODE_BUCKET

CODE_PROPERTY = {"AWS::Lambda::Function": "Code", "AWS::Lambda::LayerVersion": "Content"}
# one lock per endpoint and key: the functions of a template that share a CodeUri are staged together, and an object put
# again while moto's Lambda reads it made moto read a closed file (its stack then never settled)
_PUTTING: Dict[Tuple[str, str], asyncio.Lock] = {}


def local_path(type_name: str, properties: Dict[str, Any]) -> Optional[str]:
    """The local path this resource's code stands for, or None when its code is not on disk."""
    code = properties.get(CODE_PROPERTY.get(type_name, ""))
    if isinstance(code, dict) and code.get("S3Bucket") == LOCAL_CODE_BUCKET and isinstance(code.get("S3Key"), str):
        return str(code["S3Key"])
    return None


def zipped(path: Path) -> bytes:
    """The folder's files (or the one file), in a zip as Lambda takes it: paths relative to the folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            name = file.name if path.is_file() else file.relative_to(path).as_posix()
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same files make the same zip
            info.external_attr = 0o644 << 16
            archive.writestr(info, file.read_bytes())
    return buffer.getvalue()


def inline_zipped(properties: Dict[str, Any]) -> Optional[bytes]:
    """A function's inline code (``Code.ZipFile``) in a zip as Lambda makes it: ``index.js`` for Node.js, else
    ``index.py``; None when its code is not inline."""
    code = properties.get("Code")
    if not isinstance(code, dict) or not isinstance(code.get("ZipFile"), str):
        return None
    name = "index.js" if str(properties.get("Runtime", "")).startswith("nodejs") else "index.py"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        archive.writestr(info, code["ZipFile"])
    return buffer.getvalue()


async def staged(type_name: str, properties: Dict[str, Any], endpoint_url: Optional[str], region: str) -> Dict[str, Any]:
    """``properties`` with local code replaced by its zip in the endpoint's S3, and a function's inline code too (moto's
    CloudFormation updates a function's code by decoding ``ZipFile`` as base64: it broke on the text, or stored garbage);
    unchanged when the code is neither."""
    if endpoint_url is None:
        return properties
    where = local_path(type_name, properties)
    body = inline_zipped(properties) if type_name == "AWS::Lambda::Function" and where is None else None
    if where is None and body is None:
        return properties
    if body is None:
        path = Path(str(where)).expanduser()
        if not path.exists():
            raise ProvisioningFailed(f"the local code {where} does not exist (a relative CodeUri/ContentUri is read from the folder "
                                     f"serve runs in, {Path.cwd()}; give an absolute path or start serve next to the template)")
        body = await asyncio.to_thread(zipped, path)
    key = f"{hashlib.sha256(body).hexdigest()}.zip"
    async with _PUTTING.setdefault((endpoint_url, key), asyncio.Lock()):  # functions sharing a CodeUri: put once, not at once
        await asyncio.to_thread(_put, endpoint_url, region, key, body)
    staged_properties = copy.deepcopy(properties)
    staged_properties[CODE_PROPERTY[type_name]] = {"S3Bucket": LOCAL_CODE_BUCKET, "S3Key": key}
    return staged_properties


def _put(endpoint_url: str, region: str, key: str, body: bytes) -> None:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = boto3.client("s3", endpoint_url=endpoint_url, region_name=region,
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    try:
        try:
            s3.head_bucket(Bucket=LOCAL_CODE_BUCKET)
        except ClientError:
            s3.create_bucket(Bucket=LOCAL_CODE_BUCKET)
        try:
            s3.head_object(Bucket=LOCAL_CODE_BUCKET, Key=key)
            return  # there already: the key is the content's hash
        except ClientError:
            pass
        s3.put_object(Bucket=LOCAL_CODE_BUCKET, Key=key, Body=body)
    except (BotoCoreError, ClientError) as error:
        raise ProvisioningFailed(f"could not put the local code in the AWS endpoint's S3 bucket {LOCAL_CODE_BUCKET}: {error}") from None
