"""An SSM String parameter, managed with the caller's credentials: a provider that calls AWS.

Every AWS call goes through the SessionProxy CloudFormation passes in, so the same code
runs against AWS, a moto server (``cfnrun invoke --moto``) or any endpoint
(``--aws-endpoint URL``).
"""
import logging
from typing import Any, Dict, List, MutableMapping, Optional

from botocore.exceptions import ClientError
from cloudformation_cli_python_lib import (
    Action,
    HandlerErrorCode,
    OperationStatus,
    ProgressEvent,
    Resource,
    SessionProxy,
)

from .models import ResourceHandlerRequest, ResourceModel

LOG = logging.getLogger(__name__)
TYPE_NAME = "Cfnrun::Sample::Parameter"
LIST_PAGE_SIZE = 10  # GetParameters takes at most 10 names

resource = Resource(TYPE_NAME, ResourceModel)
test_entrypoint = resource.test_entrypoint

# How the service's error codes map onto the handler contract's.
ERROR_CODES = {
    "ParameterNotFound": HandlerErrorCode.NotFound,
    "ParameterAlreadyExists": HandlerErrorCode.AlreadyExists,
    "ThrottlingException": HandlerErrorCode.Throttling,
    "TooManyUpdates": HandlerErrorCode.ResourceConflict,
    "ValidationException": HandlerErrorCode.InvalidRequest,
    "AccessDeniedException": HandlerErrorCode.AccessDenied,
    "UnrecognizedClientException": HandlerErrorCode.InvalidCredentials,
    "InternalServerError": HandlerErrorCode.ServiceInternalError,
}


def _failed(error: ClientError) -> ProgressEvent:
    code = error.response.get("Error", {}).get("Code", "")
    return ProgressEvent.failed(ERROR_CODES.get(code, HandlerErrorCode.GeneralServiceException), f"{code}: {error}")


def _ssm(session: Optional[SessionProxy]) -> Any:
    if session is None:
        raise RuntimeError("no caller session: CloudFormation always passes one")
    return session.client("ssm")


def _model(parameter: Dict[str, Any]) -> ResourceModel:
    return ResourceModel(Name=parameter["Name"], Value=parameter["Value"])


def _read(ssm: Any, name: Optional[str]) -> ProgressEvent:
    parameter = ssm.get_parameter(Name=name or "")["Parameter"]
    return ProgressEvent(status=OperationStatus.SUCCESS, resourceModel=_model(parameter))


def _put(session: Optional[SessionProxy], model: Optional[ResourceModel], overwrite: bool) -> ProgressEvent:
    if model is None or not model.Name or not model.Value:
        return ProgressEvent.failed(HandlerErrorCode.InvalidRequest, "Name and Value are required")
    ssm = _ssm(session)
    try:
        if overwrite:
            ssm.get_parameter(Name=model.Name)  # UPDATE of a parameter that is gone is NotFound
        ssm.put_parameter(Name=model.Name, Value=model.Value, Type="String", Overwrite=overwrite)
        LOG.info("%s %s = %r", "updated" if overwrite else "created", model.Name, model.Value)
        return _read(ssm, model.Name)
    except ClientError as error:
        return _failed(error)


@resource.handler(Action.CREATE)
def create_handler(
    session: Optional[SessionProxy], request: ResourceHandlerRequest, callback_context: MutableMapping[str, Any]
) -> ProgressEvent:
    return _put(session, request.desiredResourceState, overwrite=False)


@resource.handler(Action.UPDATE)
def update_handler(
    session: Optional[SessionProxy], request: ResourceHandlerRequest, callback_context: MutableMapping[str, Any]
) -> ProgressEvent:
    return _put(session, request.desiredResourceState, overwrite=True)


@resource.handler(Action.READ)
def read_handler(
    session: Optional[SessionProxy], request: ResourceHandlerRequest, callback_context: MutableMapping[str, Any]
) -> ProgressEvent:
    model = request.desiredResourceState
    try:
        return _read(_ssm(session), model.Name if model else None)
    except ClientError as error:
        return _failed(error)


@resource.handler(Action.DELETE)
def delete_handler(
    session: Optional[SessionProxy], request: ResourceHandlerRequest, callback_context: MutableMapping[str, Any]
) -> ProgressEvent:
    model = request.desiredResourceState
    try:
        _ssm(session).delete_parameter(Name=model.Name if model and model.Name else "")
    except ClientError as error:
        return _failed(error)
    LOG.info("deleted %s", model.Name if model else None)
    return ProgressEvent(status=OperationStatus.SUCCESS)


@resource.handler(Action.LIST)
def list_handler(
    session: Optional[SessionProxy], request: ResourceHandlerRequest, callback_context: MutableMapping[str, Any]
) -> ProgressEvent:
    ssm = _ssm(session)
    page: Dict[str, Any] = {"MaxResults": LIST_PAGE_SIZE}
    if request.nextToken:
        page["NextToken"] = request.nextToken
    try:
        found = ssm.describe_parameters(**page)
        names: List[str] = [parameter["Name"] for parameter in found.get("Parameters", [])]
        parameters = ssm.get_parameters(Names=names)["Parameters"] if names else []
    except ClientError as error:
        return _failed(error)
    return ProgressEvent(
        status=OperationStatus.SUCCESS,
        resourceModels=[_model(parameter) for parameter in sorted(parameters, key=lambda p: p["Name"])],
        nextToken=found.get("NextToken"),
    )
