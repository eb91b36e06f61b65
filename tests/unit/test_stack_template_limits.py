"""The service's template quotas, literal Fn::FindInMap/Fn::Select refused on arrival, and the decoder's bounds."""
from __future__ import annotations

import json

import pytest

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.limits import body_size_problem, check_parameter_keys
from cfnrun.stacks.template.loading import load_stack_template

NOTE = {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "x"}}


def _body(**sections: object) -> str:
    return json.dumps({"Resources": {"A": NOTE}, **sections})


@pytest.mark.parametrize("section, noun, count, quota", [
    ("Resources", "resources", 501, 500), ("Outputs", "outputs", 201, 200), ("Mappings", "mappings", 201, 200),
])
def test_a_section_past_its_quota_is_refused_in_the_services_words(section: str, noun: str, count: int, quota: int) -> None:
    members = {
        "Resources": {f"R{i}": NOTE for i in range(count)},
        "Outputs": {f"O{i}": {"Value": "x"} for i in range(count)},
        "Mappings": {f"M{i}": {"K": {"V": "x"}} for i in range(count)},
    }[section]
    with pytest.raises(TemplateError) as refused:
        load_stack_template(_body(**{section: members}))
    assert refused.value.message == f"Template format error: Number of {noun}, {count}, is greater than maximum allowed, {quota}"
    at_quota = dict(list(members.items())[:quota])
    load_stack_template(_body(**{section: at_quota}))


def test_the_body_size_is_counted_in_bytes() -> None:
    assert body_size_problem("x" * 51_200) is None
    problem = body_size_problem("é" * 25_601)
    assert problem is not None and problem.endswith("Member must have length less than or equal to 51200")


def test_a_parameter_key_given_twice_is_refused() -> None:
    check_parameter_keys([{"ParameterKey": "A"}, {"ParameterKey": "B"}])
    with pytest.raises(TemplateError, match=r"Parameters: \[A\] given more than once"):
        check_parameter_keys([{"ParameterKey": "A"}, {"ParameterKey": "A"}])


@pytest.mark.parametrize("value, expected", [
    ({"Fn::FindInMap": ["Map", "Key", "Sub"]}, "Template error: Unable to get mapping for Map::Key::Sub"),
    ({"Fn::Select": [2, ["a", "b"]]}, "Template error: Fn::Select cannot select nonexistent value at index 2"),
    ({"Fn::Select": ["x", ["a"]]}, "Template error: Fn::Select requires a list argument with two elements: an integer index and a list"),
])
def test_literal_find_in_map_and_select_are_refused_on_arrival(value: object, expected: str) -> None:
    body = _body(Mappings={"Map": {"Key": {"Other": "v"}}}, Outputs={"O": {"Value": value}})
    with pytest.raises(TemplateError) as refused:
        load_stack_template(body)
    assert refused.value.message == expected and refused.value.where.startswith("Outputs.O")


def test_find_in_map_and_select_on_parameters_wait_for_their_values() -> None:
    body = _body(Parameters={"K": {"Type": "String"}}, Mappings={"Map": {"Key": {"Sub": "v"}}},
                 Outputs={"O": {"Value": {"Fn::FindInMap": ["Map", {"Ref": "K"}, "Sub"]}},
                          "S": {"Value": {"Fn::Select": [0, [{"Ref": "K"}]]}}})
    load_stack_template(body)


def test_a_mapping_key_a_parameter_names_is_looked_up_before_anything_runs() -> None:
    """The service refuses the missing key at CreateChangeSet (LocalStack's test_mapping_with_nonexisting_key, recorded
    against AWS); an output whose condition is false, the Fn::If branch not taken and a key from a resource are not
    looked up then."""
    from cfnrun.stacks.blueprint import StackEnvironment, prepare

    body = _body(
        Parameters={"K": {"Type": "String"}, "On": {"Type": "String", "Default": "no"}},
        Conditions={"IsOn": {"Fn::Equals": [{"Ref": "On"}, "yes"]}},
        Mappings={"Map": {"Key": {"Sub": "v"}}},
        Outputs={"Found": {"Value": {"Fn::FindInMap": ["Map", {"Ref": "K"}, "Sub"]}},
                 "Off": {"Condition": "IsOn", "Value": {"Fn::FindInMap": ["Map", "Nope", {"Ref": "AWS::Region"}]}},
                 "Untaken": {"Value": {"Fn::If": ["IsOn", {"Fn::FindInMap": ["Map", {"Ref": "On"}, "Sub"]}, "x"]}},
                 "FromResource": {"Value": {"Fn::FindInMap": ["Map", {"Ref": "A"}, "Sub"]}}},
    )
    environment = StackEnvironment("s", "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1", "us-east-1", "123456789012")
    prepare(body, {"K": "Key"}, {}, environment)
    with pytest.raises(TemplateError) as refused:
        prepare(body, {"K": "C"}, {}, environment)
    assert refused.value.message == "Template error: Unable to get mapping for Map::C::Sub"
    assert refused.value.where.startswith("Outputs.Found")


def test_a_condition_comparing_one_value_is_refused_in_the_services_words() -> None:
    """LocalStack's test_validate_equals_args_len, recorded against AWS: refused at CreateChangeSet."""
    from cfnrun.stacks.blueprint import StackEnvironment, prepare

    body = _body(Conditions={"ShouldDeploy": {"Fn::Equals": ["a"]}})
    environment = StackEnvironment("s", "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1", "us-east-1", "123456789012")
    with pytest.raises(TemplateError) as refused:
        prepare(body, {}, {}, environment)
    assert refused.value.message == "Template error: every Fn::Equals object requires a list of 2 string parameters."


def test_nested_aliases_past_the_bound_are_refused_and_a_recursive_alias_too() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous, anchor = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{anchor}: &{anchor} [{','.join(['*' + previous] * 9)}]")
    with pytest.raises(TemplateDecodeError, match="aliases expand the document past"):
        decode_template("\n".join(lines))
    with pytest.raises(TemplateDecodeError, match="aliases expand the document past"):
        decode_template("a: &a [*a]\n")
    assert decode_template("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("text", ["[" * 201 + "]" * 201, '{"a": ' + "[" * 5000 + "]" * 5000 + "}", "a: " + "[" * 100_000])
def test_a_document_nested_too_deep_is_not_well_formed(text: str) -> None:
    with pytest.raises(TemplateDecodeError, match="nests more than 200 levels"):
        decode_template(text)
