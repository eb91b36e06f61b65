"""serve's console lines reach a pipe grouped per event-loop turn, in order, and at once after that turn."""
from __future__ import annotations

import asyncio
import io
import os
import threading
from typing import List

from cfnrun.ui.console import Console


class CountingPipeEnd(io.FileIO):
    """The write end of a real pipe that counts the write() system calls made on it."""

    writes = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        return super().write(data)


def piped_console() -> "tuple[Console, CountingPipeEnd, io.TextIOWrapper]":
    read_fd, write_fd = os.pipe()
    raw = CountingPipeEnd(write_fd, "w")
    out = io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8")
    return Console(out, color=False), raw, io.TextIOWrapper(io.FileIO(read_fd, "r"), encoding="utf-8")


def lines_waiting(reader: io.TextIOWrapper, count: int) -> List[str]:
    return [reader.readline().rstrip("\n") for _ in range(count)]


def test_lines_of_one_loop_turn_go_to_a_pipe_in_one_write_in_order() -> None:
    console, raw, reader = piped_console()

    async def calls() -> int:
        for number in range(5):  # five calls answered in the same turn of the loop
            console.info(f"call {number}")
        during = raw.writes
        await asyncio.sleep(0)  # the turn ends: its lines go out
        await asyncio.sleep(0)
        return during

    during = asyncio.run(calls())
    assert during == 0 and raw.writes == 1
    assert lines_waiting(reader, 5) == [f"call {number}" for number in range(5)]


def test_a_line_outside_the_loop_goes_out_at_once_after_the_lines_before_it() -> None:
    console, raw, reader = piped_console()
    loop = asyncio.new_event_loop()

    async def one_line_then_a_thread() -> None:
        console.info("from the loop")
        worker = threading.Thread(target=console.warn, args=("from a thread",))
        worker.start()
        worker.join()  # the thread's line flushed the loop's line before it
        assert raw.writes == 1

    loop.run_until_complete(one_line_then_a_thread())
    loop.close()
    console.info("after the loop")  # no running loop: written and flushed at once
    assert raw.writes == 2
    assert lines_waiting(reader, 3) == ["from the loop", "WARNING: from a thread", "after the loop"]
