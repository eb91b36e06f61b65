"""Request files users already have: ``cfn invoke`` files and ``sam-tests`` events.

Both become one OperationInput; the format is detected from the keys present.
"""
from __future__ import annotations

import difflib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from cfnrun.model.json_depth import MAX_NESTING, too_deep
from cfnrun.model.errors import CfnrunError, not_json
from cfnrun.model.hook_protocol import StackLevelTarget
from cfnrun.model.protocol import RESOURCE_ACTIONS, Action, Credentials

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
    target_name: Optional[str] = None  # a hook's target type, e.g. AWS::S3::Bucket, or STACK / CHANGE_SET
    stack_level: Optional[StackLevelTarget] = None  # a hook's STACK or CHANGE_SET target: its document, not properties
    change_set_id: Optional[str] = None  # a hook's: the change set it judges, or whose execution it is part of
    tags: Dict[str, Dict[str, str]] = field(default_factory=dict)  # stackTags, systemTags and their previous* (by wire name)
    warnings: List[str] = field(default_factory=list)  # what the user should know about the file


TAG_KEYS = ("stackTags", "previousStackTags", "systemTags", "previousSystemTags")
CFN_INVOKE_KEYS = (
    "desiredResourceState", "previousResourceState", "typeConfiguration", "logicalResourceIdentifier", "clientRequestToken", *TAG_KEYS
)
SAM_TESTS_KEYS = ("credentials", "action", "request", "callbackContext", "region")


def unknown_keys(document: Dict[str, Any], known: Sequence[str], source: str) -> List[str]:
    warnings = []
    for key in document:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            suggestion = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(known)})"
            warnings.append(f"{source}: unknown key '{key}' is ignored{suggestion}")
    return warnings


def object_field(value: Any, key: str, source: str) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CfnrunError(f"{source}: '{key}' must be a JSON object, got {type(value).__name__}")
    return value


def _tags(document: Dict[str, Any], source: str) -> Dict[str, Dict[str, str]]:
    """The tag maps CloudFormation sends beside the model (cfnrun's extension of the cfn invoke format)."""
    tags = {}
    for key in TAG_KEYS:
        value = object_field(document.get(key), key, source)
        if value is None:
            continue
        if not all(isinstance(name, str) and isinstance(tag, str) for name, tag in value.items()):
            raise CfnrunError(f"{source}: '{key}' maps tag keys to tag values, all strings")
        tags[key] = value
    return tags


