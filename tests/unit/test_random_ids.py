"""The ids made per handler call and per stack event are random version-4 UUIDs, as ``uuid.uuid4()`` makes them."""
from __future__ import annotations

import uuid

from cfnrun.model.random_ids import random_uuid


def test_each_id_is_a_random_version_4_uuid_in_its_canonical_text() -> None:
    made = [random_uuid() for _ in range(2000)]
    assert len(set(made)) == len(made)
    for text in made:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == text
    # every variant digit (8, 9, a, b) and many version-4 digits appear: the bits come from the random bytes
    assert {text[19] for text in made} == set("89ab")
    assert len({text[15] for text in made}) == 16
