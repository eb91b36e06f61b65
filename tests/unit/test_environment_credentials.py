"""Keys in the environment are read without botocore, and give exactly what botocore's own chain gives."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

import botocore.session
import pytest

from cfnrun.invoker.credentials import environment_credentials, local_credentials
from cfnrun.model.protocol import Credentials

KEYS = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}
SHARED_FILE = "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n[other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = other-secret\n"


def botocore_answer(profile: Optional[str]) -> Optional[Credentials]:
    found = botocore.session.Session(profile=profile).get_credentials()
    if found is None:
        return None
    frozen = found.get_frozen_credentials()
    return Credentials(accessKeyId=frozen.access_key, secretAccessKey=frozen.secret_key, sessionToken=frozen.token or "")


@pytest.fixture
def aws_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No AWS variables from this machine; a credentials file with a default and another profile."""
    for name in list(__import__("os").environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    shared = tmp_path / "credentials"
    shared.write_text(SHARED_FILE)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(shared))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


@pytest.mark.parametrize(
    "env, profile",
    [
        (KEYS, None),
        ({**KEYS, "AWS_SESSION_TOKEN": "session"}, None),
        ({**KEYS, "AWS_SECURITY_TOKEN": "security", "AWS_SESSION_TOKEN": "session"}, None),  # botocore prefers the older name
        ({**KEYS, "AWS_PROFILE": "other"}, None),  # keys in the environment win over AWS_PROFILE
        (KEYS, "other"),  # --profile sets the environment's keys aside
        ({"AWS_ACCESS_KEY_ID": "AKIDENV"}, None),  # no secret: not the environment's
        ({"AWS_SECRET_ACCESS_KEY": "env-secret"}, None),
        ({"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "env-secret"}, None),
        ({}, None),
    ],
)
def test_the_same_credentials_as_botocore(aws_home: Path, monkeypatch: pytest.MonkeyPatch, env: Dict[str, str], profile: Optional[str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if env.get("AWS_ACCESS_KEY_ID") and not env.get("AWS_SECRET_ACCESS_KEY"):
        assert local_credentials(profile) is None  # botocore: partial credentials, an error cfnrun reads as none
    else:
        assert local_credentials(profile) == botocore_answer(profile)


def test_only_complete_keys_without_a_profile_or_an_expiry_are_read_without_botocore(aws_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    assert environment_credentials() == Credentials(accessKeyId="AKIDENV", secretAccessKey="env-secret", sessionToken="")
    assert environment_credentials("other") is None
    monkeypatch.setenv("AWS_CREDENTIAL_EXPIRATION", "2999-01-01T00:00:00Z")  # refreshable keys: botocore's
    assert environment_credentials() is None
    assert local_credentials() == botocore_answer(None)
