"""The parent's end of a worker's socket: a reply already there is taken at once, and none there costs no failed read."""
from __future__ import annotations

import asyncio
import socket
from typing import Any, List

from cfnrun.runtime.channel import FrameChannel
from cfnrun.runtime.worker.protocol import encode_frame


class CountedReads(socket.socket):
    """A socket that counts its reads (the channel reads with ``recv_into``)."""

    reads: List[int] = []

    def recv_into(self, buffer: Any, *args: Any) -> int:  # type: ignore[override]
        try:
            size = super().recv_into(buffer, *args)
        except BlockingIOError:
            self.reads.append(-1)
            raise
        self.reads.append(size)
        return size


def test_a_reply_already_there_is_taken_at_once_and_none_there_costs_no_failed_read() -> None:
    async def run() -> None:
        parent_end, worker_end = socket.socketpair()
        channel = FrameChannel(CountedReads(fileno=parent_end.detach()))
        try:
            CountedReads.reads = []
            worker_end.sendall(encode_frame({"n": 1}))
            ready = channel.receive().__await__()
            try:
                next(ready)
                raise AssertionError("the reply was there, yet receive waited for the loop")
            except StopIteration as done:
                assert done.value == {"n": 1}
            assert CountedReads.reads == [len(encode_frame({"n": 1}))]

            CountedReads.reads = []
            waiting = asyncio.ensure_future(channel.receive())
            await asyncio.sleep(0)  # receive looked, found nothing and waits on the loop
            assert not waiting.done() and CountedReads.reads == []  # no read that could only fail
            worker_end.sendall(encode_frame({"n": 2}))
            assert await waiting == {"n": 2}
            assert -1 not in CountedReads.reads
        finally:
            channel.close()
            worker_end.close()

    asyncio.run(run())


def test_a_reply_of_many_chunks_comes_whole_and_the_end_follows_the_last_reply() -> None:
    async def run() -> None:
        parent_end, worker_end = socket.socketpair()
        channel = FrameChannel(CountedReads(fileno=parent_end.detach()))
        big = {"blob": "x" * (FrameChannel.CHUNK * (FrameChannel.CHUNKS_PER_WAKEUP + 3))}
        try:
            CountedReads.reads = []
            writing = asyncio.get_running_loop().run_in_executor(None, worker_end.sendall, encode_frame(big) + encode_frame({"n": 3}))
            assert await channel.receive() == big
            assert await channel.receive() == {"n": 3}
            await writing
            assert sum(size for size in CountedReads.reads if size > 0) == len(encode_frame(big) + encode_frame({"n": 3}))
            worker_end.close()
            try:
                await channel.receive()
                raise AssertionError("the worker's end closed, yet receive did not say so")
            except ConnectionError:
                pass
            assert channel.closed
        finally:
            channel.close()
            worker_end.close()

    asyncio.run(run())
