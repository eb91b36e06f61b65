"""A new botocore session's configuration chains, each built when first asked for instead of all at once.

Every new botocore session builds a provider chain for each of its ~50 configuration variables
(``create_botocore_default_config_mapping``: the instance variable, environment variables, the
profile's keys, the default), about a quarter of the session's construction (measured
2026-11-27), while a call that makes no client asks for two or three of them (``region``,
``data_path``, ``profile``). The support library builds a session per call, so a warm worker paid
that on every call. Here a session's ``ConfigValueStore`` keeps its providers in a mapping that
builds each variable's chain with botocore's own code (``_create_config_chain_mapping``, one
variable at a time) the first time it is read, and every chain (by botocore's own
``create_botocore_default_config_mapping``) when one of the others (the ``s3`` and
``proxies_config`` sections) is read, or the store is copied (every new client copies it).

What a chain answers does not depend on when it was built: its providers read the session and
``os.environ`` when asked, never when made (inferred from reading botocore 1.44's
``configprovider.py``, not a documented promise); the table of variables is taken when the session
is made, as botocore does. Only a session of botocore's own class (not a subclass) whose
``_register_config_store``, ``ConfigValueStore`` and mapping functions are botocore's own gets the
deferred mapping; the first such session builds its mapping as botocore does, and tells the names
it holds. botocore is never imported here; standard library only (runs in the provider's interpreter).
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Iterator, MutableMapping, Set


def defer_config_chains(session_module: Any, configprovider: Any) -> bool:
    """Install the deferred mapping on botocore's ``Session``, when botocore is shaped as expected; whether it is."""
    session_class: Any = getattr(session_module, "Session", None)
    register: Any = getattr(session_class, "__dict__", {}).get("_register_config_store")
    if not _shaped_as_expected(session_module, configprovider, register):
        return False
    session_class._register_config_store = _deferred_config_store(register, session_module, configprovider)
    return True


def _shaped_as_expected(session_module: Any, configprovider: Any, register: Any) -> bool:
    code = getattr(register, "__code__", None)
    if code is None or not {"ConfigValueStore", "create_botocore_default_config_mapping", "register_component"} <= set(code.co_names):
        return False
    store_class: Any = getattr(configprovider, "ConfigValueStore", None)
    imported: Any = getattr(session_module, "ConfigValueStore", None)
    if not callable(store_class) or imported is not store_class:
        return False
    if not all(callable(getattr(configprovider, name, None)) for name in ("create_botocore_default_config_mapping", "_create_config_chain_mapping", "ConfigChainFactory")):
        return False
    if not isinstance(getattr(configprovider, "BOTOCORE_DEFAUT_SESSION_VARIABLES", None), dict):
        return False
    try:
        fresh = store_class()
    except Exception:  # noqa: B902 - another shape: leave botocore alone
        return False
    return fresh.__dict__ == {"_overrides": {}, "_mapping": {}}


def _deferred_config_store(register: Callable[[Any], None], session_module: Any, configprovider: Any) -> Callable[[Any], None]:
    """``Session._register_config_store``, with a store whose chains are built when first read."""
    sections: Dict[str, Set[str]] = {}  # "names": what botocore's own mapping held, beside the variables' chains

    def _register_config_store(self: Any) -> None:
        create_mapping = configprovider.create_botocore_default_config_mapping
        plain = (
            type(self) is session_module.Session
            and session_module.create_botocore_default_config_mapping is create_mapping
            and session_module.ConfigValueStore is configprovider.ConfigValueStore
        )
        if not plain:
            return register(self)
        variables = dict(configprovider.BOTOCORE_DEFAUT_SESSION_VARIABLES)
        if "names" not in sections:
            register(self)
            sections["names"] = set(self.get_component("config_store")._mapping) - set(variables)
            return None
        factory = configprovider.ConfigChainFactory(session=self)

        def chain(name: str) -> Any:
            return configprovider._create_config_chain_mapping(factory, {name: variables[name]})[name]

        store = configprovider.ConfigValueStore()
        store._mapping = DeferredChains(variables, chain, sections["names"], lambda: create_mapping(self))
        self._components.register_component("config_store", store)
        return None

    _register_config_store.__wrapped__ = register  # type: ignore[attr-defined]
    return _register_config_store


class DeferredChains(MutableMapping[str, Any]):
    """A config store's providers by logical name, in botocore's order: a variable's chain is built when
    first read (``chain``), the other names' providers (from ``everything``, botocore's whole mapping) when one of them is."""

    def __init__(self, variables: Dict[str, Any], chain: Callable[[str], Any], others: Set[str], everything: Callable[[], Dict[str, Any]]) -> None:
        self._order = [*variables, *sorted(others)]
        self._built: Dict[str, Any] = {}
        self._variables = set(variables)  # names whose chain is not built yet
        self._others = set(others)  # names whose provider is not built yet
        self._chain = chain
        self._everything = everything

    def __getitem__(self, name: str) -> Any:
        if name in self._built:
            return self._built[name]
        if name in self._variables:
            self._variables.discard(name)
            provider = self._built[name] = self._chain(name)
            return provider
        if name in self._others:
            for other, provider in self._everything().items():
                if other in self._variables or other in self._others:
                    self._built[other] = provider
            self._variables.clear()
            self._others.clear()
            return self._built[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._variables or name in self._others

    def __setitem__(self, name: str, provider: Any) -> None:
        self._variables.discard(name)
        self._others.discard(name)
        if name not in self._order:
            self._order.append(name)
        self._built[name] = provider

    def __delitem__(self, name: str) -> None:
        self[name]  # noqa: B018 - KeyError when there is none
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in self._order if name in self])

    def __len__(self) -> int:
        return len(self._built) + len(self._variables) + len(self._others)

    def __copy__(self) -> Dict[str, Any]:
        """What botocore's copy of its mapping is: a dict of every provider (a client's store is made from it)."""
        return dict(self.items())

    def __deepcopy__(self, memo: Dict[int, Any]) -> Dict[str, Any]:
        return copy.deepcopy(dict(self.items()), memo)
