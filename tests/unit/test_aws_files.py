"""A plain profile's keys and region read without botocore (invoker/aws_files.py): what botocore reads, or None."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

import botocore.session
import pytest

from cfnrun.invoker.aws_files import nothing_to_find, plain_profile
from cfnrun.invoker.credentials import local_credentials
from cfnrun.invoker.region import local_region
from cfnrun.model.errors import CfnrunError

KEYS = "aws_access_key_id = AKIDPLAIN\naws_secret_access_key = plain-secret\n"


def aws_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: str, credentials: str, **env: str) -> None:
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_PROFILE", raising=False)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_CREDENTIAL_EXPIRATION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config").write_text(config)
    (tmp_path / "credentials").write_text(credentials)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def botocore_reads(profile: Optional[str]) -> Dict[str, Optional[str]]:
    session = botocore.session.Session(profile=profile)
    found = session.get_credentials()
    frozen = found.get_frozen_credentials() if found is not None else None
    return {
        "region": session.get_config_variable("region") or None,
        "access_key": frozen.access_key if frozen else None,
        "secret_key": frozen.secret_key if frozen else None,
        "token": (frozen.token or "") if frozen else None,
    }


@pytest.mark.parametrize(
    "config, credentials, profile, env",
    [
        ("[default]\nregion = eu-west-1\noutput = json\n", f"[default]\n{KEYS}", None, {}),
        ("[profile dev]\nregion = ap-south-1\n[default]\nregion = us-west-2\n", f"[dev]\n{KEYS}aws_session_token = tok\n", "dev", {}),
        ("[profile dev]\nregion = ap-south-1\n", f"[dev]\n{KEYS}aws_security_token = old-tok\n", None, {"AWS_PROFILE": "dev"}),
        ("[profile a]\nregion = sa-east-1\n", f"[a]\n{KEYS}[b]\n{KEYS}", None, {"AWS_DEFAULT_PROFILE": "a", "AWS_PROFILE": "b"}),
        ("", f"[default]\n{KEYS}region = ca-central-1\n", None, {}),  # the credentials file's region counts too
        ("[default]\nregion = us-east-2\n", f"[default]\n{KEYS}region = eu-north-1\n", None, {}),  # and wins
    ],
    ids=["default", "named", "AWS_PROFILE", "AWS_DEFAULT_PROFILE-first", "region-in-credentials", "credentials-region-wins"],
)
def test_a_plain_profile_reads_as_botocore_reads_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: str, credentials: str, profile: Optional[str], env: Dict[str, str]
) -> None:
    aws_files(monkeypatch, tmp_path, config, credentials, **env)
    plain = plain_profile(profile)
    assert plain is not None and plain.access_key is not None
    assert {"region": plain.region, "access_key": plain.access_key, "secret_key": plain.secret_key, "token": plain.token} == botocore_reads(profile)
    found = local_credentials(profile)
    assert found is not None and (found.accessKeyId, found.secretAccessKey) == ("AKIDPLAIN", "plain-secret")
    assert local_region(profile) == botocore_reads(profile)["region"]


@pytest.mark.parametrize(
    "config, credentials, profile",
    [
        ("[profile dev]\nrole_arn = arn:aws:iam::123456789012:role/r\nsource_profile = default\n", f"[default]\n{KEYS}[dev]\n", "dev"),
        ("[default]\ncredential_process = /bin/false\n", f"[default]\n{KEYS}", None),
        ("[default]\nsso_session = s\n", f"[default]\n{KEYS}", None),
        ("[default]\ns3 =\n  max_concurrent_requests = 4\n", f"[default]\n{KEYS}", None),  # a nested value
        ("[default]\nregion = eu-west-1\n", "[default]\naws_access_key_id = AKIDONLY\n", None),  # a key without its secret
        ("[profile dev]\nregion = eu-west-1\n[profile  dev]\nregion = us-west-1\n", f"[dev]\n{KEYS}", "dev"),  # two sections for one profile
        ("", "", "nobody"),  # a profile in neither file: botocore says it does not exist
        ("[default\n", f"[default]\n{KEYS}", None),  # does not parse
    ],
    ids=["role", "credential-process", "sso", "nested", "partial-keys", "two-sections", "no-such-profile", "unparsable"],
)
def test_anything_but_a_plain_profile_is_left_to_botocore(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: str, credentials: str, profile: Optional[str]
) -> None:
    aws_files(monkeypatch, tmp_path, config, credentials)
    assert plain_profile(profile) is None


def test_keys_in_the_environment_leave_the_files_keys_to_botocore(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    aws_files(monkeypatch, tmp_path, "[default]\nregion = eu-west-3\n", f"[default]\n{KEYS}", AWS_ACCESS_KEY_ID="AKIDENV")
    plain = plain_profile(None)
    assert plain is not None and plain.region == "eu-west-3" and plain.access_key is None  # botocore weighs AWS_ACCESS_KEY_ID first
    aws_files(monkeypatch, tmp_path, "[default]\nregion = eu-west-3\n", "[default]\nregion = eu-west-3\n")
    plain = plain_profile(None)
    assert plain is not None and plain.access_key is None  # no keys in the credentials file: the rest of the chain is botocore's


@pytest.fixture
def bare_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No AWS configuration at all: an empty home, none of the variables botocore's chain reads. The home folder."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_CREDENTIAL_EXPIRATION",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "BOTO_CONFIG", "AWS_CREDENTIAL_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return home


BOTO2 = "[Credentials]\naws_access_key_id = AKIDBOTO\naws_secret_access_key = boto-secret\n"


@pytest.mark.parametrize(
    "files, env",
    [
        ({".aws/credentials": f"[default]\n{KEYS}"}, {}),
        ({".aws/config": f"[default]\n{KEYS}"}, {}),
        ({".boto": BOTO2}, {}),
        ({"elsewhere/boto.cfg": BOTO2}, {"BOTO_CONFIG": "{home}/elsewhere/boto.cfg"}),
        ({"ec2-tools": "AWSAccessKeyId=AKIDEC2\nAWSSecretKey=ec2-secret\n"}, {"AWS_CREDENTIAL_FILE": "{home}/ec2-tools"}),
        ({"elsewhere/credentials": f"[default]\n{KEYS}"}, {"AWS_SHARED_CREDENTIALS_FILE": "{home}/elsewhere/credentials"}),
        ({"elsewhere/config": f"[default]\n{KEYS}"}, {"AWS_CONFIG_FILE": "{home}/elsewhere/config"}),
        ({}, {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}),
    ],
    ids=["credentials-file", "config-file", "boto2-home", "BOTO_CONFIG", "AWS_CREDENTIAL_FILE", "AWS_SHARED_CREDENTIALS_FILE",
         "AWS_CONFIG_FILE", "environment"],
)
def test_a_machine_with_nothing_configured_is_told_without_botocore_and_any_one_source_is_left_to_it(
    monkeypatch: pytest.MonkeyPatch, bare_machine: Path, files: Dict[str, str], env: Dict[str, str]
) -> None:
    assert nothing_to_find(None) and botocore_reads(None)["access_key"] is None and local_credentials(None) is None
    for name, text in files.items():
        (bare_machine / name).parent.mkdir(parents=True, exist_ok=True)
        (bare_machine / name).write_text(text)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(home=bare_machine))
    assert not nothing_to_find(None)
    found = botocore_reads(None)["access_key"]
    assert found is not None and local_credentials(None) is not None and local_credentials(None).accessKeyId == found


def test_a_profile_named_on_a_bare_machine_is_left_to_botocore_which_says_it_does_not_exist(
    monkeypatch: pytest.MonkeyPatch, bare_machine: Path
) -> None:
    assert not nothing_to_find("dev")
    monkeypatch.setenv("AWS_PROFILE", "dev")
    assert not nothing_to_find(None)
    with pytest.raises(CfnrunError, match="dev"):
        local_credentials(None)
