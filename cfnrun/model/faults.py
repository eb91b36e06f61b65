"""``--inject``: faults to put into the handler's AWS calls, as the user writes them.

    SERVICE:Operation=EFFECT[@N | %P]

``SERVICE`` is the name boto3.client() takes (``ssm``, ``dynamodb``, ``s3``...), ``Operation``
the API's name (``PutParameter``) or ``*`` for every operation of the service. ``EFFECT`` is an
error code the call fails with (``ThrottlingException``), a delay before the call goes out
(``+2s``, ``+500ms``), or both (``ThrottlingException+2s``). ``@N`` limits the fault to the N-th
matching call, ``%P`` to P percent of them (at random); without either every matching call gets it.

The worker process applies the rules (``runtime/fault_hook.py``); this module only reads them
and hands them over, as JSON in the ``CFNRUN_INJECT`` environment variable.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import FrozenSet, Iterable, Optional

from cfnrun.model.errors import CfnrunError

FAULTS_VARIABLE = "CFNRUN_INJECT"
MAX_DELAY_S = 900.0  # Lambda's longest run (15 min): a longer delay only hangs the call until its budget cuts it
SYNTAX = "SERVICE:Operation=ErrorCode or SERVICE:Operation=+2s, optionally followed by @N (the N-th call) or %P (P percent)"

# Patterns, compiled (and cached by re) when first used: every command that reads --inject imports this module,
# and a one-shot invoke reads it before its worker starts.
_RULE = (
    r"^(?P<service>[A-Za-z0-9][A-Za-z0-9-]*):(?P<operation>\*|[A-Za-z][A-Za-z0-9]*)="
    r"(?P<error>[A-Za-z][A-Za-z0-9.]*)?(?:\+(?P<delay>\d+(?:\.\d+)?)(?P<unit>ms|s))?"
    r"(?:@(?P<nth>\d+)|%(?P<rate>\d+(?:\.\d+)?))?$"
)


def http_status(error_code: str) -> int:
    """The HTTP status AWS services answer an error code with (400 unless the code says otherwise)."""
    code = error_code.lower()
    if "unavailable" in code:
        return 503
    if code.startswith("internal") or code in {"serviceexception", "servicefailure"}:
        return 500
    if code.startswith("accessdenied") or code in {"unauthorizedoperation", "forbidden"}:
        return 403
    if code in {"toomanyrequestsexception", "slowdown"}:
        return 429 if code == "toomanyrequestsexception" else 503
    return 400


@dataclass(frozen=True)
class FaultRule:
    text: str  # as the user wrote it, for the timeline
    service: str
    operation: str  # "*" for every operation
    error_code: Optional[str] = None
    status: Optional[int] = None  # the HTTP status of the injected error
    delay_s: float = 0.0
    nth: Optional[int] = None  # only the N-th matching call (1-based)
    rate: Optional[float] = None  # only this share of the matching calls, 0..1


def parse_fault(text: str) -> FaultRule:
    """One ``--inject`` value; CfnrunError saying what is wrong with it."""
    found = re.match(_RULE, text.strip())
    if found is None:
        raise CfnrunError(f"--inject {text!r}: expected {SYNTAX}, e.g. ssm:PutParameter=ThrottlingException@1")
    error, delay, nth, rate = found["error"], found["delay"], found["nth"], found["rate"]
    if not error and not delay:
        raise CfnrunError(f"--inject {text!r}: say what happens to the call: an error code, a delay (+2s), or both")
    if nth is not None and int(nth) < 1:
        raise CfnrunError(f"--inject {text!r}: calls are counted from 1 (@1 is the first matching call)")
    if rate is not None and not 0 < float(rate) <= 100:
        raise CfnrunError(f"--inject {text!r}: a rate is a percentage above 0 and at most 100")
    delay_s = float(delay) / (1000.0 if found["unit"] == "ms" else 1.0) if delay else 0.0
    if delay_s > MAX_DELAY_S:
        raise CfnrunError(f"--inject {text!r}: a delay is at most {MAX_DELAY_S:g} s (Lambda's longest run)")
    _check_known(text, found["service"].lower(), found["operation"])
    return FaultRule(
        text=text.strip(),
        service=found["service"].lower(),
        operation=found["operation"],
        error_code=error,
        status=http_status(error) if error else None,
        delay_s=delay_s,
        nth=int(nth) if nth is not None else None,
        rate=float(rate) / 100.0 if rate is not None else None,
    )


def _check_known(text: str, service: str, operation: str) -> None:
    """A rule naming a service or operation botocore does not know would never match: refuse it up front."""
    operations = _operations(service)
    if operations is None:
        return  # botocore's models are not where we can read them: the worker matches as written
    if not operations:
        raise CfnrunError(f"--inject {text!r}: botocore knows no service {service!r} (the name boto3.client() takes, e.g. ssm, or its serviceId hyphenated)")
    if operation != "*" and operation not in operations:
        raise CfnrunError(f"--inject {text!r}: {service} has no operation {operation!r} (API names such as PutParameter)")


@functools.lru_cache(maxsize=None)
def _operations(service: str) -> Optional[FrozenSet[str]]:
    """The operations of ``service`` in botocore's own models (empty for an unknown service; None if unreadable).

    Read from the files, not through botocore's loader: only a run with ``--inject`` pays, and it pays one
    file, unless the rule names the service by its hyphenated serviceId (``application-auto-scaling``),
    which takes a look at the start of each model.
    """
    data = _botocore_data()
    if data is None:
        return None
    model = _newest_model(data / service) or _model_by_service_id(data, service)
    if model is None:
        return frozenset()
    try:
        return frozenset(json.loads(_read_model(model)).get("operations", {}))
    except (OSError, ValueError, EOFError):
        return None


def _botocore_data() -> Optional[Path]:
    found = importlib.util.find_spec("botocore")
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations)), "data")


def _newest_model(folder: Path) -> Optional[Path]:
    versions = sorted(folder.glob("*/service-2.json*"))
    return versions[-1] if versions else None


def _read_model(model: Path, size: int = -1) -> bytes:
    if model.suffix != ".gz":
        with model.open("rb") as plain:
            return plain.read(size)
    import gzip  # only --inject reads botocore's models

    with gzip.open(model, "rb") as packed:
        return packed.read(size)


_SERVICE_ID = rb'"serviceId"\s*:\s*"([^"]+)"'


def _model_by_service_id(data: Path, service: str) -> Optional[Path]:
    """The model whose serviceId, hyphenated as the fault hook matches it, is ``service``."""
    for folder in data.iterdir():
        model = _newest_model(folder)
        if model is None:
            continue
        try:
            found = re.search(_SERVICE_ID, _read_model(model, 4096))  # the metadata comes first
        except (OSError, EOFError):
            continue
        if found and found.group(1).decode().replace(" ", "-").lower() == service:
            return model
    return None


def parse_faults(texts: Iterable[str]) -> "tuple[FaultRule, ...]":
    return tuple(parse_fault(text) for text in texts)


def faults_variable(rules: Iterable[FaultRule]) -> str:
    """The rules as the worker reads them from ``CFNRUN_INJECT``."""
    return json.dumps([asdict(rule) for rule in rules], separators=(",", ":"))
