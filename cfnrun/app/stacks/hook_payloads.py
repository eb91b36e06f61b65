"""The documents STACK and CHANGE_SET hooks download, kept while their invocation runs.

A hook is handed a URL (``api/cloudformation/hook_payloads.py`` serves it on serve's port)
rather than the template or the change set; the document lives here from the invocation's
start until it ends, as the service's presigned URL expires, so nothing accumulates.
"""
from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

from cfnrun.api.cloudformation.hook_payloads import payload_url


class HookPayloadStore:
    """``api.cloudformation.hook_payloads.HookPayloads``: the documents of the invocations running now."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.documents: Dict[str, Dict[str, Any]] = {}

    @contextmanager
    def serving(self, document: Dict[str, Any]) -> Iterator[str]:
        """Serve ``document`` for the duration of the block; the URL to hand the hook."""
        token = uuid.uuid4().hex
        self.documents[token] = document
        try:
            yield payload_url(self.base_url, token)
        finally:
            self.documents.pop(token, None)

    async def payload(self, token: str) -> Optional[Dict[str, Any]]:
        return self.documents.get(token)
