"""``--moto`` shares one botocore loader among the sessions of cfnrun's process (``app/moto_server.py``'s
``one_botocore_loader``): a new session reads no data file a former one read, boto3's folder is searched once, and
what the sessions answer is what they answered with a loader each."""
from __future__ import annotations

import boto3
import botocore.session
import pytest

from cfnrun.app.moto_server import one_botocore_loader


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
