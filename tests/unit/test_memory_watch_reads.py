"""The memory watch reads /proc only for calls past half a step, and still stops a worker over its limit."""
from __future__ import annotations

import asyncio
import os
from typing import Iterator, List, Optional

import pytest

from cfnrun.runtime import memory


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_peak_is_this_process_vmhwm() -> None:
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc")
    with open("/proc/self/status", "rb") as status:
        line = next(line for line in status if line.startswith(b"VmHWM:"))
    assert memory.peak_kib(os.getpid()) >= int(line.split()[1])
    assert memory.peak_kib(2**22 + 12345) is None


class Worker:
    """What the watch sees of a worker: its pid, its limit, the start of its call in flight."""

    def __init__(self, pid: int, limit_mb: int, stopped: List[int]) -> None:
        self.pid = pid
        self.memory_limit_kib = limit_mb * 1024
        self.busy_since: Optional[float] = None
        self._stopped = stopped

    def memory_exceeded(self, peak_kib: int) -> None:
        self._stopped.append(peak_kib)


def test_a_young_call_is_not_read_and_an_older_one_over_its_limit_is_stopped(
    loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [100.0]
    monkeypatch.setattr(loop, "time", lambda: now[0])
    read: List[int] = []
    monkeypatch.setattr(memory, "peak_kib", lambda pid: read.append(pid) or 200 * 1024)
    stopped: List[int] = []
    watch = memory.MemoryWatch(loop)
    small, large, idle = Worker(11, 128, stopped), Worker(22, 512, stopped), Worker(33, 1, stopped)
    for worker in (small, large, idle):
        watch.add(worker)
    small.busy_since = now[0]
    now[0] += watch.INTERVAL_S / 4
    large.busy_since = now[0]
    watch._tick()
    assert read == [] and stopped == []  # both younger than half a step; the idle worker is not read
    now[0] += watch.INTERVAL_S / 3
    watch._tick()
    assert read == [11] and stopped == [200 * 1024]  # over 128 MB: told once, no longer watched
    now[0] += watch.INTERVAL_S
    watch._tick()
    assert read == [11, 22] and stopped == [200 * 1024]  # 22 is under its 512 MB
    assert watch.timer is not None  # a call is still in flight: the watch keeps reading
    watch.timer.cancel()
    large.busy_since = None
    watch._tick()
    assert read == [11, 22] and watch.timer is None  # no call in flight: asleep until one wakes it
    watch.wake()
    first = watch.timer
    assert first is not None
    watch.wake()  # awake already: no second timer
    assert watch.timer is first
    first.cancel()
