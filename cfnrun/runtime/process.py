"""One warm worker process, driven from the parent's event loop.

The parent never runs handler code and never blocks on it: it sends a request
frame on the worker's socket, awaits the reply frame with a deadline, and
collects the worker's log pipe in the background. However a worker ends (crash, deadline, memory,
reload, shutdown) its sandbox is torn down: the worker, its process group and every process that
carries its marker (``sandbox.py``), so nothing it started outlives it. A worker also dies with
this process (``worker/lifeline.py``).
"""
from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, List, Optional, Protocol, Tuple

from cfnrun.runtime.channel import ChannelClosed, FrameChannel
from cfnrun.runtime.lambda_error import LambdaError
from cfnrun.runtime.logs import OUTPUT_TAP, LogPipe, OutputTap
from cfnrun.runtime.memory import MemoryWatch
from cfnrun.model.random_ids import random_uuid
from cfnrun.runtime.outcome import InvocationOutcome, OutcomeKind
from cfnrun.runtime.sandbox import kill_group, kill_marked, kill_worker
from cfnrun.runtime import spec as specs
from cfnrun.runtime.spec import SandboxEnds, WorkerSpec
from cfnrun.runtime.worker import protocol
from cfnrun.runtime.worker.lambda_context import deadline_ms

if TYPE_CHECKING:
    from cfnrun.runtime.zygote import Zygote

_EXIT_WAIT_SECONDS = 2.0
# Read once: reading an enum member off its class costs a call's worth of instructions each time.
_RETURNED, _FUNCTION_ERROR = OutcomeKind.RETURNED, OutcomeKind.FUNCTION_ERROR


class WorkerInitError(Exception):
    """The provider failed to load: import error, syntax error, missing handler."""

    def __init__(self, error: LambdaError, logs: str) -> None:
        super().__init__(error.message or "worker failed to start")
        self.error = error
        self.logs = logs


def describe_exit(returncode: Optional[int]) -> str:
    if returncode is None:
        return "worker is gone"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"worker process was killed by {name}"
    if returncode == protocol.EXIT_CHANNEL_LOST:
        return "the handler closed or replaced the worker's request channel (its socket fd); the worker exited"
    return f"worker process exited with status {returncode}"


class ProcessHandle(Protocol):
    """A worker's process as the parent sees it: a spawned child, or a zygote's fork (``ForkedProcess``)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> Optional[int]: ...

    async def wait(self) -> int: ...


class Child(Protocol):
    """A spawned child as this module reaps it: a ``subprocess.Popen``, or the early start's ``SpawnedChild``."""

    @property
    def pid(self) -> int: ...

    def wait(self) -> int: ...


class SpawnedProcess:
    """A spawned worker's process (create in the event loop): reaped as soon as it exits, as asyncio's own are.

    The exit is watched through a pidfd (Linux 5.3 and later), else by a daemon thread. ``returncode`` is the
    status the watch reaped, as a zygote's fork reports its own: asking it costs no ``waitpid``, and an exit
    is seen by the loop's next turn, before any call that arrives after it.
    """

    def __init__(self, popen: Child) -> None:
        self._popen = popen
        self.returncode: Optional[int] = None  # a plain attribute: the pool asks it twice a call
        loop = asyncio.get_running_loop()
        self._exit: "asyncio.Future[int]" = loop.create_future()
        try:
            pidfd = os.pidfd_open(popen.pid)  # type: ignore[attr-defined,unused-ignore]
        except (AttributeError, OSError):
            threading.Thread(target=self._wait_on_thread, args=(loop,), daemon=True).start()
            return
        loop.add_reader(pidfd, self._reap, loop, pidfd)

    @property
    def pid(self) -> int:
        return self._popen.pid

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    def _reap(self, loop: asyncio.AbstractEventLoop, pidfd: int) -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        self._exited(self._popen.wait())

    def _wait_on_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        returncode = self._popen.wait()
        try:
            loop.call_soon_threadsafe(self._exited, returncode)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def _exited(self, returncode: int) -> None:
        if not self._exit.done():
            self.returncode = returncode
            self._exit.set_result(returncode)


