"""Stack templates decoded and checked as the service does: short forms, positions, structure, transforms, references."""
from __future__ import annotations

import pytest

from cfnrun.model.template_text import TemplateDecodeError, decode_template
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template

YAML = """\
AWSTemplateFormatVersion: 2010-09-09
Description: notes
Parameters:
  Env:
    Type: String
    AllowedValues: [dev, prod]
    Default: dev
  Secret:
    Type: String
    NoEcho: true
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  NotProd: !Not [!Condition IsProd]
Resources:
  Note:
    Type: Sample::Note::Resource
    DependsOn: Bucket
    Properties:
      Title: !Sub "${AWS::StackName}-${Env}"
      Address: !GetAtt Db.Endpoint.Address
  Db:
    Type: AWS::RDS::DBInstance
    Condition: IsProd
    DeletionPolicy: Snapshot
  Bucket:
    Type: AWS::S3::Bucket
Outputs:
  NoteId:
    Value: !Ref Note
    Export:
      Name: !Sub "${AWS::StackName}-NoteId"
"""


def test_short_forms_become_long_forms_and_getatt_splits_at_the_first_dot() -> None:
    document = decode_template(YAML)
    assert document["AWSTemplateFormatVersion"] == "2010-09-09"  # text, not a date
    assert document["Conditions"]["NotProd"] == {"Fn::Not": [{"Condition": "IsProd"}]}
    assert document["Resources"]["Note"]["Properties"]["Address"] == {"Fn::GetAtt": ["Db", "Endpoint.Address"]}
    assert document["Resources"]["Note"]["Properties"]["Title"] == {"Fn::Sub": "${AWS::StackName}-${Env}"}


@pytest.mark.parametrize("tag", ["Base64 x", "Cidr [a, 1, 2]", "GetAZs ''", "ImportValue x", "Join ['', []]", "Select [0, []]",
                                 "Split [',', x]", "FindInMap [a, b, c]", "If [c, a, b]", "And [a, b]", "Or [a, b]",
                                 "Length []", "ToJsonString {}"])
def test_every_short_form_is_known(tag: str) -> None:
    name = tag.split()[0]
    assert list(decode_template(f"A: !{tag}\n")["A"]) == [f"Fn::{name}"]


def test_the_typed_view() -> None:
    template = load_stack_template(YAML)
    assert template.description == "notes"
    assert template.no_echo_parameters == ("Secret",)
    assert template.parameters["Env"].allowed_values == ("dev", "prod")
    note = template.resources["Note"]
    assert note.depends_on == ("Bucket",) and note.type == "Sample::Note::Resource"
    assert template.resources["Db"].condition == "IsProd"
    assert template.resources["Db"].deletion_policy == "Snapshot"
    assert template.outputs["NoteId"].export_name == {"Fn::Sub": "${AWS::StackName}-NoteId"}


