"""boto3's handler registrations copied from an earlier session change nothing boto3 and botocore do, only how often they are made."""
from __future__ import annotations

import copy
import logging
from typing import Any, Dict, Iterator, List, Tuple

import boto3
import boto3.session
import botocore.exceptions
import botocore.hooks as hooks
import botocore.loaders
import botocore.session
import pytest

from cfnrun.runtime.worker import botocore_sessions


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shared work installed in this process for one test; botocore's and boto3's own functions put back after."""
    monkeypatch.setattr(hooks.EventAliaser, "_alias_event_name", hooks.EventAliaser._alias_event_name)
    monkeypatch.setattr(hooks, "accepts_kwargs", hooks.accepts_kwargs)
    monkeypatch.setattr(botocore.session.Session, "_register_builtin_handlers", botocore.session.Session._register_builtin_handlers)
    monkeypatch.setattr(botocore.session.Session, "_register_config_store", botocore.session.Session._register_config_store)
    monkeypatch.setattr(boto3.session.Session, "_register_default_handlers", boto3.session.Session._register_default_handlers)
    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "_load_file", botocore.loaders.JSONFileLoader._load_file)
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    monkeypatch.setattr(botocore_sessions, "_boto3_installed", False)
    assert botocore_sessions.share_registration_work()
    assert botocore_sessions._boto3_installed
    yield


def described(value: Any, session: Any) -> Any:
    """A handler or a value it holds, told apart only by what it does: its code and the values it closes over (this session's emitter named as such)."""
    if value is session._events:
        return "this session's events"
    if isinstance(value, dict):
        return {key: described(item, session) for key, item in value.items()}
    closure = getattr(value, "__closure__", None)
    if closure:
        return (value.__code__, tuple(described(cell.cell_contents, session) for cell in closure))
    return value


def table(boto3_session: boto3.session.Session) -> Tuple[List[Any], Dict[str, Any]]:
    """Every handler list of the session's table by event name, and its unique ids: what botocore consults."""
    session: Any = boto3_session._session
    emitter = session._events._emitter
    found, stack = [], [("", emitter._handlers._root)]
    while stack:
        name, node = stack.pop()
        if node["values"]:
            found.append((name, [[described(handler, session) for handler in part] for part in node["values"]]))
        stack.extend((f"{name}.{part}", child) for part, child in node["children"].items())
    unique_ids = {key: {field: described(value, session) for field, value in item.items()} for key, item in emitter._unique_id_handlers.items()}
    return sorted(found, key=lambda entry: entry[0]), unique_ids


def boto3s_own() -> boto3.session.Session:
    """A boto3 session registered by boto3's and botocore's own code (no copies, no shared answers)."""
    botocore_session = botocore.session.Session(include_builtin_handlers=False)
    register = botocore.session.Session._register_builtin_handlers
    getattr(register, "__wrapped__", register)(botocore_session, botocore_session._events)
    session = boto3.session.Session.__new__(boto3.session.Session)
    session._session = botocore_session
    default = boto3.session.Session._register_default_handlers
    getattr(default, "__wrapped__", default)(session)
    return session


def warm() -> None:
    """The sessions a worker makes while it waits for its first call (the first makes botocore's table, the next two boto3's)."""
    assert botocore_sessions.prepare_sessions()


def test_every_new_session_registers_what_boto3_registers_with_its_own_emitter_bound(shared: None) -> None:
    expected = table(boto3s_own())
    sessions = [boto3.session.Session(region_name="eu-west-1") for _ in range(4)]
    assert all(table(session) == expected for session in sessions)
    [ec2_handler] = sessions[3]._session._events._emitter._handlers.prefix_search("creating-resource-class.ec2.Instance")
    assert ec2_handler.__closure__[1].cell_contents == {"event_emitter": sessions[3].events}


def test_sessions_after_the_second_register_one_handler_through_botocore_instead_of_eight(shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    warm()
    registered: List[str] = []
    register_section = hooks.HierarchicalEmitter._register_section

    def counted(self: Any, event_name: str, *args: Any, **kwargs: Any) -> None:
        registered.append(event_name)
        register_section(self, event_name, *args, **kwargs)

    monkeypatch.setattr(hooks.HierarchicalEmitter, "_register_section", counted)
    boto3.session.Session()
    assert registered == ["creating-resource-class.ec2.Instance"]


def test_once_the_table_is_made_a_session_compares_only_the_registrations_it_holds(shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.runtime.worker import boto3_registrations

    warm()
    compared: List[Any] = []
    same_handler = boto3_registrations._same_handler

    def counted(mine: Any, theirs: Any) -> bool:
        compared.append(mine)
        return same_handler(mine, theirs)

    monkeypatch.setattr(boto3_registrations, "_same_handler", counted)
    session = boto3.session.Session()
    assert table(session) == table(boto3s_own())
    assert len(compared) == 7  # boto3's eight but the one bound to this session's own emitter (ec2's delete-tags)
    assert all(handler.__closure__[1].cell_contents == {} for handler in compared)


def test_what_a_session_or_its_client_adds_or_removes_is_its_own(shared: None) -> None:
    expected = table(boto3s_own())
    first, second, session = (boto3.session.Session() for _ in range(3))

    def mine(**kwargs: Any) -> None: ...

    session.events.register("creating-resource-class.s3.Bucket", mine)
    session.events.unregister("creating-resource-class.dynamodb", unique_id="high-level-dynamodb")
    client_events = copy.copy(second.events)  # as botocore copies a session's emitter for each client
    client_events.register("creating-resource-class.s3.Object", mine)
    client_events.unregister("creating-resource-class.dynamodb.Table", unique_id="high-level-dynamodb-table")
    assert table(first) == table(second) == table(boto3.session.Session()) == expected
    handlers, unique_ids = table(session)
    assert "high-level-dynamodb" not in unique_ids and "high-level-dynamodb-table" in unique_ids
    assert mine in session.events._emitter._handlers.prefix_search("creating-resource-class.s3.Bucket")
    assert mine in client_events._emitter._handlers.prefix_search("creating-resource-class.s3.Object")
    assert mine not in second.events._emitter._handlers.prefix_search("creating-resource-class.s3.Object")


def test_a_session_given_another_handler_first_or_of_a_subclass_registers_as_boto3_does(shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    warm()
    registered: List[str] = []
    register_section = hooks.HierarchicalEmitter._register_section

    def counted(self: Any, event_name: str, *args: Any, **kwargs: Any) -> None:
        registered.append(event_name)
        register_section(self, event_name, *args, **kwargs)

    monkeypatch.setattr(hooks.HierarchicalEmitter, "_register_section", counted)
    botocore_session = botocore.session.get_session()

    def mine(**kwargs: Any) -> None: ...

    botocore_session.register("creating-resource-class.s3.Bucket", mine)
    given = boto3.session.Session(botocore_session=botocore_session)
    assert len(registered) == 1 + 8
    assert given.events._emitter._handlers.prefix_search("creating-resource-class.s3.Bucket")[0] is mine  # registered before boto3's, called first

    class Own(boto3.session.Session):
        pass

    registered.clear()
    Own()
    assert len(registered) == 8


def test_sessions_made_while_botocore_logs_at_debug_register_as_boto3_does(shared: None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    warm()
    registered: List[str] = []
    register_section = hooks.HierarchicalEmitter._register_section
    monkeypatch.setattr(hooks.HierarchicalEmitter, "_register_section", lambda self, name, *args, **kwargs: (registered.append(name), register_section(self, name, *args, **kwargs)))
    with caplog.at_level(logging.DEBUG, logger="botocore.hooks"):
        boto3.session.Session()
    assert len([name for name in registered if name.startswith("creating-resource-class.")]) == 7  # botocore's own built-ins too, then boto3's


def test_a_registration_that_differs_from_the_first_sessions_is_boto3s_own(shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    warm()
    lazy_call = boto3.utils.lazy_call

    def other_module(full_name: str, **kwargs: Any) -> Any:
        return lazy_call(full_name.replace("boto3.s3.inject.inject_bucket_methods", "widgets.inject"), **kwargs)

    monkeypatch.setattr(boto3.utils, "lazy_call", other_module)
    session = boto3.session.Session()
    [bucket] = session.events._emitter._handlers.prefix_search("creating-resource-class.s3.Bucket")
    assert bucket.__closure__[0].cell_contents == "widgets.inject"
    monkeypatch.setattr(boto3.utils, "lazy_call", lazy_call)
    assert table(boto3.session.Session()) == table(boto3s_own())


def test_sessions_are_still_prepared_when_boto3_cannot_make_one_yet(shared: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "cfnrun-no-such-profile")
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)  # else boto3's loader never reads the profile
    assert botocore_sessions.prepare_sessions()  # the call's own session will say the profile is missing
    with pytest.raises(botocore.exceptions.ProfileNotFound):
        boto3.session.Session()
