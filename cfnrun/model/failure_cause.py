"""Why a handler failed, in one line, from what it wrote: the exception it raised, and what to do about it.

cloudformation_cli_python_lib answers an exception the handler did not catch with FAILED
InternalFailure and, often, an empty message; the exception itself is only in the handler's
output (the support library logs its traceback). ``failure_cause`` reads that output (and the
answer's message) and gives one line naming the exception, plus a hint when the handler tried
to reach AWS (no stand-in: ``--moto`` / ``--aws-endpoint``) or had no caller session.

Every place that shows a failed step uses this: ``cfnrun invoke``'s timeline, ``history show``
and ``replay`` (through the operation's result), serve's log, ``cfnrun test``'s summary, fuzz.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# The line ending a Python traceback: "SomeError: text" (a dotted path allowed), not indented.
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s*(?P<text>.*))?$")
_TRACEBACK = "Traceback (most recent call last):"
_REACHING_AWS = (
    "Could not connect to the endpoint URL",
    "EndpointConnectionError",
    "Unable to locate credentials",
    "NoCredentialsError",
    "The security token included in the request is invalid",
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "ExpiredToken",
    "AuthFailure",
    "Connect timeout on endpoint URL",
)
_NO_SESSION = re.compile(
    r"'NoneType' object has no attribute '(client|resource|session|_session|get_credentials|region_name)'"
    r"|no caller session"
)
# A connection refused by an endpoint the user named (not AWS's own): the stand-in is not running.
_LOCAL_URL = re.compile(r'Could not connect to the endpoint URL: "(?P<url>https?://(?![^/"]*amazonaws\.com)[^"]+)"')
MAX_CAUSE_CHARS = 300


@dataclass(frozen=True)
class FailureCause:
    line: str  # "RuntimeError: no caller session", or the AWS error the handler met
    hint: Optional[str] = None  # what to do, naming the flags of the command that ran


def failure_cause(output: str, message: str = "", command: str = "the command", who: str = "the handler") -> Optional[FailureCause]:
    """The exception the handler raised (the last traceback in ``output``) and a hint; None when neither says anything.

    ``command`` is what the user ran ("cfnrun invoke", "cfnrun test", "cfnrun serve"): the hint names its flags.
    """
    line = _raised(output)
    seen = "\n".join((message or "", output or ""))
    hint = None
    local = _LOCAL_URL.search(seen)
    if _NO_SESSION.search(seen):
        hint = (
            "the handler got no caller session (session is None): its request carried no callerCredentials. "
            "CloudFormation always sends them; cfnrun invoke sends placeholder ones with --moto or --aws-endpoint, "
            "and --print-request --moto prints a request that carries them"
        )
    elif local is not None:
        hint = (
            f"nothing answered at {local.group('url')}, where {who}'s AWS calls went: start the stand-in "
            f"there, or add --moto to {command} for an embedded one"
        )
    elif any(mark in seen for mark in _REACHING_AWS):
        hint = (
            f"{who} tried to reach AWS: add --moto to {command} (an embedded AWS stand-in) "
            "or --aws-endpoint URL to send its AWS calls to one you run"
        )
    if line is None and hint is None:
        return None
    if line is None:
        line = _aws_line(seen) or ""
    return FailureCause(line, hint)


def _raised(output: str) -> Optional[str]:
    """The exception line ending the last traceback in ``output``, shortened to one line."""
    if not output or _TRACEBACK not in output:
        return None
    for raw in output[output.rindex(_TRACEBACK):].splitlines()[1:]:
        if not raw.strip() or raw.startswith((" ", "\t")):
            continue  # a frame, its source line, or its ^^^ marks
        match = _EXCEPTION_LINE.match(raw.strip())
        if match is None:
            return None
        return _short(f"{match['type']}: {match['text']}" if match["text"] else match["type"])
    return None


def _aws_line(seen: str) -> Optional[str]:
    for raw in seen.splitlines():
        if any(mark in raw for mark in _REACHING_AWS):
            return _short(raw.strip())
    return None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CAUSE_CHARS else text[: MAX_CAUSE_CHARS - 1] + "…"
