"""botocore's data files (service models, endpoint rules, ``endpoints.json``) read and parsed once per version of a file in a worker.

Each new botocore session has a new ``Loader`` with empty caches, and the support library builds a
session per call, so a handler that makes a client on every call had botocore read and parse the
service's model, its endpoint rules and the 1.2 MB ``endpoints.json`` again on every call (about
300 M instructions a call for one ssm client, measured 2026-11-27). botocore changes what it loads
in place (SDK extras merged into a model, the endpoint resolver writing what it resolved into its
data, ``service-data-loaded`` handlers), so the parsed data is not shared: each load still gets
objects of its own, unpickled from what the first parse made (about half of ``json.loads`` with
botocore's ``OrderedDict`` hook, and no file read or gunzip).

A file's parse is kept by its path and what ``os.stat`` says of it (device, inode, size, modification
and change times): a file changed or replaced is read again. Only ``JSONFileLoader`` itself (not a
subclass) is helped, not while botocore logs at debug (it logs each file it loads), and at most
``KEPT`` files are kept (the least recently loaded dropped first). botocore is never imported here;
standard library only (runs in the provider's interpreter).
"""
from __future__ import annotations

import logging
import os
import pickle
import stat
import types
from collections import OrderedDict
from typing import Any, Callable, Tuple

KEPT = 64

FileKey = Tuple[str, int, int, int, int, int]


def parse_files_once(loaders: Any) -> bool:
    """Install the kept parses on botocore's ``JSONFileLoader``, when it is shaped as expected; whether they are."""
    file_loader: Any = getattr(loaders, "JSONFileLoader", None)
    load: Any = getattr(file_loader, "__dict__", {}).get("_load_file")
    logger = getattr(loaders, "logger", None)
    if not isinstance(load, types.FunctionType) or load.__code__.co_varnames[:3] != ("self", "full_path", "open_method"):
        return False
    if not isinstance(logger, logging.Logger):
        return False
    file_loader._load_file = _kept_parses(load, file_loader, logger)
    return True


def _kept_parses(load: Callable[[Any, str, Any], Any], file_loader: Any, logger: logging.Logger) -> Callable[[Any, str, Any], Any]:
    kept: "OrderedDict[FileKey, bytes]" = OrderedDict()

    def _load_file(self: Any, full_path: str, open_method: Any) -> Any:
        if type(self) is not file_loader or logger.isEnabledFor(logging.DEBUG):
            return load(self, full_path, open_method)
        try:
            found = os.stat(full_path)
        except (OSError, ValueError):
            return load(self, full_path, open_method)  # botocore answers None (no such file) or raises, as it would
        if not stat.S_ISREG(found.st_mode):
            return load(self, full_path, open_method)
        key = (full_path, found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
        pickled = kept.get(key)
        if pickled is not None:
            kept.move_to_end(key)
            return pickle.loads(pickled)
        data = load(self, full_path, open_method)
        if data is not None:
            try:
                kept[key] = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: B902 - something JSON never makes: not kept, loaded again next time
                return data
            while len(kept) > KEPT:
                kept.popitem(last=False)
        return data

    _load_file.__wrapped__ = load  # type: ignore[attr-defined]
    return _load_file
