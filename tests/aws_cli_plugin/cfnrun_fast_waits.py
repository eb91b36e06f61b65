"""An aws CLI plugin the tests load: the CLI's waiters look every 0.1 s, for as long in all as they would have waited.

``aws cloudformation deploy`` waits with a fixed Delay of its own (5 s for the change set, 30 s for the stack), which
no waiter model changes; a local stack is done long before its first look after the start. Only the time between
looks changes: what the CLI calls, and what it prints, stay as users see them.
"""
from __future__ import annotations

import math
from typing import Any

import botocore.waiter

DELAY_S = 0.1


def awscli_initialize(cli: Any) -> None:
    """Called by the aws CLI for each plugin named in the config file's [plugins] section."""
    original = botocore.waiter.Waiter.wait

    def wait(self: botocore.waiter.Waiter, **kwargs: Any) -> None:
        config = dict(kwargs.pop("WaiterConfig", None) or {})
        delay = config.get("Delay", self.config.delay)
        attempts = config.get("MaxAttempts", self.config.max_attempts)
        config.update(Delay=min(delay, DELAY_S), MaxAttempts=max(attempts, math.ceil(delay * attempts / DELAY_S)))
        original(self, WaiterConfig=config, **kwargs)

    botocore.waiter.Waiter.wait = wait  # type: ignore[method-assign]
