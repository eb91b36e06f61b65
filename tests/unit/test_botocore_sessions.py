"""The worker's shared botocore registration work changes nothing botocore does, only how often it is computed."""
from __future__ import annotations

import functools
import inspect
import logging
import sys
import types
from typing import Any, Iterator, List

import boto3.session
import botocore.hooks as hooks
import botocore.loaders
import botocore.session
import pytest

from cfnrun.runtime.worker import botocore_sessions


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shared answers installed in this process for one test; botocore's own functions put back after."""
    monkeypatch.setattr(hooks.EventAliaser, "_alias_event_name", hooks.EventAliaser._alias_event_name)
    monkeypatch.setattr(hooks, "accepts_kwargs", hooks.accepts_kwargs)
    monkeypatch.setattr(botocore.session.Session, "_register_builtin_handlers", botocore.session.Session._register_builtin_handlers)
    monkeypatch.setattr(botocore.session.Session, "_register_config_store", botocore.session.Session._register_config_store)
    monkeypatch.setattr(boto3.session.Session, "_register_default_handlers", boto3.session.Session._register_default_handlers)
    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "_load_file", botocore.loaders.JSONFileLoader._load_file)
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    monkeypatch.setattr(botocore_sessions, "_boto3_installed", False)
    assert botocore_sessions.share_registration_work()
    yield


def botocore_alias(aliases: Any, event_name: str) -> str:
    """What botocore itself answers, from a fresh aliaser with its own (unshared) code."""
    aliaser = hooks.EventAliaser(hooks.HierarchicalEmitter(), aliases)
    return getattr(hooks.EventAliaser._alias_event_name, "__wrapped__", hooks.EventAliaser._alias_event_name)(aliaser, event_name)


EVENT_NAMES = sorted(
    {spec[0] for spec in botocore.handlers.BUILTIN_HANDLERS}
    | {"before-call.apigateway.GetExport", "creating-client-class.cloudsearchdomain", "before-parameter-build.autoscaling.Foo"}
)


def test_every_builtin_event_name_is_aliased_as_botocore_does_in_every_new_aliaser(shared: None) -> None:
    expected = {name: botocore_alias(None, name) for name in EVENT_NAMES}
    assert any(expected[name] != name for name in EVENT_NAMES)  # some names are really renamed
    for _ in range(2):
        aliaser = hooks.EventAliaser(hooks.HierarchicalEmitter())
        assert {name: aliaser._alias_event_name(name) for name in EVENT_NAMES} == expected


def test_an_aliaser_with_other_aliases_is_answered_from_its_own_table(shared: None) -> None:
    default = hooks.EventAliaser(hooks.HierarchicalEmitter())
    assert default._alias_event_name("before-call.widgets.Get") == "before-call.widgets.Get"  # now in the shared answers
    custom = hooks.EventAliaser(hooks.HierarchicalEmitter(), {"widgets": "gadgets"})
    assert custom._alias_event_name("before-call.widgets.Get") == "before-call.gadgets.Get"


def test_a_copied_aliaser_shares_the_answers_of_the_default_table(shared: None) -> None:
    import copy

    original = hooks.EventAliaser(hooks.HierarchicalEmitter())
    copied = copy.copy(original)
    assert copied._event_aliases is not hooks.EVENT_ALIASES
    for name in EVENT_NAMES:
        assert copied._alias_event_name(name) == botocore_alias(None, name)


def test_botocores_debug_log_of_each_rename_is_kept(shared: None, caplog: pytest.LogCaptureFixture) -> None:
    renamed = next(name for name in EVENT_NAMES if botocore_alias(None, name) != name)
    hooks.EventAliaser(hooks.HierarchicalEmitter())._alias_event_name(renamed)  # now in the shared answers
    with caplog.at_level(logging.DEBUG, logger="botocore.hooks"):
        hooks.EventAliaser(hooks.HierarchicalEmitter())._alias_event_name(renamed)
    assert f"Changing event name from {renamed}" in caplog.text


def test_a_handler_without_kwargs_is_still_refused_every_time(shared: None) -> None:
    def no_kwargs(a: Any) -> None: ...

    for _ in range(2):
        with pytest.raises(ValueError, match="must accept keyword arguments"):
            botocore.session.Session().register("before-call.s3", no_kwargs)


