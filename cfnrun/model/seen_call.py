"""A call as the server sees it, read once: what serve, its contract checks, paging watch and history need.

The payload is whatever a client sent to a function: a HandlerRequest (TypeFunction), a
sam-tests TestEvent (TestEntrypoint), a hook's HookInvocationRequest or HookTestEvent, or
anything else. ``SeenCall.parse`` never raises: what a payload lacks is None or empty.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from cfnrun.model.action import HOOK_POINTS, RESOURCE_ACTIONS, Action  # light: serve parses every call before pydantic loads

_ACTIONS = {action.value: action for action in RESOURCE_ACTIONS}
_HOOK_POINTS = {point.value: point for point in HOOK_POINTS}
_MODEL_KEYS = ("resourceProperties", "previousResourceProperties", "desiredResourceState", "previousResourceState")


@dataclass(frozen=True)
class HookCallTarget:
    """What a hook's call asks about: the target's name and model (resourceProperties, previousResourceProperties)."""

    name: str
    model: Dict[str, Any]


@dataclass
class SeenCall:
    """Read once, never changed. Not a frozen dataclass: serve makes one per call, and a frozen one's ``__init__`` sets
    each field through ``object.__setattr__`` (~13k instructions for these eight, against ~3k)."""

    payload: Any
    action: Optional[Action] = None  # a resource action or a hook's invocation point; None: not a handler's call
    test_event: bool = False  # a sam-tests event (TestEntrypoint): the request sits under "request"
    client_request_token: Optional[str] = None
    next_token: Optional[str] = None  # the LIST page asked for
    callback_context: Any = None  # set: the call continues an operation
    # a resource call's requestData (HandlerRequest) or request (TestEvent); None when it has neither
    request_data: Optional[Dict[str, Any]] = None
    hook_target: Optional[HookCallTarget] = None  # a hook's call

    @classmethod
    def parse(cls, payload: Any) -> "SeenCall":
        if not isinstance(payload, dict):
            return cls(payload)
        get = payload.get  # every call is parsed: each field read once, the call made once (no dict of common fields, no helper's call)
        request = get("request")
        next_token = get("nextToken")
        if isinstance(request, dict):  # a TestEvent's request
            token = request.get("clientRequestToken")
            if next_token is None:
                next_token = request.get("nextToken")
        else:  # a HandlerRequest's bearerToken, a HookInvocationRequest's own field
            token = get("bearerToken") or get("clientRequestToken")
        token = token if isinstance(token, str) and token else None
        next_token = next_token if isinstance(next_token, str) and next_token else None
        test_event = "request" in payload
        point = get("actionInvocationPoint")
        if point is not None:  # hook_call_parts' own first look, without its call for every resource call
            hook_call = hook_call_parts(payload)
            if hook_call is not None:
                point, target_name, model, callback_context = hook_call
                return cls(payload, point, test_event, token, next_token, callback_context, None, HookCallTarget(target_name, model))
        data = get("requestData")
        if not isinstance(data, dict):
            data = request if isinstance(request, dict) else None
        action = get("action")
        return cls(payload, _ACTIONS.get(action) if isinstance(action, str) else None, test_event, token, next_token, get("callbackContext"), data)

    @property
    def desired(self) -> Any:
        """The desired model: the request's (or, for a hook, the target's) resource properties."""
        if self.hook_target is not None:
            model = self.hook_target.model
            return model["resourceProperties"] if isinstance(model.get("resourceProperties"), dict) else {}
        data = self.request_data or {}
        return data.get("resourceProperties", data.get("desiredResourceState")) or {}

    @property
    def previous(self) -> Any:
        """The previous model, if the call carries one."""
        if self.hook_target is not None:
            model = self.hook_target.model
            previous = model.get("previousResourceProperties")
            return previous if isinstance(previous, dict) else None
        data = self.request_data or {}
        return data.get("previousResourceProperties", data.get("previousResourceState"))

    @property
    def models(self) -> Tuple[Any, ...]:
        """Every model a resource call's request carries (None where it has none), for masking."""
        data = self.request_data
        return tuple(data.get(key) for key in _MODEL_KEYS) if data is not None else ()

    @property
    def credentials(self) -> Tuple[Any, ...]:
        """The credentials a call carries (the sam-tests event's, the caller's and the provider's), for masking."""
        if not isinstance(self.payload, dict):
            return ()
        data = self.payload.get("requestData")
        data = data if isinstance(data, dict) else {}
        return (self.payload.get("credentials"), data.get("callerCredentials"), data.get("providerCredentials"))


def call_action(payload: Any) -> Optional[Action]:
    """``SeenCall.parse(payload).action`` and nothing else: what serve needs before a call runs (its time limit); the
    rest of the call is read once the answer is on its way."""
    if not isinstance(payload, dict):
        return None
    named = payload.get("actionInvocationPoint")
    point = _HOOK_POINTS.get(named) if isinstance(named, str) else None  # as hook_call_parts tells a hook's call
    if point is not None:
        return point
    action = payload.get("action")
    return _ACTIONS.get(action) if isinstance(action, str) else None


def seen_call(payload: Any, handler_call: bool) -> SeenCall:
    """The call as serve reviews it: parsed for a handler's call; a plain function's event is no handler's call, whatever its keys."""
    return SeenCall.parse(payload) if handler_call else SeenCall(payload)


def hook_call_parts(payload: Any) -> Optional[Tuple[Action, str, Dict[str, Any], Any]]:
    """(invocation point, target name, target model, callbackContext) of a HookInvocationRequest or
    HookTestEvent; None for any other payload."""
    named = payload.get("actionInvocationPoint") if isinstance(payload, dict) else None
    point = _HOOK_POINTS.get(named) if isinstance(named, str) else None
    if point is None:
        return None
    if "requestData" in payload:  # TypeFunction
        data = _mapping(payload.get("requestData"))
        callback_context = _mapping(payload.get("requestContext")).get("callbackContext")
    else:  # TestEntrypoint
        data = _mapping(_mapping(payload.get("request")).get("hookContext"))
        callback_context = payload.get("callbackContext")
    model = _mapping(data.get("targetModel"))
    return point, str(data.get("targetName") or ""), model, callback_context


def _mapping(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}
