"""The files a declared hook names by ``S3Location`` (a Guard hook's rules, its input parameters), read where they are.

An ``s3://bucket/key`` Uri (with an optional VersionId) is read from the AWS endpoint the handlers
use (``--moto`` or ``--aws-endpoint``), so a test puts its rules there with its own S3 client, as a
deployment puts them in a real bucket. Any other Uri is a local path, relative to the folder serve
was started in, and read only when it is below a folder the user named (``readable``: the served
projects, the template's folder, each ``--guard-rules-dir``), however it is written (absolute,
``../``, through a symbolic link): a stack's template cannot make serve read any other file. Either
way a file that cannot be read is an ``UnreadableFile`` naming the Uri and why, never quoting what
it holds.
"""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Tuple

from cfnrun.model.errors import CfnrunError

if TYPE_CHECKING:
    from cfnrun.app.served import Served

S3_SCHEME = "s3://"
OTHER_SCHEMES = ("http://", "https://", "file://")


def readable_folders(served: "Served", named: Iterable[Path]) -> Tuple[Path, ...]:
    """Where local rules may be: each served project's folder, each ``--functions`` template's, and those ``named`` (--guard-rules-dir)."""
    return (*(registry.project.root for registry in served.registries), *named)


class UnreadableFile(CfnrunError):
    """A location that does not name a file cfnrun can read."""


def s3_object(uri: str) -> Tuple[str, str]:
    """The bucket and key of an ``s3://bucket/key`` Uri."""
    bucket, _, key = uri[len(S3_SCHEME):].partition("/")
    if not bucket or not key:
        raise UnreadableFile(f"{uri} does not name an object: an S3 Uri is s3://bucket/key")
    return bucket, key


class HookFiles:
    """Reads S3Locations from the AWS endpoint ``endpoint_url``, or local paths (relative to ``folder``) below the ``readable`` folders."""

    def __init__(self, endpoint_url: Optional[str], region: str, folder: Path, readable: Iterable[Path] = ()) -> None:
        self.endpoint_url = endpoint_url
        self.region = region
        self.folder = folder
        self.readable = tuple(dict.fromkeys(path.resolve() for path in readable))
        self._client: Any = None
        self._client_lock = threading.Lock()  # hooks on resources created together read at once: one client, made once

    def problem(self, location: Any, where: str) -> Optional[str]:
        """Why ``location`` is not an S3Location cfnrun can read from (checked before anything is read), or None."""
        if not isinstance(location, dict) or not isinstance(location.get("Uri"), str) or not location["Uri"]:
            return f"{where} must be an object with a Uri (s3://bucket/key or a local path)"
        uri = location["Uri"]
        if uri.startswith(OTHER_SCHEMES):
            return f"{where}.Uri {uri}: cfnrun reads s3://bucket/key (on the AWS endpoint) or a local path"
        if uri.startswith(S3_SCHEME):
            if self.endpoint_url is None:
                return f"{where}.Uri {uri} is on S3: start serve with --moto (an embedded moto) or --aws-endpoint URL to read it"
            return None
        try:
            path = self._local_path(uri)
        except (OSError, ValueError, RuntimeError):  # a NUL in it, a symbolic link loop
            return f"{where}.Uri {uri!r} is not a path cfnrun can read"
        if not self._readable(path):
            folders = ", ".join(str(path) for path in self.readable) or "none"
            return (
                f"{where}.Uri {uri} is outside the folders cfnrun reads rules from (the served projects, the template's folder, "
                f"each --guard-rules-dir: {folders}); name its folder with --guard-rules-dir DIR"
            )
        return None

    def _local_path(self, uri: str) -> Path:
        return (self.folder / uri).resolve()  # symbolic links and ".." followed: where the file really is

    def _readable(self, path: Path) -> bool:
        return any(path == folder or folder in path.parents for folder in self.readable)

    async def read(self, location: Any, where: str) -> str:
        """The text at ``location`` (an S3Location); UnreadableFile says why it cannot be read."""
        problem = self.problem(location, where)
        if problem is not None:
            raise UnreadableFile(problem)
        uri = str(location["Uri"])
        if uri.startswith(S3_SCHEME):
            return await asyncio.to_thread(self._s3_text, uri, location.get("VersionId"))
        path = self._local_path(uri)
        try:
            return await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UnreadableFile(f"{uri} cannot be read (as {path}): {getattr(error, 'strerror', None) or error}") from None

    def _s3(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = self._new_client()
        return self._client

    def _new_client(self) -> Any:
        import boto3  # what the endpoint speaks; imported once a hook reads from it

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def _s3_text(self, uri: str, version_id: Any) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = s3_object(uri)
        arguments = {"Bucket": bucket, "Key": key}
        if isinstance(version_id, str) and version_id:
            arguments["VersionId"] = version_id
        try:
            body = self._s3().get_object(**arguments)["Body"].read()
        except ClientError as error:
            detail = error.response.get("Error", {})
            raise UnreadableFile(f"{uri} cannot be read from {self.endpoint_url}: {detail.get('Code')}: {detail.get('Message')}") from None
        except BotoCoreError as error:
            raise UnreadableFile(f"{uri} cannot be read from {self.endpoint_url}: {error}") from None
        try:
            return str(body.decode("utf-8"))
        except UnicodeDecodeError:
            raise UnreadableFile(f"{uri} is not UTF-8 text") from None
