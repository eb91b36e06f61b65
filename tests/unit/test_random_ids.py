"""The ids made per handler call, per request and per stack event are random version-4 UUIDs, as ``uuid.uuid4()`` makes them."""
from __future__ import annotations

import os
import uuid

from cfnrun.model import random_ids
from cfnrun.model.random_ids import random_uuid


def test_each_id_is_a_random_version_4_uuid_in_its_canonical_text_and_none_repeats() -> None:
    made = [random_uuid() for _ in range(8 * random_ids._IDS_PER_READ + 5)]  # across several reads of random bytes
    assert len(set(made)) == len(made)
    for text in made:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == text  # lowercase, 8-4-4-4-12
    # every variant digit (8, 9, a, b) and every version-4 digit appear: the bits come from the random bytes
    assert {text[19] for text in made} == set("89ab")
    assert len({text[15] for text in made}) == 16
    for at in (*range(0, 8), *range(9, 13), *range(15, 18), *range(20, 23), *range(24, 36)):  # every other digit: random
        assert len({text[at] for text in made}) == 16, at


def test_a_forked_child_makes_ids_of_its_own() -> None:
    random_uuid()  # the parent holds unused random bytes
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side
        os.close(read)
        os.write(write, random_uuid().encode())
        os._exit(0)
    os.close(write)
    from_child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(child, 0)
    assert uuid.UUID(from_child).version == 4
    assert random_uuid() != from_child  # the parent's next id is not the one its child made
