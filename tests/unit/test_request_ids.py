"""Request ids: random version-4 UUIDs in the form ``str(uuid.uuid4())`` gives, never shared with a forked child."""
from __future__ import annotations

import os
import uuid

from cfnrun.runtime import request_ids
from cfnrun.runtime.request_ids import new_request_id


def test_each_id_is_a_random_uuid_in_its_usual_text_form_and_none_repeats() -> None:
    ids = [new_request_id() for _ in range(3 * request_ids._IDS_PER_READ + 5)]  # across several reads of random bytes
    for each in ids:
        parsed = uuid.UUID(each)
        assert str(parsed) == each  # lowercase, 8-4-4-4-12
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert len(set(ids)) == len(ids)
    assert {each[19] for each in ids} == set("89ab")  # the variant's free bits are random too


def test_a_forked_child_makes_ids_of_its_own() -> None:
    new_request_id()  # the parent holds unused random bytes
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's side
        os.close(read)
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.close(write)
    from_child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(child, 0)
    assert uuid.UUID(from_child).version == 4
    assert new_request_id() != from_child  # the parent's next id is not the one its child made
