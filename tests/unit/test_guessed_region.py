"""The early start's region guess, read without botocore, agrees with botocore on the usual AWS config files."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

import pytest

from cfnrun.invoker.region import guessed_region, local_region

CONFIG = "[default]\nregion = sa-east-1\n\n[profile dev]\nregion = eu-central-1\noutput = json\n\n[profile bare]\noutput = json\n"


@pytest.fixture
def aws_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    config = tmp_path / "config"
    config.write_text(CONFIG)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return config


@pytest.mark.parametrize(
    "env, profile",
    [
        ({}, None),
        ({"AWS_PROFILE": "dev"}, None),
        ({"AWS_DEFAULT_PROFILE": "dev", "AWS_PROFILE": "bare"}, None),
        ({}, "dev"),
        ({}, "bare"),  # names no region: cfnrun's default
        ({"AWS_DEFAULT_REGION": "ca-central-1", "AWS_PROFILE": "dev"}, None),
        ({"AWS_REGION": "ap-northeast-3"}, "dev"),
    ],
)
def test_the_guess_is_the_region_the_command_reads(aws_config: Path, monkeypatch: pytest.MonkeyPatch, env: Dict[str, str], profile: Optional[str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert guessed_region(profile) == local_region(profile)


def test_an_unreadable_config_file_is_no_guess_and_no_error(aws_config: Path) -> None:
    aws_config.write_text("not an ini file [\n")
    assert guessed_region() == "us-east-1"
