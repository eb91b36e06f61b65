"""Run one step per resource in dependency order, independent ones at the same time.

Creating and updating walk the dependencies forwards (a resource starts once everything it
depends on is done), deleting walks them backwards (once everything that depends on it is
gone). A resource whose prerequisites did not all succeed is not started; neither is any
once ``stop`` says so (a failure elsewhere: the service starts nothing new then).
"""
from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Dict, FrozenSet, Iterable, Mapping, Optional

Step = Callable[[str], Awaitable[bool]]


async def run_in_order(
    prerequisites: Mapping[str, FrozenSet[str]], step: Step, stop: Callable[[], bool] = lambda: False
) -> Dict[str, Optional[bool]]:
    """Each id's outcome: True done, False failed, None not started. Prerequisites outside the map are met."""
    outcome: Dict[str, Optional[bool]] = {}
    finished = {name: asyncio.Event() for name in prerequisites}

    async def one(name: str) -> None:
        try:
            needed = [p for p in prerequisites[name] if p in finished and p != name]
            for prerequisite in needed:
                await finished[prerequisite].wait()
            if stop() or any(outcome.get(p) is not True for p in needed):
                outcome[name] = None
                return
            outcome[name] = await step(name)
        finally:
            finished[name].set()

    await asyncio.gather(*(one(name) for name in prerequisites))
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
