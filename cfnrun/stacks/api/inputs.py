"""Reading the CloudFormation API's input shapes: parameters, tags, the template body, paging, a type's name."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from cfnrun.stacks.records import Stack
from cfnrun.stacks.store import StackError

PAGE_SIZE = 100


def given_parameters(params: Dict[str, Any]) -> Dict[str, Optional[str]]:
    given: Dict[str, Optional[str]] = {}
    for parameter in params.get("Parameters") or []:
        key = parameter.get("ParameterKey")
        if key is None:
            raise StackError("A Parameters member has no ParameterKey")
        if parameter.get("UsePreviousValue") and parameter.get("ParameterValue") not in (None, ""):  # widdix/cfn-create-or-update#15
            raise StackError(f"Invalid input for parameter key {key}. Cannot specify usePreviousValue as true and non empty value for a parameter")
        given[key] = None if parameter.get("UsePreviousValue") else parameter.get("ParameterValue", "")
    return given


# the service's words as boto/boto#2843 quotes them, for UpdateStack (CreateChangeSet's inferred)
BOTH_PREVIOUS_AND_NEW_TEMPLATE = "You cannot specify both usePreviousTemplate and Template Body/Template URL"
# CreateChangeSet's answer as glassechidna/stackit#38 quotes it
PREVIOUS_TEMPLATE_OF_A_NEW_STACK = "Cannot specify usePreviousTemplate as true for a changeSetType CREATE"
# CreateChangeSet's answer as mapbox/cfn-config#182 and aws/serverless-application-model#122 quote it
PREVIOUS_VALUE_OF_A_NEW_STACK = "Cannot specify UsePreviousValue on Parameters when ChangeSetType is CREATE"
# CreateStack's answer as users quote it (aws-quickstart/quickstart-amazon-eks#42, quickstart-examples#39); that "AWS:" is
# refused too is inferred from the user guide's note on tags (neither "aws:" nor "AWS:").
RESERVED_TAG_KEY = "aws: prefixed tag key names are not allowed for external use."


def given_tags(params: Dict[str, Any]) -> Optional[Dict[str, str]]:
    """The stack tags a call gives (None: it gives none); a key in AWS's own namespace is refused."""
    tags = params.get("Tags")
    if tags is None:
        return None
    if any(str(tag["Key"]).lower().startswith("aws:") for tag in tags):
        raise StackError(RESERVED_TAG_KEY)
    return {tag["Key"]: tag.get("Value", "") for tag in tags}


def one_page(items: List[Any], params: Dict[str, Any], size: int = PAGE_SIZE) -> "tuple[List[Any], Optional[str]]":
    token = params.get("NextToken") or "0"
    if not (isinstance(token, str) and token.isdigit() and token.isascii()):  # the tokens handed out are offsets
        raise StackError(f"Invalid NextToken {token!r}: not one this endpoint issued; pass the NextToken of the page before, or none")
    start = int(token)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def needed(params: Dict[str, Any], member: str) -> Any:
    """A member the model leaves optional but the call cannot go without (GetTemplate's StackName when no change set
    ARN is given, GetHookResult's HookResultId): refused as the service refuses a null member."""
    value = params.get(member)
    if value is None:
        wire = member[0].lower() + member[1:]
        raise StackError(f"1 validation error detected: Value null at '{wire}' failed to satisfy constraint: Member must not be null")
    return value


def given_template_body(params: Dict[str, Any], required: bool = True) -> Optional[str]:
    if params.get("UsePreviousTemplate") and (params.get("TemplateBody") is not None or params.get("TemplateURL")):
        raise StackError(BOTH_PREVIOUS_AND_NEW_TEMPLATE)
    if params.get("TemplateURL") and params.get("TemplateBody") is not None:  # the service's words (hashicorp/terraform#4534)
        raise StackError("You cannot specify both Template URL and Template Body.")
    if params.get("TemplateURL"):  # read into TemplateBody before the call gets here wherever serve can read it
        raise StackError("TemplateURL must be a supported URL.")
    body = params.get("TemplateBody")
    if body is None and required and not params.get("UsePreviousTemplate"):
        raise StackError("Either Template URL or Template Body must be specified.")
    return body


def type_name_of(params: Dict[str, Any]) -> str:
    """The TypeName, or the one a TypeArn (…:type/resource/Org-Service-Type) names."""
    if params.get("TypeName"):
        return str(params["TypeName"])
    arn = str(params.get("TypeArn") or "")
    if "/" not in arn:
        raise StackError("TypeName or TypeArn must be specified.")
    return arn.rsplit("/", 1)[-1].replace("-", "::")


def given_notification_arns(params: Dict[str, Any]) -> Optional[Tuple[str, ...]]:
    """The NotificationARNs a call gives (an empty list: none); None when it gives none, so the stack's stay."""
    return tuple(params["NotificationARNs"] or ()) if "NotificationARNs" in params else None


def rollback_disabled(params: Dict[str, Any]) -> bool:
    """DisableRollback, given as itself or in DeploymentConfig (botocore 1.44's; cfnrun takes either)."""
    return bool(params.get("DisableRollback")) or bool((params.get("DeploymentConfig") or {}).get("DisableRollback"))


def take_settings(stack: Stack, params: Dict[str, Any]) -> None:
    """CreateStack's or UpdateStack's NotificationARNs, RollbackConfiguration and RoleARN, each where given, for
    DescribeStacks to show: an update that gives none keeps the stack's (the API reference says so of RoleARN and the
    rollback triggers, and implies it of NotificationARNs: "Specify an empty list to remove all notification topics")."""
    arns = given_notification_arns(params)
    if arns is not None:
        stack.notification_arns = arns
    if "RollbackConfiguration" in params:
        stack.rollback_configuration = dict(params["RollbackConfiguration"] or {})
    if "RoleARN" in params:
        stack.role_arn = params["RoleARN"]
    if "DeploymentConfig" in params:  # its Mode is kept and shown; every local operation runs as STANDARD does
        stack.deployment_config = dict(params["DeploymentConfig"] or {})
