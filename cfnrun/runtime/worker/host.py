"""A provider's handler as Lambda's Python runtime holds it: imported once, called per event.

The worker process (``loop.py``) and cfnrun's ``--in-process`` mode both drive a
``HandlerHost``, so init errors, function errors, marshalling and the log format are the same
in both; they differ only in where the reply goes and what surrounds the call.
"""
from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional, Set, TextIO, Tuple

from .code_imports import CodeFolderImports
from .faults import install_faults
from .lambda_context import LambdaContext
from .lambda_logging import configure_logging
from .loading import load_handler
from .protocol import encode_json
from .serialization_watch import watch_support_library_serialization
from .tracebacks import provider_frames


def function_error(error: BaseException) -> Dict[str, Any]:
    """Lambda's body for an exception the handler raised."""
    return {
        "errorType": type(error).__name__,
        "errorMessage": str(error),
        "stackTrace": provider_frames(traceback.extract_tb(error.__traceback__)),
    }


class HandlerHost:
    """Loads, calls and unloads one handler from a code folder, and undoes what it set up."""

    def __init__(self, code_dir: str, log_level: str, log_stream: TextIO) -> None:
        self.code_dir = os.path.abspath(code_dir)
        self.handler: Optional[Callable[..., Any]] = None
        self.dependencies: List[str] = []  # modules the load imported from outside the code folder
        self._request_ids = configure_logging(log_level, log_stream)
        self.faults = install_faults(os.environ.get("CFNRUN_INJECT"))
        self._imports = CodeFolderImports(self.code_dir)
        self._imports.install()  # a reload runs the code as saved, even two saves within one second

    def release(self) -> None:
        """Undo what this host changed in the process for the handler: the code folder's imports, injected faults."""
        self.unload()
        self._imports.uninstall()
        if self.faults is not None:
            self.faults.uninstall()

    def fired_faults(self) -> List[Dict[str, Any]]:
        """The injected faults that fired since the last ask (``--inject``)."""
        return self.faults.drain() if self.faults is not None else []

    def load(self, handler: str) -> None:
        """Import ``module.attribute`` from the code folder; InitError (Lambda's body) if it cannot."""
        before = set(sys.modules)
        self.handler = load_handler(handler, self.code_dir)
        own = self.provider_modules()
        self.dependencies = [name for name in sys.modules if name not in before and name not in own]
        watch_support_library_serialization(self.handler)

    def provider_modules(self) -> Set[str]:
        """Names of the imported modules that live in the code folder."""
        return {
            name
            for name, module in list(sys.modules.items())
            if (getattr(module, "__file__", None) or "").startswith(self.code_dir + os.sep)
        }

    def unload(self) -> None:
        """Forget the handler and the provider's modules, so the next load reads them from disk."""
        for name in self.provider_modules():
            del sys.modules[name]
        self.handler = None

    def call(self, event: Any, context: LambdaContext) -> Tuple[str, bytes]:
        """Run the handler once: ``("result", JSON)``, or ``("error", Lambda's error body as JSON)``.

        An exception the handler raises is its error; a value JSON cannot carry is
        Runtime.MarshalError. SystemExit and KeyboardInterrupt are left to the caller.
        """
        assert self.handler is not None, "call() before load()"
        self._request_ids.request_id = context.aws_request_id
        try:
            try:
                result = self.handler(event, context)
            except Exception as error:  # noqa: B902 - reported to the caller like Lambda does
                return "error", encode_json(function_error(error))
            try:
                return "result", encode_json(result)
            except (TypeError, ValueError) as error:
                marshal = {"errorType": "Runtime.MarshalError", "errorMessage": f"Unable to marshal response: {error}", "stackTrace": []}
                return "error", encode_json(marshal)
        finally:
            self._request_ids.request_id = ""