def _token(value: Any, source: str) -> Optional[str]:
    """A fixed clientRequestToken (cfnrun's extension of the cfn invoke format): a re-run is the same request again."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise CfnrunError(f"{source}: 'clientRequestToken' must be a non-empty string (the request's idempotency token)")
    return value


def sam_credentials(value: Any) -> Optional[Credentials]:
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


def parse_request(document: Any, source: str, properties: Sequence[str] = ()) -> OperationInput:
    """A request file's content; ``properties`` (the schema's) lets a bare model stand for desiredResourceState."""
    if not isinstance(document, dict):
        raise CfnrunError(f"{source}: expected a JSON object, got {type(document).__name__}")
    if properties and document and all(key in properties for key in document):
        return OperationInput(
            desired=document,
            warnings=[
                f"{source} is a bare resource model (like example_inputs/ and inputs/ files): sent as desiredResourceState. "
                'A cfn invoke file wraps it: {"desiredResourceState": {...}, "previousResourceState": {...}}'
            ],
        )
    if "desiredResourceState" in document:
        return OperationInput(
            desired=object_field(document["desiredResourceState"], "desiredResourceState", source) or {},
            previous=object_field(document.get("previousResourceState"), "previousResourceState", source),
            type_configuration=object_field(document.get("typeConfiguration"), "typeConfiguration", source),
            logical_resource_id=document.get("logicalResourceIdentifier"),
            client_request_token=_token(document.get("clientRequestToken"), source),
            format=CFN_INVOKE,
            tags=_tags(document, source),
            warnings=unknown_keys(document, CFN_INVOKE_KEYS, source),
        )
    if isinstance(document.get("request"), dict):
        request = document["request"]
        action = document.get("action")
        if action is not None and action not in [a.value for a in RESOURCE_ACTIONS]:
            raise CfnrunError(f"{source}: action '{action}' is not one of {', '.join(a.value for a in RESOURCE_ACTIONS)}")
        return OperationInput(
            desired=object_field(request.get("desiredResourceState"), "request.desiredResourceState", source) or {},
            previous=object_field(request.get("previousResourceState"), "request.previousResourceState", source),
            type_configuration=object_field(request.get("typeConfiguration"), "request.typeConfiguration", source),
            logical_resource_id=request.get("logicalResourceIdentifier"),
            client_request_token=request.get("clientRequestToken"),
            callback_context=object_field(document.get("callbackContext"), "callbackContext", source),
            credentials=sam_credentials(document.get("credentials")),
            region=document.get("region"),
            action=Action(action) if action else None,
            format=SAM_TESTS,
            warnings=unknown_keys(document, SAM_TESTS_KEYS, source),
        )
    raise CfnrunError(
        f"{source}: not a request file cfnrun knows. Expected a 'cfn invoke' request "
        '({"desiredResourceState": {...}, "previousResourceState": {...}}) or a sam-tests event '
        '({"action": "CREATE", "request": {"desiredResourceState": {...}}, "credentials": {...}})'
    )


def _pointed(text: str, error: json.JSONDecodeError) -> str:
    """The line the JSON error is on, with a caret under its column."""
    lines = text.splitlines()
    if not 0 < error.lineno <= len(lines):
        return ""
    line = lines[error.lineno - 1]
    if len(line) > 200:
        return ""
    before = text[: error.pos].rstrip()
    comma = " (a trailing comma before it: JSON allows none)" if before.endswith(",") and text[error.pos:error.pos + 1] in "}]" else ""
    return f"{comma}\n  {line}\n  {' ' * (error.colno - 1)}^"


def _looks_like_yaml(text: str) -> bool:
    import yaml

    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False


def load_request_file(path: str, properties: Sequence[str] = ()) -> OperationInput:
    """Read a request file ('-' for standard input)."""
    source, document = read_request_document(path)
    return parse_request(document, source, properties)


def read_request_document(path: str) -> "tuple[str, Any]":
    """The name to report and the JSON content of a request file ('-' for standard input)."""
    source = "<stdin>" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CfnrunError(f"{source}: request file not found") from None
    except IsADirectoryError:
        raise CfnrunError(f"{source}: is a folder, not a request file") from None
    deep = CfnrunError(f"{source}: the JSON nests more than {MAX_NESTING} levels deep; no request needs that many")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if text.lstrip().startswith(("{", "[")):  # meant as JSON (YAML's flow style would read a typo in it as YAML)
            raise CfnrunError(f"{source}: {not_json(error)}{_pointed(text, error)}") from None
        if _looks_like_yaml(text):
            raise CfnrunError(f"{source}: this is YAML; request files are JSON (as for cfn invoke): convert it to JSON") from None
        raise CfnrunError(f"{source}: {not_json(error)}") from None
    except RecursionError:
        raise deep from None
    if too_deep(document):
        raise deep
    return source, document


def request_file_hint(payload: Any) -> Optional[str]:
    """A hint when a Lambda payload is a cfn invoke request file rather than the HandlerRequest a function takes."""
    if isinstance(payload, dict) and "desiredResourceState" in payload and "action" not in payload and "requestData" not in payload:
        return (
            "this payload is a 'cfn invoke' request file, not a HandlerRequest: TypeFunction takes what CloudFormation "
            "sends; print one with: cfnrun invoke ACTION FILE --print-request"
        )
    return None
