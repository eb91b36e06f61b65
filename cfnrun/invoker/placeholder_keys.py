"""The placeholder caller credentials' keys, as plain strings.

Read where the protocol's models (pydantic) are not loaded: ``cfnrun test`` sets them in the
environment of the process running cloudformation-cli's suite, which starts before anything else
so that it imports cfn while serve starts.
"""
from __future__ import annotations

from typing import Dict

ACCESS_KEY_ID = "CFNRUNLOCALPLACEHOLDER"
SECRET_ACCESS_KEY = "cfnrun-local-placeholder-secret"
SESSION_TOKEN = "cfnrun-local-placeholder-token"


def placeholder_variables() -> Dict[str, str]:
    """The placeholder keys as the AWS SDKs read them from the environment."""
    return {"AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY, "AWS_SESSION_TOKEN": SESSION_TOKEN}
