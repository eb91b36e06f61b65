"""A template holding a null is refused at the call, naming the first null by its path, as the service does."""
import pytest

from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.null_values import first_null


def test_the_first_null_in_document_order_is_named_by_its_path() -> None:
    document = {"Resources": {"A": {"Type": "T", "Properties": {"Tags": [{"Key": "k", "Value": None}], "Name": None}}}, "Outputs": {"O": None}}
    assert first_null(document) == "/Resources/A/Properties/Tags/0/Value"
    assert first_null({"Resources": {"A": {"Type": "T", "Properties": {"Name": "x"}}}}) is None


def test_an_empty_yaml_key_is_refused_in_the_services_words() -> None:
    body = "Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties:\n      Content:\n"
    with pytest.raises(TemplateError) as refused:
        load_stack_template(body)
    # the service's text has no "Template format error:" prefix (LocalStack's AWS-recorded test_invalid_output_structure)
    assert str(refused.value) == "[/Resources/Note/Properties/Content] 'null' values are not allowed in templates"


def test_empty_properties_are_refused_too() -> None:
    with pytest.raises(TemplateError, match=r"^\[/Resources/Note/Properties\] 'null' values"):
        load_stack_template("Resources:\n  Note:\n    Type: Cfnrun::Sample::Note\n    Properties:\n")
