"""Explain the support library's silent serialization failures.

``cloudformation_cli_python_lib`` turns a ProgressEvent it cannot serialize (a model holding
a ``set``, say) into FAILED InternalFailure with an empty message and no log line. Wrapping
the resource's ``_invoke_handler`` lets the worker say what happened and where.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional


def _unserializable_path(value: Any, path: str) -> Optional[str]:
    """Where in a ProgressEvent the first value JSON cannot carry sits, if anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            found = _unserializable_path(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _unserializable_path(item, f"{path}[{index}]")
            if found:
                return found
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return None
    if hasattr(value, "_serialize") or hasattr(value, "isoformat"):
        return None
    return f"{path} (a {type(value).__name__})"


def watch_support_library_serialization(handler: Callable[..., Any]) -> None:
    """Wrap the support library's resource (when ``handler`` is one) to report what it cannot serialize."""
    resource = getattr(handler, "__self__", handler)
    original = getattr(resource, "_invoke_handler", None)
    if original is None or not hasattr(resource, "_handlers"):
        return

    def checked(*args: Any, **kwargs: Any) -> Any:
        progress = original(*args, **kwargs)
        serialize = getattr(progress, "_serialize", None)
        if serialize is not None:
            try:
                where = _unserializable_path(serialize(), "")
            except Exception as error:  # noqa: B902 - the library would fail the same way
                where = f"({type(error).__name__}: {error})"
            if where:
                print(
                    f"cfnrun: the handler returned a ProgressEvent that cannot be serialized to "
                    f"JSON: {where}. The support library reports this as FAILED InternalFailure "
                    "with an empty message.",
                    file=sys.stderr,
                )
        return progress

    resource._invoke_handler = checked  # type: ignore[union-attr]
