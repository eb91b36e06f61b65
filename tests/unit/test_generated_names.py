"""Names generated for AWS::* resources declared without one: prefix, logical id and suffix within the type's limit."""
from __future__ import annotations

import re

from cfnrun.app.stacks.generated_names import generated_name, named


def test_a_long_logical_id_is_shortened_so_the_name_fits_the_limit() -> None:
    name = generated_name("CFN", "AVeryLongLogicalIdThatGoesOnAndOnAndOn", 40)
    assert len(name) == 40
    assert re.fullmatch(r"CFN-AVeryLongLogicalIdThatG-[A-Za-z0-9]{12}", name), name


def test_only_a_type_that_needs_a_name_and_has_none_gets_one_and_a_kept_name_is_reused() -> None:
    assert named("AWS::S3::Bucket", "stack", "Bucket", {}, None) is None
    assert named("AWS::SSM::Parameter", "stack", "P", {"Name": "/given"}, None) is None
    assert named("AWS::SSM::Parameter", "stack", "P", {}, "CFN-P-abcdefghijkl") == "CFN-P-abcdefghijkl"
