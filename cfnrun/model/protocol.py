"""Wire formats exchanged with a resource provider, in one place.

Field names and casing follow what CloudFormation and the Python plugin's
support library (``cloudformation_cli_python_lib``) put on the wire, so the
models here are the single source of truth for those names.
"""
from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, Optional, TypedDict

from pydantic import BaseModel, ConfigDict, ValidationError

from cfnrun.model.action import HOOK_POINTS as HOOK_POINTS  # light home, for the command line
from cfnrun.model.action import RESOURCE_ACTIONS as RESOURCE_ACTIONS
from cfnrun.model.action import Action as Action


class WireModel(BaseModel):
    """A wire format. Its validator is built when first used: building one costs a few milliseconds, and a
    command uses a few of these models (a one-shot invoke: its request's and ProgressEvent)."""

    model_config = ConfigDict(defer_build=True)


class OperationStatus(str, Enum):
    IN_PROGRESS = "IN_PROGRESS"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"


class HandlerErrorCode(str, Enum):
    NotUpdatable = "NotUpdatable"
    InvalidRequest = "InvalidRequest"
    AccessDenied = "AccessDenied"
    InvalidCredentials = "InvalidCredentials"
    AlreadyExists = "AlreadyExists"
    NotFound = "NotFound"
    ResourceConflict = "ResourceConflict"
    Throttling = "Throttling"
    ServiceLimitExceeded = "ServiceLimitExceeded"
    NotStabilized = "NotStabilized"
    GeneralServiceException = "GeneralServiceException"
    ServiceInternalError = "ServiceInternalError"
    NetworkFailure = "NetworkFailure"
    InternalFailure = "InternalFailure"
    InvalidTypeConfiguration = "InvalidTypeConfiguration"


class ProgressEvent(WireModel):
    """A handler's answer to one invocation."""

    model_config = ConfigDict(extra="allow")

    status: OperationStatus
    errorCode: Optional[str] = None
    message: Optional[str] = None
    callbackContext: Optional[Dict[str, Any]] = None
    callbackDelaySeconds: Optional[int] = None
    resourceModel: Optional[Dict[str, Any]] = None
    resourceModels: Optional[List[Dict[str, Any]]] = None
    nextToken: Optional[str] = None

    def wire(self) -> Dict[str, Any]:
        return self.model_dump(exclude_none=True, mode="json")


class InvalidProgressEvent(ValueError):
    """The handler's response is not a ProgressEvent."""


def parse_progress_event(payload: Any) -> ProgressEvent:
    """Read a handler response, explaining precisely what makes it invalid."""
    if not isinstance(payload, dict):
        raise InvalidProgressEvent(
            f"expected a JSON object (a serialized ProgressEvent), got {type(payload).__name__}: "
            f"{_short(payload)}"
        )
    try:
        return ProgressEvent.model_validate(payload)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in error.errors()
        )
        raise InvalidProgressEvent(f"{problems} (in {_short(payload)})") from None


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class Credentials(WireModel):
    """Caller credentials in the lower camel case the library expects."""

    accessKeyId: str
    secretAccessKey: str
    sessionToken: str = ""


class RequestData(TypedDict, total=False):
    """A HandlerRequest's ``requestData``: ``resourceProperties`` always, the others when they have a value."""

    callerCredentials: Dict[str, str]  # accessKeyId, secretAccessKey, sessionToken (``Credentials``)
    resourceProperties: Dict[str, Any]
    previousResourceProperties: Dict[str, Any]
    logicalResourceId: str
    typeConfiguration: Dict[str, Any]
    stackTags: Dict[str, str]
    previousStackTags: Dict[str, str]
    systemTags: Dict[str, str]
    previousSystemTags: Dict[str, str]


class HandlerRequest(TypedDict, total=False):
    """The payload CloudFormation sends to the production entrypoint (TypeFunction): ``action`` to ``requestData``
    always, the others when they have a value. A plain dict, not a model: cfnrun builds one for every call it makes
    (``invoker/payloads.py``) from values it has checked already, and validating it again was a tenth of a stack's
    time between one answer and the next call."""

    action: str
    awsAccountId: str
    bearerToken: str
    region: str
    resourceType: str
    requestData: RequestData
    stackId: str
    callbackContext: Dict[str, Any]
    nextToken: str
    responseEndpoint: str
    resourceTypeVersion: str


class TestRequest(WireModel):
    model_config = ConfigDict(extra="allow")

    clientRequestToken: str
    desiredResourceState: Optional[Dict[str, Any]] = None
    previousResourceState: Optional[Dict[str, Any]] = None
    logicalResourceIdentifier: Optional[str] = None
    typeConfiguration: Optional[Dict[str, Any]] = None
    nextToken: Optional[str] = None
    region: Optional[str] = None
    awsAccountId: Optional[str] = None
    stackId: Optional[str] = None


class TestEvent(WireModel):
    """The sam-tests event the test entrypoint (TestEntrypoint) takes."""

    credentials: Optional[Credentials] = None
    action: Action
    request: TestRequest
    callbackContext: Optional[Dict[str, Any]] = None
    region: Optional[str] = None

    def wire(self) -> Dict[str, Any]:
        payload = self.model_dump(exclude_none=True, mode="json")
        # The library's TestEvent requires the credentials key even when empty.
        payload.setdefault("credentials", {})
        return payload