@pytest.mark.parametrize(
    "text, line, column, problem",
    [
        ('{"Resources": {\n  "A": {"Type": "X"},\n  "A": {"Type": "Y"}}}', 3, 3, "found duplicate key 'A'"),
        ("Resources:\n  A:\n    Type: X\n  A:\n    Type: Y\n", 4, 3, "found duplicate key 'A'"),
        ("Resources:\n  A: !Reff B\n", 2, 6, "could not determine a constructor for the tag '!Reff'"),
        ('{"Resources": {\n  "A": }', 2, 8, "Expecting value"),
    ],
)
def test_decode_errors_have_line_and_column(text: str, line: int, column: int, problem: str) -> None:
    with pytest.raises(TemplateDecodeError) as raised:
        decode_template(text)
    assert (raised.value.line, raised.value.column, raised.value.problem) == (line, column, problem)
    with pytest.raises(TemplateError, match=rf"^Template format error: (JSON|YAML) not well-formed\. .*\(line {line}, column {column}\)"):
        load_stack_template(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("Description: x\n", "Template format error: At least one Resources member must be defined."),
        ("Resources: {A: {Type: X}}\nOutput: {}\n", r"Template format error: Invalid template property or properties \[Output\]"),
        ("Resources: {A: {Properties: {}}}\n", r"Template format error: \[/Resources/A\] Every Resources object must contain a Type member."),
        ("Resources: {my-bucket: {Type: X}}\n", "Template format error: Resource name my-bucket is non alphanumeric."),
        ("Resources: {A: {Type: X, Propertes: {}}}\n", "^Invalid template resource property 'Propertes'$"),
        ("Resources: {A: {Type: X, DeletionPolicy: Keep}}\n", "Template format error: Unrecognized DeletionPolicy Keep for resource A"),
        ("Resources: {A: {Type: X, Condition: Nope}}\n", "Template format error: Unresolved condition dependency Nope"),
        ("Parameters: {P: {Default: x}}\nResources: {A: {Type: X}}\n",
         r"Template format error: \[/Parameters/P\] Every Parameters object must contain a Type member."),
        ("Parameters: {P: {Type: Strin}}\nResources: {A: {Type: X}}\n", "Template format error: Unrecognized parameter type: Strin"),
        ("Resources: {A: {Type: X}}\nOutputs: {O: {Description: x}}\n", "^Template format error: Every Outputs member must contain a Value object$"),
        ("Resources: {A: {Type: X}}\nOutputs: {O: {Value: [!Ref A, b]}}\n",  # users' reports of CreateStack's answer
         r"^Template format error: The Value field of every Outputs member must evaluate to a String and not a List\.$"),
        ("Resources: {A: {Type: X}}\nOutputs: {O: {Value: {Id: !Ref A}}}\n",
         r"^Template format error: The Value field of every Outputs member must evaluate to a String and not a Map\.$"),
        # more of the service's texts as LocalStack's tests recorded them against AWS (test_validations, test_stacks,
        # test_change_set_conditions, test_conditions, test_change_set_fn_split, test_change_set_fn_select)
        ('{"Resources": "", "Outputs": ""}', r"^Template format error: Any Resources member must be an object\.$"),
        ("just text\n", r"^Template format error: unsupported structure\.$"),  # a macro's answer that is no template: test_failed_state
        ("Resources: {A: {Type: X, Properties: {T: [!If [MissingCondition, a, b]]}}}\n",
         "^Template error: unresolved condition dependency MissingCondition in Fn::If"),
        ("Resources: {A: {Type: X, Properties: {V: {Fn::Split: !Ref AWS::Region}}}}\n",
         r"^Template error: every Fn::Split object requires two parameters, \(1\) a string delimiter and \(2\) a string to be split"),
        ("Resources: {A: {Type: X, Properties: {V: {Fn::GetAtt: [A]}}}}\n",
         "^Template error: every Fn::GetAtt object requires two non-empty parameters, the resource name and the resource attribute"),
        ("Resources: {A: {Type: X, Properties: {V: !Select [bad, [test]]}}}\n",
         "^Template error: Fn::Select requires a list argument with two elements: an integer index and a list"),
        # users' reports of CreateStack's and ValidateTemplate's answers (intrinsics.py names them); a resource left out by
        # its condition is checked too
        ("Resources: {A: {Type: X, Properties: {V: !Join ['-']}}}\n", r"^Template error: every Fn::Join object requires two parameters, "
         r"\(1\) a string delimiter and \(2\) a list of strings to be joined or a function that returns a list of strings \(such as "
         r"Fn::GetAZs\) to be joined\. \(at Resources\.A\.Properties\.V\)$"),
        ("Resources: {A: {Type: X, Properties: {V: !Join ['-', abc]}}}\n", "^Template error: every Fn::Join object requires two parameters"),
        ("Resources: {A: {Type: X, Properties: {V: !Join [!Ref AWS::Region, [a]]}}}\n", "^Template error: every Fn::Join object requires"),
        ("Conditions: {Never: !Equals [a, b]}\nResources: {A: {Type: X, Condition: Never, Properties: {V: {Ref: [A]}}}}\n",
         r"^Template error: every Ref object must have a single String value\. \(at Resources\.A\.Properties\.V\)$"),
        ("Resources: {A: {Type: X, Properties: {V: {Fn::Sub: [abc]}}}}\n",
         r"^Template error: One or more Fn::Sub intrinsic functions don't specify expected arguments\. Specify a string as first "
         r"argument, and an optional second argument to specify a mapping of values to replace in the string \(at Resources"),
        ("Resources: {A: {Type: X}}\nOutputs: {O: {Value: {Fn::Sub: [!Ref A, {}]}}}\n", "^Template error: One or more Fn::Sub intrinsic"),
        # Fn::If and Fn::FindInMap of the wrong shape, whatever the values, in a resource whose condition is false too
        ("Conditions: {C: !Equals [a, b]}\nResources: {A: {Type: X, Condition: C, Properties: {V: !If [C, a]}}}\n",
         r"^Template error: Fn::If requires a list argument with three elements \(at Resources\.A\.Properties\.V\)$"),
        ("Conditions: {C: !Equals [a, b]}\nResources: {A: {Type: X, Properties: {V: !If [!Ref C, a, b]}}}\n",
         r"^Template error: Fn::If requires a list argument with the first element being a condition \(at Resources"),
        ("Mappings: {M: {a: {b: c}}}\nResources: {A: {Type: X, Properties: {V: !FindInMap [M, !Ref AWS::Region]}}}\n",
         r"^Template error: every Fn::FindInMap object requires three parameters, the map name, map key and the attribute for "
         r"return value \(at Resources\.A\.Properties\.V\)$"),
        # condition functions of the wrong shape, whatever the values (users' reports of ValidateTemplate; Fn::Not's inferred)
        ("Conditions: {C: !Equals [a]}\nResources: {A: {Type: X}}\n",
         r"^Template error: every Fn::Equals object requires a list of 2 string parameters\. \(at Conditions\.C\)$"),
        ("Conditions: {C: !And [!Equals [a, b]]}\nResources: {A: {Type: X}}\n",
         r"^Template error: every Fn::And object requires a list of at least 2 and at most 10 boolean parameters\. \(at Conditions\.C\)$"),
        ("Conditions: {C: !Or [!Equals [a, b], 'true']}\nResources: {A: {Type: X}}\n",
         r"^Template error: every Fn::Or object requires a list of at least 2 and at most 10 boolean parameters\."),
        ("Conditions: {C: !Not [!Equals [a, b], !Equals [a, b]]}\nResources: {A: {Type: X}}\n",
         r"^Template error: Fn::Not requires a list argument with one element \(at Conditions\.C\)$"),
        ("Conditions: {C: !Not [!Ref AWS::Region]}\nResources: {A: {Type: X}}\n",
         r"^Template error: Fn::Not requires a list argument with one function token \(at Conditions\.C\)$"),
        ("AWSTemplateFormatVersion: '2011-01-01'\nResources: {A: {Type: X}}\n", "Template format error: Unsupported template format version"),
        ("Resources: {A: {Type: X, Properties: {B: !Ref Nope}}}\n",
         r"Template format error: Unresolved resource dependencies \[Nope\] in the Resources block of the template"),
        ("Resources: {A: {Type: X, DependsOn: [Nope]}}\n", r"Unresolved resource dependencies \[Nope\] in the Resources block"),
        ("Resources: {A: {Type: X, Properties: {B: !Sub '${Nope}'}}}\n", r"Unresolved resource dependencies \[Nope\]"),
        ("Resources: {A: {Type: X, Properties: {B: !GetAtt Nope.Arn}}}\n",
         "Template error: instance of Fn::GetAtt references undefined resource Nope"),
        ("Resources: {A: {Type: X}}\nOutputs: {O: {Value: !Ref Nope}}\n",
         r"Unresolved resource dependencies \[Nope\] in the Outputs block of the template"),
        ("Conditions: {C: !Equals [!Ref A, x]}\nResources: {A: {Type: X}}\n",
         r"Unresolved dependencies \[A\]. Cannot reference resources in the Conditions block of the template"),
        ("Resources: {A: {Type: X, Properties: {B: {Fn::Foo: 1}}}}\n",
         r"Template format error: Encountered unsupported function: Fn::Foo Supported functions are: \[Fn::Base64"),
        ("Resources: {A: {Type: X, Properties: {B: !Length [1]}}}\n", "Encountered unsupported function: Fn::Length"),
        # mappings: the service's answers as LocalStack recorded them against AWS (engine/test_mappings.snapshot.json)
        ("Mappings: {M: {A: suffix-a, B: suffix-b}}\nResources: {A: {Type: X}}\n",
         r"^Template format error: Every Mappings member A must be a map$"),
        ("Mappings: {M: {A: {Suffix: {Value: a}}}}\nResources: {A: {Type: X}}\n",
         r"^Template format error: Every Mappings attribute must be a String or a List.$"),
        ("Parameters: {P: {Type: String}}\nMappings: {M: {A: {Suffix: !Ref P}}}\nResources: {A: {Type: X}}\n",
         r"^Template format error: Every Mappings attribute must be a String or a List.$"),
    ],
)
def test_structural_errors_in_the_services_words(text: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        load_stack_template(text)


def test_the_shapes_each_function_takes_are_accepted() -> None:
    """The argument checks refuse only the wrong shapes: a list of values or a function giving one for Fn::Join, a string
    with or without a variable map for Fn::Sub."""
    load_stack_template(
        "Parameters: {P: {Type: CommaDelimitedList}}\n"
        "Resources: {A: {Type: X, Properties: {V: [!Join ['-', !GetAZs ''], !Join ['', [a, !Ref AWS::Region]], !Join [',', !Ref P],\n"
        "  !Sub 'a-${AWS::Region}', !Sub ['${x}-${A}', {x: !Ref AWS::Region}], !Ref P]}}}\n"
    )


def test_errors_name_where_they_happened() -> None:
    with pytest.raises(TemplateError) as raised:
        load_stack_template("Resources: {A: {Type: X, Properties: {B: [1, !Ref Nope]}}}\n")
    assert raised.value.where == "Resources.A"
    assert str(raised.value).endswith("(at Resources.A)")


@pytest.mark.parametrize("transform", ["AWS::Include", "MyMacro"])
def test_transforms_other_than_language_extensions_and_sam_are_named_as_not_supported(transform: str) -> None:
    with pytest.raises(TemplateError, match=f"Transform {transform} is not supported locally"):
        load_stack_template(f"Transform: [{transform}]\nResources: {{A: {{Type: X}}}}\n")


def test_language_extensions_without_foreach_is_accepted() -> None:
    template = load_stack_template(
        "Transform: AWS::LanguageExtensions\nParameters: {P: {Type: String, Default: Retain}}\n"
        "Mappings: {M: {a: {b: c}}}\n"
        "Resources: {A: {Type: X, DeletionPolicy: !Ref P, Properties: {N: !Length [1, 2], J: !ToJsonString {a: 1},"
        " F: !FindInMap [M, x, y, {DefaultValue: d}]}}}\n"
    )
    assert template.transforms == ("AWS::LanguageExtensions",)
    assert template.resources["A"].deletion_policy == {"Ref": "P"}


def test_foreach_without_its_transform_and_fn_transform_are_refused_with_their_names() -> None:
    with pytest.raises(TemplateError, match="Fn::ForEach needs the AWS::LanguageExtensions transform"):
        load_stack_template("Resources:\n  Fn::ForEach::Topics: [T, [a], {'T${T}': {Type: X}}]\n  A: {Type: X}\n")
    with pytest.raises(TemplateError, match="Transform AWS::Include is not supported locally"):
        load_stack_template("Resources: {A: {Type: X, Properties: {Fn::Transform: {Name: AWS::Include}}}}\n")


def test_the_sam_template_reader_uses_the_same_decoder(tmp_path) -> None:
    from cfnrun.model.template import load_template

    path = tmp_path / "template.json"
    path.write_text('{"Resources": {"TypeFunction": {"Type": "AWS::Serverless::Function", "Properties": {"Handler": "h.f"}}}}')
    assert load_template(path)["TypeFunction"].handler == "h.f"


def test_a_sam_template_is_read_as_the_aws_resources_the_translator_makes() -> None:
    template = load_stack_template(
        "Transform: [AWS::LanguageExtensions, AWS::Serverless-2016-10-31]\n"
        "Resources:\n  T: {Type: AWS::Serverless::SimpleTable}\n"
        "  F: {Type: AWS::Serverless::Function, Properties: {Runtime: python3.12, Handler: app.h, CodeUri: build/F}}\n"
    )
    assert {name: r.type for name, r in template.resources.items()} == {
        "T": "AWS::DynamoDB::Table", "F": "AWS::Lambda::Function", "FRole": "AWS::IAM::Role"}
    assert template.transforms == ("AWS::LanguageExtensions",)  # the SAM transform is done; the other stays
    assert template.document["Resources"]["F"]["Properties"]["Code"] == {"S3Bucket": "cfnrun-local-code", "S3Key": "build/F"}
