"""ClientRequestToken: a CreateStack, UpdateStack or DeleteStack retried with the token of the call that started a stack's
operation is answered as that call was, and starts nothing.

botocore's model says of the token (CreateStackInput, UpdateStackInput, DeleteStackInput): "Specify this token if you plan
to retry requests so that CloudFormation knows that you're not attempting to create a stack with the same name. You might
retry CreateStack requests to ensure that CloudFormation successfully received them." What cfnrun infers from that (the
service's exact answer to a retry is not documented): a retry with the same token, on the same stack name, of the same
operation gets the first call's answer — the same StackId — instead of AlreadyExistsException, "No updates are to be
performed." or "is in DELETE_IN_PROGRESS state and can not be deleted"; a different token, or none, is a new request.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from cfnrun.stacks.records import Stack


class RequestTokens:
    """The token of each stack name's last CreateStack, UpdateStack and DeleteStack."""

    def __init__(self) -> None:
        self._last: Dict[Tuple[str, str], Tuple[str, Stack]] = {}  # (operation, stack name) → (token, the stack it acted on)

    def retried(self, operation: str, stack_name: str, token: Optional[str]) -> Optional[Stack]:
        """The stack the first call with ``token`` acted on, when this call is its retry; None for a new request."""
        if not token:
            return None
        last = self._last.get((operation, stack_name))
        return last[1] if last is not None and last[0] == token else None

    def started(self, operation: str, stack: Stack, token: Optional[str]) -> None:
        if token:
            self._last[(operation, stack.name)] = (token, stack)
