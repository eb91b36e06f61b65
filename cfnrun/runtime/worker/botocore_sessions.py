"""A new botocore session in a warm worker, without the same registration work repeated per call.

The support library builds a ``boto3.Session`` per set of credentials on every call (caller and
provider: up to two per call). Each new session registers botocore's ~130 built-in event
handlers (``handlers.BUILTIN_HANDLERS``), and each registration computes two things that depend
only on their input, which botocore caches per session object only, so every call paid them
again (about 85% of a session's construction, measured 2026-11-27):

* ``EventAliaser._alias_event_name``: an event's name with botocore's fixed aliases applied
  (``EVENT_ALIASES``; string splits and list searches over ~65 aliases per name);
* ``botocore.hooks.accepts_kwargs``: whether a handler takes ``**kwargs`` (``inspect.getfullargspec``).

``share_registration_work`` keeps one process-wide answer for each, and lets a new session start
from what registering the built-in handlers made in the first one (the trie of handlers). A new
session's table shares that trie's ~190 nodes instead of copying them (the copy was half
of a session's construction, measured 2026-11-27): its trie copies the nodes on an event name's
path before it adds or removes a handler there (``_SharedNodes``), so what one session or client
registers is never seen by another, as with botocore's own copies. Each call still builds its own
sessions, with its own credentials and its own handlers' table, as on Lambda. It also installs
``botocore_config``: a new session builds each configuration chain when it is first read, and, once
boto3 is imported, ``boto3_registrations``: boto3's own registrations on a new session copied too;
and ``botocore_files``: botocore's data files parsed once per version of a file.

* Aliases are shared between aliasers whose alias table equals botocore's default table as it was
  when installed (a session made with other aliases works as before), and not while botocore's
  debug logging is on (the aliaser logs each rename).
* ``accepts_kwargs`` answers are kept per code object, for plain functions and methods bound to
  them that carry no ``__signature__`` of their own: whether such a function takes ``**kwargs``
  is a flag of its code object (``inspect`` reads it there). Any other callable is asked as before.
* The registrations are shared only with a fresh emitter with the default aliases of a session
  of botocore's own class (not a subclass), and only while ``BUILTIN_HANDLERS`` holds the same
  handlers as when they were made (``--inject`` adds one before); otherwise, and at debug
  logging, botocore registers them itself. Only a trie of botocore's own class shares its nodes,
  once a probe (a handler added to a copy, then removed) showed the original unchanged;
  otherwise each session gets botocore's own copy.

botocore is never imported here: the worker installs this once the provider has imported it.
If botocore's internals are not shaped as expected (another version), nothing is changed.
Runs in the worker, in the provider's interpreter: standard library only.
"""
from __future__ import annotations

import copy
import logging
import sys
import types
from typing import Any, Callable, Dict, Optional

from .boto3_registrations import share_default_registrations
from .botocore_config import defer_config_chains
from .botocore_files import parse_files_once

_installed = False
_boto3_installed = False
_builtin: Dict[str, Any] = {}  # "handlers": the BUILTIN_HANDLERS registered, "trie": what registering them made


def share_registration_work() -> bool:
    """Install the shared answers once botocore is imported (and boto3's registrations once boto3 is); whether they are installed now."""
    global _installed
    if _installed:
        _share_boto3_registrations()
        return True
    session: Any = sys.modules.get("botocore.session")  # it imports botocore.hooks and botocore.handlers
    if session is None:
        return False
    hooks: Any = sys.modules.get("botocore.hooks")
    handlers: Any = sys.modules.get("botocore.handlers")
    if not (_shaped_as_expected(hooks) and _sessions_shaped_as_expected(session, hooks, handlers)):
        return False
    aliases = dict(hooks.EVENT_ALIASES)
    aliaser = hooks.EventAliaser
    aliaser._alias_event_name = _shared_aliases(aliaser._alias_event_name, aliases, hooks.logger)
    hooks.accepts_kwargs = _per_code_object(hooks.accepts_kwargs)
    register = session.Session._register_builtin_handlers
    session.Session._register_builtin_handlers = _copied_builtin_registrations(register, session.Session, hooks, handlers, aliases)
    defer_config_chains(session, sys.modules.get("botocore.configprovider"))
    parse_files_once(sys.modules.get("botocore.loaders"))
    _installed = True
    _share_boto3_registrations()
    return True


def _share_boto3_registrations() -> None:
    global _boto3_installed
    boto3_session = sys.modules.get("boto3.session")
    if _boto3_installed or boto3_session is None:
        return
    hooks, session = sys.modules["botocore.hooks"], sys.modules["botocore.session"]
    _boto3_installed = share_default_registrations(boto3_session, session, hooks, lambda: _builtin.get("trie"))


