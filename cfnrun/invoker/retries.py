"""Which FAILED answers CloudFormation retries, and how long it waits before each retry.

The handler contract calls four error codes retriable: Throttling, NetworkFailure,
ServiceInternalError and ResourceConflict (NotStabilized is terminal). The service
re-invokes a handler that answers FAILED with one of them, with the same request, so a
handler that maps a throttled AWS call to Throttling recovers instead of failing the
stack. cfnrun does the same: a few retries with exponential backoff (1 s, 2 s, 4 s by
default), enough to show a transient error being absorbed and bounded so a handler that
always answers Throttling still ends quickly; the waits run on the operation's clock (so
--virtual-clock skips them) and count against timeoutInMinutes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

RETRIABLE_ERROR_CODES = frozenset({"Throttling", "NetworkFailure", "ServiceInternalError", "ResourceConflict"})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3  # re-invocations after consecutive retriable failures; 0 turns retrying off
    first_delay_s: float = 1.0
    factor: float = 2.0
    max_delay_s: float = 30.0

    def retriable(self, error_code: Optional[str]) -> bool:
        return self.retries > 0 and error_code in RETRIABLE_ERROR_CODES

    def delay_s(self, retry: int) -> float:
        """The wait before the ``retry``-th retry (1-based)."""
        return min(self.max_delay_s, self.first_delay_s * self.factor ** (retry - 1))

    def describe(self) -> str:
        if self.retries <= 0:
            return "off"
        delays = ", ".join(f"{self.delay_s(n):g} s" for n in range(1, self.retries + 1))
        return f"up to {self.retries} retries of {'/'.join(sorted(RETRIABLE_ERROR_CODES))}, after {delays}"


NO_RETRY = RetryPolicy(retries=0)
