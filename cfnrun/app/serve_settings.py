"""What one ``cfnrun serve`` runs with, as the command line (``app/settings/serve.py``) or a driver (``cfnrun test``,
``stack test``) builds it; apart from ``app/serve.py`` so the endpoint it starts can name it without importing serve."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

from cfnrun.api.limits import ConnectionLimits
from cfnrun.app.settings.serve import DEFAULT_HOST, DEFAULT_PORT, SHUTDOWN_GRACE_S
from cfnrun.contract.mode import ContractMode
from cfnrun.model.budgets import Budgets
from cfnrun.runtime.spec import RuntimeSettings


@dataclass(frozen=True)
class ServeSettings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    runtime: RuntimeSettings = RuntimeSettings()
    budgets: Budgets = Budgets()
    shutdown_timeout_s: float = SHUTDOWN_GRACE_S  # the grace calls in flight get on Ctrl-C or SIGTERM
    connections: ConnectionLimits = ConnectionLimits()
    sts_standin: bool = False
    reload: bool = False
    debugging: bool = False  # workers listen for a debugger: time limits are suspended
    contract: ContractMode = ContractMode.WARN
    virtual_clock: bool = False  # Cloud Control requests skip CallbackDelaySeconds waits
    moto: bool = False  # an embedded moto server takes the handlers' AWS calls while this serves
    stack_state: Optional[Path] = None  # --state: where the local stacks are kept across restarts
    warm_test_entrypoints: bool = True  # stack test: False (no stack calls a TestEntrypoint; it starts at its first call)
    # AWS-specific parameter values looked up on the AWS endpoint; stack test --moto: False (its moto starts empty and
    # nothing can be made on it before the stack is: a KeyName could never be found)
    parameter_lookups: bool = True
    guard_rules_dirs: Tuple[Path, ...] = ()  # --guard-rules-dir: more folders a Guard hook's local rules may be read from

    @property
    def answers_sts(self) -> bool:
        """Does serve answer STS's GetCallerIdentity and GetSessionToken itself: when asked to (--sts-standin), and when it
        has no AWS endpoint to pass STS calls on to (CDK, SAM and cloudformation-cli all ask STS first)."""
        return self.sts_standin or not self.runtime.aws_endpoint
