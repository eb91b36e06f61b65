"""botocore's data files parsed once per version of a file: every load still gets data of its own, as botocore's own."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Iterator, List

import botocore.loaders as loaders
import botocore.session
import pytest

from cfnrun.runtime.worker import botocore_files


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> Iterator[List[str]]:
    """The kept parses installed for one test; the files botocore itself parsed, listed."""
    parsed: List[str] = []
    load = loaders.JSONFileLoader._load_file
    monkeypatch.setattr(loaders.JSONFileLoader, "_load_file", load)

    def counted(self: Any, full_path: str, open_method: Any) -> Any:
        parsed.append(full_path)
        return load(self, full_path, open_method)

    monkeypatch.setattr(loaders.JSONFileLoader, "_load_file", counted)
    assert botocore_files.parse_files_once(loaders)
    yield parsed


def write(path: Path, document: Any, mtime_ns: int) -> None:
    path.write_text(json.dumps(document))
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_file_is_parsed_once_and_each_load_gets_its_own_data(kept: List[str], tmp_path: Path) -> None:
    write(tmp_path / "widgets.json", {"partitions": [{"partition": "aws", "regions": {}}]}, 1_700_000_000_000_000_000)
    first, second = (loaders.JSONFileLoader().load_file(str(tmp_path / "widgets")) for _ in range(2))
    assert kept == [str(tmp_path / "widgets.json")]  # botocore parsed it once
    first["partitions"][0]["hostname"] = "resolved.example.com"  # as botocore's endpoint resolver writes into its data
    assert second == {"partitions": [{"partition": "aws", "regions": {}}]}
    assert loaders.JSONFileLoader().load_file(str(tmp_path / "widgets")) == second
    assert type(second) is type(loaders.JSONFileLoader.__dict__["_load_file"].__wrapped__(loaders.JSONFileLoader(), str(tmp_path / "widgets.json"), open))


def test_a_changed_file_is_read_again(kept: List[str], tmp_path: Path) -> None:
    path = tmp_path / "widgets.json"
    write(path, {"value": 1}, 1_700_000_000_000_000_000)
    assert loaders.JSONFileLoader().load_file(str(tmp_path / "widgets")) == {"value": 1}
    write(path, {"value": 2}, 1_700_000_000_000_000_001)  # the same size, one nanosecond later
    assert loaders.JSONFileLoader().load_file(str(tmp_path / "widgets")) == {"value": 2}
    path.unlink()
    assert loaders.JSONFileLoader().load_file(str(tmp_path / "widgets")) is None


def test_sessions_clients_see_botocores_own_models(kept: List[str]) -> None:
    def endpoint_of(session: Any) -> str:
        return str(session.create_client("ssm", region_name="eu-west-1", aws_access_key_id="AKID", aws_secret_access_key="secret").meta.endpoint_url)

    first, second = botocore.session.Session(), botocore.session.Session()
    assert endpoint_of(first) == endpoint_of(second) == "https://ssm.eu-west-1.amazonaws.com"
    model_files = [path for path in kept if "/ssm/" in path and os.path.isfile(path)]
    assert model_files and len(model_files) == len(set(model_files))  # the second session's loader parsed none of them again
    mine = first.get_component("data_loader").load_service_model("ssm", "service-2")
    theirs = second.get_component("data_loader").load_service_model("ssm", "service-2")
    assert mine == theirs and mine is not theirs


def test_botocores_debug_log_of_each_file_is_kept(kept: List[str], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(tmp_path / "widgets.json", {"value": 1}, 1_700_000_000_000_000_000)
    loaders.JSONFileLoader().load_file(str(tmp_path / "widgets"))
    with caplog.at_level(logging.DEBUG, logger="botocore.loaders"):
        loaders.JSONFileLoader().load_file(str(tmp_path / "widgets"))
    assert "Loading JSON file" in caplog.text


def test_a_loader_of_another_class_loads_its_own_way(kept: List[str], tmp_path: Path) -> None:
    class Own(loaders.JSONFileLoader):  # type: ignore[misc]
        pass

    write(tmp_path / "widgets.json", {"value": 1}, 1_700_000_000_000_000_000)
    for _ in range(2):
        Own().load_file(str(tmp_path / "widgets"))
    assert len(kept) == 2
