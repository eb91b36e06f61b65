"""The REPORT line of a call's log tail: Max Memory Used when the worker said its peak, left out when nobody measured it."""
from __future__ import annotations

import base64

from cfnrun.api.function_responses import tail_log
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind


def _report(peak_kib: "int | None") -> str:
    outcome = InvocationOutcome(OutcomeKind.RETURNED, "id-1", 12.345, "hi\n", peak_kib=peak_kib)
    return base64.b64decode(tail_log(outcome, 128)).decode().splitlines()[-1]


def test_the_peak_is_given_in_mb_rounded_up_and_left_out_when_unknown() -> None:
    base = "REPORT RequestId: id-1\tDuration: 12.35 ms\tBilled Duration: 13 ms\tMemory Size: 128 MB\t"
    assert _report(71 * 1024) == base + "Max Memory Used: 71 MB\t"
    assert _report(71 * 1024 + 1) == base + "Max Memory Used: 72 MB\t"
    assert _report(None) == base
