"""cfn-lint's ``Context.evolve`` by copying the fields it would pass to the class: the same context, a third of the work.

cfn-lint 1.x makes a new ``Context`` (a frozen dataclass of 17 fields) for nearly every step of a
check: some 80 per resource, 42,000 over a template of 500 clusters. Its ``evolve`` lists the
fields, fills ``kwargs`` with the ones not given and calls the class, whose generated ``__init__``
sets each through ``object.__setattr__`` (7.8 → 7.1 G instructions for 500, 2026-11-27). The
instance that makes is a ``__dict__`` holding each field's value, the given ones replacing the
old, ``ref_values`` merged first; ``evolving_by_copy`` builds that ``__dict__`` directly. It is made
only where that is what the class does: a dataclass whose fields are all ``__init__``'s, with no
``__post_init__``, a generated ``__init__``, no descriptor under a field's name, and an ``evolve``
whose code names what 1.x's does (read on cfn-lint 1.51); otherwise, and for a subclass or a
keyword that is not a field, cfn-lint's own ``evolve`` runs.

``module_names`` (a cached property: the resources that are modules) is computed from ``resources``
alone, yet anew for each context that asks (one per resource), which made the lint grow with the
square of the resources (0.6 G instructions at 500); ``module_names_once`` lists it once per
``resources`` mapping (cfn-lint fills that mapping once per template, before the first context is
made, and never changes it).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Dict, Iterable, List, Set

# what Context.evolve's code names and holds in cfn-lint 1.x (its docstring aside): another evolve runs as it is
EVOLVE_NAMES = frozenset({"__class__", "ref_values", "copy", "update", "fields", "Context", "init", "setdefault", "name", "getattr"})
EVOLVE_CONSTANTS = frozenset({"ref_values", ()})
MERGED = "ref_values"  # the field evolve merges (old values, the given ones over them)
MODULE_NAMES = "module_names"  # a cached property computed from ``resources`` alone
MODULE_NAMES_READS = frozenset({"tuple", "resources", "items", "type", "endswith", "startswith"})  # what its code names in 1.x


def _code_names(function: Any) -> Set[str]:
    """The names a function's code uses, its nested code's included."""
    code = getattr(function, "__code__", None)
    if code is None:
        return {"<not Python code>"}
    names: Set[str] = set()
    pending = [code]
    while pending:
        current = pending.pop()
        names.update(current.co_names)
        pending.extend(constant for constant in current.co_consts if hasattr(constant, "co_names"))
    return names


def _evolve_as_read(evolve: Any) -> bool:
    code = getattr(evolve, "__code__", None)
    if code is None or set(code.co_names) != EVOLVE_NAMES:
        return False
    return set(code.co_consts) - {evolve.__doc__, None} == EVOLVE_CONSTANTS  # Python 3.10 keeps the implicit return's None there


def copies_as_init(cls: type) -> bool:
    """Whether ``cls(**every_field)`` makes just the ``__dict__`` of those fields, and ``cls.evolve`` is 1.x's."""
    if not dataclasses.is_dataclass(cls) or "__post_init__" in dir(cls):
        return False
    fields = dataclasses.fields(cls)
    if not all(field.init for field in fields):
        return False
    init_code = getattr(cls.__init__, "__code__", None)
    if init_code is None or init_code.co_filename != "<string>":  # dataclasses generates __init__ from source text
        return False
    if any(hasattr(type(cls.__dict__.get(field.name)), "__get__") for field in fields):
        return False
    evolve = cls.__dict__.get("evolve")
    return _evolve_as_read(getattr(evolve, "__wrapped__", evolve))


def evolving_by_copy(cls: type, evolve: Callable[..., Any]) -> Callable[..., Any]:
    """``cls.evolve`` building the new instance's ``__dict__`` itself (``cls`` as ``copies_as_init`` found it)."""
    names = tuple(field.name for field in dataclasses.fields(cls))
    known = frozenset(names)

    def evolve_by_copy(self: Any, **given: Any) -> Any:
        state: Dict[str, Any] = self.__dict__
        if type(self) is not cls or not given.keys() <= known or not known <= state.keys():
            return evolve(self, **given)
        if MERGED in given:
            merged = state[MERGED].copy()
            merged.update(given[MERGED])
            given[MERGED] = merged
        made = object.__new__(cls)
        made_state = made.__dict__
        for name in names:
            made_state[name] = state[name]
        made_state.update(given)
        return made

    evolve_by_copy.remembers = True  # type: ignore[attr-defined]
    evolve_by_copy.__wrapped__ = evolve  # type: ignore[attr-defined]
    return evolve_by_copy


def module_names_once(module_names: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``Context.module_names``, listed once per ``resources`` mapping (the last one seen is kept: one template is linted at a time)."""
    last: List[Any] = [None, None]  # the resources mapping, its module names

    def module_names_of(context: Any) -> Any:
        resources = context.resources
        if last[0] is not resources:
            last[:] = [resources, module_names(context)]
        return last[1]

    module_names_of.remembers = True  # type: ignore[attr-defined]
    module_names_of.__wrapped__ = module_names  # type: ignore[attr-defined]
    return module_names_of


def install(classes: Iterable[type]) -> None:
    """Route each class's ``evolve`` through ``evolving_by_copy`` where ``copies_as_init`` holds (others evolve as they do), and its
    ``module_names`` through ``module_names_once`` where its code reads only ``resources``."""
    for cls in classes:
        if not getattr(cls.__dict__.get("evolve"), "remembers", False) and copies_as_init(cls):
            cls.evolve = evolving_by_copy(cls, cls.__dict__["evolve"])  # type: ignore[attr-defined]
        cached = cls.__dict__.get(MODULE_NAMES)
        if isinstance(cached, functools.cached_property) and not getattr(cached.func, "remembers", False) and _code_names(cached.func) <= MODULE_NAMES_READS:
            once = functools.cached_property(module_names_once(cached.func))
            once.__set_name__(cls, MODULE_NAMES)
            setattr(cls, MODULE_NAMES, once)
