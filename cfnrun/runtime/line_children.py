"""Child processes that answer one line of JSON per line of JSON, kept warm between requests.

For work that would hold the interpreter's lock in serve's process for long (Guard evaluation,
cfn-lint over a large template): in a child it runs on another core, a deadline can stop it
(the child is killed), and serve's event loop goes on answering. Each child serves one request
at a time; a child that answered is kept for the next request (up to ``idle`` of them), so a
request costs a round trip, not a start. Children end when serve's end of their pipe closes. The
child's side is ``line_answers.py``.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from cfnrun.model.pattern_worker import PACKAGE_HOME

LINE_LIMIT_BYTES = 64 * 1024 * 1024  # an answer line is far shorter


class ChildTimedOut(Exception):
    """No answer within the limit: the child was killed."""


class ChildEnded(Exception):
    """The child ended (or its answer was past any bound) before it answered."""


class LineChildren:
    """``python -m module`` children, each used by one request at a time; bound to one event loop."""

    def __init__(self, module: str, idle: int = 2, most: Optional[int] = None) -> None:
        """``idle``: children kept between requests; ``most``: children at work at once (the rest wait their turn)."""
        self.module = module
        self.arguments: Tuple[str, ...] = ()  # given to the children started from now on
        self.idle = idle
        self.most = most
        self._idle: List[asyncio.subprocess.Process] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._turns: Optional[asyncio.Semaphore] = None

    async def ask(
        self, request: Dict[str, Any], limit_s: Optional[float] = None, ready: Optional[Callable[[], Awaitable[object]]] = None
    ) -> Dict[str, Any]:
        """The child's answer to ``request``; ChildTimedOut past ``limit_s``, ChildEnded when it ends first.

        ``ready``: awaited once this request's turn has come, just before it is sent (a lint waits there for a pause in
        serve's handler calls: while it waited for its turn, the calls may have started again)."""
        line_in = json.dumps(request, default=str).encode() + b"\n"
        self._bind()
        if self._turns is None:
            if ready is not None:
                await ready()
            return await self._ask(line_in, limit_s)
        async with self._turns:
            if ready is not None:
                await ready()
            return await self._ask(line_in, limit_s)

    async def _ask(self, line_in: bytes, limit_s: Optional[float]) -> Dict[str, Any]:
        child = await self._child()
        answered = False
        try:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(line_in)
            await child.stdin.drain()
            line = await asyncio.wait_for(child.stdout.readline(), timeout=limit_s)
            answered = line.endswith(b"\n")  # a line cut short: the child ended while it wrote its answer
        except asyncio.TimeoutError:
            raise ChildTimedOut() from None
        except (ConnectionError, ValueError) as error:
            raise ChildEnded(str(error)) from None
        finally:
            if answered and len(self._idle) < self.idle:
                self._idle.append(child)
            else:  # past the limit, cancelled (serve stopping), or enough kept: the request ends with the child
                await _stop(child)
        if not answered:
            raise ChildEnded(f"exit status {child.returncode}" + (f", after {len(line)} bytes of its answer" if line else ""))
        answer: Dict[str, Any] = json.loads(line)
        return answer

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # children of another (ended) loop cannot be awaited here: they end with their pipes
            self._idle, self._loop = [], loop
            self._turns = asyncio.Semaphore(self.most) if self.most is not None else None

    async def _child(self) -> asyncio.subprocess.Process:
        while self._idle:
            child = self._idle.pop()
            if child.returncode is None:
                return child
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", self.module, *self.arguments, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT_BYTES,
            cwd=PACKAGE_HOME,  # "-m" imports from the folder it starts in first: the one that holds this cfnrun
        )


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
    await child.wait()

