"""The embedded moto in cfnrun's own process (``app/moto_server.py``): one botocore loader shared among the process's
sessions (a new session reads no data file a former one read, boto3's folder is searched once, and the sessions answer
what they answered with a loader each), and moto's CloudFormation imported ahead of a stack's first AWS resource."""
from __future__ import annotations

import sys

import boto3
import botocore.session
import pytest

from cfnrun.app import moto_server as embedded
from cfnrun.app.moto_server import moto_server, one_botocore_loader, warm_cloudformation


def _loader(session: boto3.Session) -> object:
    return session._session.get_component("data_loader")


def test_sessions_share_one_loader_that_searches_each_folder_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore.session, "create_loader", botocore.session.create_loader)  # put back after the test
    before = boto3.Session(region_name="us-east-1")
    regions = before.get_available_regions("sqs")
    model = before.client("sqs").meta.service_model.operation_names
    one_botocore_loader()
    one_botocore_loader()  # a second --moto in the same process: still one loader
    first, second, third = (boto3.Session(region_name="us-east-1") for _ in range(3))
    assert _loader(first) is _loader(second) is _loader(third)
    assert _loader(first) is not _loader(before)
    paths = _loader(third).search_paths  # type: ignore[attr-defined]
    assert len(paths) == len(set(paths)) == len(_loader(before).search_paths)  # type: ignore[attr-defined]
    assert second.get_available_regions("sqs") == regions
    assert third.client("sqs").meta.service_model.operation_names == model


def test_moto_s_cloudformation_is_imported_ahead_once_and_only_with_an_embedded_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "_warming", [])
    monkeypatch.setattr(botocore.session, "create_loader", botocore.session.create_loader)
    warm_cloudformation()  # --aws-endpoint: no moto in this process
    assert embedded._warming == []
    with moto_server():
        warm_cloudformation()
        warm_cloudformation()
        [warming] = embedded._warming
        warming.join(120)
        assert not warming.is_alive() and "moto.cloudformation.models" in sys.modules
    assert embedded._EMBEDDED == []
