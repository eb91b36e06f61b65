"""Request files users already have: ``cfn invoke`` files and ``sam-tests`` events.

Both become one OperationInput; the format is detected from the keys present.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from cfnrun.model.errors import CfnrunError
from cfnrun.model.protocol import Action, Credentials

CFN_INVOKE = "cfn-invoke"
SAM_TESTS = "sam-tests"


@dataclass
class OperationInput:
    """What the user asked for, independent of the entrypoint that will serve it."""

    desired: Dict[str, Any]
    previous: Optional[Dict[str, Any]] = None
    type_configuration: Optional[Dict[str, Any]] = None
    logical_resource_id: Optional[str] = None
    client_request_token: Optional[str] = None
    callback_context: Optional[Dict[str, Any]] = None
    credentials: Optional[Credentials] = None
    region: Optional[str] = None
    action: Optional[Action] = None
    format: str = CFN_INVOKE


def _object(value: Any, key: str, source: str) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CfnrunError(f"{source}: '{key}' must be a JSON object, got {type(value).__name__}")
    return value


def _sam_credentials(value: Any) -> Optional[Credentials]:
    """Credentials from a sam-tests event, unless they are the guide's placeholders."""
    if not isinstance(value, dict):
        return None
    try:
        credentials = Credentials.model_validate(value)
    except ValueError:
        return None
    if credentials.accessKeyId.startswith("<") or not credentials.accessKeyId:
        return None
    return credentials


def parse_request(document: Any, source: str) -> OperationInput:
    if not isinstance(document, dict):
        raise CfnrunError(f"{source}: expected a JSON object, got {type(document).__name__}")
    if "desiredResourceState" in document:
        return OperationInput(
            desired=_object(document["desiredResourceState"], "desiredResourceState", source) or {},
            previous=_object(document.get("previousResourceState"), "previousResourceState", source),
            type_configuration=_object(document.get("typeConfiguration"), "typeConfiguration", source),
            logical_resource_id=document.get("logicalResourceIdentifier"),
            format=CFN_INVOKE,
        )
    if isinstance(document.get("request"), dict):
        request = document["request"]
        action = document.get("action")
        if action is not None and action not in Action.__members__:
            raise CfnrunError(f"{source}: action '{action}' is not one of {', '.join(Action.__members__)}")
        return OperationInput(
            desired=_object(request.get("desiredResourceState"), "request.desiredResourceState", source) or {},
            previous=_object(request.get("previousResourceState"), "request.previousResourceState", source),
            type_configuration=_object(request.get("typeConfiguration"), "request.typeConfiguration", source),
            logical_resource_id=request.get("logicalResourceIdentifier"),
            client_request_token=request.get("clientRequestToken"),
            callback_context=_object(document.get("callbackContext"), "callbackContext", source),
            credentials=_sam_credentials(document.get("credentials")),
            region=document.get("region"),
            action=Action(action) if action else None,
            format=SAM_TESTS,
        )
    raise CfnrunError(
        f"{source}: not a request file cfnrun knows. Expected a 'cfn invoke' request "
        '({"desiredResourceState": {...}, "previousResourceState": {...}}) or a sam-tests event '
        '({"action": "CREATE", "request": {"desiredResourceState": {...}}, "credentials": {...}})'
    )


def load_request_file(path: str) -> OperationInput:
    """Read a request file ('-' for standard input)."""
    source = "<stdin>" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CfnrunError(f"{source}: request file not found") from None
    except IsADirectoryError:
        raise CfnrunError(f"{source}: is a folder, not a request file") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise CfnrunError(f"{source}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    return parse_request(document, source)
