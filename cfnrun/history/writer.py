"""serve's history writes, batched on the event loop: many calls' records to one transaction, the disk's syncs elsewhere.

A record handed over after a pause is written as soon as the loop has sent the answer in hand (``call_soon``);
records that keep coming (the last batch written ``GATHER_S`` ago or less: a client calling one call after another,
or many at once) wait up to ``GATHER_S`` for the next ones, and go in with them: one commit per batch rather than
per call. What follows a record (serve's console line for the call) runs once the record is committed, so a line on
the console means its call is in the history.

Why on the loop and not on a thread of its own: a record is a few tens of microseconds of Python and SQLite, and a
second thread in serve's process had to win the interpreter's lock from the event loop for each batch, which cost
serve more than the writing itself (its main process's CPU per call fell by a sixth without it, measured
2026-11-27, docs/performance.md). What may wait on the disk stays off the loop: a commit only writes the log
(synchronous NORMAL: no sync), and folding the log back into the file, which syncs the disk twice, runs on a
short-lived thread every ``CHECKPOINT_RECORDS`` records (``HistoryStore.checkpoint``) and once at ``close``.
Another process writing the same history (``cfnrun invoke`` in the project) holds the file's write lock for a
commit of its own, a moment: a batch takes the lock before its first record, waiting ``LOCK_WAIT_MS`` at most, and
when the other process still holds it the batch is put off, untouched, to the next window, so the loop never
waits on another process. A lock held for ``LOCKED_GIVE_UP_S`` (someone's open transaction in a SQLite shell, say)
costs the records that waited meanwhile, with one note; ``close`` waits for it as long, once.
"""
from __future__ import annotations

import asyncio
import math
import sqlite3
import threading
import time
from typing import Callable, List, Optional, Tuple

from cfnrun.history.store import HistoryStore, not_recorded
from cfnrun.model.errors import CfnrunError

BATCH = 500  # records per transaction, at most: a batch this long is written at once
# How long a batch waits for more records after its first while calls keep coming (their console lines wait as long:
# a moment no one sees). Every batch costs a commit (each page it changed written to the log: ~20 writes, ~0.4 ms on
# a VM where a system call costs microseconds), a wake-up of serve's file watch (the database lives in the project)
# and a turn of the loop; a client calling one call after another (~1-3 ms apart) gets one per ~25 calls at 50 ms
# rather than one per ~5 at 10 ms. 50 against 10 ms, taking turns (2026-11-27, docs/performance-log.md): serve's
# main process 244 against 285 µs of CPU per call under the throughput load, and sequential calls' added latency
# lower in 5 pairs of 6.
GATHER_S = 0.050
CHECKPOINT_RECORDS = 1000  # records written between two checkpoints, about 1 MB of log
LOCK_WAIT_MS = 5  # how long a batch on the loop waits for another process's write lock before it is put off
LOCKED_GIVE_UP_S = 10.0  # SQLite's own busy timeout elsewhere in cfnrun: records put off this long are not recorded

Work = Callable[[], None]
Then = Callable[[], None]