def test_kwargs_answers_follow_the_code_and_a_declared_signature(shared: None) -> None:
    def make(flag: int) -> Any:
        def handler(**kwargs: Any) -> int:
            return flag

        return handler

    first, second = make(1), make(2)
    assert hooks.accepts_kwargs(first) == hooks.accepts_kwargs(second) == "kwargs"

    def declared(**kwargs: Any) -> None: ...

    assert hooks.accepts_kwargs(declared) == "kwargs"
    declared.__signature__ = inspect.Signature([inspect.Parameter("a", inspect.Parameter.POSITIONAL_OR_KEYWORD)])  # type: ignore[attr-defined]
    assert hooks.accepts_kwargs(declared) is None  # asked again, as botocore would
    assert hooks.accepts_kwargs(functools.partial(make(3))) == "kwargs"

    class Handler:
        def __call__(self, **kwargs: Any) -> None: ...

        def method(self, a: Any) -> None: ...

    assert hooks.accepts_kwargs(Handler()) == "kwargs"
    assert hooks.accepts_kwargs(Handler().method) is None


def test_botocore_of_another_shape_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    other = types.ModuleType("botocore.hooks")
    other.EventAliaser = hooks.EventAliaser  # type: ignore[attr-defined]
    other.HierarchicalEmitter = hooks.HierarchicalEmitter  # type: ignore[attr-defined]
    other.EVENT_ALIASES = hooks.EVENT_ALIASES  # type: ignore[attr-defined]
    other.logger = hooks.logger  # type: ignore[attr-defined]  # no accepts_kwargs: another version
    monkeypatch.setitem(sys.modules, "botocore.hooks", other)
    aliasing = hooks.EventAliaser.__dict__["_alias_event_name"]
    assert not botocore_sessions.share_registration_work()
    assert hooks.EventAliaser.__dict__["_alias_event_name"] is aliasing


def test_nothing_is_installed_before_botocore_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    monkeypatch.delitem(sys.modules, "botocore.session")
    assert not botocore_sessions.share_registration_work()
    assert "botocore.session" not in sys.modules


def registrations(session: botocore.session.Session) -> Any:
    """Every (event name, first/middle/last handlers) in the session's emitter, botocore's trie read as it is."""
    found = []
    stack = [("", session._events._emitter._handlers._root)]
    while stack:
        prefix, node = stack.pop()
        if node["values"]:
            found.append((prefix, list(node["values"].first), list(node["values"].middle), list(node["values"].last)))
        stack.extend((f"{prefix}.{chunk}", child) for chunk, child in node["children"].items())
    return sorted(found, key=lambda entry: entry[0])


def unshared_session() -> botocore.session.Session:
    """A session registered by botocore's own code (no copy, no shared answers)."""
    session = botocore.session.Session(include_builtin_handlers=False)
    register = botocore.session.Session._register_builtin_handlers
    getattr(register, "__wrapped__", register)(session, session._events)
    return session


def test_every_new_session_has_botocores_builtin_handlers_and_only_its_own_additions(shared: None) -> None:
    expected = registrations(unshared_session())
    first = botocore.session.Session()
    second = botocore.session.Session()

    def mine(**kwargs: Any) -> None: ...

    second.register("before-call.s3.PutObject", mine)
    third = botocore.session.Session()
    assert registrations(first) == registrations(third) == expected
    assert registrations(second) != expected