# A call sent to a worker (``WorkerProcess.begin``), its answer still to come: its request id, its time limit and
# time.perf_counter() when it was sent (a plain tuple: a NamedTuple is made by a Python call, one per call).
BegunCall = Tuple[str, float, float]


class WorkerProcess:
    _ids = itertools.count(1)

    def __init__(
        self,
        spec: WorkerSpec,
        process: ProcessHandle,
        channel: FrameChannel,
        logs: LogPipe,
        marker: str,
        lifeline: int,
    ) -> None:
        self.spec = spec
        self.process = process
        self._channel = channel
        self._marker = marker
        self._lifeline: Optional[int] = lifeline  # write end; the worker leaves when it closes
        self._memory_peak_kib: Optional[int] = None
        # The call in flight is cut at ``_deadline`` (loop time; None: no call) by one timer kept across calls
        # (``_cut_at``), re-armed only when it would fire before a call's deadline or after it.
        self._deadline: Optional[float] = None
        self._timer: Optional[asyncio.TimerHandle] = None
        self._timed_out = False
        self._teardown: Optional["asyncio.Future[None]"] = None
        self._loop = asyncio.get_running_loop()
        self.memory_limit_kib = spec.memory_mb * 1024
        self.busy_since: Optional[float] = None  # the loop time the call in flight started at (the memory watch reads it)
        self._memory = MemoryWatch.of(self._loop) if spec.memory_limit else None  # looked up once, not per call
        if self._memory is not None:
            self._memory.add(self)
        self.log_stream_name = specs.new_log_stream_name()
        self._logs = logs
        self.generation = 0
        self.dependencies: List[str] = []
        self._loading = False  # the load frame is sent

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    @classmethod
    async def spawn(cls, spec: WorkerSpec) -> "WorkerProcess":
        """Start the process; it loads nothing until ``load`` (or ``preload``) is called."""

        async def start(ends: SandboxEnds) -> ProcessHandle:
            return SpawnedProcess(specs.start_worker_process(spec, ends))

        return await cls._started(spec, start)

    @classmethod
    async def fork(cls, spec: WorkerSpec, zygote: "Zygote") -> "WorkerProcess":
        """A worker forked from ``zygote`` (dependencies imported); like ``spawn``, it loads nothing yet."""

        async def start(ends: SandboxEnds) -> ProcessHandle:
            return await zygote.fork(ends.worker_end.fileno(), ends.log_write, ends.lifeline_read, ends.marker, spec.env)

        return await cls._started(spec, start)

    @classmethod
    async def _started(cls, spec: WorkerSpec, start: Callable[[SandboxEnds], Awaitable[ProcessHandle]]) -> "WorkerProcess":
        """A new sandbox's fds, handed to ``start``; this parent keeps only its own ends."""
        ends = SandboxEnds()
        try:
            process = await start(ends)
        except BaseException:
            ends.close_parent_ends()
            raise
        finally:
            ends.close_worker_ends()
        return cls.adopt(spec, process, ends)

    @classmethod
    def adopt(cls, spec: WorkerSpec, process: ProcessHandle, ends: SandboxEnds, loading: Optional[str] = None) -> "WorkerProcess":
        """The worker in ``process``, started with ``ends`` (their worker side already closed here).

        ``loading``: the log stream name of a load frame already sent to it (``app/early_start.py``).
        """
        worker = cls(spec, process, FrameChannel(ends.parent_end), LogPipe(ends.log_read), ends.marker, ends.lifeline_write)
        if loading is not None:
            worker.log_stream_name, worker._loading = loading, True
        return worker

    @classmethod
    async def start(cls, spec: WorkerSpec) -> "WorkerProcess":
        worker = await cls.spawn(spec)
        await worker.load()
        return worker

    async def preload(self, modules: List[str]) -> None:
        """Import the provider's dependencies now, so a later ``load`` only imports its code."""
        self._channel.send(protocol.encode_frame({"type": "preload", "modules": modules}))
        await self._startup_reply("preloading dependencies")

    def start_loading(self) -> None:
        """Tell the worker to import the handler now, without waiting: ``load`` then awaits its answer."""
        if self._loading:
            return
        self._loading = True
        self._channel.send(specs.load_frame(self.spec, self.log_stream_name))

    async def load(self) -> None:
        """Import the handler; raises WorkerInitError (and the worker exits) if it cannot."""
        self.start_loading()
        hello = await self._startup_reply(f"importing {self.spec.handler}")
        if hello.get("type") == "init_error":
            await self.process.wait()
            await self.kill()
            raise WorkerInitError(LambdaError.from_wire(hello["error"]), await self._drain_logs())
        self.dependencies = list(hello.get("modules") or [])

    async def _startup_reply(self, doing: str) -> Dict[str, Any]:
        try:
            return await asyncio.wait_for(self._channel.receive(), self.spec.init_timeout_s)
        except asyncio.TimeoutError:
            await self.kill()
            raise WorkerInitError(
                LambdaError("Runtime.InitTimeout", f"{doing} took longer than {self.spec.init_timeout_s:g} s"),
                await self._drain_logs(),
            ) from None
        except ChannelClosed:
            returncode = await self.process.wait()
            await self.kill()
            raise WorkerInitError(
                LambdaError("Runtime.ExitError", f"{describe_exit(returncode)} while {doing}"),
                await self._drain_logs(),
            ) from None

    async def invoke(
        self, event: Any, timeout_s: float, request_id: Optional[str] = None, event_json: Optional[bytes] = None
    ) -> InvocationOutcome:
        """Run one invocation; never raises for anything the handler does.

        ``event_json``, when given, is the event already encoded as UTF-8 JSON (an HTTP
        body, say) and is sent as it is.
        """
        request_id = request_id or random_uuid()
        call = self.begin(event_json if event_json is not None else protocol.encode_json(event), timeout_s, request_id, OUTPUT_TAP.get())
        return await self.outcome(call)

    def begin(self, event_json: bytes, timeout_s: float, request_id: str, tap: Optional[OutputTap]) -> BegunCall:
        """Send a call to the worker now, its deadline running from now (``outcome`` then awaits its answer): the
        pool begins a queued call on the worker a finished call frees, before the queued caller's task runs again.
        ``tap``: the caller's ``OUTPUT_TAP``, read in its own context."""
        started = time.perf_counter()
        frame = protocol.encode_call(next(self._ids), request_id, deadline_ms(timeout_s), event_json)
        now = self._loop.time()
        self._cut_at(now + timeout_s)
        self.busy_since = now
        memory = self._memory
        if memory is not None and memory.timer is None:
            memory.wake()
        self._logs.tap = tap
        self._channel.send(frame)
        return request_id, timeout_s, started

    async def outcome(self, call: BegunCall) -> InvocationOutcome:
        """The answer to the call ``begin`` sent; never raises for anything the handler does."""
        request_id, timeout_s, started = call
        running_on = False  # cancelled while the worker runs it: the call stays in flight, its deadline armed
        try:
            reply = await self._channel.receive()
        except asyncio.CancelledError:
            running_on = True  # whoever awaits its answer next (the pool) gets it, cut at the same deadline
            raise
        except ChannelClosed:
            duration = (time.perf_counter() - started) * 1000.0
            if self._memory_peak_kib is not None:
                await self.kill()
                return InvocationOutcome(
                    OutcomeKind.WORKER_DIED,
                    request_id,
                    duration,
                    self._logs.take(),
                    error=LambdaError(
                        "Runtime.OutOfMemory",
                        f"the worker used {self._memory_peak_kib // 1024} MB, over the function's "
                        f"MemorySize of {self.spec.memory_mb} MB; it was killed",
                    ),
                    peak_kib=self._memory_peak_kib,
                )
            timed_out = self._timed_out
            if not timed_out:
                try:  # let a dying worker finish exiting, so its status is the real one
                    await asyncio.wait_for(self.process.wait(), _EXIT_WAIT_SECONDS)
                except asyncio.TimeoutError:
                    pass
            await self.kill()
            if timed_out:
                return InvocationOutcome(
                    OutcomeKind.TIMED_OUT, request_id, duration, self._logs.take(), timeout_s=timeout_s
                )
            return InvocationOutcome(
                OutcomeKind.WORKER_DIED,
                request_id,
                duration,
                self._logs.take(),
                error=LambdaError("Runtime.ExitError", describe_exit(self.process.returncode)),
            )
        finally:
            if not running_on:
                self._logs.tap = None
                self._deadline = self.busy_since = None
        duration = (time.perf_counter() - started) * 1000.0
        # The worker flushed its output before replying and said how much of it the pipe still held.
        logs = self._logs.take(reply.get("unread") != 0)
        if reply.get("unusable"):  # the handler broke the worker's fds; it is leaving
            await self.kill()
            logs += self._logs.take()
            return InvocationOutcome(OutcomeKind.WORKER_DIED, request_id, duration, logs, error=LambdaError.from_wire(reply.get("error")))
        faults, peak_kib = reply.get("faults") or [], reply.get("peak_kib")
        if reply.get("type") == "result":
            return InvocationOutcome(_RETURNED, request_id, duration, logs, result=reply.get("result"), faults=faults, peak_kib=peak_kib)
        return InvocationOutcome(_FUNCTION_ERROR, request_id, duration, logs, error=LambdaError.from_wire(reply.get("error")), faults=faults,
                                 peak_kib=peak_kib)

    def _cut_at(self, deadline: float) -> None:
        """Cut the call starting now at ``deadline``. One timer serves every call of this worker, so none is made
        and cancelled per call: a call that ends in time leaves it armed; armed for a time no later than this
        deadline (an earlier call's), it stays, and when it fires before the call then in flight is due it is
        armed again for that call's deadline (none in flight: it is done)."""
        self._deadline, self._timed_out = deadline, False
        timer = self._timer
        if timer is not None and timer.when() <= deadline:
            return
        if timer is not None:
            timer.cancel()
        self._timer = self._loop.call_at(deadline, self._deadline_passed, deadline)

    def _deadline_passed(self, armed: float) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None:  # no call in flight: every call so far ended in time
            return
        if deadline <= armed:
            self._timed_out = True
            self._signal_group(signal.SIGKILL)
        else:
            self._timer = self._loop.call_at(deadline, self._deadline_passed, deadline)

    def memory_exceeded(self, peak_kib: int) -> None:
        """The memory watch's word: this call is over the function's MemorySize; the sandbox goes."""
        self._memory_peak_kib = peak_kib
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, signum: int) -> None:
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    async def kill(self) -> None:
        """Tear the sandbox down: the worker and everything it started; wait until it is reaped.

        The process group is killed even when the worker has already exited, then every
        process carrying the worker's marker. Nothing that could write to the log pipe is
        left, so what the pipe holds now is all the output there is: it is read without
        waiting for an EOF that an escaped process could hold back.
        """
        if self._teardown is None:  # once: later, the group's number may belong to someone else
            self._teardown = asyncio.ensure_future(self._tear_down())
        await asyncio.shield(self._teardown)  # a cancelled caller must not stop it half-way

    async def _tear_down(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._memory is not None:
            self._memory.remove(self)
        if self.process.returncode is None:
            kill_worker(self.process.pid)
        else:
            kill_group(self.process.pid)
        await self.process.wait()
        kill_group(self.process.pid)  # what the worker forked while it was being killed
        self._channel.close()
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        await self._loop.run_in_executor(None, kill_marked, self._marker)
        self._logs.drain_and_close()

    async def stop(self) -> None:
        """Ask an idle worker to leave (EOF on its socket), kill it if it lingers."""
        self._channel.close()
        try:
            await asyncio.wait_for(self.process.wait(), 2.0)
        except asyncio.TimeoutError:
            pass
        finally:  # also when the pool closing cancels this: what the worker started must go
            await self.kill()

    # -- internals ---------------------------------------------------------------

    async def _drain_logs(self) -> str:
        """All output up to the worker's end (call after ``kill``)."""
        return self._logs.take()
