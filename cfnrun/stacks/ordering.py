"""Run one step per resource in dependency order, independent ones at the same time.

Creating and updating walk the dependencies forwards (a resource starts once everything it
depends on is done), deleting walks them backwards (once everything that depends on it is
gone). A resource whose prerequisites did not all succeed is not started; neither is any
once ``stop`` says so, nor (with ``failure_stops``) once a step has failed (a failure
elsewhere: the service starts nothing new then).

The resources ready at the start (the first wave: those with no prerequisites, and those whose
prerequisites all end before their first wait) start one per turn of the event loop, so the
answers of the first ones are read while the later ones start, rather than after all of them
have. Which of them start is decided as if they all started in one turn: by ``stop`` as it was
at the start and by the failures of the first wave's own steps that ended before their first
wait, not by an answer read in between (in one turn no answer could be).
"""
from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set

Step = Callable[[str], Awaitable[bool]]


async def run_in_order(
    prerequisites: Mapping[str, FrozenSet[str]],
    step: Step,
    stop: Callable[[], bool] = lambda: False,
    failure_stops: bool = False,
) -> Dict[str, Optional[bool]]:
    """Each id's outcome: True done, False failed, None not started. Prerequisites outside the map are met."""
    outcome: Dict[str, Optional[bool]] = {}
    finished = {name: asyncio.Event() for name in prerequisites}
    first_wave_started = asyncio.Event()
    failures = 0

    def needed(name: str) -> List[str]:
        return [p for p in prerequisites[name] if p in finished and p != name]

    async def started(name: str) -> None:
        nonlocal failures
        try:
            outcome[name] = result = await step(name)
            if result is False:
                failures += 1
        finally:
            finished[name].set()

    async def waiting(name: str) -> None:
        """A resource outside the first wave: decided once its prerequisites are done and the first wave started."""
        try:
            wanted = needed(name)
            for prerequisite in wanted:
                await finished[prerequisite].wait()
            await first_wave_started.wait()
            if stop() or (failure_stops and failures) or any(outcome.get(p) is not True for p in wanted):
                outcome[name] = None
                return
        except BaseException:
            finished[name].set()
            raise
        await started(name)

    tasks: List[asyncio.Task] = []
    ended_at_once: Set[str] = set()  # first-wave resources whose step ended (or never began) before waiting on anything
    stopped_at_start = stop()
    failed_at_once = False
    try:
        for name in prerequisites:
            wanted = needed(name)
            if any(p not in ended_at_once for p in wanted):
                tasks.append(asyncio.ensure_future(waiting(name)))
                continue
            if stopped_at_start or failed_at_once or any(outcome.get(p) is not True for p in wanted):
                outcome[name] = None
                finished[name].set()
                ended_at_once.add(name)
                continue
            task = asyncio.ensure_future(started(name))
            tasks.append(task)
            await asyncio.sleep(0)  # the step runs to its first wait; answers already there are read
            if task.done():  # it ended within that first run, as it would have in a single turn
                ended_at_once.add(name)
                failed_at_once = failed_at_once or (failure_stops and outcome.get(name) is False)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    first_wave_started.set()
    await asyncio.gather(*tasks)
    return outcome


def reverse(dependencies: Mapping[str, Iterable[str]], among: Iterable[str]) -> Dict[str, FrozenSet[str]]:
    """For deleting ``among``: each one's prerequisites are the ones among them that depend on it."""
    chosen = set(among)
    dependants: Dict[str, set] = {name: set() for name in chosen}
    for name in chosen:
        for dependency in dependencies.get(name, ()):
            if dependency in chosen and dependency != name:
                dependants[dependency].add(name)
    return {name: frozenset(found) for name, found in dependants.items()}
