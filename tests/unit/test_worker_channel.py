"""The worker's end of the request socket: whether a request is waiting, asked without blocking; its fds told apart."""
from __future__ import annotations

import os
import socket

import pytest

from cfnrun.runtime.worker.channel import Channel, fd_identity
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


def test_an_fd_replaced_by_another_pipe_or_socket_or_closed_is_told_apart() -> None:
    """``fd_identity``, checked on the worker's fds after every call: a pipe, a socket or a file by its (device, inode)."""
    first_read, first_write = os.pipe()
    other_read, other_write = os.pipe()
    left, right = socket.socketpair()
    fd = os.dup(first_write)
    try:
        was = fd_identity(fd)
        assert was == fd_identity(first_write) and was is not None  # the same pipe through another fd
        os.dup2(other_write, fd)
        assert fd_identity(fd) not in (was, None)  # another pipe in its place
        os.dup2(left.fileno(), fd)
        assert fd_identity(fd) not in (was, None, fd_identity(right.fileno()))  # a socket, not its peer
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), fd)
            assert fd_identity(fd) not in (was, None)  # a file: by (device, inode)
        os.close(fd)
        assert fd_identity(fd) is None
    finally:
        for end in (first_read, first_write, other_read, other_write):
            os.close(end)
        left.close()
        right.close()


@pytest.mark.parametrize("by_cookie", [True, False], ids=["by-cookie", "by-fd-identity"])
def test_the_channel_is_unusable_once_its_fd_is_closed_or_holds_another_socket_or_a_pipe(by_cookie: bool) -> None:
    """``Channel.usable``, asked after every call: by the socket's cookie where Linux has one, else by ``fd_identity``."""
    worker_end, parent_end = socket.socketpair()
    other, other_peer = socket.socketpair()
    read_end, write_end = os.pipe()
    channel = Channel(worker_end)
    if by_cookie and channel._cookie is None:
        pytest.skip("this kernel gives sockets no cookie")
    if not by_cookie:
        channel._cookie = None
    fd = worker_end.fileno()
    saved = os.dup(fd)
    try:
        assert channel.usable()
        os.dup2(other.fileno(), fd)
        assert not channel.usable()  # another socket in its place
        os.dup2(parent_end.fileno(), fd)
        assert not channel.usable()  # not even its own peer
        os.dup2(write_end, fd)
        assert not channel.usable()  # a pipe
        os.dup2(saved, fd)
        assert channel.usable()  # the same socket again, through another fd's copy
        os.close(fd)
        assert not channel.usable()  # closed
        os.dup2(saved, fd)  # back, for worker_end.close()
    finally:
        for end in (saved, read_end, write_end):
            os.close(end)
        for sock in (worker_end, parent_end, other, other_peer):
            sock.close()
