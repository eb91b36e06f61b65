"""``Transform: AWS::Serverless-2016-10-31``: a SAM template → its AWS::* resources, offline, with aws-sam-translator.

The translator is the library the service itself runs for this transform. It needs three things
the service has and a local run has not, given here instead of asked of AWS:

* the region and account (``AWS::Region``/``AWS::AccountId``), for the ARNs it writes;
* the account's map of AWS managed policy names to ARNs (``ManagedPolicies`` below): a policy
  named in a function's ``Policies`` is ``arn:<partition>:iam::aws:policy/<name>``, with the
  ``service-role/`` path for the names AWS keeps there; the map is local, never fetched
  (``iam:ListPolicies`` is what the service's loader calls);
* code on S3. ``sam build`` output keeps the transform and points ``CodeUri``/``ContentUri`` at
  folders on disk; those stay local paths (``LOCAL_CODE_BUCKET`` marks them through the
  translator and stay in the processed template as ``Code: {S3Bucket: cfnrun-local-code, S3Key: <path>}``;
  ``app/stacks/local_code.py`` zips the folder into the endpoint's S3 when the function is created),
  since packaging is the client's job.

The translator's own errors (``InvalidDocumentException``) fail the operation as the service's do, in its words:
``Transform AWS::Serverless-2016-10-31 failed with: <its message>`` as a change set's FAILED StatusReason (what
``sam deploy`` users report) or a CreateStack's rollback reason, not as an error of the API call.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Mapping, Optional

from cfnrun.stacks.template.macros import TransformFailed

SERVERLESS = "AWS::Serverless-2016-10-31"
LOCAL_CODE_BUCKET = "cfnrun-local-code"  # stands for "on disk" while the translator, which wants S3, runs
# AWS managed policies a SAM function commonly names that live under the service-role/ path (from AWS's managed
# policy reference, not fetched); every other name is taken to be at the root, as most are.
SERVICE_ROLE_POLICIES = (
    "AWSLambdaBasicExecutionRole", "AWSLambdaVPCAccessExecutionRole", "AWSLambdaDynamoDBExecutionRole",
    "AWSLambdaKinesisExecutionRole", "AWSLambdaSQSQueueExecutionRole", "AWSLambdaRole", "AWSLambdaMSKExecutionRole",
    "AmazonAPIGatewayPushToCloudWatchLogs", "AWSLambdaENIManagementAccess",
)
CODE_PROPERTIES = {"AWS::Serverless::Function": "CodeUri", "AWS::Serverless::LayerVersion": "ContentUri"}


class ManagedPolicies(dict):  # type: ignore[type-arg]
    """Every AWS managed policy name → its ARN, worked out rather than listed (the translator asks only for names it meets)."""

    def __init__(self, partition: str) -> None:
        super().__init__()
        self.partition = partition

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and not name.startswith("arn:") and "${" not in name

    def __missing__(self, name: str) -> str:
        path = "service-role/" if name in SERVICE_ROLE_POLICIES else ""
        return f"arn:{self.partition}:iam::aws:policy/{path}{name}"

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[name] if name in self else default


def expand_serverless(document: Mapping[str, Any], parameter_values: Optional[Mapping[str, str]], region: str = "us-east-1",
                      account_id: str = "123456789012") -> Dict[str, Any]:
    """The template with its SAM resources translated to AWS::* resources and the SAM transform removed."""
    from samtranslator.metrics.metrics import DummyMetricsPublisher, Metrics
    from samtranslator.model.exceptions import InvalidDocumentException  # the translator is loaded only for SAM templates
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.arn_generator import ArnGenerator
    from samtranslator.translator.translator import Translator
    import boto3

    template = copy.deepcopy(dict(document))
    _mark_local_code(template)
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    ArnGenerator.BOTO_SESSION_REGION_NAME = region  # the translator asks boto3 otherwise; the session here may have none
    policies = ManagedPolicies(partition)
    values: Dict[str, Any] = {"AWS::Region": region, "AWS::AccountId": account_id, "AWS::Partition": partition}
    values.update(parameter_values or {})
    metrics = Metrics("ServerlessTransform", DummyMetricsPublisher())
    try:
        session = boto3.session.Session(region_name=region)  # only read for its region name: no call is made
        translator = Translator(None, Parser(), boto_session=session, metrics=metrics)
        translated: Dict[str, Any] = translator.translate(template, values, get_managed_policy_map=lambda: policies)
    except InvalidDocumentException as error:
        causes = " ".join(str(cause.message) for cause in error.causes)  # the service's text: the count, then each cause
        raise TransformFailed(f"Transform {SERVERLESS} failed with: {error.message} {causes}".strip()) from None
    finally:
        # the timings the translator records (a function's push event sources) go nowhere, but unpublished ones print a
        # warning on serve's console when the next translation replaces them
        metrics.publish()
    others = [t for t in _as_list(document.get("Transform")) if (t.get("Name") if isinstance(t, dict) else t) != SERVERLESS]
    translated.pop("Transform", None)
    if others:
        translated["Transform"] = others if len(others) > 1 else others[0]
    return translated


def _as_list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, list) else [] if value is None else [value]


def _mark_local_code(template: Dict[str, Any]) -> None:
    """Swap each local code path for the S3 location that stands for it (``LOCAL_CODE_BUCKET``, the path as its key)."""
    globals_function = (template.get("Globals") or {}).get("Function") or {}
    for resource in (template.get("Resources") or {}).values():
        if not isinstance(resource, dict):
            continue
        prop = CODE_PROPERTIES.get(resource.get("Type", ""))
        properties = resource.setdefault("Properties", {}) if prop else None
        if not prop or not isinstance(properties, dict):
            continue
        uri = properties.get(prop, globals_function.get(prop) if prop == "CodeUri" else None)
        if isinstance(uri, str) and not uri.startswith("s3://"):
            properties[prop] = {"Bucket": LOCAL_CODE_BUCKET, "Key": uri}
