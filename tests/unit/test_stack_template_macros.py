"""The order in which a template's transforms run (inner Fn::Transform first, then the Transform section in order,
AWS::Include among them) and what each macro call carries."""
from __future__ import annotations

from typing import Any, List

import pytest

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.macros import MacroCall
from cfnrun.stacks.template.transforms import transforms_called
from cfnrun.model.template_text import decode_template

TEMPLATE = """\
Transform: [Outer, {Name: AWS::Include, Parameters: {Location: snippet.yaml}}, Last]
Parameters:
  Names: {Type: CommaDelimitedList, Default: "a,b"}
  Word: {Type: String}
Resources:
  A:
    Type: X
    Properties:
      Tag: start
      Fn::Transform:
        - {Name: Append, Parameters: {Text: "-1"}}
        - {Name: Append, Parameters: {Text: "-2"}}
      Inner:
        Tag: inner
        Fn::Transform: {Name: Append, Parameters: {Text: -deep}}
"""


def test_inner_fn_transforms_run_first_then_the_transform_section_in_its_order() -> None:
    calls: List[MacroCall] = []

    def run(call: MacroCall) -> Any:
        calls.append(call)
        if call.name == "Append":
            return {**call.fragment, "Tag": call.fragment["Tag"] + call.params["Text"]}
        resources = dict(call.fragment["Resources"])
        resources[call.name] = {"Type": "Y", "Properties": {"Saw": sorted(resources)}}
        return {**call.fragment, "Resources": resources}

    template = load_stack_template(TEMPLATE, {"Word": "w"}, read_include=lambda location: {"Resources": {"Included": {"Type": "Z"}}},
                                   run_macro=run)
    assert [(c.name, c.where) for c in calls] == [
        ("Append", "Resources.A.Properties.Inner.Fn::Transform"),
        ("Append", "Resources.A.Properties.Fn::Transform"),
        ("Append", "Resources.A.Properties.Fn::Transform"),
        ("Outer", "Transform"),
        ("Last", "Transform"),
    ]
    assert template.resources["A"].properties == {"Tag": "start-1-2", "Inner": {"Tag": "inner-deep"}}
    assert template.resources["Outer"].properties == {"Saw": ["A"]}
    assert template.resources["Last"].properties == {"Saw": ["A", "Included", "Outer"]}  # the include ran between them
    assert calls[0].template_parameter_values == {"Names": ["a", "b"], "Word": "w"}
    assert calls[3].params == {} and "Transform" not in calls[3].fragment
    assert template.transforms == ()


def test_a_macro_without_a_runner_or_with_a_fragment_that_is_no_template_is_refused() -> None:
    with pytest.raises(TemplateError, match="Transform M is not supported locally here"):
        load_stack_template("Resources: {A: {Type: X, Properties: {Fn::Transform: {Name: M}}}}\n")
    with pytest.raises(TemplateError, match="Transform M returned a fragment that is not a template"):
        load_stack_template("Transform: M\nResources: {A: {Type: X}}\n", run_macro=lambda call: "text")


def test_every_transform_a_template_calls_is_named_the_services_own_included() -> None:
    document = decode_template("Transform: [AWS::Serverless-2016-10-31, Mine]\nResources: {A: {Type: X, Properties: "
                               "{P: {Fn::Transform: [{Name: AWS::Include}, {Name: Other}]}}}}\n")
    assert transforms_called(document) == ["AWS::Serverless-2016-10-31", "Mine", "AWS::Include", "Other"]
    assert transforms_called(decode_template("Transform: AWS::LanguageExtensions\nResources: {A: {Type: X}}\n")) == ["AWS::LanguageExtensions"]
    assert transforms_called(decode_template("Resources: {A: {Type: X}}\n")) == []
