"""serve's history writes, on a thread of their own: the event loop never waits on SQLite or the disk.

Records are written in the order they were handed over, many to one transaction when calls come
faster than the disk takes them, or at once, or while calls keep coming (the last batch written
``GATHER_S`` ago or less: a client calling one call after another), within ``GATHER_S`` of each other:
one commit per batch rather than per call. A record that comes after a pause is written at once. What follows a record
(serve's console line for the call) runs on the event loop once the record is committed, so a line
on the console means its call is in the history. A writer that falls far behind drops records
rather than memory: history is a convenience, never a ledger.
"""
from __future__ import annotations

import asyncio
import math
import queue
import sys
import threading
import time
from typing import Callable, List, Optional, Tuple

from cfnrun.history.store import HistoryStore, not_recorded
from cfnrun.model.errors import CfnrunError

MAX_WAITING = 10_000  # records handed over and not yet written, at most
BATCH = 500  # records per transaction, at most
# How long a batch waits for more records after its first (its console lines wait as long). Long enough to span a
# few calls of one client calling one after another (~2-3 ms apart): every batch costs a wake-up of this thread,
# a commit, a wake-up of serve's file watch (the database lives in the project) and one of the event loop for the
# console lines, each competing with the next call for the two cores (docs/performance.md, 2026-11-27).
GATHER_S = 0.010

Work = Callable[[], None]
Then = Callable[[], None]
_STOP = None  # handed over by close(): the writer ends once all before it is written


class HistoryWriter:
    """One store's writer thread. ``write(work, then)``: run ``work`` (which writes through ``store``) on the
    thread, then ``then`` on the event loop that handed it over."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store
        self._queue: "queue.SimpleQueue[Optional[Tuple[Work, Optional[Then]]]]" = queue.SimpleQueue()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        self._dropped = 0
        self._lock = threading.Lock()
        self._following: List[Then] = []  # what follows the records committed, for the loop to run
        self._woken = False  # a run of ``_follow_now`` is already on the loop's way
        self._written_at = -math.inf  # time.monotonic() when the last batch was written
        self._closing = threading.Event()  # set by close(): a batch gathering stops waiting

    def write(self, work: Work, then: Optional[Then] = None) -> None:
        if self._closed:  # the last calls of a stopping serve: in line, as before
            _guarded(work)
            if then is not None:
                then()
            return
        if self._thread is None:
            self._loop = asyncio.get_running_loop()
            self._thread = threading.Thread(target=self._run, name="cfnrun-history", daemon=True)
            self._thread.start()
        if self._queue.qsize() >= MAX_WAITING:
            self._dropped += 1
            if self._dropped == 1:
                sys.stderr.write(f"cfnrun: note: the history falls {MAX_WAITING} calls behind; calls go unrecorded until it catches up\n")
            if then is not None:
                then()
            return
        self._queue.put((work, then))

    def close(self) -> None:
        """Write what was handed over and close the store; what was to follow runs here, on the caller's thread."""
        self._closed = True
        if self._thread is not None:
            self._queue.put(_STOP)
            self._closing.set()
            self._thread.join()
        self._follow_now()
        self.store.close()

    def _run(self) -> None:
        while True:
            batch = self._gather()
            items = [item for item in batch if item is not None]
            try:
                with self.store.batch():
                    for work, _ in items:
                        _guarded(work)
            except CfnrunError as error:
                not_recorded(error)
            self._written_at = time.monotonic()
            self._follow([then for _, then in items if then is not None])
            if len(items) < len(batch):
                self.store.close()  # this thread's connection
                return

    def _gather(self) -> "List[Optional[Tuple[Work, Optional[Then]]]]":
        """The next batch: what waits and, when several did (calls answered at once), what comes within ``GATHER_S``
        (up to ``BATCH``, or the stop).

        Calls answered at once then share a transaction: one commit (its write of the log and the pages it
        changed) for several records rather than one each. So do calls that keep coming (the last batch
        was written less than ``GATHER_S`` ago): a record that waited alone then waits for the next ones too.
        A record that comes after a pause is written at once, while its client reads the answer.
        """
        batch = [self._queue.get()]
        coming = time.monotonic() - self._written_at < GATHER_S  # calls keep coming: the last batch was written a moment ago
        self._take_waiting(batch)
        if batch[-1] is not _STOP and len(batch) < BATCH and (len(batch) > 1 or coming):
            # One wait for the whole window, not a wake-up per record: what is handed over meanwhile only queues.
            self._closing.wait(GATHER_S)
            self._take_waiting(batch)
        return batch

    def _take_waiting(self, batch: "List[Optional[Tuple[Work, Optional[Then]]]]") -> None:
        """Add what waits in the queue to ``batch`` (up to ``BATCH``, or the stop). This thread alone takes from the queue,
        so one that is not empty has a record to give: no ``queue.Empty`` raised (~2k instructions) at every batch's end."""
        waiting = self._queue
        while len(batch) < BATCH and batch[-1] is not _STOP and not waiting.empty():
            batch.append(waiting.get_nowait())

    def _follow(self, thens: List[Then]) -> None:
        if not thens:
            return
        with self._lock:
            self._following.extend(thens)
            wake, self._woken = not self._woken, True
        if wake:
            assert self._loop is not None
            try:
                self._loop.call_soon_threadsafe(self._follow_now)
            except RuntimeError:  # the loop has closed: close() runs them
                pass

    def _follow_now(self) -> None:
        with self._lock:
            thens, self._following, self._woken = self._following, [], False
        for then in thens:
            then()


def _guarded(work: Work) -> None:
    """One record's work: a fault in it costs that record, never the writer."""
    try:
        work()
    except Exception as error:  # noqa: B902 - history is a convenience; the calls go on
        not_recorded(error)
