"""Lambda service errors: the status, ``x-amzn-ErrorType`` header and JSON body boto3 parses."""
from __future__ import annotations

import json

from aiohttp import web


class ServiceError(Exception):
    """An error of the Invoke API itself (not of the function), as AWS Lambda reports it."""

    def __init__(self, status: int, error_type: str, message: str, close_connection: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.close_connection = close_connection

    def response(self, request_id: str) -> web.Response:
        response = web.Response(
            status=self.status,
            body=json.dumps({"Type": "User" if self.status < 500 else "Service", "Message": self.message, "message": self.message}),
            content_type="application/json",
            headers={"x-amzn-ErrorType": self.error_type, "x-amzn-RequestId": request_id},
        )
        if self.close_connection:
            response.force_close()
        return response


def function_not_found(name: str, known: "list[str]") -> ServiceError:
    return ServiceError(
        404,
        "ResourceNotFoundException",
        f"Function not found: {name}. Served functions: {', '.join(known) or 'none'}",
    )


def ambiguous_function(name: str, candidates: "list[str]") -> ServiceError:
    """A bare name several served providers' functions have (``TypeFunction``): the caller picks one of ``candidates``."""
    return ServiceError(
        404,
        "ResourceNotFoundException",
        f"Function not found: {name} is ambiguous, {len(candidates)} served providers have it. Call one of: {', '.join(candidates)}",
    )


def invalid_json(problem: str) -> ServiceError:
    return ServiceError(400, "InvalidRequestContentException", f"Could not parse request body into json: {problem}")


def too_deep() -> ServiceError:
    return ServiceError(
        400, "InvalidRequestContentException", "Could not parse request body into json: it is nested too deeply"
    )


def body_timeout(seconds: float) -> ServiceError:
    return ServiceError(
        408, "RequestTimeoutException", f"the request body did not arrive within {seconds:g} s of its headers", close_connection=True
    )


def body_cut_off() -> ServiceError:
    """The caller closed its connection before its body was all in: the answer reaches nobody, and nothing failed here."""
    return ServiceError(400, "InvalidRequestContentException", "the connection closed before the request body was all in", close_connection=True)


def stopping(what: str = "it takes no new calls") -> ServiceError:
    return ServiceError(503, "ServiceException", f"cfnrun serve is stopping: {what}", close_connection=True)


def too_large(limit: int) -> ServiceError:
    return ServiceError(
        413, "RequestTooLargeException", f"Request must be smaller than {limit} bytes for the InvokeFunction operation"
    )


def bad_invocation_type(value: str) -> ServiceError:
    return ServiceError(
        400,
        "InvalidParameterValueException",
        f"Unsupported X-Amz-Invocation-Type '{value}': use RequestResponse, Event or DryRun",
    )


def unknown_operation(method: str, path: str) -> ServiceError:
    return ServiceError(
        404, "UnknownOperationException", f"No operation at {method} {path}; cfnrun serves POST /2015-03-31/functions/{{FunctionName}}/invocations"
    )


def method_not_allowed(method: str, path: str) -> ServiceError:
    return ServiceError(405, "MethodNotAllowedException", f"{method} is not allowed on {path}; Invoke takes POST")


def throttled(waited_s: float) -> ServiceError:
    """As Lambda answers a call over its concurrency: boto3 retries it after a backoff."""
    return ServiceError(
        429,
        "TooManyRequestsException",
        f"Rate Exceeded: cfnrun serve had no free connection for {waited_s:g} s (--max-connections); retry later",
        close_connection=True,
    )
