"""``model/aws_type_schemas.py``: the AWS types' registry schemas read from cfn-lint's data without loading cfn-lint."""
from __future__ import annotations

import json
import subprocess
import sys

READ = """
import json, sys
from cfnrun.model.aws_type_schemas import AwsTypeSchemas
schemas = AwsTypeSchemas()
bucket = schemas.document("AWS::S3::Bucket")
print(json.dumps([bucket["typeName"], "AWS::SQS::Queue" in schemas.type_names(), schemas.document("AWS::Nope::Thing"),
                  schemas.knows("AWS::Nope::Thing"), "cfnlint" in sys.modules]))
"""


def test_a_schema_is_read_from_cfn_lints_data_and_cfn_lint_itself_is_not_loaded() -> None:
    # cfn-lint's package loads the whole linter as it is imported: a second of CPU in every serve that makes an AWS::* resource
    run = subprocess.run([sys.executable, "-c", READ], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == ["AWS::S3::Bucket", True, None, False, False], run.stderr


def test_without_cfn_lint_every_type_is_taken_as_known_and_has_no_schema() -> None:
    hidden = "import sys; sys.modules['cfnlint'] = None\n"  # an import of cfnlint now fails, as when it is not installed
    code = hidden + READ.replace('bucket["typeName"]', "bucket")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout)[:4] == [None, False, None, True], run.stderr
