"""boto3's handler registrations on a new session, copied from an earlier session's where they are the same.

A ``boto3.Session`` registers eight handlers on its botocore session (``_register_default_handlers``:
lazy imports of its s3, dynamodb and ec2 customisations). The support library builds a boto3 session
per call, and these eight registrations through botocore's emitter were about half of one
(0.49 M of 1.04 M instructions, measured 2026-11-27). Seven are the same on every session (a
closure over the same module path and arguments); one (ec2's delete-tags) is bound to the
session's own emitter.

boto3's own method still runs for every session, into a recorder, so the handlers and their
arguments are boto3's each time. A registration that is the same as the first session's (same
event, unique id, code and captured values: strings, numbers and containers of them) comes from a
table made once by botocore's own ``register`` from the built-in handlers' table; the others (the
emitter-bound one) are registered on the session by botocore as before. The session's table is a
copy that shares nodes (``botocore_sessions._SharedNodes``), so what it registers or removes later
is its own. Once the table is made, a new session's registrations are compared with the first session's only
where the table holds them (about 5% of a session's construction, measured 2026-11-27). Only a session of boto3's own class over a botocore session of botocore's own class,
whose emitter holds the built-in handlers and nothing else, gets the copy; when a registration that
differs shares its event with one that is the same (their order would matter), when botocore logs at
debug, or when anything is shaped otherwise, boto3 registers them itself. Standard library only:
runs in the provider's interpreter, installed once boto3 is imported.
"""
from __future__ import annotations

import copy
import logging
import types
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple


class Registration(NamedTuple):
    event_name: str
    handler: Any
    unique_id: Any
    unique_id_uses_count: bool


class _Recorder:
    """Stands in for a botocore session while boto3 registers its handlers: keeps them, answers components from the session."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.registrations: List[Registration] = []

    def register(self, event_name: str, handler: Any, unique_id: Any = None, unique_id_uses_count: bool = False) -> None:
        self.registrations.append(Registration(event_name, handler, unique_id, unique_id_uses_count))

    def get_component(self, name: str) -> Any:
        return self._session.get_component(name)


class _Table(NamedTuple):
    """The first session's registrations that later ones repeat, registered once: a handler table and its unique ids."""

    builtin_root: Any  # the built-in handlers' table it was made from
    same: Tuple[int, ...]  # which registrations it holds (their places in the reference)
    trie: Any
    unique_ids: Dict[Any, Dict[str, Any]]


def share_default_registrations(boto3_session: Any, botocore_session: Any, hooks: Any, builtin_table: Callable[[], Any]) -> bool:
    """Install the copied registrations on ``boto3.session.Session``, when it is shaped as expected; whether they are.

    ``builtin_table``: the table of botocore's built-in handlers new sessions copy, None until there is one.
    """
    session_class: Any = getattr(boto3_session, "Session", None)
    register: Any = getattr(session_class, "__dict__", {}).get("_register_default_handlers")
    if not isinstance(register, types.FunctionType) or not isinstance(getattr(botocore_session, "Session", None), type):
        return False
    if not isinstance(session_class.__dict__.get("events"), property):
        return False
    session_class._register_default_handlers = _copied_default_registrations(register, session_class, botocore_session.Session, hooks, builtin_table)
    return True


def _copied_default_registrations(
    register: Callable[[Any], None], session_class: Any, botocore_class: Any, hooks: Any, builtin_table: Callable[[], Any]
) -> Callable[[Any], None]:
    aliases = dict(hooks.EVENT_ALIASES)
    state: Dict[str, Any] = {}  # "reference": the first plain session's registrations; "table": a _Table of them

    def _register_default_handlers(self: Any) -> None:
        session = self.__dict__.get("_session")
        builtin = builtin_table()
        if type(self) is not session_class or type(session) is not botocore_class or builtin is None or not _fresh(session, hooks, aliases, builtin._root):
            return register(self)
        recorder = _Recorder(session)
        self._session = recorder
        try:
            register(self)
        except Exception:  # noqa: B902 - boto3 of another shape: it registers on the session itself below
            recorder.registrations = []
            recorded = False
        else:
            recorded = True
        finally:
            self._session = session
        if not recorded:
            return register(self)
        registrations = recorder.registrations
        table = _table(state, registrations, builtin, hooks)
        if table is None:
            _register_all(session, registrations)
            return None
        emitter = session._events._emitter
        emitter._handlers = copy.copy(table.trie)
        emitter._unique_id_handlers = {unique_id: dict(item) for unique_id, item in table.unique_ids.items()}
        emitter._lookup_cache = {}
        _register_all(session, [registration for index, registration in enumerate(registrations) if index not in table.same])
        return None

    _register_default_handlers.__wrapped__ = register  # type: ignore[attr-defined]
    return _register_default_handlers


