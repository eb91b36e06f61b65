"""``ResourceSchema.require_usable`` once per schema: a schema found usable is not checked again while it is unchanged.

The check validates the schema against draft-07's meta-schema, and loading jsonschema for it is
about a quarter of a one-shot ``cfnrun invoke``'s own start-up, on its critical path (the call
waits for it), for a verdict that depends on nothing but the schema, the jsonschema installed and
the check's own code. So a schema that passed leaves an empty file named by a digest of those
three in the user's cache folder (``$XDG_CACHE_HOME/cfnrun/usable-schemas``, beside the template
cache of ``template_cache.py``); while that file is there the schema passes without jsonschema
loading. Any change to one of the three is another digest, and the check runs in full. A schema
that fails leaves nothing, so its error is found and said as it was, every time. A folder that
cannot be written is no error: the check then runs every time.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from typing import Optional

from cfnrun.model import schema as schema_module
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.template_cache import cache_folder

KIND = "usable-schemas"


def require_usable(schema: ResourceSchema) -> None:
    """``schema.require_usable()``, unless this schema passed it before with the same jsonschema and cfnrun."""
    folder = cache_folder(KIND)
    digest = _digest(schema) if folder is not None else None
    if folder is not None and digest is not None and (folder / digest).is_file():
        return
    schema.require_usable()  # raises a ProjectError on a schema cfnrun cannot validate against
    if folder is not None and digest is not None:
        _remember(folder, digest)


def _digest(schema: ResourceSchema) -> Optional[str]:
    """Of the schema's document, the installed jsonschema and the check's code; None when one cannot be told."""
    try:
        document = json.dumps(schema.document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        found = importlib.util.find_spec("jsonschema")
        checker = found.origin if found is not None else None
        if checker is None or schema_module.__file__ is None:
            return None
        stamps = [_stamp(checker), _stamp(schema_module.__file__)]
    except (OSError, TypeError, ValueError):
        return None
    return hashlib.blake2b(f"{stamps}\0{document}".encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _stamp(path: str) -> str:
    status = os.stat(path)
    return f"{os.path.realpath(path)}:{status.st_size}:{status.st_mtime_ns}:{status.st_ino}"


def _remember(folder: "os.PathLike[str]", digest: str) -> None:
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.close(os.open(os.path.join(folder, digest), os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass
