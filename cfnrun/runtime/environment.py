"""The environment a worker sees: the developer's own, plus what AWS Lambda sets."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Sequence

from cfnrun.model.faults import FAULTS_VARIABLE, FaultRule, faults_variable
from cfnrun.runtime.launch import started_environment

if TYPE_CHECKING:  # kept light: the command line reads the defaults below before any project loads
    from cfnrun.model.template import FunctionSource, FunctionSpec

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "123456789012"
# The variables ``lambda_environment`` sets from the function itself rather than from its code folder and settings:
# two functions of one code folder differ only in these (unless their template Environment differs too).
FUNCTION_VARIABLES = ("AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_LOG_GROUP_NAME", "_HANDLER")


def lambda_environment(
    project: FunctionSource,
    function: FunctionSpec,
    region: str,
    log_level: str = "INFO",
    base: Optional[Mapping[str, str]] = None,
    overrides: Optional[Mapping[str, str]] = None,
    aws_endpoint: Optional[str] = None,
    faults: Sequence[FaultRule] = (),
) -> Dict[str, str]:
    """Variables for one function's workers.

    The developer's environment is inherited (so AWS_PROFILE, proxies and the like
    keep working locally), then Lambda's reserved variables are set, then the
    function's Environment from template.yml, then explicit overrides.

    With ``aws_endpoint`` every AWS call the handler makes goes there: botocore
    (1.31 and later) reads AWS_ENDPOINT_URL for each client it builds, the
    SessionProxy's and the handler's own boto3 clients alike. Service-specific
    AWS_ENDPOINT_URL_<SERVICE> variables the developer set still take precedence.
    ``faults`` (--inject) reach the worker as JSON in CFNRUN_INJECT.
    """
    env = started_environment(dict(os.environ if base is None else base))  # the time zone, unbuffered output
    name = function.function_name or function.logical_id
    env.update(
        {
            "AWS_REGION": region,
            "AWS_DEFAULT_REGION": region,
            "AWS_LAMBDA_FUNCTION_NAME": name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": "cfnrun/[$LATEST]local",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_python{sys.version_info.major}.{sys.version_info.minor}",
            "LAMBDA_TASK_ROOT": str(function.code_dir or project.code_dir),
            "_HANDLER": function.handler,
            "CFNRUN_LOG_LEVEL": log_level,
        }
    )
    if aws_endpoint:
        env["AWS_ENDPOINT_URL"] = aws_endpoint
        env.pop("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", None)
    env.pop(FAULTS_VARIABLE, None)
    if faults:
        env[FAULTS_VARIABLE] = faults_variable(faults)
    env.update(function.environment)
    env.update(overrides or {})
    return env
