"""The first wave of a stack operation starts one resource per turn of the event loop, deciding as one turn would."""
from __future__ import annotations

import asyncio
from typing import Dict, FrozenSet, List, Set

from cfnrun.stacks.ordering import run_in_order

NONE: FrozenSet[str] = frozenset()


def test_an_answer_read_between_launches_is_read_before_the_last_resource_starts() -> None:
    """Each independent resource's answer can arrive while later ones start: the workers are not left idle."""
    order: List[str] = []

    async def step(name: str) -> bool:
        order.append(f"start {name}")
        await asyncio.sleep(0)  # the handler's answer, ready at once
        order.append(f"done {name}")
        return True

    outcome = asyncio.run(run_in_order({f"R{i}": NONE for i in range(20)}, step, failure_stops=True))
    assert outcome == {f"R{i}": True for i in range(20)}
    assert order.index("done R0") < order.index("start R19")


def test_a_failure_answered_while_the_first_wave_starts_does_not_hold_back_the_rest_of_it() -> None:
    """As in one turn: every resource ready at the start starts, though the first one's failure was read meanwhile."""
    started: List[str] = []

    async def step(name: str) -> bool:
        started.append(name)
        await asyncio.sleep(0)
        return name != "R0"

    prerequisites: Dict[str, FrozenSet[str]] = {f"R{i}": NONE for i in range(10)}
    prerequisites["Later"] = frozenset({"R9"})
    outcome = asyncio.run(run_in_order(prerequisites, step, failure_stops=True))
    assert started == [f"R{i}" for i in range(10)]
    assert outcome["R0"] is False and outcome["Later"] is None  # a resource after the first wave sees the failure


def test_a_failure_before_the_first_wait_stops_the_rest_of_the_first_wave_as_before() -> None:
    started: List[str] = []

    async def step(name: str) -> bool:
        started.append(name)
        if name == "R2":
            return False  # refused before any call, e.g. its properties
        await asyncio.sleep(0)
        return True

    outcome = asyncio.run(run_in_order({f"R{i}": NONE for i in range(5)}, step, failure_stops=True))
    assert started == ["R0", "R1", "R2"]
    assert outcome == {"R0": True, "R1": True, "R2": False, "R3": None, "R4": None}


def test_without_failure_stops_a_failure_stops_nothing() -> None:
    async def step(name: str) -> bool:
        return name != "R0"

    outcome = asyncio.run(run_in_order({f"R{i}": NONE for i in range(3)}, step))
    assert outcome == {"R0": False, "R1": True, "R2": True}


def test_a_resource_whose_prerequisite_ends_at_once_belongs_to_the_first_wave() -> None:
    """Its prerequisite needed no wait, so it is decided in the first wave; a later failure there stops it as before."""
    started: List[str] = []

    async def step(name: str) -> bool:
        started.append(name)
        if name == "Bad":
            return False
        if name == "Slow":
            await asyncio.sleep(0)
        return True

    prerequisites = {"Quick": NONE, "AfterQuick": frozenset({"Quick"}), "Slow": NONE, "AfterSlow": frozenset({"Slow"}), "Bad": NONE}
    outcome = asyncio.run(run_in_order(prerequisites, step, failure_stops=True))
    assert started == ["Quick", "AfterQuick", "Slow", "Bad"]
    assert outcome == {"Quick": True, "AfterQuick": True, "Slow": True, "Bad": False, "AfterSlow": None}


def test_a_stop_raised_while_the_first_wave_starts_applies_after_it() -> None:
    stopping: Set[str] = set()
    started: List[str] = []

    async def step(name: str) -> bool:
        started.append(name)
        stopping.add(name)  # e.g. serve told to stop while R0's call was out
        await asyncio.sleep(0)
        return True

    prerequisites = {"R0": NONE, "R1": NONE, "After": frozenset({"R0"})}
    outcome = asyncio.run(run_in_order(prerequisites, step, stop=lambda: bool(stopping)))
    assert started == ["R0", "R1"]
    assert outcome["After"] is None