def _fresh(session: Any, hooks: Any, aliases: Dict[str, str], root: Any) -> bool:
    """The session's emitter holds the built-in handlers' table unchanged and nothing else, with botocore's default aliases."""
    events = session.__dict__.get("_events")
    if type(events) is not hooks.EventAliaser or events._event_aliases != aliases or hooks.logger.isEnabledFor(logging.DEBUG):
        return False
    emitter = events._emitter
    if type(emitter) is not hooks.HierarchicalEmitter or emitter._unique_id_handlers or emitter._lookup_cache:
        return False
    trie = emitter._handlers
    return trie.__dict__.get("_root") is root and trie.__dict__.get("_mine") == {}


def _register_all(session: Any, registrations: List[Registration]) -> None:
    for registration in registrations:
        session.register(registration.event_name, registration.handler, unique_id=registration.unique_id, unique_id_uses_count=registration.unique_id_uses_count)


def _table(state: Dict[str, Any], registrations: List[Registration], builtin: Any, hooks: Any) -> Optional[_Table]:
    """The table of registrations ``registrations`` repeats from the reference (made when first needed); None when there is none to use."""
    root = builtin._root
    reference: Optional[Tuple[Any, List[Registration]]] = state.get("reference")
    if reference is None or reference[0] is not root or not _same_events(reference[1], registrations):
        state["reference"], state["table"] = (root, registrations), None
        return None
    first = reference[1]
    table: Optional[_Table] = state.get("table")
    if table is not None and table.builtin_root is root and all(_same_handler(registrations[index].handler, first[index].handler) for index in table.same):
        return table  # its registrations are still the same; the events are the reference's, so they are still apart from the others
    same = tuple([index for index in range(len(first)) if _same_handler(registrations[index].handler, first[index].handler)])
    if not same or not _apart(registrations, set(same)):
        return None
    if table is None or table.same != same or table.builtin_root is not root:
        table = state["table"] = _made_table(builtin, [first[index] for index in same], same, hooks)
    return table


def _made_table(builtin: Any, registrations: List[Registration], same: Tuple[int, ...], hooks: Any) -> _Table:
    """``registrations`` registered by botocore's own code on a fresh emitter holding a copy of the built-in handlers' table."""
    emitter = hooks.HierarchicalEmitter()
    emitter._handlers = copy.copy(builtin)
    events = hooks.EventAliaser(emitter)
    for registration in registrations:
        events.register(registration.event_name, registration.handler, registration.unique_id, registration.unique_id_uses_count)
    return _Table(builtin._root, same, copy.copy(emitter._handlers), emitter._unique_id_handlers)


def _same_events(first: List[Registration], registrations: List[Registration]) -> bool:
    return len(first) == len(registrations) and all(
        (mine.event_name, mine.unique_id, mine.unique_id_uses_count) == (theirs.event_name, theirs.unique_id, theirs.unique_id_uses_count)
        and type(mine.event_name) is str
        for mine, theirs in zip(registrations, first)
    )


def _apart(registrations: List[Registration], same: Set[int]) -> bool:
    """No registration left to botocore shares its event with one from the table (their order in its handler list would change)."""
    shared = {registration.event_name for index, registration in enumerate(registrations) if index in same}
    return not any(registration.event_name in shared for index, registration in enumerate(registrations) if index not in same)


_PLAIN_VALUES = (str, int, float, bool, bytes, type(None))


def _same_handler(mine: Any, theirs: Any) -> bool:
    """Whether calling ``theirs`` does what calling ``mine`` does: the same code over the same or equal plain values (boto3's ``lazy_call``)."""
    if mine is theirs:
        return True
    if type(mine) is not types.FunctionType or type(theirs) is not types.FunctionType or mine.__code__ is not theirs.__code__:
        return False
    if mine.__globals__ is not theirs.__globals__ or mine.__dict__ or theirs.__dict__:  # attributes (``__wrapped__``, ``__signature__``) botocore may read
        return False
    defaults, their_defaults, kwdefaults, their_kwdefaults = mine.__defaults__, theirs.__defaults__, mine.__kwdefaults__, theirs.__kwdefaults__
    if not (defaults is their_defaults or _same_value(defaults, their_defaults)):
        return False
    if not (kwdefaults is their_kwdefaults or _same_value(kwdefaults, their_kwdefaults)):
        return False
    cells, their_cells = mine.__closure__, theirs.__closure__
    if cells is None or their_cells is None:
        return cells is their_cells
    try:
        for cell, other in zip(cells, their_cells):  # as many: the same code
            value, their_value = cell.cell_contents, other.cell_contents
            if value is not their_value and not _same_value(value, their_value):
                return False
    except ValueError:  # an empty cell
        return False
    return True


def _same_value(mine: Any, theirs: Any) -> bool:
    """The same object, or equal values of plain kinds (strings, numbers, and tuples and string-keyed dicts of them)."""
    if mine is theirs:
        return True
    kind = type(mine)
    if kind is not type(theirs):
        return False
    if kind in _PLAIN_VALUES:
        return bool(mine == theirs)
    if kind is tuple:
        if len(mine) != len(theirs):
            return False
        for one, other in zip(mine, theirs):
            if not _same_value(one, other):
                return False
        return True
    if kind is dict:
        if mine.keys() != theirs.keys():
            return False
        for key, value in mine.items():
            if type(key) is not str or not _same_value(value, theirs[key]):
                return False
        return True
    return False
