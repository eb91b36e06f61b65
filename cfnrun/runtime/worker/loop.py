"""The worker's loop: one request frame in, the handler called once, one reply frame out.

The worker flushes its output before it replies, so whatever the log pipe holds when the
reply arrives belongs to that call; the reply says how much of it the parent has still to read.
Only the worker process itself answers: a child forked by the handler exits when it returns
from the handler. A handler that broke fds 1/2 or the
channel retires its worker.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Tuple

from .botocore_sessions import prepare_sessions, share_registration_work
from .channel import Channel, LogFds
from .host import HandlerHost
from .peak_memory import peak_rss_kib
from .lambda_context import LambdaContext
from .protocol import EXIT_CHANNEL_LOST, encode_frame, encode_reply


class Worker:
    def __init__(
        self,
        host: HandlerHost,
        identity: Dict[str, Any],
        channel: Channel,
        before_call: Optional[Callable[[], None]] = None,
    ) -> None:
        self.host = host
        self.identity = identity
        self.before_call = before_call
        self.channel = channel
        self.log_fds = LogFds()
        self.sessions_share_work = False  # botocore's per-session registration work, done once (botocore_sessions.py)

    def serve(self) -> None:
        ready = {"type": "ready", "pid": os.getpid(), "modules": self.host.dependencies}
        self.channel.write_frame(encode_frame(ready))
        if not self.channel.waiting():  # idle until the first call: make its sessions as cheap as later ones now
            self.sessions_share_work = prepare_sessions()
        try:
            request = self.channel.read_frame()  # the loading may have forked: asks which process this is
        except (EOFError, ConnectionError):
            return
        while True:
            kind, body = self.call(request)
            if not self.channel.usable():  # asks which process this is, once per call
                if os.getpid() != self.channel.owner:
                    os._exit(0)  # a forked child returned from the handler: it has nobody to answer
                os._exit(EXIT_CHANNEL_LOST)
            # From here to the next call no handler code runs: this is still the worker itself.
            broken = self.log_fds.broken()
            if broken:
                self.channel.send(encode_frame(_unusable_reply(request["id"], broken)))
                return
            peak_kib = peak_rss_kib()  # the sandbox's Max Memory Used so far (its lifetime peak, as Lambda's)
            # Asked last, so that 0 means the parent has already read all the call wrote.
            self.channel.send(encode_reply(request["id"], kind, body, self.host.fired_faults(), self.log_fds.unread(), peak_kib))
            try:
                request = self.channel.next_frame()
            except (EOFError, ConnectionError):
                return

    def call(self, request: Dict[str, Any]) -> Tuple[str, bytes]:
        """Run the handler once: its reply's kind and encoded body (``HandlerHost.call``), its output in the pipe."""
        context = LambdaContext(self.identity, request["request_id"], request["deadline_ms"])
        if self.before_call is not None:
            self.before_call()
        if not self.sessions_share_work:  # the provider may import botocore at load or on a later call
            self.sessions_share_work = share_registration_work()
        kind, body = self.host.call(request["event"], context)
        self.log_fds.flush()  # all of this call's output is in the log pipe before the reply leaves
        return kind, body


def _unusable_reply(invocation_id: int, broken: List[str]) -> Dict[str, Any]:
    return {
        "type": "error",
        "id": invocation_id,
        "unusable": True,
        "error": {
            "errorType": "Runtime.ExitError",
            "errorMessage": f"the handler closed or replaced the worker's {' and '.join(broken)}; "
            "this sandbox cannot serve another call and is replaced",
            "stackTrace": [],
        },
    }
