"""CloudFormation's error answers: ``<ErrorResponse>`` with the code botocore turns into an exception.

A code the model declares (``awsQueryError``: AlreadyExistsException, ChangeSetNotFound, ...) is
raised by boto3 as ``client.exceptions.<ShapeName>``; every other code (ValidationError above all,
which the service uses for most mistakes) as a plain ``ClientError`` with that code.
"""
from __future__ import annotations

from typing import Iterable, List

from aiohttp import web

from cfnrun.api.cloudformation.service_model import NAMESPACE, service_model
from cfnrun.api.cloudformation.xml_text import escaped


class StackApiError(Exception):
    """An error the CloudFormation API answers with; ``status`` is the HTTP status (4xx: the caller's fault)."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def response(self, request_id: str, close_connection: bool = False) -> web.Response:
        fault = "Sender" if self.status < 500 else "Receiver"
        body = (
            f'<ErrorResponse xmlns="{NAMESPACE}">'
            f"<Error><Type>{fault}</Type><Code>{escaped(self.code)}</Code><Message>{escaped(self.message)}</Message></Error>"
            f"<RequestId>{request_id}</RequestId>"
            "</ErrorResponse>"
        )
        response = web.Response(status=self.status, text=body, content_type="text/xml", headers={"x-amzn-RequestId": request_id})
        if close_connection:
            response.force_close()
        return response


def modelled_error(shape_name: str, message: str) -> StackApiError:
    """The error the model declares as ``shape_name`` (``ChangeSetNotFoundException`` -> code ChangeSetNotFound, 404)."""
    shape = service_model().shape_for(shape_name)
    trait = shape.metadata.get("error")
    if not shape.metadata.get("exception") or not trait:
        raise KeyError(f"CloudFormation's model declares no error {shape_name}")
    return StackApiError(str(trait.get("code", shape_name)), message, int(trait.get("httpStatusCode", 400)))


def validation_error(message: str) -> StackApiError:
    return StackApiError("ValidationError", message)


def constraint_violations(problems: List[str]) -> StackApiError:
    """Several input checks failed, worded as the service words them."""
    count = len(problems)
    noun = "validation error" if count == 1 else "validation errors"
    return validation_error(f"{count} {noun} detected: {'; '.join(problems)}")


def missing_action() -> StackApiError:
    return StackApiError("MissingAction", "The request must contain the parameter Action")


def invalid_action(action: str, version: str) -> StackApiError:
    return StackApiError("InvalidAction", f"Could not find operation {action} for version {version}")


def invalid_version(version: str, expected: str) -> StackApiError:
    return StackApiError(
        "InvalidAction", f"Could not find operation for version {version or '(none)'}: CloudFormation's API version is {expected}"
    )


def not_supported(operation: str, supported: Iterable[str]) -> StackApiError:
    names = ", ".join(sorted(supported)) or "none"
    return StackApiError("InvalidAction", f"{operation} is a CloudFormation operation cfnrun does not support; it serves {names}")
