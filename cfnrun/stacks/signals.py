"""Resource signals: what a resource with a ``CreationPolicy`` and a WaitCondition wait for before they are complete.

A resource whose ``CreationPolicy`` has a ``ResourceSignal`` (``Count``, default 1; ``Timeout``, an
ISO 8601 duration, default ``PT5M``, at most ``PT12H``) stays ``CREATE_IN_PROGRESS`` after its
provisioner made it, until ``Count`` SUCCESS signals arrive through ``SignalResource`` (each a
``Received SUCCESS signal with UniqueId …`` event), a FAILURE signal arrives, or the time runs
out (``Failed to receive N resource signal(s) within the specified duration``). A
WaitConditionHandle's URL collects signals the same way (``wait_conditions.py``). A signal with a
UniqueId already received replaces it (the service counts distinct UniqueIds). The defaults and
texts are the AWS docs' and what users quote from the service; the FAILURE reason is inferred.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from cfnrun.stacks.provisioning import ProvisioningFailed

DEFAULT_COUNT = 1
DEFAULT_TIMEOUT = "PT5M"
MAX_TIMEOUT_S = 12 * 3600
_DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")


class SignalProblem(Exception):
    """A CreationPolicy, a signal or a WaitCondition the service would refuse (the message says why)."""


@dataclass(frozen=True)
class Signal:
    unique_id: str
    status: str  # SUCCESS | FAILURE
    reason: Optional[str] = None
    data: Optional[str] = None


@dataclass
class SignalBox:
    """The signals one resource (or one WaitConditionHandle) has received; ``arrived`` is set on each."""

    received: Dict[str, Signal] = field(default_factory=dict)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    on_signal: Callable[[Signal], None] = field(default=lambda signal: None)

    def put(self, signal: Signal) -> None:
        self.received[signal.unique_id] = signal
        self.on_signal(signal)
        self.arrived.set()

    async def wait(self, count: int, timeout_s: float, timed_out: Callable[[int], str], failed: Callable[[Signal], str]) -> Dict[str, Signal]:
        """Until ``count`` distinct SUCCESS signals (then them), or ProvisioningFailed on a FAILURE or the timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            failure = next((s for s in self.received.values() if s.status == "FAILURE"), None)
            if failure is not None:
                raise ProvisioningFailed(failed(failure))
            successes = {k: s for k, s in self.received.items() if s.status == "SUCCESS"}
            if len(successes) >= count:
                return successes
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise ProvisioningFailed(timed_out(len(successes))) from None


def duration_s(text: str) -> float:
    """An ISO 8601 duration (PT#H#M#S) in seconds; raises SignalProblem."""
    found = _DURATION.match(text)
    if not found or text == "PT":
        raise SignalProblem(f"Invalid CreationPolicy: Timeout {text!r} is not an ISO 8601 duration such as PT15M")
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total > MAX_TIMEOUT_S:
        raise SignalProblem(f"Invalid CreationPolicy: Timeout {text!r} is longer than the most the service waits, PT12H")
    return float(total)


@dataclass(frozen=True)
class ResourceSignalPolicy:
    count: int
    timeout_s: float


def resource_signal_policy(creation_policy: Optional[Mapping[str, Any]], parameters: Mapping[str, str]) -> Optional[ResourceSignalPolicy]:
    """The ``CreationPolicy.ResourceSignal`` the resource waits by, or None (``Ref`` to a parameter is read)."""
    signal = (creation_policy or {}).get("ResourceSignal")
    if signal is None:
        return None

    def value(key: str, default: Any) -> Any:
        raw = signal.get(key, default)
        if isinstance(raw, dict) and set(raw) == {"Ref"} and raw["Ref"] in parameters:
            return parameters[raw["Ref"]]
        return raw

    try:
        count = int(value("Count", DEFAULT_COUNT))
    except (TypeError, ValueError):
        raise SignalProblem(f"Invalid CreationPolicy: Count {signal.get('Count')!r} is not an integer") from None
    return ResourceSignalPolicy(count, duration_s(str(value("Timeout", DEFAULT_TIMEOUT))))


class ResourceSignals:
    """Every signal box of one serve: a resource's (by stack id and logical id) and a WaitConditionHandle's (by token)."""

    def __init__(self) -> None:
        self.resources: Dict[Tuple[str, str], SignalBox] = {}
        self.handles: Dict[str, SignalBox] = {}

    async def wait_for_resource(self, stack_id: str, logical_id: str, policy: ResourceSignalPolicy, note: Callable[[str], None]) -> None:
        """Wait as the resource's CreationPolicy says; each signal is told to ``note``; ProvisioningFailed if it fails."""
        box = SignalBox(on_signal=lambda signal: note(received(signal)))
        self.resources[(stack_id, logical_id)] = box
        try:
            await box.wait(
                policy.count,
                policy.timeout_s,
                lambda got: f"Failed to receive {policy.count} resource signal(s) within the specified duration",
                received,
            )
        finally:
            self.resources.pop((stack_id, logical_id), None)

    def signal_resource(self, stack_id: str, logical_id: str, signal: Signal) -> bool:
        """SignalResource: False when the resource does not wait for signals."""
        box = self.resources.get((stack_id, logical_id))
        if box is None:
            return False
        box.put(signal)
        return True

    async def signal_handle(self, token: str, signal: Signal) -> bool:
        """A signal PUT to a WaitConditionHandle's URL: False when no handle has that token."""
        box = self.handles.get(token)
        if box is None:
            return False
        box.put(signal)
        return True


def received(signal: Signal) -> str:
    return f"Received {signal.status} signal with UniqueId {signal.unique_id}"