def prepare_sessions() -> bool:
    """Make and drop one botocore session, so the first call's sessions cost what later ones do; whether it did.

    Only once the provider has imported botocore, and only what a call's first sessions would do
    anyway (no credentials are looked up; two boto3 sessions too, once boto3 is imported, so its
    registrations' table is made): a worker calls it while it has nothing to answer.
    """
    if not share_registration_work():
        return False
    try:
        sys.modules["botocore.session"].Session()
    except Exception:  # noqa: B902 - the call's own session would fail the same way, visibly
        return False
    boto3_session = sys.modules.get("boto3.session")
    if _boto3_installed and boto3_session is not None:
        try:
            for _ in range(2):  # the first is the reference, the second makes the table later ones copy
                boto3_session.Session()
        except Exception:  # noqa: B902 - (a profile the environment names and no file has): the call's own session says so
            pass
    return True


def _shaped_as_expected(hooks: Any) -> bool:
    """botocore's hooks module has what this relies on, and a fresh aliaser keeps its aliases and cache as expected."""
    aliaser = getattr(hooks, "EventAliaser", None)
    emitter = getattr(hooks, "HierarchicalEmitter", None)
    aliases = getattr(hooks, "EVENT_ALIASES", None)
    if aliaser is None or emitter is None or not isinstance(aliases, dict):
        return False
    if not isinstance(getattr(hooks, "logger", None), logging.Logger):
        return False
    if not isinstance(getattr(hooks, "accepts_kwargs", None), types.FunctionType):
        return False
    if not isinstance(aliaser.__dict__.get("_alias_event_name"), types.FunctionType):
        return False
    try:
        probe = aliaser(emitter())
    except Exception:  # noqa: B902 - any failure means another shape: leave botocore alone
        return False
    return probe.__dict__.get("_event_aliases") is aliases and isinstance(probe.__dict__.get("_alias_name_cache"), dict)


def _sessions_shaped_as_expected(session: Any, hooks: Any, handlers: Any) -> bool:
    """A session registers ``BUILTIN_HANDLERS`` in one method, into an emitter whose handlers are a trie botocore can copy."""
    if not isinstance(getattr(handlers, "BUILTIN_HANDLERS", None), list) or not isinstance(getattr(hooks, "NodeList", None), type):
        return False
    if not isinstance(getattr(session, "Session", object).__dict__.get("_register_builtin_handlers"), types.FunctionType):
        return False
    try:
        emitter = hooks.HierarchicalEmitter()
        trie = emitter._handlers
        fresh = _fresh(emitter)
        copied = type(trie).__copy__(trie)
    except Exception:  # noqa: B902 - another shape: leave botocore alone
        return False
    return fresh and type(copied) is type(trie) and copied._root is not trie._root


def _fresh(emitter: Any) -> bool:
    """Nothing registered on, or asked of, this emitter yet."""
    return (
        isinstance(emitter._lookup_cache, dict)
        and not emitter._lookup_cache
        and isinstance(emitter._unique_id_handlers, dict)
        and not emitter._unique_id_handlers
        and isinstance(emitter._handlers._root, dict)
        and not emitter._handlers._root["children"]
        and emitter._handlers._root["values"] is None
    )


def _copied_builtin_registrations(
    register: Callable[[Any, Any], None], session_class: Any, hooks: Any, handlers: Any, aliases: Dict[str, str]
) -> Callable[[Any, Any], None]:
    """``Session._register_builtin_handlers``, copying the first session's result while the built-in handlers stay the same."""
    made = _builtin
    made.clear()

    def _register_builtin_handlers(self: Any, events: Any) -> None:
        emitter: Any = getattr(events, "_emitter", None)
        plain = (
            type(self) is session_class  # a subclass may register its own way
            and events is self.__dict__.get("_events")
            and type(events) is hooks.EventAliaser
            and type(emitter) is hooks.HierarchicalEmitter
            and events._event_aliases == aliases
            and not hooks.logger.isEnabledFor(logging.DEBUG)
            and _fresh(emitter)
        )
        if not plain:
            return register(self, events)
        builtin = list(handlers.BUILTIN_HANDLERS)
        if made.get("handlers") != builtin:
            register(self, events)
            made["handlers"], made["trie"] = builtin, _shared_nodes_copy(emitter._handlers, hooks)
            return None
        emitter._handlers = copy.copy(made["trie"])
        return None

    _register_builtin_handlers.__wrapped__ = register  # type: ignore[attr-defined]
    return _register_builtin_handlers