def test_a_change_to_the_builtin_handlers_reaches_the_next_session(shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    botocore.session.Session()

    def added(**kwargs: Any) -> None: ...

    monkeypatch.setattr(botocore.handlers, "BUILTIN_HANDLERS", botocore.handlers.BUILTIN_HANDLERS + [("before-call.widgets", added)])
    assert registrations(botocore.session.Session()) == registrations(unshared_session())
    assert any(added in middle for _, _, middle, _ in registrations(botocore.session.Session()))


def test_sessions_made_while_botocore_logs_at_debug_register_as_botocore_does(shared: None, caplog: pytest.LogCaptureFixture) -> None:
    botocore.session.Session()
    with caplog.at_level(logging.DEBUG, logger="botocore.hooks"):
        botocore.session.Session()
    assert "Changing event name from" in caplog.text


def nodes(trie: Any) -> List[int]:
    """The ids of every node dict of a handler trie."""
    found, stack = [], [trie._root]
    while stack:
        node = stack.pop()
        found.append(id(node))
        stack.extend(node["children"].values())
    return found


def test_new_sessions_share_the_nodes_of_one_table_instead_of_copying_them(shared: None) -> None:
    botocore.session.Session()
    first, second = (botocore.session.Session()._events._emitter._handlers for _ in range(2))
    assert len(nodes(first)) > 100
    assert nodes(first) == nodes(second)  # not one node copied for the second session


def test_what_a_session_or_its_client_adds_or_removes_is_its_own(shared: None) -> None:
    import copy

    expected = registrations(unshared_session())
    botocore.session.Session()
    session, other = botocore.session.Session(), botocore.session.Session()

    def mine(**kwargs: Any) -> None: ...

    session.register("before-call.s3.PutObject", mine)
    [(event, builtin, *_)] = [spec for spec in botocore.handlers.BUILTIN_HANDLERS if spec[0] == "choose-signer.cognito-identity.GetId"]
    session.unregister(event, builtin)
    client_events = copy.copy(other._events)  # as botocore copies a session's emitter for each client
    client_events.register("before-call.s3.GetObject", mine)
    assert registrations(other) == registrations(botocore.session.Session()) == expected
    mine_now = {name[1:]: first + middle + last for name, first, middle, last in registrations(session)}  # names read from the root: ".a.b"
    assert mine_now["before-call.s3.PutObject"] == [mine]
    assert builtin not in mine_now.get(event, [])
    assert builtin in {name[1:]: first + middle + last for name, first, middle, last in expected}[event]
    assert mine in client_events._emitter._handlers.prefix_search("before-call.s3.GetObject")
    assert mine not in other._events._emitter._handlers.prefix_search("before-call.s3.GetObject")


def test_a_trie_of_another_kind_is_copied_by_botocore() -> None:
    class OwnTrie(hooks._PrefixTrie):  # type: ignore[misc,name-defined]
        pass

    trie = OwnTrie()
    trie.append_item("before-call.s3", print)
    copied = botocore_sessions._shared_nodes_copy(trie, hooks)
    assert type(copied) is OwnTrie and copied._root is not trie._root
    assert type(botocore_sessions._shared_nodes_copy(botocore.session.Session()._events._emitter._handlers, hooks)) is not hooks._PrefixTrie


def test_sessions_are_prepared_only_once_botocore_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks.EventAliaser, "_alias_event_name", hooks.EventAliaser._alias_event_name)
    monkeypatch.setattr(hooks, "accepts_kwargs", hooks.accepts_kwargs)
    monkeypatch.setattr(botocore.session.Session, "_register_builtin_handlers", botocore.session.Session._register_builtin_handlers)
    monkeypatch.setattr(botocore.session.Session, "_register_config_store", botocore.session.Session._register_config_store)
    monkeypatch.setattr(boto3.session.Session, "_register_default_handlers", boto3.session.Session._register_default_handlers)
    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "_load_file", botocore.loaders.JSONFileLoader._load_file)
    monkeypatch.setattr(botocore_sessions, "_installed", False)
    monkeypatch.setattr(botocore_sessions, "_boto3_installed", False)
    with monkeypatch.context() as without_botocore:
        without_botocore.delitem(sys.modules, "botocore.session")
        assert not botocore_sessions.prepare_sessions()
    assert botocore_sessions.prepare_sessions()
    assert hasattr(botocore.session.Session._register_builtin_handlers, "__wrapped__")


def test_a_subclass_of_session_registers_its_own_way(shared: None) -> None:
    botocore.session.Session()
    seen = []

    class Recording(botocore.session.Session):
        def register(self, event_name: str, handler: Any, *args: Any, **kwargs: Any) -> None:
            seen.append(event_name)
            super().register(event_name, handler, *args, **kwargs)

    Recording()
    assert len(seen) > 100  # botocore's registrations went through the subclass, not a copy


def test_a_session_copies_the_nodes_on_a_path_once(shared: None) -> None:
    botocore.session.Session()
    session = botocore.session.Session()
    trie = session._events._emitter._handlers

    def mine(**kwargs: Any) -> None: ...

    session.register("before-call.s3.PutObject", mine)
    root, before_call = trie._root, trie._root["children"]["before-call"]
    session.register("before-call.s3.GetObject", mine)
    assert trie._root is root and trie._root["children"]["before-call"] is before_call  # its own already: not copied again


def test_what_a_session_adds_after_a_client_copied_its_handlers_is_its_own(shared: None) -> None:
    import copy

    botocore.session.Session()
    session = botocore.session.Session()

    def first(**kwargs: Any) -> None: ...

    def later(**kwargs: Any) -> None: ...

    def clients(**kwargs: Any) -> None: ...

    session.register("before-call.s3.PutObject", first)  # the session owns this path now
    client_events = copy.copy(session._events)  # as botocore copies a session's emitter for each client
    session.register("before-call.s3.PutObject", later)
    client_events.register("before-call.s3.PutObject", clients)
    in_session = session._events._emitter._handlers.prefix_search("before-call.s3.PutObject")
    in_client = client_events._emitter._handlers.prefix_search("before-call.s3.PutObject")
    assert first in in_session and later in in_session and clients not in in_session
    assert first in in_client and clients in in_client and later not in in_client
