"""Local stacks' hints name serve's flags ("start serve with --moto"); under another command, that command's own.

The stacks run on serve's parts whichever command started them: ``cfnrun serve`` for the
CloudFormation API, ``cfnrun stack test`` for one stack's life. Their messages are written for
serve; ``for_command`` turns each "start serve with --FLAG" into "add --FLAG to <command>".
"""
from __future__ import annotations

import re
from typing import Optional

SERVE_HINT = re.compile(r"start serve with (--[a-z-]+(?: [A-Z_]+)?)")


def for_command(text: Optional[str], command: str) -> Optional[str]:
    """``text`` with serve's flag hints naming ``command`` instead ("add --moto to cfnrun stack test")."""
    if not text or command == "cfnrun serve":
        return text
    return SERVE_HINT.sub(lambda match: f"add {match.group(1)} to {command}", text)
