"""The connection guard's cost per call does not grow with the connections open (#33, serve under many clients).

The HTTP layer alone on 127.0.0.1 (a real aiohttp server with the guard, real sockets), its calls held by the test.
"""
from __future__ import annotations

import asyncio
import socket
from typing import Any, Callable, Dict, List

from test_front_door_load import _HeldCalls, _answer_head, _http_layer, _request


def test_while_callers_wait_for_a_place_the_guard_looks_only_at_connections_that_may_make_room() -> None:
    """Every place busy with a call and callers waiting: each answer, arrival and departure makes the guard look for
    room. It used to look through every open connection each time (for those still sending their headers, and to count
    those holding a place), so with many clients each call cost more the more connections were open. None of these
    connections is sending headers, so none may make room: none is looked at. Every caller is still answered, in turn."""
    from cfnrun.api.connections import _GuardedConnection
    from cfnrun.api.limits import ConnectionLimits

    calls = _HeldCalls()
    places, waiting = 20, 10
    looked_at: List[Any] = []
    results: Dict[str, Any] = {}
    original = _GuardedConnection.evictable_at

    def counted(connection: Any, grace_s: float) -> Any:
        looked_at.append(connection)
        return original(connection, grace_s)

    async def scenario() -> None:
        calls.release = asyncio.Event()
        async with _http_layer(calls, ConnectionLimits(max_connections=places)) as (guard, port):
            loop = asyncio.get_running_loop()

            async def until(condition: Callable[[], bool]) -> None:
                while not condition():
                    await asyncio.sleep(0.01)

            sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(places + waiting)]
            try:
                for sock in sockets[:places]:
                    _request(sock)
                await until(lambda: sum(c.phase.value == "call" for c in guard.open.values()) == places)
                for sock in sockets[places:]:
                    _request(sock)
                await until(lambda: len(guard.waiting) == waiting)
                results["serving_while_full"] = guard.serving
                _GuardedConnection.evictable_at = counted  # type: ignore[method-assign]
                calls.release.set()
                heads = await asyncio.gather(*(loop.run_in_executor(None, _answer_head, sock) for sock in sockets))
                results["statuses"] = {head.split(b"\r\n")[0] for head in heads}
                results["closed_after"] = sum(b"connection: close" in head.lower() for head in heads)
                for sock in sockets:
                    sock.close()
                await until(lambda: not guard.open)
                results["serving_after"], results["evictable_after"] = guard.serving, len(guard.evictable)
            finally:
                _GuardedConnection.evictable_at = original  # type: ignore[method-assign]
                for sock in sockets:
                    sock.close()

    asyncio.run(scenario())
    assert results["statuses"] == {b"HTTP/1.1 200 OK"}
    assert results["closed_after"] == 0  # kept alive: a caller waiting takes a place as a call ends
    assert looked_at == [], f"looked at {len(looked_at)} connections, none of which could make room"
    assert results["serving_while_full"] == places
    assert results["serving_after"] == 0 and results["evictable_after"] == 0


def test_callers_waiting_for_a_place_share_one_timer_and_each_is_answered_429_after_its_wait() -> None:
    """Every place held by a call for longer than the queue's wait: each waiting caller is answered 429, first come
    first served, by one timer for the whole queue (each used to have a timer of its own, made and cancelled)."""
    from cfnrun.api.limits import ConnectionLimits

    calls = _HeldCalls()
    waiting = 20
    armed: List[str] = []
    results: Dict[str, Any] = {}

    async def scenario() -> None:
        calls.release = asyncio.Event()
        async with _http_layer(calls, ConnectionLimits(max_connections=1, queue_wait_s=0.3)) as (guard, port):
            loop = asyncio.get_running_loop()
            call_at = loop.call_at

            def counted_call_at(when: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
                if "waited_too_long" in getattr(callback, "__name__", ""):
                    armed.append(callback.__name__)
                return call_at(when, callback, *args, **kwargs)

            loop.call_at = counted_call_at  # type: ignore[method-assign]

            async def until(condition: Callable[[], bool]) -> None:
                while not condition():
                    await asyncio.sleep(0.01)

            holder = socket.create_connection(("127.0.0.1", port))
            sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(waiting)]
            try:
                _request(holder)
                await until(lambda: guard.serving == 1 and len(guard.waiting) == waiting)
                for sock in sockets:
                    _request(sock)
                heads = await asyncio.gather(*(loop.run_in_executor(None, _answer_head, sock) for sock in sockets))
                results["statuses"] = [head.split(b"\r\n")[0] for head in heads]
                results["throttled"] = guard.throttled
                calls.release.set()
                results["holder"] = (await loop.run_in_executor(None, _answer_head, holder)).split(b"\r\n")[0]
            finally:
                loop.call_at = call_at  # type: ignore[method-assign]
                holder.close()
                for sock in sockets:
                    sock.close()

    asyncio.run(scenario())
    assert results["statuses"] == [b"HTTP/1.1 429 Too Many Requests"] * waiting and results["throttled"] == waiting
    assert results["holder"] == b"HTTP/1.1 200 OK"
    # The queue's timer, set again only for callers that came later than the first (here all come at once; a loaded
    # machine may spread their arrival over a few milliseconds): not one per caller.
    assert 1 <= len(armed) <= waiting // 4, armed
