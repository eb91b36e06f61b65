"""``cfnrun stack test``'s refusals told from the template alone, before serve starts (``refused_before_serve``)."""
from __future__ import annotations

from typing import Dict, Tuple

import pytest

from cfnrun.app.stack_test import StackTestPlan, StackTestRefused, refused_before_serve

TEMPLATE = """\
Parameters:
  Env: {Type: String, Default: dev}
  Secret: {Type: String, NoEcho: true}
Resources:
  Handle: {Type: AWS::CloudFormation::WaitConditionHandle}
"""


def _plan(body: str, parameters: Dict[str, str], *updates: Dict[str, str]) -> StackTestPlan:
    return StackTestPlan("t.yaml", body, "t", parameters, tuple(updates), keep=False, strict=False)


@pytest.mark.parametrize(
    "parameters, updates, says",
    [
        ({"Secret": "s3cr3t", "Nope": "1"}, (), "t.yaml: Parameters: [Nope] do not exist in the template"),
        ({}, (), "t.yaml: Parameters: [Secret] must have values"),
        ({"Secret": "s3cr3t"}, ({"Env": "dev"},), "t.yaml, step 2 (update Env=dev): it changes no parameter's value"),
        ({"Secret": "s3cr3t"}, ({"Env": "prod"}, {"Secret": "s3cr3t"}), "t.yaml, step 3 (update Secret=****): it changes no"),
    ],
)
def test_what_the_template_alone_refuses(parameters: Dict[str, str], updates: Tuple[Dict[str, str], ...], says: str) -> None:
    with pytest.raises(StackTestRefused) as refused:
        refused_before_serve(_plan(TEMPLATE, parameters, *updates))
    assert str(refused.value).startswith(says)
    assert "s3cr3t" not in str(refused.value)


def test_a_template_a_transform_may_change_or_one_that_does_not_decode_is_left_to_serve() -> None:
    refused_before_serve(_plan("Transform: AWS::Serverless-2016-10-31\n" + TEMPLATE, {"Nope": "1"}))
    refused_before_serve(_plan(TEMPLATE.replace("Env: {", "Env: {Fn::Transform: {Name: AWS::Include}, "), {"Nope": "1"}))
    refused_before_serve(_plan("{not: [a template", {"Nope": "1"}))
    refused_before_serve(_plan(TEMPLATE, {"Secret": "x"}, {"Env": "prod"}, {"Env": "dev"}))  # each update changes a value
