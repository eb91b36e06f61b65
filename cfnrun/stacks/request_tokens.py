"""ClientRequestToken: a CreateStack, UpdateStack or DeleteStack retried with the token of the call that started a stack's
operation is answered as that call was, and starts nothing.

botocore's model says of the token (CreateStackInput, UpdateStackInput, DeleteStackInput): "Specify this token if you plan
to retry requests so that CloudFormation knows that you're not attempting to create a stack with the same name. You might
retry CreateStack requests to ensure that CloudFormation successfully received them." What cfnrun infers from that (the
service's exact answer to a retry is not documented): a retry with the same token, on the same stack name, of the same
operation gets the first call's answer — the same StackId — instead of AlreadyExistsException, "No updates are to be
performed." or "is in DELETE_IN_PROGRESS state and can not be deleted"; a different token, or none, is a new request.

With ``--state`` the tokens are kept there too (``state_db.py``'s ``request_tokens``): a client that retries after serve
restarted (its first call's answer lost with the old process) is answered as the first call was.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

from cfnrun.stacks.records import Stack
from cfnrun.stacks.state_db import StateDatabase


class RequestTokens:
    """The token of each stack name's last CreateStack, UpdateStack and DeleteStack."""

    def __init__(self, database: Optional[StateDatabase] = None) -> None:
        self._last: Dict[Tuple[str, str], Tuple[str, Stack]] = {}  # (operation, stack name) → (token, the stack it acted on)
        self.database = database  # --state's: each token written as it is taken

    def restore(self, stacks: Mapping[str, Stack]) -> None:
        """Read back the tokens ``--state`` keeps, for the stacks (by id) read back with them."""
        if self.database is None:
            return
        for operation, stack_name, token, stack_id in self.database.request_tokens():
            stack = stacks.get(stack_id)
            if stack is not None:
                self._last[(operation, stack_name)] = (token, stack)

    def retried(self, operation: str, stack_name: str, token: Optional[str]) -> Optional[Stack]:
        """The stack the first call with ``token`` acted on, when this call is its retry; None for a new request."""
        if not token:
            return None
        last = self._last.get((operation, stack_name))
        return last[1] if last is not None and last[0] == token else None

    def started(self, operation: str, stack: Stack, token: Optional[str]) -> None:
        if token:
            self._last[(operation, stack.name)] = (token, stack)
            if self.database is not None:
                self.database.put_request_token(operation, stack.name, token, stack.stack_id)
