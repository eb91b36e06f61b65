"""The parent's end of a worker's log pipe: each take is what was written since the last, and nothing is ""."""
from __future__ import annotations

import asyncio
import os

from cfnrun.runtime.logs import LogPipe


def test_each_take_is_the_output_since_the_last_and_an_unread_pipe_is_read_only_when_asked() -> None:
    async def run() -> None:
        read_end, write_end = os.pipe()
        pipe = LogPipe(read_end)
        try:
            assert pipe.take() == ""
            assert pipe.take(False) == ""
            os.write(write_end, b"one\n")
            assert pipe.take(False) == ""  # not read yet, and the caller said the pipe holds none of it
            assert pipe.take() == "one\n"
            assert pipe.take() == ""
        finally:
            pipe.close()
            os.close(write_end)

    asyncio.run(run())
