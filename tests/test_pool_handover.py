"""A worker a call frees begins the next queued call at once (#33, serve under many clients).

Real worker processes of the misbehaving provider; the last test is a real ``cfnrun serve`` with real concurrent
clients.
"""
from __future__ import annotations

import asyncio
import base64
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List

from botocore import UNSIGNED
from botocore.config import Config

from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from conftest import MISBEHAVING, ServerProcess
from test_runtime import with_pool


async def _until_queued(pool: FunctionPool, callers: int) -> None:
    """Until ``callers`` callers wait in the pool's queue (each task runs up to its wait in one turn of the loop)."""
    while pool._queued < callers:
        await asyncio.sleep(0)


def test_a_queued_call_is_sent_to_the_worker_the_call_before_it_frees_before_its_caller_runs_again(tmp_path: Path) -> None:
    """One worker, two calls: the second queues. When the first's answer is taken, the second is on the worker already,
    although its caller's task has not run since (it used to wait for the event loop to get back to that task, the
    worker idle meanwhile). Each call still gets its own answer and output, and its own deadline."""

    release = tmp_path / "release"

    async def body(pool: FunctionPool) -> Dict[str, Any]:
        seen: Dict[str, Any] = {}

        async def first() -> Any:
            outcome = await pool.invoke({"do": "wait_for", "release": str(release)}, 10.0)
            # Still in this task's turn: nothing has run since the pool took this answer.
            seen["busy"] = [worker.busy_since is not None for worker in pool._workers]
            return outcome

        a = asyncio.ensure_future(first())
        b = asyncio.ensure_future(pool.invoke({"do": "context"}, 7.0))
        c = asyncio.ensure_future(pool.invoke({"do": "print", "text": "third call"}, 10.0))
        await _until_queued(pool, 2)  # both wait behind the first call before its answer can come
        seen["calls while queued"] = pool.calls  # what the template lint waits on (one running, two queued)
        release.touch()
        seen["outcomes"] = [await a, await b, await c]
        seen["calls after"] = pool.calls
        return seen

    seen = with_pool(body, size=1)
    assert seen["busy"] == [True]
    assert (seen["calls while queued"], seen["calls after"]) == (3, 0)
    first, second, third = seen["outcomes"]
    assert first.kind is OutcomeKind.RETURNED and first.result["status"] == "SUCCESS" and first.logs == "step 1 of 2\nstep 2 of 2\n"
    assert second.kind is OutcomeKind.RETURNED and 0 < second.result["remaining_ms"] <= 7000 and second.logs == ""
    assert third.result == {"printed": "third call"} and third.logs == "third call\n"


def test_a_caller_cancelled_once_its_call_began_leaves_the_worker_to_the_pool_and_the_next_call_its_own_answer(tmp_path: Path) -> None:
    """The queued call begun on the freed worker, then its caller cancelled before it ran again: the call runs on (as a
    call cancelled while its worker runs it), the pool takes its answer and frees the worker, and the next call gets its
    own answer, not the abandoned one's."""

    release = tmp_path / "release"

    async def body(pool: FunctionPool) -> List[Any]:
        waiting: List["asyncio.Future[Any]"] = []

        async def first() -> Any:
            outcome = await pool.invoke({"do": "wait_for", "release": str(release)}, 10.0)
            waiting[0].cancel()  # its call has begun on the worker this one freed; its task has not run since
            return outcome

        a = asyncio.ensure_future(first())
        waiting.append(asyncio.ensure_future(pool.invoke({"do": "echo"}, 10.0)))
        await _until_queued(pool, 1)  # it waits behind the first call before that call's answer can come
        release.touch()
        outcome = await a
        try:
            await waiting[0]
        except asyncio.CancelledError:
            pass
        after = await asyncio.wait_for(pool.invoke({"do": "print", "text": "after"}, 10.0), 60)
        again = await pool.invoke({"do": "echo"}, 10.0)
        return [outcome, waiting[0].cancelled(), after, again, pool.pids]

    first, cancelled, after, again, pids = with_pool(body, size=1)
    assert cancelled
    assert after.result == {"printed": "after"} and after.logs == "after\n"
    # The same worker served all four: the abandoned call (count 2) ran on it and it was freed after.
    assert first.result["status"] == "SUCCESS" and again.result["count"] == 4 and pids == [again.result["pid"]]


def test_many_concurrent_callers_on_two_workers_each_get_their_own_answer_and_output(serve: Callable[..., ServerProcess]) -> None:
    """cfnrun serve --workers 2, 32 boto3 clients at once: every call queued behind the two workers is begun by the
    worker the call before it frees; each answer and each call's log tail are its own."""
    import boto3

    server = serve(MISBEHAVING, "--no-reload", "--workers", "2")
    config = Config(signature_version=UNSIGNED, retries={"max_attempts": 0}, max_pool_connections=32)
    client = boto3.client("lambda", endpoint_url=server.url, region_name="us-east-1", config=config)

    def call(text: str) -> Dict[str, Any]:
        answer = client.invoke(FunctionName="TypeFunction", Payload=json.dumps({"do": "print", "text": text}).encode(), LogType="Tail")
        return {"payload": json.loads(answer["Payload"].read()), "tail": base64.b64decode(answer["LogResult"]).decode()}

    texts = [f"call {uuid.uuid4()}" for _ in range(200)]
    with ThreadPoolExecutor(max_workers=32) as threads:
        answers = list(threads.map(call, texts))
    assert [a["payload"] for a in answers] == [{"printed": text} for text in texts]
    for text, answer in zip(texts, answers):
        printed = [line for line in answer["tail"].splitlines() if line.startswith("call ")]
        assert printed == [text], answer["tail"]
