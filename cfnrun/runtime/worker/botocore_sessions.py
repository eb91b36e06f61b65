"""A new botocore session in a warm worker, without the same registration work repeated per call.

The support library builds a ``boto3.Session`` per set of credentials on every call (caller and
provider: two per call). Each new session registers botocore's ~130 built-in event handlers, and
each registration computes two things that depend only on their input and never change in a
process, which botocore caches per session object only, so every call pays them again (about
85% of a session's construction, ~7 ms each, measured 2026-11-27):

* ``EventAliaser._alias_event_name``: an event's name with botocore's fixed aliases applied
  (``EVENT_ALIASES``; string splits and list searches over ~65 aliases per name);
* ``botocore.hooks.accepts_kwargs``: whether a handler takes ``**kwargs`` (``inspect.getfullargspec``).

``share_registration_work`` keeps one process-wide answer for each, so each call still builds
its own sessions, with its own credentials, and registers its own handlers, as on Lambda.

* Aliases are shared between aliasers whose alias table equals botocore's default table as it was
  when installed (a session made with other aliases, or after the table changed, works as
  before), and not while botocore's debug logging is on (the aliaser logs each rename).
* ``accepts_kwargs`` answers are kept per code object, for plain functions and methods bound to
  them that carry no ``__signature__`` of their own: whether such a function takes ``**kwargs``
  is a flag of its code object (``inspect`` reads it there). Any other callable is asked as before.

botocore is never imported here: the worker installs this once the provider has imported it.
If botocore's internals are not shaped as expected (another version), nothing is changed.
Runs in the worker, in the provider's interpreter: standard library only.
"""
from __future__ import annotations

import logging
import sys
import types
from typing import Any, Callable, Dict, Optional

_installed = False


def share_registration_work() -> bool:
    """Install the shared answers once botocore is imported; whether they are installed now."""
    global _installed
    if _installed:
        return True
    hooks: Any = sys.modules.get("botocore.hooks")
    if hooks is None or not _shaped_as_expected(hooks):
        return False
    aliaser = hooks.EventAliaser
    aliaser._alias_event_name = _shared_aliases(aliaser._alias_event_name, dict(hooks.EVENT_ALIASES), hooks.logger)
    hooks.accepts_kwargs = _per_code_object(hooks.accepts_kwargs)
    _installed = True
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
