"""The worker's --inject hook on real botocore clients: which calls it answers, and how."""
from __future__ import annotations

import json
import random
from typing import Any, Iterator

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from cfnrun.model.faults import faults_variable, parse_faults
from cfnrun.runtime.worker.faults import install_faults


@pytest.fixture
def inject(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    installed = []

    def install(*rules: str) -> Any:
        faults = install_faults(faults_variable(parse_faults(rules)))
        installed.append(faults)
        return faults

    yield install
    for faults in installed:
        faults.uninstall()


def client(service: str) -> Any:
    """A client whose real calls fail at once: nothing listens on port 9."""
    return boto3.Session().client(
        service, region_name="us-east-1", endpoint_url="http://127.0.0.1:9", aws_access_key_id="k", aws_secret_access_key="s",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )


def test_the_nth_call_gets_the_services_own_exception_class(inject: Any) -> None:
    faults = inject("SSM:GetParameter=ParameterNotFound@2")
    ssm = client("ssm")
    with pytest.raises(EndpointConnectionError):
        ssm.get_parameter(Name="a")  # call 1: sent (and nobody answers)
    with pytest.raises(ssm.exceptions.ParameterNotFound) as raised:
        ssm.get_parameter(Name="a")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert faults.drain() == [{"rule": "SSM:GetParameter=ParameterNotFound@2", "call": "ssm:GetParameter", "count": 2, "status": 400}]
    assert faults.drain() == []


def test_service_id_names_a_rate_and_untouched_operations(inject: Any) -> None:
    random.seed(7)
    faults = inject("application-auto-scaling:*=InternalFailure%50")
    scaling = client("application-autoscaling")
    failed = 0
    for _ in range(40):
        try:
            scaling.describe_scalable_targets(ServiceNamespace="ecs")
        except ClientError as error:
            assert (error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]) == ("InternalFailure", 500)
            failed += 1
        except EndpointConnectionError:
            pass
    assert 8 <= failed <= 32 and len(faults.drain()) == failed
    with pytest.raises(EndpointConnectionError):
        client("ssm").get_parameter(Name="a")  # another service: untouched
    assert json.dumps(faults.drain()) == "[]"
