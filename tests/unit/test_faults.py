"""--inject values: what each part means, and the HTTP status an injected error carries."""
from __future__ import annotations

import pytest

from cfnrun.model.errors import CfnrunError
from cfnrun.model.faults import parse_fault


def test_error_delay_and_selectors() -> None:
    both = parse_fault("ssm:PutParameter=ThrottlingException+2s@3")
    assert (both.error_code, both.status, both.delay_s, both.nth, both.rate) == ("ThrottlingException", 400, 2.0, 3, None)
    rate = parse_fault("dynamodb:*=ServiceUnavailable%25")
    assert (rate.operation, rate.status, rate.rate, rate.delay_s) == ("*", 503, 0.25, 0.0)
    slow = parse_fault("ssm:GetParameter=+500ms")
    assert (slow.error_code, slow.status, slow.delay_s) == (None, None, 0.5)


@pytest.mark.parametrize(
    "code, status",
    [("InternalServerError", 500), ("AccessDeniedException", 403), ("TooManyRequestsException", 429), ("ResourceNotFoundException", 400)],
)
def test_statuses_follow_the_error_code(code: str, status: int) -> None:
    assert parse_fault(f"s3:GetObject={code}").status == status


def test_a_missing_operation_is_refused() -> None:
    with pytest.raises(CfnrunError, match="expected SERVICE:Operation=ErrorCode"):
        parse_fault("ssm=ThrottlingException")


@pytest.mark.parametrize(
    "value, problem",
    [
        ("nosuchservice:Op=X", "botocore knows no service 'nosuchservice'"),
        ("ssm:PutParamter=ThrottlingException", "ssm has no operation 'PutParamter'"),
        ("ssm:PutParameter=+99999999999999s", "a delay is at most 900 s"),
    ],
)
def test_a_rule_that_could_never_apply_is_refused(value: str, problem: str) -> None:
    with pytest.raises(CfnrunError, match=problem):
        parse_fault(value)
