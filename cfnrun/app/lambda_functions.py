"""Functions made at run time through serve's Lambda API (CreateFunction and the rest), run on serve's warm workers.

A Python zip function (``Runtime`` python3.x) created with boto3 or ``aws lambda create-function``
is unpacked into a folder of its own and served as a ``--functions`` function is: a registry of
warm workers among serve's (``StackFunctions.serve_folder``, which serves a stack's own functions),
under its FunctionName and ARN, with its Handler, Timeout, MemorySize and Environment.Variables.
Invoke, a custom resource's ServiceToken, a Lambda hook or a macro's FunctionName then reach it.
Its code comes as ``Code.ZipFile`` (the bytes the client sent; nothing else is read) or as
``Code.S3Bucket``/``S3Key`` on the AWS endpoint's S3 (``--moto``, ``--aws-endpoint``).
UpdateFunctionCode serves the new code (new workers); DeleteFunction stops the workers and
removes the folder. ``Role`` is required and kept but grants nothing: the handler's AWS calls
use serve's credentials.

Where the code goes: with ``--state DIR`` under ``DIR/lambda-functions/NAME/`` beside the
function's configuration, so a restarted serve with the same ``--state`` serves it again;
without it under a folder of this serve's in ``.cfnrun/lambda-functions/`` (of the first
provider project, else of the folder serve runs in), removed when serve stops.

The service's texts where they are known (ResourceConflictException "Function already exist",
ResourceNotFoundException "Function not found: ARN", the zip and size limits); where cfnrun
refuses what Lambda accepts (another runtime, a container image, versions) the text says so.
"""
from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from cfnrun.api.service_errors import ServiceError
from cfnrun.app.served import Served, UnknownFunction
from cfnrun.model.local_state import state_folder
from cfnrun.model.template import called_name

if TYPE_CHECKING:
    from cfnrun.app.stacks.stack_functions import StackFunctions

FOLDER = "lambda-functions"
CONFIGURATION_FILE = "function.json"
MAX_ZIP_BYTES = 50 * 1024 * 1024  # a zip sent in the request
MAX_UNZIPPED_BYTES = 262144000
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PYTHON_RUNTIME = re.compile(r"^python3\.\d+$")
ARCHITECTURES = ("x86_64", "arm64")  # the Lambda API's Architecture values


def invalid(message: str) -> ServiceError:
    return ServiceError(400, "InvalidParameterValueException", message)


