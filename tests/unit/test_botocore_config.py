"""A new botocore session builds only the configuration chains it reads, and answers every one as botocore does."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator, List

import boto3
import boto3.session
import botocore.configprovider as configprovider
import botocore.loaders
import botocore.session
import pytest

from cfnrun.runtime.worker import botocore_config, botocore_sessions


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The worker's botocore work installed in this process for one test; botocore's own methods put back after."""
    for name in ("_register_builtin_handlers", "_register_config_store"):
        monkeypatch.setattr(botocore.session.Session, name, botocore.session.Session.__dict__[name])
    monkeypatch.setattr(botocore.hooks.EventAliaser, "_alias_event_name", botocore.hooks.EventAliaser._alias_event_name)
    monkeypatch.setattr(botocore.hooks, "accepts_kwargs", botocore.hooks.accepts_kwargs)
    monkeypatch.setattr(boto3.session.Session, "_register_default_handlers", boto3.session.Session._register_default_handlers)
    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "_load_file", botocore.loaders.JSONFileLoader._load_file)
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    monkeypatch.setattr(botocore_sessions, "_boto3_installed", False)
    assert botocore_sessions.share_registration_work()
    botocore.session.Session()  # the first session builds its mapping as botocore does
    yield


class Plain(botocore.session.Session):
    """A session of a subclass: configured by botocore's own code."""


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Values from each source a chain reads: a profile in a config file, and environment variables."""
    config = tmp_path / "config"
    config.write_text(
        "[profile tuned]\nregion = eu-west-3\nmax_attempts = 7\nretry_mode = adaptive\ndefaults_mode = standard\n"
        "s3 =\n  addressing_style = path\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_PROFILE", "tuned")
    monkeypatch.setenv("AWS_METADATA_SERVICE_TIMEOUT", "3")
    monkeypatch.setenv("AWS_STS_REGIONAL_ENDPOINTS", "legacy")


def every_name() -> List[str]:
    return list(configprovider.create_botocore_default_config_mapping(Plain()))


def test_every_variable_is_answered_as_botocore_answers_it(deferred: None, configured: None) -> None:
    names = every_name()
    assert {"region", "max_attempts", "s3", "proxies_config", "defaults_mode"} <= set(names)
    session, plain = botocore.session.Session(), Plain()
    assert type(session.get_component("config_store")._mapping) is botocore_config.DeferredChains
    assert {name: session.get_config_variable(name) for name in names} == {name: plain.get_config_variable(name) for name in names}
    assert session.get_config_variable("region") == "eu-west-3" and session.get_config_variable("s3") == {"addressing_style": "path"}


def test_a_new_session_builds_only_the_chains_it_reads(deferred: None, monkeypatch: pytest.MonkeyPatch) -> None:
    built: List[str] = []
    create = configprovider.ConfigChainFactory.create_config_chain

    def counted(self: Any, instance_name: Any = None, **kwargs: Any) -> Any:
        built.append(instance_name)
        return create(self, instance_name=instance_name, **kwargs)

    monkeypatch.setattr(configprovider.ConfigChainFactory, "create_config_chain", counted)
    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name="us-west-2")  # as the support library makes it
    assert session.region_name == "us-west-2"
    assert 0 < len(built) <= 5, built
    built.clear()
    Plain()
    assert len(built) > 30  # what botocore builds for every session


def test_a_client_gets_every_setting_as_botocore_gives_it(deferred: None, configured: None) -> None:
    session, plain = botocore.session.Session(), Plain()
    client, plain_client = (made.create_client("s3", aws_access_key_id="a", aws_secret_access_key="b") for made in (session, plain))
    assert client.meta.region_name == plain_client.meta.region_name == "eu-west-3"
    assert vars(client.meta.config) == vars(plain_client.meta.config)
    assert client.meta.config.retries["mode"] == "adaptive" and client.meta.config.s3["addressing_style"] == "path"


def test_a_provider_set_or_a_value_overridden_before_the_first_read_wins(deferred: None) -> None:
    session = botocore.session.Session(session_vars={"region": ("region", "CFNRUN_TEST_REGION", "ap-south-2", None)})
    assert session.get_config_variable("region") == "ap-south-2"
    store = session.get_component("config_store")
    store.set_config_provider("max_attempts", configprovider.ConstantProvider(9))
    assert session.get_config_variable("max_attempts") == 9
    session.set_config_variable("retry_mode", "standard")
    assert session.get_config_variable("retry_mode") == "standard"
    copied = copy.copy(store)
    assert type(copied._mapping) is dict and copied.get_config_variable("max_attempts") == 9
    assert set(copied._mapping) == set(every_name())
    assert copy.deepcopy(store).get_config_variable("max_attempts") == 9


def test_a_session_of_a_subclass_or_a_patched_mapping_is_configured_by_botocore(deferred: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert type(Plain().get_component("config_store")._mapping) is dict
    monkeypatch.setattr(botocore.session, "create_botocore_default_config_mapping", lambda session: {"region": configprovider.ConstantProvider("xx-1")})
    assert botocore.session.Session().get_config_variable("region") == "xx-1"
