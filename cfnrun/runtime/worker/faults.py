"""``--inject``: faults in the handler's AWS calls, by ``runtime/fault_hook.py``.

The hook patches botocore, so it lives outside this standard-library-only package, next to
it, and is loaded by its path only when rules were given: the provider's interpreter may not
have cfnrun installed, and a provider without botocore still runs when nothing is injected.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any, Optional

_FAULT_HOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fault_hook.py")


def install_faults(rules_json: Optional[str]) -> Any:
    """Load fault_hook.py and install the rules, if any were given; the installed faults, or None."""
    if not rules_json:
        return None
    try:
        module = _load_fault_hook()
    except ImportError as error:
        print(f"cfnrun: --inject needs botocore in the provider's environment ({error}); no faults are injected", file=sys.stderr)
        return None
    return module.install(json.loads(rules_json))


def _load_fault_hook() -> Any:
    spec = importlib.util.spec_from_file_location("cfnrun_fault_hook", _FAULT_HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
