"""The worker's end of the request socket: whether a request is waiting, asked without blocking."""
from __future__ import annotations

import socket

from cfnrun.runtime.worker.channel import Channel
from cfnrun.runtime.worker.protocol import encode_frame


def test_waiting_says_whether_a_request_arrived_without_blocking_or_losing_it() -> None:
    worker_end, parent_end = socket.socketpair()
    channel = Channel(worker_end)
    try:
        assert not channel.waiting()  # nothing sent: answers at once instead of blocking
        parent_end.sendall(encode_frame({"n": 1}) + encode_frame({"n": 2}))
        assert channel.waiting()
        assert channel.read_frame() == {"n": 1}
        assert channel.waiting()  # the second frame sits in the reader's buffer, not in the socket
        assert channel.read_frame() == {"n": 2}
        assert not channel.waiting()
        parent_end.close()
        assert not channel.waiting()  # EOF: nothing to answer
        assert worker_end.getblocking()  # reads block again as before
    finally:
        worker_end.close()
