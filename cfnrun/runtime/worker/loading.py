"""Importing ``module.attribute`` from the code folder, or saying in Lambda's words why it cannot be."""
from __future__ import annotations

import importlib
import traceback
from typing import Any, Callable, Dict

from .tracebacks import provider_frames, user_frame, where


class InitError(Exception):
    """The handler cannot be loaded; ``details`` is Lambda's init error body."""

    def __init__(self, details: Dict[str, Any]) -> None:
        super().__init__(details["errorMessage"])
        self.details = details


def describe_import_failure(module_name: str, error: BaseException, code_dir: str) -> Dict[str, Any]:
    """Lambda-style init error, pointing at the file and line that broke."""
    stack = traceback.extract_tb(error.__traceback__)
    if isinstance(error, SyntaxError):
        at = where(error.filename or "?", error.lineno)
        detail = f"{error.msg} ({at})"
        if error.text:
            detail += f"\n    {error.text.strip()}"
        return {
            "errorType": "Runtime.UserCodeSyntaxError",
            "errorMessage": f"Syntax error in module '{module_name}': {detail}",
            "location": at,
            "stackTrace": [],
        }
    frame = user_frame(stack, code_dir)
    location = where(frame.filename, frame.lineno) if frame else None
    message = f"Unable to import module '{module_name}': {type(error).__name__}: {error}"
    if location:
        message += f" ({location})"
    return {
        "errorType": "Runtime.ImportModuleError",
        "errorMessage": message,
        "location": location,
        "stackTrace": provider_frames(stack),
    }


def load_handler(handler: str, code_dir: str) -> Callable[..., Any]:
    module_name, _, attribute = handler.rpartition(".")
    if not module_name:
        raise InitError(
            {
                "errorType": "Runtime.MalformedHandlerName",
                "errorMessage": f"Bad handler '{handler}': expected 'module.attribute', e.g. pkg.handlers.resource",
            }
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise InitError(
                {
                    "errorType": "Runtime.ImportModuleError",
                    "errorMessage": f"Unable to import module '{module_name}': no module named "
                    f"'{error.name}' under {code_dir}",
                }
            ) from None
        raise InitError(describe_import_failure(module_name, error, code_dir)) from None
    except BaseException as error:  # noqa: B902 - any import-time failure is the user's
        raise InitError(describe_import_failure(module_name, error, code_dir)) from None
    target = getattr(module, attribute, None)
    if not callable(target):
        what = "missing on" if target is None else "is not callable in"
        raise InitError(
            {
                "errorType": "Runtime.HandlerNotFound",
                "errorMessage": f"Handler '{attribute}' {what} module '{module_name}' "
                f"({where(getattr(module, '__file__', '?') or '?', None)})",
            }
        )
    return target
