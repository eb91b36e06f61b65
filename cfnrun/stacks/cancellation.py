"""A stack operation's resource operations in flight, cancelled together when one of them fails (or on CancelUpdateStack).

The service does not wait for the rest of a create or an update once a resource has failed: each resource operation
still in flight ends at once with ``CREATE_FAILED`` "Resource creation cancelled" (``UPDATE_FAILED`` "Resource update
cancelled"), is named in the stack's reason with the resource that failed ("The following resource(s) failed to create:
[...]"), and the rollback removes what it had made. Here a cancelled operation of your type makes no handler call after
the one in flight (its wait for CallbackDelaySeconds ends at once), once the stack knows the resource by the identifier
an IN_PROGRESS answer carried (``in_flight.py``), so the rollback deletes it; a create whose answers have named nothing
yet goes on until one does (or it ends), so that nothing it made is left where no record names it. A provisioner whose
operation cannot be told to stop (an AWS::* type on the endpoint, a custom resource, a nested stack, a CreationPolicy's
wait for signals) lets it finish, as before.
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

    def listen(self, cancel: Callable[[str], None]) -> Callable[[], None]:
        """``cancel(reason)`` when the operation is cancelled (at once if it is already); returns what stops listening,
        for an operation that has ended (nothing of it is kept once it has)."""
        if self.reason is not None:
            cancel(self.reason)
            return lambda: None
        self._listeners.append(cancel)

        def stop_listening() -> None:
            if cancel in self._listeners:
                self._listeners.remove(cancel)

        return stop_listening

    def cancel(self, reason: str) -> None:
        if self.reason is not None:
            return
        self.reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(reason)

