"""A stack operation's resource operations in flight, cancelled together when one of them fails (or on CancelUpdateStack).

The service does not wait for the rest of a create or an update once a resource has failed: each resource operation
still in flight ends at once with ``CREATE_FAILED`` "Resource creation cancelled" (``UPDATE_FAILED`` "Resource update
cancelled"), is named in the stack's reason with the resource that failed ("The following resource(s) failed to create:
[...]"), and the rollback removes what it had made. Here a cancelled operation makes no handler call after the one in
flight (its wait for CallbackDelaySeconds ends at once): what that call made is known to the stack by the identifier its
IN_PROGRESS answer carried (``in_flight.py``), so the rollback deletes it. A provisioner whose operation cannot be told to
stop (an AWS::* type on the endpoint, a custom resource, a nested stack) lets it finish, as before.
"""
from __future__ import annotations

from typing import Callable, List, Optional

CANCELLED = {"CREATE": "Resource creation cancelled", "UPDATE": "Resource update cancelled"}  # the ResourceStatusReason, by verb


class Cancellation:
    """Told once (``cancel``); each listener is told then, or at once if it comes later."""

    def __init__(self) -> None:
        self.reason: Optional[str] = None  # why, once cancelled
        self._listeners: List[Callable[[str], None]] = []

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def listen(self, cancel: Callable[[str], None]) -> None:
        """``cancel(reason)`` when the operation is cancelled: at once if it is already."""
        if self.reason is not None:
            cancel(self.reason)
        else:
            self._listeners.append(cancel)

    def cancel(self, reason: str) -> None:
        if self.reason is not None:
            return
        self.reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(reason)