def _shared_aliases(alias: Callable[[Any, str], str], default_aliases: Dict[str, str], logger: logging.Logger) -> Callable[[Any, str], str]:
    shared: Dict[str, str] = {}

    def _alias_event_name(self: Any, event_name: str) -> str:
        own = self._alias_name_cache
        if event_name in own:
            return own[event_name]
        aliases = self._event_aliases
        if aliases != default_aliases or logger.isEnabledFor(logging.DEBUG):
            return alias(self, event_name)
        name = shared.get(event_name)
        if name is None:
            name = shared[event_name] = alias(self, event_name)
        else:
            own[event_name] = name
        return name

    _alias_event_name.__wrapped__ = alias  # type: ignore[attr-defined]
    return _alias_event_name


def _shared_nodes_copy(trie: Any, hooks: Any) -> Any:
    """A copy of ``trie`` whose own copies share its nodes (``_SharedNodes``), where that makes what botocore's copy makes; else botocore's copy."""
    botocore_copy = copy.copy(trie)
    if type(trie) is not getattr(hooks, "_PrefixTrie", None):  # a trie of another kind: only botocore's own copy is known to fit it
        return botocore_copy
    try:
        shared: Any = _SharedNodes.of(copy.copy(trie), hooks.NodeList)
        probe = copy.copy(shared)
        probe.append_item("before-call.cfnrun-probe", print)
        added = print in probe.prefix_search("before-call.cfnrun-probe")
        probe.remove_item("before-call.cfnrun-probe", print)
        same = (
            added
            and print not in probe.prefix_search("before-call.cfnrun-probe")
            and {name: value for name, value in shared.__dict__.items() if name != "_mine"} == botocore_copy.__dict__
        )
    except Exception:  # noqa: B902 - another shape: botocore's own copy
        same = False
    return shared if same else botocore_copy


class _SharedNodes:
    """What a botocore ``_PrefixTrie`` becomes (its class is made a subclass of both): copies share nodes, changes copy their path.

    botocore's trie is a tree of node dicts (``chunk``, ``children``, ``values``: a ``NodeList`` of
    handler lists) that ``append_item`` and ``remove_item`` change in place, along the path of one
    event name only; ``prefix_search`` only reads. So a copy may share every node as long as each
    change first replaces the nodes on its path (from the root) with copies of its own, once: the
    copies it made are its own until it is copied (``_mine``, kept so their ids stay theirs).
    """

    node_list: Any = None
    _root: Dict[str, Any]
    _mine: Dict[int, Dict[str, Any]]

    @classmethod
    def of(cls, trie: Any, node_list: Any) -> Any:
        kind = type(f"Shared{type(trie).__name__}", (cls, type(trie)), {"node_list": node_list})
        shared: Any = object.__new__(kind)
        shared.__dict__ = trie.__dict__
        shared._mine = {}
        return shared

    def __copy__(self) -> Any:
        copied = object.__new__(type(self))
        copied.__dict__ = dict(self.__dict__)
        copied._mine = {}
        self._mine = {}  # every node is the copy's too now
        return copied

    def append_item(self, key: str, *args: Any, **kwargs: Any) -> None:
        self._own_path(key)
        super().append_item(key, *args, **kwargs)  # type: ignore[misc]

    def remove_item(self, key: str, *args: Any, **kwargs: Any) -> None:
        self._own_path(key)
        super().remove_item(key, *args, **kwargs)  # type: ignore[misc]

    def _own_path(self, key: str) -> None:
        node = self._root = self._owned(self._root)
        for part in key.split("."):
            child = node["children"].get(part)
            if child is None:
                return
            owned = node["children"][part] = self._owned(child)
            node = owned

    def _owned(self, node: Dict[str, Any]) -> Dict[str, Any]:
        if id(node) in self._mine:
            return node
        owned = dict(node)
        self._mine[id(owned)] = owned
        owned["children"] = dict(node["children"])
        values = node["values"]
        if values is not None:
            owned["values"] = self.node_list(*[list(handlers) for handlers in values])
        return owned


def _plain_function(handler: Any) -> Optional[types.FunctionType]:
    """The function whose code decides ``handler``'s parameters, when nothing else can (no ``__signature__``)."""
    function = handler.__func__ if type(handler) is types.MethodType else handler
    if type(function) is types.FunctionType and "__signature__" not in function.__dict__:
        return function
    return None


def _per_code_object(accepts_kwargs: Callable[[Any], Any]) -> Callable[[Any], Any]:
    answers: Dict[types.CodeType, Any] = {}

    def accepts_kwargs_once_per_code(handler: Any) -> Any:
        function = _plain_function(handler)
        if function is None:
            return accepts_kwargs(handler)
        code = function.__code__
        if code in answers:
            return answers[code]
        answer = answers[code] = accepts_kwargs(handler)
        return answer

    accepts_kwargs_once_per_code.__wrapped__ = accepts_kwargs  # type: ignore[attr-defined]
    return accepts_kwargs_once_per_code
