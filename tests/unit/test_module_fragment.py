"""A MODULE project's fragment: read from fragments/, checked by cloudformation-cli's rules, each refusal naming rule and place."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from cfnrun.model.errors import ProjectError
from cfnrun.model.module_fragment import FRAGMENT_SIZE_LIMIT, read_module_fragment

GOOD: Dict[str, Any] = {
    "Parameters": {"BucketName": {"Type": "String"}},
    "Resources": {"S3Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": {"Ref": "BucketName"}}}},
}


def project(tmp_path: Path, fragment: Any, name: str = "sample.json") -> Path:
    (tmp_path / ".rpdk-config").write_text(json.dumps({"artifact_type": "MODULE", "typeName": "My::S3::Bucket::MODULE"}))
    (tmp_path / "fragments").mkdir(exist_ok=True)
    text = fragment if isinstance(fragment, str) else json.dumps(fragment)
    (tmp_path / "fragments" / name).write_text(text, encoding="utf-8")
    return tmp_path


def refusal(tmp_path: Path, fragment: Any) -> str:
    with pytest.raises(ProjectError) as caught:
        read_module_fragment(project(tmp_path, fragment))
    return caught.value.problem


def test_a_good_fragment_is_read_in_json_or_yaml(tmp_path: Path) -> None:
    assert read_module_fragment(project(tmp_path, GOOD)).document == GOOD
    yaml_project = tmp_path / "yaml"
    yaml_project.mkdir()
    text = "Resources:\n  S3Bucket: {Type: AWS::S3::Bucket, Properties: {BucketName: !Sub 'b-${AWS::Region}'}}\n"
    fragment = read_module_fragment(project(yaml_project, text, "bucket.yaml"))
    assert fragment.document["Resources"]["S3Bucket"]["Properties"]["BucketName"] == {"Fn::Sub": "b-${AWS::Region}"}


def test_exactly_one_fragment_file_and_a_module_type_name(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="cannot be read"):
        read_module_fragment(tmp_path)
    (tmp_path / ".rpdk-config").write_text(json.dumps({"artifact_type": "MODULE", "typeName": "My::S3::Bucket"}))
    with pytest.raises(ProjectError, match="a module's typeName ends in ::MODULE"):
        read_module_fragment(tmp_path)
    (tmp_path / ".rpdk-config").write_text(json.dumps({"artifact_type": "MODULE", "typeName": "My::S3::Bucket::MODULE"}))
    with pytest.raises(ProjectError, match="needs one template fragment"):
        read_module_fragment(tmp_path)
    project(tmp_path, GOOD, "a.json")
    project(tmp_path, GOOD, "b.yaml")
    with pytest.raises(ProjectError, match="exactly one template fragment; found 2: fragments/a.json, fragments/b.yaml"):
        read_module_fragment(tmp_path)


def test_a_fragment_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    padded = {**GOOD, "Description": "x" * FRAGMENT_SIZE_LIMIT}
    assert "a module's fragment is at most 1,500,000 bytes" in refusal(tmp_path, padded)


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.pop("Resources"), "Resources: a module's fragment must have a Resources section"),
    (lambda f: f.update(Transform="AWS::Serverless-2016-10-31"), "Transform: a module's fragment cannot declare transforms"),
    (lambda f: f["Parameters"]["BucketName"].pop("Type"), "Parameters.BucketName: every parameter of a module's fragment needs a Type"),
    (lambda f: f.update(Outputs={"Name": {"Value": "v", "Export": {"Name": "n"}}}), "Outputs.Name.Export: a module's fragment cannot export"),
    (lambda f: f["Resources"].update(Child={"Type": "AWS::CloudFormation::Stack"}), "Resources.Child: a module's fragment cannot contain a nested stack"),
    (lambda f: f["Resources"].update(M={"Type": "AWS::CloudFormation::Macro"}), "Resources.M: a module's fragment cannot contain a macro"),
    (lambda f: f["Resources"]["S3Bucket"]["Properties"].update(Tag={"Fn::ImportValue": "x"}),
     "Resources.S3Bucket.Properties.Tag.Fn::ImportValue: a module's fragment cannot use Fn::ImportValue"),
    (lambda f: f["Resources"]["S3Bucket"]["Properties"].update({"Fn::Transform": {"Name": "AWS::Include"}}),
     "Resources.S3Bucket.Properties.Fn::Transform: a module's fragment cannot use a transform"),
    (lambda f: f.update(Outputs={f"O{n}": {"Value": "v"} for n in range(201)}), "Outputs: 201 entries; a module's fragment has at most 200"),
])
def test_each_rule_broken_is_named_with_its_place(tmp_path: Path, change: Any, expected: str) -> None:
    fragment = json.loads(json.dumps(GOOD))
    change(fragment)
    assert expected in refusal(tmp_path, fragment)


def test_a_fragment_that_does_not_decode_says_where(tmp_path: Path) -> None:
    assert "line" in refusal(tmp_path, "Resources: [unclosed\n")


def test_the_sample_module_reads_and_expands_in_a_template() -> None:
    from cfnrun.stacks.template.loading import load_stack_template

    sample = Path(__file__).resolve().parents[2] / "samples" / "module"
    fragment = read_module_fragment(sample)
    template = load_stack_template(
        "Resources:\n  Logs: {Type: Cfnrun::Sample::Bucket::MODULE, Properties: {BucketName: !Sub 'logs-${AWS::StackName}'}}\n"
        "Outputs:\n  Arn: {Value: !GetAtt Logs.Outputs.Arn}\n  Name: {Value: !Ref Logs.S3Bucket}\n",
        module_fragments={"Cfnrun::Sample::Bucket::MODULE": fragment.document},
    )
    assert list(template.resources) == ["LogsS3Bucket"]
    assert template.document["Outputs"] == {"Arn": {"Value": {"Fn::GetAtt": ["LogsS3Bucket", "Arn"]}},
                                            "Name": {"Value": {"Ref": "LogsS3Bucket"}}}
