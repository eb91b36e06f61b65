"""aiohttp imported without reading the system's CA bundle: serve answers HTTP and makes no TLS connection of its own.

From 3.10.6 on, importing aiohttp (even only ``from aiohttp import web``) makes the client's two
default TLS contexts in ``aiohttp.connector``, and each reads every certificate of the system's CA
bundle (``SSLContext.set_default_verify_paths``): about a fifth of serve's main process at start.
``import_aiohttp`` imports it with that one call put off, for the contexts made during the import
on the importing thread only: each such context reads the bundle with its first use instead (a
connection wrapped in TLS, or a question about its certificates). Nothing else changes: aiohttp
sets the contexts up as its version does, an aiohttp that makes none at import is imported as is,
and a client that never connects over TLS never reads the bundle.
"""
from __future__ import annotations

import ssl
import sys
import threading
from typing import Any, List, Optional

_READ_DEFAULT_CERTS = ssl.SSLContext.set_default_verify_paths  # the inherited C method
_FIRST_USE = threading.Lock()
_IMPORTING = threading.Lock()  # one import at a time patches and restores ssl


class _CertsOnFirstUse(ssl.SSLContext):
    """A context made during aiohttp's import whose default CA certificates are read when it is first used.

    Once read, the context is a plain ``ssl.SSLContext`` again (so each method calls ``ssl.SSLContext``'s own, not ``super()``)."""

    def _read_default_certs(self) -> None:
        with _FIRST_USE:
            if type(self) is _CertsOnFirstUse:
                _READ_DEFAULT_CERTS(self)
                self.__class__ = ssl.SSLContext  # type: ignore[assignment]

    def set_default_verify_paths(self) -> None:
        self._read_default_certs()

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self._read_default_certs()
        return ssl.SSLContext.wrap_socket(self, *args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self._read_default_certs()
        return ssl.SSLContext.wrap_bio(self, *args, **kwargs)

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self._read_default_certs()
        return ssl.SSLContext.get_ca_certs(self, binary_form)

    def cert_store_stats(self) -> Any:
        self._read_default_certs()
        return ssl.SSLContext.cert_store_stats(self)


def import_aiohttp() -> None:
    """Import aiohttp (once per process), its import-time TLS contexts reading the CA bundle on first use."""
    with _IMPORTING:
        if "aiohttp" not in sys.modules:
            _import_putting_off_the_bundle()


def _import_putting_off_the_bundle() -> None:
    put_off: List[ssl.SSLContext] = []
    importing = threading.get_ident()
    shadowed: Optional[Any] = ssl.SSLContext.__dict__.get("set_default_verify_paths")

    def set_default_verify_paths(self: ssl.SSLContext) -> None:
        if threading.get_ident() == importing and type(self) is ssl.SSLContext:
            put_off.append(self)
            return
        _READ_DEFAULT_CERTS(self)  # another thread, meanwhile: as always

    ssl.SSLContext.set_default_verify_paths = set_default_verify_paths  # type: ignore[method-assign]
    try:
        import aiohttp  # noqa: F401
    finally:
        if shadowed is None:
            del ssl.SSLContext.set_default_verify_paths
        else:
            ssl.SSLContext.set_default_verify_paths = shadowed  # type: ignore[method-assign]
        for context in put_off:
            context.__class__ = _CertsOnFirstUse
