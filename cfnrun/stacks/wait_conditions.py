"""``AWS::CloudFormation::WaitConditionHandle`` and ``AWS::CloudFormation::WaitCondition``, provisioned by cfnrun itself.

A handle's ``Ref`` is a URL on serve's port, shaped like the service's presigned S3 URL
(``http://127.0.0.1:PORT/cfnrun/wait-condition-signals/<token>?AWSAccessKeyId=…&Expires=…&Signature=…``):
``cfn-signal`` or curl PUT a JSON signal there (``{"Status": "SUCCESS", "UniqueId": "…", "Data": "…",
"Reason": "…"}``; ``api/cloudformation/wait_condition_signals.py``). A WaitCondition with ``Handle``
stays ``CREATE_IN_PROGRESS`` until its ``Count`` (default 1) distinct SUCCESS signals reached the
handle — those sent before it started count too — and fails on a FAILURE signal
(``WaitCondition received failed message: '<Reason>' for uniqueId: <UniqueId>``) or after
``Timeout`` seconds (at most 43200: ``WaitCondition timed out. Received 0 conditions when
expecting 1``). Its ``Data`` attribute is the JSON object of each signal's Data by UniqueId. A
WaitCondition with a ``CreationPolicy`` instead waits for SignalResource as any resource does
(``signals.py``), and one without a Handle completes at once. An update changes nothing (the service
does not wait again). Texts and limits are the AWS docs' and the service's as users quote them; the
physical id of a WaitCondition (its handle's URL) is inferred.
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any, Dict, Optional
from urllib.parse import urlsplit

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, Replacement, ResourceWork
from cfnrun.stacks.signals import ResourceSignals, SignalBox, Signal, received

HANDLE_TYPE = "AWS::CloudFormation::WaitConditionHandle"
CONDITION_TYPE = "AWS::CloudFormation::WaitCondition"
SIGNAL_PATH = "/cfnrun/wait-condition-signals/{token}"
MAX_TIMEOUT_S = 43200


def handle_url(base_url: str, token: str, expires_s: int = MAX_TIMEOUT_S) -> str:
    """A handle's URL: serve's address, its token, and a query string shaped like a presigned URL's (ignored when read)."""
    expires = int(time.time()) + expires_s
    signature = hashlib.sha256(f"{token}:{expires}".encode()).hexdigest()[:40]
    return f"{base_url.rstrip('/')}{SIGNAL_PATH.format(token=token)}?AWSAccessKeyId=cfnrun&Expires={expires}&Signature={signature}"


def token_of(url: str) -> Optional[str]:
    """The token in a handle's URL, or None if the URL is not one of this serve's handles."""
    path = urlsplit(url).path
    prefix = SIGNAL_PATH.split("{", 1)[0]
    return path[len(prefix):] if path.startswith(prefix) and len(path) > len(prefix) else None


class WaitConditions:
    """The ``Provisioner`` of both wait-condition types."""

    def __init__(self, base_url: str, signals: ResourceSignals) -> None:
        self.base_url = base_url
        self.signals = signals

    def validate(self, type_name: str, logical_id: str, properties: Dict[str, Any]) -> Optional[str]:
        if type_name == HANDLE_TYPE:
            return None if not properties else f"Properties validation failed for resource {logical_id}: a WaitConditionHandle takes no properties"
        if "Handle" not in properties:
            return None
        if not isinstance(properties["Handle"], str) or token_of(properties["Handle"]) is None:
            return f"Properties validation failed for resource {logical_id}: Handle must be the Ref of a WaitConditionHandle of this stack"
        try:
            timeout = int(str(properties.get("Timeout")))
        except ValueError:
            return f"Properties validation failed for resource {logical_id}: Timeout must be a number of seconds up to {MAX_TIMEOUT_S}"
        if not 1 <= timeout <= MAX_TIMEOUT_S:
            return f"Properties validation failed for resource {logical_id}: Timeout must be a number of seconds up to {MAX_TIMEOUT_S}"
        try:
            count = int(str(properties.get("Count", 1)))
        except ValueError:
            count = 0
        return None if count >= 1 else f"Properties validation failed for resource {logical_id}: Count must be an integer of at least 1"

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        return Replacement.NEVER

    def shown(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        return properties

    async def create(self, work: ResourceWork) -> Provisioned:
        if work.type_name == HANDLE_TYPE:
            token = uuid.uuid4().hex
            self.signals.handles[token] = SignalBox()
            url = handle_url(self.base_url, token)
            return Provisioned(url, url, model={"Token": token})
        handle = work.properties.get("Handle")
        if not handle:
            return Provisioned(work.logical_id, work.logical_id, {"Data": "{}"})
        box = self.signals.handles.get(token_of(handle) or "")
        if box is None:
            raise ProvisioningFailed(f"The WaitConditionHandle {handle} does not exist (it must be created before {work.logical_id})")
        count = int(str(work.properties.get("Count", 1)))
        for signal in box.received.values():
            work.note(received(signal))
        box.on_signal = lambda signal: work.note(received(signal))
        try:
            successes = await box.wait(
                count,
                float(str(work.properties["Timeout"])),
                lambda got: f"WaitCondition timed out. Received {got} conditions when expecting {count}",
                lambda failure: f"WaitCondition received failed message: '{failure.reason or ''}' for uniqueId: {failure.unique_id}",
            )
        finally:
            box.on_signal = lambda signal: None
        return Provisioned(handle, handle, {"Data": _data(successes)})

    async def update(self, work: ResourceWork) -> Provisioned:
        if work.type_name == HANDLE_TYPE:
            return Provisioned(str(work.physical_id), work.physical_id, model=work.model)
        handle = work.properties.get("Handle") or work.physical_id
        previous = self.signals.handles.get(token_of(str(handle)) or "")
        successes = {k: s for k, s in previous.received.items() if s.status == "SUCCESS"} if previous is not None else {}
        return Provisioned(str(work.physical_id), work.physical_id, {"Data": _data(successes)})

    async def delete(self, work: ResourceWork) -> None:
        if work.type_name == HANDLE_TYPE and work.model:
            self.signals.handles.pop(str(work.model.get("Token")), None)


def _data(successes: Dict[str, Signal]) -> str:
    return json.dumps({unique_id: signal.data for unique_id, signal in successes.items()})
