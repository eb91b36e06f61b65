"""DescribeTypeRegistration holds its answer while the registration is in progress, so a waiter's first poll finds it done (#34)."""
from __future__ import annotations

import asyncio
import io
import json
import zipfile
from pathlib import Path
from typing import Any, List, Optional, Tuple

from cfnrun.registry.operations import RegistryOperations
from cfnrun.registry.store import TypeRegistry, TypeVersion

MODULE = "Org::Svc::Bucket::MODULE"
FRAGMENT = {"Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}}}


def _module_package() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(".rpdk-config", json.dumps({"typeName": MODULE, "artifact_type": "MODULE"}))
        archive.writestr("schema.json", json.dumps({"typeName": MODULE, "description": "a bucket", "properties": {}}))
        archive.writestr("fragments/bucket.json", json.dumps(FRAGMENT))
    return out.getvalue()


class SlowFetch:
    """The registry's Handlers: the package arrives once ``arrive`` is set, as a slow S3 download would."""

    def __init__(self) -> None:
        self.arrive = asyncio.Event()
        self.used: List[Tuple[str, str]] = []

    async def fetch(self, url: str) -> bytes:
        await self.arrive.wait()
        return _module_package()

    async def start(self, version: TypeVersion) -> Optional[str]:
        return None

    async def stop(self, version: TypeVersion) -> None:
        return None

    async def test(self, version: TypeVersion, log_bucket: Optional[str]) -> Tuple[bool, str]:
        return True, ""

    def use(self, kind: str, type_name: str, version: Optional[TypeVersion]) -> None:
        self.used.append((kind, type_name))


def _operations(tmp_path: Path, handlers: SlowFetch, answer_wait: float) -> RegistryOperations:
    registry = TypeRegistry(handlers, lambda: tmp_path, "us-east-1", "123456789012")
    return RegistryOperations(registry, answer_wait=answer_wait)


def test_the_first_describe_after_register_type_answers_complete_once_the_registration_is(tmp_path: Path) -> None:
    async def run() -> Any:
        handlers = SlowFetch()
        operations = _operations(tmp_path, handlers, answer_wait=60)
        token = (await operations.call("RegisterType", {"Type": "MODULE", "TypeName": MODULE, "SchemaHandlerPackage": "s3://b/k"}))["RegistrationToken"]
        asyncio.get_running_loop().call_soon(handlers.arrive.set)  # the download ends while DescribeTypeRegistration waits
        return await operations.call("DescribeTypeRegistration", {"RegistrationToken": token})

    answer = asyncio.run(run())
    assert answer["ProgressStatus"] == "COMPLETE", answer
    assert answer["TypeVersionArn"].endswith("type/module/Org-Svc-Bucket-MODULE/00000001")


def test_the_hold_is_bounded_a_registration_still_running_answers_in_progress(tmp_path: Path) -> None:
    async def run() -> Any:
        handlers = SlowFetch()
        operations = _operations(tmp_path, handlers, answer_wait=0.05)
        token = (await operations.call("RegisterType", {"Type": "MODULE", "TypeName": MODULE, "SchemaHandlerPackage": "s3://b/k"}))["RegistrationToken"]
        answer = await operations.call("DescribeTypeRegistration", {"RegistrationToken": token})  # the package never arrives in time
        handlers.arrive.set()
        return answer, await operations.call("DescribeTypeRegistration", {"RegistrationToken": token})

    waiting, done = asyncio.run(run())
    assert waiting["ProgressStatus"] == "IN_PROGRESS" and "TypeVersionArn" not in waiting and "TypeArn" not in waiting  # null unless COMPLETE
    assert done["ProgressStatus"] == "COMPLETE"
