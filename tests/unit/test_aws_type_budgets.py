"""How long an AWS::* resource's stack on the AWS endpoint may take to settle: the handler's timeoutInMinutes."""
from __future__ import annotations

from cfnrun.app.stacks.aws_schemas import AwsSchemas
from cfnrun.app.stacks.aws_types import AwsTypes
from cfnrun.model.action import Action
from cfnrun.model.budgets import Budgets


def test_an_aws_resource_gets_the_handlers_default_timeout_scaled_or_the_operation_timeout() -> None:
    schemas = AwsSchemas("us-east-1")
    default = AwsTypes("http://127.0.0.1:1", "us-east-1", schemas).budget(Action.CREATE, "AWS::SNS::Topic")
    assert default.seconds == 120 * 60 and default.describe() == "handlers.create.timeoutInMinutes = 120 (default, 120 min)"
    unknown = AwsTypes("http://127.0.0.1:1", "us-east-1", schemas, budgets=Budgets(time_scale=0.5)).budget(Action.DELETE, "AWS::No::Such")
    assert unknown.seconds == 60 * 60 and "scaled by --time-scale 0.5" in unknown.describe()
    given = AwsTypes("http://127.0.0.1:1", "us-east-1", schemas, budgets=Budgets(operation_timeout_s=3)).budget(Action.UPDATE, "AWS::SNS::Topic")
    assert (given.seconds, given.describe()) == (3, "--operation-timeout (3 s)")
