"""Parameter values for an operation: given, defaulted, previous, from Systems Manager; checked in the service's words."""
from __future__ import annotations

from typing import Dict

import pytest

from cfnrun.stacks.template.declarations import ParameterDeclaration
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.parameters import GivenParameter, parameter_values, resolve_parameters

TEMPLATE = load_stack_template("""\
Parameters:
  Env: {Type: String, AllowedValues: [dev, prod], Default: dev}
  Name: {Type: String, AllowedPattern: '[a-z][a-z0-9-]*', MinLength: 3, MaxLength: 10}
  Size: {Type: Number, MinValue: 1, MaxValue: 64, Default: 8}
  Ports: {Type: List<Number>, Default: '80, 443'}
  Zones: {Type: CommaDelimitedList, Default: [a, b]}
  Vpc: {Type: AWS::EC2::VPC::Id, Default: vpc-1}
  Subnets: {Type: List<AWS::EC2::Subnet::Id>, Default: 'subnet-1,subnet-2'}
  Password: {Type: String, NoEcho: true, Default: hunter22, ConstraintDescription: eight characters or more, MinLength: 8}
  Ami: {Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>', Default: /images/latest}
Resources:
  A: {Type: X}
""")
SSM = {"/images/latest": "ami-123", "/other": "ami-456"}


def _resolve(**given: str) -> Dict[str, object]:
    parameters = resolve_parameters(TEMPLATE.parameters, [GivenParameter(k, v) for k, v in given.items()], ssm_parameter=SSM.__getitem__)
    return dict(parameter_values(parameters))


def test_values_given_defaulted_and_typed() -> None:
    values = _resolve(Name="notes")
    assert values == {
        "Env": "dev", "Name": "notes", "Size": "8", "Ports": ["80", "443"], "Zones": ["a", "b"], "Vpc": "vpc-1",
        "Subnets": ["subnet-1", "subnet-2"], "Password": "hunter22", "Ami": "ami-123",
    }


def test_no_echo_is_shown_masked_and_ssm_shows_the_name_with_its_resolved_value() -> None:
    parameters = resolve_parameters(TEMPLATE.parameters, [GivenParameter("Name", "notes")], ssm_parameter=SSM.__getitem__)
    assert parameters["Password"].shown_value == "****" and parameters["Password"].resolved == "hunter22"
    assert (parameters["Ami"].shown_value, parameters["Ami"].resolved_value) == ("/images/latest", "ami-123")
    assert parameters["Name"].shown_value == "notes"


@pytest.mark.parametrize(
    "given, message",
    [
        ({}, r"^Parameters: \[Name\] must have values$"),
        ({"Name": "notes", "Nme": "x", "Other": "y"}, r"^Parameters: \[Nme, Other\] do not exist in the template$"),
        ({"Name": "notes", "Env": "test"}, "^Parameter 'Env' must be one of AllowedValues$"),
        ({"Name": "Notes"}, "^Parameter 'Name' must match pattern"),
        ({"Name": "notes\n"}, "^Parameter 'Name' must match pattern"),
        ({"Name": "no"}, "^Parameter 'Name' must contain at least 3 characters$"),
        ({"Name": "a-very-long-name"}, "^Parameter 'Name' must contain at most 10 characters$"),
        ({"Name": "notes", "Size": "big"}, "^Parameter 'Size' must be a number$"),
        ({"Name": "notes", "Size": "0"}, "^Parameter 'Size' must be a number not less than 1$"),
        ({"Name": "notes", "Size": "65"}, "^Parameter 'Size' must be a number not greater than 64$"),
        ({"Name": "notes", "Ports": "80,http"}, "^Parameter 'Ports' must be a number$"),
        ({"Name": "notes", "Password": "short"}, "^Parameter 'Password' failed to satisfy constraint: eight characters or more$"),
    ],
)
def test_refusals_in_the_services_words(given: Dict[str, str], message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        _resolve(**given)


def test_allowed_pattern_is_ecma_262() -> None:
    declared = {"Code": ParameterDeclaration("Code", "String", allowed_pattern=r"\d+")}
    with pytest.raises(TemplateError, match="must match pattern"):
        resolve_parameters(declared, [GivenParameter("Code", "١٢٣")])  # Arabic-Indic digits: \d is ASCII in ECMAScript
    assert resolve_parameters(declared, [GivenParameter("Code", "123")])["Code"].resolved == "123"


def test_use_previous_value_on_update() -> None:
    given = [GivenParameter("Name", use_previous_value=True), GivenParameter("Password", use_previous_value=True)]
    parameters = resolve_parameters(TEMPLATE.parameters, given, previous={"Name": "kept", "Password": "previous-secret"},
                                    ssm_parameter=SSM.__getitem__)
    assert parameters["Name"].resolved == "kept" and parameters["Password"].resolved == "previous-secret"
    with pytest.raises(TemplateError, match="Cannot specify usePreviousValue as true for a parameter key not in the previous template"):
        resolve_parameters(TEMPLATE.parameters, [GivenParameter("Name", use_previous_value=True)], previous={})
    with pytest.raises(TemplateError, match="Cannot specify usePreviousValue as true and non empty value"):
        resolve_parameters(TEMPLATE.parameters, [GivenParameter("Name", "x", use_previous_value=True)], previous={"Name": "y"})


def test_ssm_failures_are_the_callbacks_error() -> None:
    def missing(name: str) -> str:
        raise TemplateError(f"Parameters [{name}] referenced by template have types not supported by CloudFormation.")

    with pytest.raises(TemplateError, match="/gone"):
        resolve_parameters(TEMPLATE.parameters, [GivenParameter("Name", "notes"), GivenParameter("Ami", "/gone")], ssm_parameter=missing)


@pytest.mark.parametrize("declared_type", ["List<String>", "AWS::SSM::Parameter::Value<Number>", "List<Foo>", "string"])
def test_types_that_do_not_exist_are_refused(declared_type: str) -> None:
    with pytest.raises(TemplateError, match=f"Unrecognized parameter type: {declared_type}"):
        load_stack_template(f"Parameters: {{P: {{Type: '{declared_type}'}}}}\nResources: {{A: {{Type: X}}}}\n")


def test_ssm_list_types_are_lists() -> None:
    template = load_stack_template("Parameters: {P: {Type: 'AWS::SSM::Parameter::Value<List<String>>'}}\nResources: {A: {Type: X}}\n")
    parameters = resolve_parameters(template.parameters, [GivenParameter("P", "/list")], ssm_parameter={"/list": "a,b"}.__getitem__)
    assert parameters["P"].resolved == ["a", "b"]
