"""Who is told when a stack changes: serve's console follows the stacks live (issue #35).

Each stack event bumps a counter; only while someone listens (a browser with a stack's page
open) is anything more done. A listener is told which stacks changed since it last looked,
on its own event loop, whichever thread the change came from.
"""
from __future__ import annotations

import asyncio
from typing import List, Set


class ChangeListener:
    """One follower of the stacks: the ids of those changed since it last took them, and a wake-up."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.woken = asyncio.Event()
        self.changed: Set[str] = set()
        self.closed = False

    def _tell(self, stack_id: str) -> None:
        self.changed.add(stack_id)
        self.woken.set()

    def close(self) -> None:
        """Stop following: whoever waits wakes, and ``closed`` says to end."""
        self.closed = True
        self.woken.set()

    async def next_changes(self, timeout_s: float) -> Set[str]:
        """The stacks changed since the last call, waiting up to ``timeout_s`` for one (empty when none came or closed)."""
        if not self.changed and not self.closed:
            try:
                await asyncio.wait_for(self.woken.wait(), timeout_s)
            except asyncio.TimeoutError:
                pass
        self.woken.clear()
        taken, self.changed = self.changed, set()
        return taken


class ChangeNotices:
    """The count of stack changes, and the listeners to tell of each."""

    def __init__(self) -> None:
        self.count = 0
        self._listeners: List[ChangeListener] = []

    def changed(self, stack_id: str) -> None:
        """Stack ``stack_id`` changed: a counter, and a word to each listener (there are none while no browser looks)."""
        self.count += 1
        for listener in self._listeners:
            listener.loop.call_soon_threadsafe(listener._tell, stack_id)

    def listen(self) -> ChangeListener:
        listener = ChangeListener()
        self._listeners = [*self._listeners, listener]  # a new list: a change told from another thread iterates the old one
        return listener

    def stop_listening(self, listener: ChangeListener) -> None:
        self._listeners = [kept for kept in self._listeners if kept is not listener]
        listener.close()

    def close(self) -> None:
        """serve stops: every listener ends."""
        for listener in self._listeners:
            listener.close()