class HistoryWriter:
    """One store's writer. ``write(work, then)`` (on the event loop): run ``work`` (which writes through ``store``) in
    a batch on the loop, then ``then``. ``close`` (on any thread) writes what waits, there, and closes the store."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store
        self._waiting: List[Tuple[Work, Optional[Then]]] = []
        self._scheduled = False
        self._closed = False
        self._writing = threading.Lock()  # the connection's one user at a time: the loop's batch, or close()
        self._connection: Optional[sqlite3.Connection] = None  # the store's writer_connection, opened with the first batch
        self._written_at = -math.inf  # time.monotonic() when the last batch was written
        self._since_checkpoint = 0
        self._checkpointing: Optional[threading.Thread] = None
        self._locked_since: Optional[float] = None  # time.monotonic() when a batch was first put off for another's lock

    def write(self, work: Work, then: Optional[Then] = None) -> None:
        if self._closed:  # the last calls of a stopping serve: in line, as before
            self._write_now([(work, then)])
            return
        self._waiting.append((work, then))
        if self._scheduled and len(self._waiting) < BATCH:
            return
        loop = asyncio.get_running_loop()
        if not self._scheduled and len(self._waiting) < BATCH and time.monotonic() - self._written_at < GATHER_S:
            loop.call_later(GATHER_S, self._write_waiting)  # calls keep coming: this one waits for the next
        else:
            loop.call_soon(self._write_waiting)
        self._scheduled = True

    def close(self) -> None:
        """Write what waits and close the store; what was to follow runs here, on the caller's thread."""
        self._closed = True
        with self._writing:
            items, self._waiting = self._waiting, []
            if items and not self._write(items, int(LOCKED_GIVE_UP_S * 1000)):
                not_recorded(CfnrunError(f"{self.store.path} was locked by another process for {LOCKED_GIVE_UP_S:g} s ({len(items)} calls)"))
            checkpointing, self._checkpointing = self._checkpointing, None
            if checkpointing is not None:
                checkpointing.join()
            if self._connection is not None:
                self._connection.close()  # the last connection: the log is folded back in and removed
                self._connection = None
        self._follow(items)
        self.store.close()

    def _write_waiting(self) -> None:
        """On the loop: the batch that waits, if close() is not writing it already."""
        self._scheduled = False
        if not self._waiting:
            return
        if self._closed:  # handed over while close() took what waited: in line, as after it
            items, self._waiting = self._waiting, []
            self._write_now(items)
            return
        if not self._writing.acquire(blocking=False):  # close() has begun: it writes what waits
            return
        try:
            items, self._waiting = self._waiting, []
            if self._write(items, LOCK_WAIT_MS):
                self._locked_since = None
                self._checkpoint_now_and_then(len(items))
            elif self._put_off(items):
                return
        finally:
            self._writing.release()
        self._follow(items)

    def _put_off(self, items: List[Tuple[Work, Optional[Then]]]) -> bool:
        """Another process holds the file's write lock: ``items`` wait for the next window (True), or, after
        ``LOCKED_GIVE_UP_S`` of this, are not recorded and what follows them runs (False)."""
        now = time.monotonic()
        if self._locked_since is None:
            self._locked_since = now
        if now - self._locked_since < LOCKED_GIVE_UP_S:
            self._waiting[:0] = items
            if not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_later(GATHER_S, self._write_waiting)
            return True
        self._locked_since = None
        not_recorded(CfnrunError(f"{self.store.path} has been locked by another process for {LOCKED_GIVE_UP_S:g} s ({len(items)} calls)"))
        return False

    def _write(self, items: List[Tuple[Work, Optional[Then]]], lock_wait_ms: int) -> bool:
        """One transaction for ``items``' records (the writing lock held); a fault costs the record it is in. False,
        with nothing written or run: another process held the file's write lock for ``lock_wait_ms``."""
        try:
            if self._connection is None:
                self._connection = self.store.writer_connection()
            if not self.store.begin_batch(self._connection, lock_wait_ms):
                return False
            with self.store.batch(self._connection):
                for work, _ in items:
                    _guarded(work)
        except CfnrunError as error:
            not_recorded(error)
        self._written_at = time.monotonic()
        return True

    def _write_now(self, items: List[Tuple[Work, Optional[Then]]]) -> None:
        """After close: each record in its own transaction, on the caller's thread, once close() has ended (two
        connections of one process writing at once may find the file locked)."""
        with self._writing:
            for work, _ in items:
                _guarded(work)
        self._follow(items)

    def _checkpoint_now_and_then(self, written: int) -> None:
        self._since_checkpoint += written
        if self._since_checkpoint < CHECKPOINT_RECORDS or (self._checkpointing is not None and self._checkpointing.is_alive()):
            return
        self._since_checkpoint = 0
        self._checkpointing = threading.Thread(target=self.store.checkpoint, name="cfnrun-history-checkpoint", daemon=True)
        self._checkpointing.start()

    @staticmethod
    def _follow(items: List[Tuple[Work, Optional[Then]]]) -> None:
        for _, then in items:
            if then is not None:
                then()


def _guarded(work: Work) -> None:
    """One record's work: a fault in it costs that record, never the writer."""
    try:
        work()
    except Exception as error:  # noqa: B902 - history is a convenience; the calls go on
        not_recorded(error)