class CreatedFunctions:
    """The functions CreateFunction made on this serve (``cfnrun.api.lambda_functions.FunctionManagement``)."""

    def __init__(self, served: Served, state: Optional[Path] = None) -> None:
        self.served = served
        self._serving: Optional["StackFunctions"] = None
        self.state = state
        self._folder: Optional[Path] = state / FOLDER if state is not None else None
        self._configurations: Dict[str, Dict[str, Any]] = {}  # FunctionConfiguration by name
        self._tags: Dict[str, Dict[str, str]] = {}
        self._code: Dict[str, Path] = {}  # the unpacked code now served, by name
        self._lock = asyncio.Lock()

    @property
    def serving(self) -> "StackFunctions":
        """The same warm-worker registries as a stack's own functions; made when first used (the local stacks'
        modules load after serve listens, ``app/late_parts.py``, unless a function is made or read back before)."""
        if self._serving is None:
            from cfnrun.app.stacks.stack_functions import StackFunctions

            self._serving = StackFunctions(self.served)
        return self._serving

    # -- where the code goes -----------------------------------------------------------------------

    def folder(self) -> Path:
        if self._folder is None:
            base = self.served.providers[0].project.root if self.served.providers else Path.cwd()
            parent = state_folder(base) / FOLDER
            parent.mkdir(exist_ok=True)
            self._folder = Path(tempfile.mkdtemp(prefix="serve-", dir=parent))  # this serve's: removed when it stops
        return self._folder

    def arn(self, name: str) -> str:
        return f"arn:aws:lambda:{self.served.region}:{self.served.account_id}:function:{name}"

    def not_found(self, name: str) -> ServiceError:
        return ServiceError(404, "ResourceNotFoundException", f"Function not found: {self.arn(called_name(name))}")

    # -- the operations ----------------------------------------------------------------------------

    async def create(self, request: Dict[str, Any]) -> Dict[str, Any]:
        name = called_name(str(request.get("FunctionName") or ""))
        if not NAME.match(name):
            raise invalid(f"FunctionName {name!r} is not a function name: 1 to 64 letters, digits, - and _ (or its ARN)")
        if request.get("PackageType", "Zip") != "Zip":
            raise invalid("cfnrun serve runs zip functions only (PackageType Zip): a container image runs on AWS or the --aws-endpoint")
        runtime = str(request.get("Runtime") or "")
        if not PYTHON_RUNTIME.match(runtime):
            raise invalid(f"The runtime parameter of {runtime or '(none)'} is not supported by cfnrun serve: it runs Python functions "
                          "(python3.x) on its warm workers; create functions in other runtimes on AWS or the --aws-endpoint")
        if not request.get("Handler"):
            raise invalid("Handler is required for a function whose package type is Zip (module.function, as index.handler)")
        timeout, memory = _bounded(request, "Timeout", 3, 1, 900), _bounded(request, "MemorySize", 128, 128, 10240)
        variables = _variables(request.get("Environment"))
        code = request.get("Code")
        if not isinstance(code, dict):
            raise invalid("Code is required: ZipFile (the zip's bytes) or S3Bucket and S3Key")
        architectures, given_tags = request.get("Architectures") or ["x86_64"], request.get("Tags") or {}
        if not (isinstance(architectures, list) and len(architectures) == 1 and architectures[0] in ARCHITECTURES):
            raise invalid(f"Architectures {architectures!r} is not a list of one architecture: {' or '.join(ARCHITECTURES)}")
        if not isinstance(given_tags, dict):
            raise invalid(f"Tags must be a map of tag keys to values, not {type(given_tags).__name__}")
        async with self._lock:
            if name in self._configurations or self._served_elsewhere(name):
                raise ServiceError(409, "ResourceConflictException", f"Function already exist: {name}")
            body = await self._zip(code)
            configuration = {
                "FunctionName": name, "FunctionArn": self.arn(name), "Runtime": runtime, "Role": str(request.get("Role") or ""),
                "Handler": str(request["Handler"]), "Description": str(request.get("Description") or ""), "Timeout": timeout,
                "MemorySize": memory, "Version": "$LATEST", "PackageType": "Zip", "State": "Active", "LastUpdateStatus": "Successful",
                "TracingConfig": {"Mode": "PassThrough"}, "Architectures": list(architectures),
                "EphemeralStorage": {"Size": 512},
            }
            if variables:
                configuration["Environment"] = {"Variables": variables}
            tags = {str(k): str(v) for k, v in given_tags.items()}
            await self._serve(name, configuration, tags, body)
        return dict(configuration)

    def get(self, name: str) -> Dict[str, Any]:
        configuration = self.configuration(name)
        answer: Dict[str, Any] = {"Configuration": configuration, "Code": {"RepositoryType": "S3"}}
        tags = self._tags.get(configuration["FunctionName"])
        if tags:
            answer["Tags"] = dict(tags)
        return answer

    def configuration(self, name: str) -> Dict[str, Any]:
        configuration = self._configurations.get(called_name(name))
        if configuration is None:
            raise self.not_found(name)
        return dict(configuration)

    def listed(self) -> List[Dict[str, Any]]:
        return [dict(self._configurations[name]) for name in sorted(self._configurations)]

    async def delete(self, name: str) -> None:
        bare = called_name(name)
        async with self._lock:
            if bare not in self._configurations:
                raise self._refused_or_not_found(name, "DeleteFunction")
            await self.serving.stop(bare)
            del self._configurations[bare]
            self._tags.pop(bare, None)
            self._code.pop(bare, None)
            await asyncio.to_thread(shutil.rmtree, self.folder() / bare, True)

    async def update_code(self, name: str, request: Dict[str, Any]) -> Dict[str, Any]:
        bare = called_name(name)
        if request.get("ImageUri"):
            raise invalid("cfnrun serve runs zip functions only: a container image runs on AWS or the --aws-endpoint")
        async with self._lock:
            if bare not in self._configurations:
                raise self._refused_or_not_found(name, "UpdateFunctionCode")
            body = await self._zip(request)
            configuration = dict(self._configurations[bare])
            await self._serve(bare, configuration, self._tags.get(bare, {}), body)
        return dict(self._configurations[bare])

    # -- serve's life ----------------------------------------------------------------------------

    def restore(self) -> List[str]:
        """With ``--state``: serve again each function a serve with the same state made; their names."""
        if self._folder is None or not self._folder.is_dir():
            return []
        restored = []
        for kept in sorted(self._folder.glob(f"*/{CONFIGURATION_FILE}")):
            try:
                record = json.loads(kept.read_text(encoding="utf-8"))
                configuration, code = dict(record["Configuration"]), kept.parent / str(record["Code"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a record cut short: the function is not served again
            if code.is_dir() and not self._served_elsewhere(configuration["FunctionName"]):
                self._start(configuration["FunctionName"], configuration, dict(record.get("Tags") or {}), code)
                restored.append(configuration["FunctionName"])
        return restored

    def close(self) -> None:
        """Without ``--state``, this serve's folder goes (its workers stop with serve's registries)."""
        if self.state is None and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    # -- pieces ------------------------------------------------------------------------------------

    def _served_elsewhere(self, name: str) -> bool:
        """Whether a provider, a --functions template or a stack serves a function of this name already."""
        if name in self._configurations:
            return False
        try:
            self.served.function(name)
        except UnknownFunction as unknown:
            return bool(unknown.candidates)
        return True

    def _refused_or_not_found(self, name: str, operation: str) -> ServiceError:
        if self._served_elsewhere(called_name(name)):
            return invalid(f"{operation}: {called_name(name)} is served from a provider, a --functions template or a stack's "
                           "AWS::Lambda::Function; cfnrun changes only the functions CreateFunction made")
        return self.not_found(name)

    async def _zip(self, code: Dict[str, Any]) -> bytes:
        """The zip a request's code names: its ZipFile, or its S3Bucket/S3Key on the AWS endpoint."""
        if code.get("ImageUri"):
            raise invalid("cfnrun serve runs zip functions only: a container image runs on AWS or the --aws-endpoint")
        if isinstance(code.get("ZipFile"), bytes):
            body: bytes = code["ZipFile"]
            if len(body) > MAX_ZIP_BYTES:
                raise invalid(f"Zipped size must be smaller than {MAX_ZIP_BYTES} bytes")
            return body
        bucket, key = code.get("S3Bucket"), code.get("S3Key")
        if not bucket or not key:
            raise invalid("Please provide a source for function code: ZipFile, or S3Bucket and S3Key")
        endpoint = self.served.aws_endpoint
        if endpoint is None:
            raise invalid(f"Code s3://{bucket}/{key}: cfnrun reads S3 code from the AWS endpoint; start serve with --moto or --aws-endpoint URL")
        return await asyncio.to_thread(_download, endpoint, self.served.region, str(bucket), str(key), code.get("S3ObjectVersion"))

    async def _serve(self, name: str, configuration: Dict[str, Any], tags: Dict[str, str], body: bytes) -> None:
        """Unpack ``body`` beside the function's configuration and serve it; the old code (an update's) goes."""
        digest = hashlib.sha256(body).digest()
        home = self.folder() / name
        code = home / f"code-{digest.hex()[:16]}-{uuid.uuid4().hex[:8]}"
        await asyncio.to_thread(_unpack, body, code)
        configuration.update({
            "CodeSize": len(body), "CodeSha256": base64.b64encode(digest).decode(), "RevisionId": str(uuid.uuid4()),
            "LastModified": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+0000",
        })
        record = {"Configuration": configuration, "Tags": tags, "Code": code.name}
        await asyncio.to_thread(_write_record, home / CONFIGURATION_FILE, record)
        previous = self._code.get(name)
        await self.serving.stop(name)
        self._start(name, configuration, tags, code)
        if previous is not None and previous != code:
            await asyncio.to_thread(shutil.rmtree, previous, True)

    def _start(self, name: str, configuration: Dict[str, Any], tags: Dict[str, str], code: Path) -> None:
        self.serving.add(name, configuration, code)
        self._configurations[name] = configuration
        self._tags[name] = tags
        self._code[name] = code


def _bounded(request: Dict[str, Any], member: str, default: int, low: int, high: int) -> int:
    value = request.get(member, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise invalid(f"{member} {value!r} is not a whole number between {low} and {high}")
    return value


def _variables(environment: Any) -> Dict[str, str]:
    variables = (environment or {}).get("Variables") if isinstance(environment, dict) else None
    if not variables:
        return {}
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise invalid("Environment.Variables must map names to strings")
    return {str(k): v for k, v in variables.items()}


def _unpack(body: bytes, folder: Path) -> None:
    """The zip's files under ``folder``; the service's error for what is not a zip, or too large unzipped; no path outside it."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError):
        raise invalid("Could not unzip uploaded file. Please check your file, then try to upload again.") from None
    if sum(member.file_size for member in members) > MAX_UNZIPPED_BYTES:
        raise invalid(f"Unzipped size must be smaller than {MAX_UNZIPPED_BYTES} bytes")
    for member in members:
        parts = Path(member.filename).parts
        if member.filename.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
            raise invalid(f"Could not unzip uploaded file: {member.filename!r} names a path outside the function's folder")
    folder.mkdir(parents=True)
    try:
        archive.extractall(folder)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise invalid(f"Could not unzip uploaded file. Please check your file, then try to upload again. ({error})") from None


def _write_record(path: Path, record: Dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record, indent=1), encoding="utf-8")
    os.replace(partial, path)


def _download(endpoint: str, region: str, bucket: str, key: str, version: Optional[str]) -> bytes:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")
    arguments = {"Bucket": bucket, "Key": key, **({"VersionId": version} if version else {})}
    try:
        return bytes(s3.get_object(**arguments)["Body"].read())
    except ClientError as error:
        detail = error.response.get("Error", {})
        raise invalid(f"Error occurred while GetObject. S3 Error Code: {detail.get('Code')}. S3 Error Message: {detail.get('Message')}") from None
    except BotoCoreError as error:
        raise invalid(f"Error occurred while GetObject from {endpoint}: {error}") from None
