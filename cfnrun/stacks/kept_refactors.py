"""Stack refactors kept across restarts of serve (``--state DIR``): what is written of one, and how it is read back (where:
``state_db.py``'s ``stack_refactors`` table).

Written when a refactor is made and when it is carried out (in the same transaction as the stacks' records it changes):
its statuses, its stacks, its moves, the last operation of each of its stacks when it was planned (what makes it
OBSOLETE once one of them changes), and each stack's template afterwards with its parameter values (``kept_blueprints.py``:
never a NoEcho value). Read back: DescribeStackRefactor, ListStackRefactors and ListStackRefactorActions answer as
before; a refactor that can still be executed has its stacks' blueprints made again, and one that cannot be (a NoEcho
value of one of its stacks, never kept; a template that no longer reads) is shown, and ExecuteStackRefactor refuses it
saying why.
"""
from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from cfnrun.stacks.blueprint import Blueprint, StackEnvironment
from cfnrun.stacks.kept_blueprints import kept_values, made_again, no_echo_values
from cfnrun.stacks.persistence import scrubbed_with
from cfnrun.stacks.provisioning import Provisioners
from cfnrun.stacks.records import Stack
from cfnrun.stacks.refactors import Location, Move, StackRefactor
from cfnrun.stacks.state_db import StateDatabase

_SETTINGS = tuple(f.name for f in fields(StackRefactor) if f.name not in ("blueprints", "moves", "unexecutable"))
Environment = Callable[[str, str, Sequence[str]], StackEnvironment]  # a stack's, by its name, id and NotificationARNs


class KeptRefactors:
    """Writes each stack refactor of a serve to ``--state`` as it changes, and reads them back."""

    def __init__(self, database: Optional[StateDatabase], provisioners: Provisioners) -> None:
        self.database = database
        self.provisioners = provisioners
        self._written: Dict[str, Tuple[str, ...]] = {}  # refactor id → what it held when last written

    def sync(self, refactors: Mapping[str, StackRefactor], stacks: Mapping[str, Stack]) -> None:
        """Write each refactor that changed since it was last written."""
        if self.database is None:
            return
        for refactor in refactors.values():
            held = tuple(repr(getattr(refactor, name)) for name in _SETTINGS)
            if self._written.get(refactor.refactor_id) != held:
                self.database.put_refactor(refactor.refactor_id, refactor_record(refactor, stacks))
                self._written[refactor.refactor_id] = held

    def restore(self, stacks: Mapping[str, Stack], environment: Environment) -> List[StackRefactor]:
        """The kept refactors; raises KeyError, TypeError, ValueError for a damaged record."""
        if self.database is None:
            return []
        restored = []
        for record in self.database.refactors():
            refactor = restored_refactor(record, stacks, environment, self.provisioners)
            self._written[refactor.refactor_id] = tuple(repr(getattr(refactor, name)) for name in _SETTINGS)
            restored.append(refactor)
        return restored


def refactor_record(refactor: StackRefactor, stacks: Mapping[str, Stack]) -> Dict[str, Any]:
    """``refactor`` as written: no NoEcho value (its stacks' or their templates') anywhere."""
    record: Dict[str, Any] = {name: getattr(refactor, name) for name in _SETTINGS}
    record["moves"] = [asdict(move) for move in refactor.moves]
    record["blueprints"] = {name: kept_values(blueprint, blueprint.parameters) for name, blueprint in refactor.blueprints.items()}
    secrets = [s for stack_id in refactor.stack_ids.values() if stack_id in stacks for s in stacks[stack_id].secrets() if s]
    secrets += [s for blueprint in refactor.blueprints.values() for s in no_echo_values(blueprint, blueprint.parameters)]
    kept: Dict[str, Any] = scrubbed_with(record, secrets) if secrets else record
    for name, blueprint in refactor.blueprints.items():
        kept["blueprints"][name]["template_body"] = blueprint.template_body  # the user's own file, as a stack's record keeps it
    return kept


def restored_refactor(record: Dict[str, Any], stacks: Mapping[str, Stack], environment: Environment, provisioners: Provisioners) -> StackRefactor:
    """A kept refactor read back; its stacks' blueprints made again when it can still be executed."""
    settings = {name: record[name] for name in _SETTINGS if name in record}
    settings["created"] = tuple(settings["created"])
    refactor = StackRefactor(**settings)
    refactor.moves = [
        Move(Location(**m["source"]), Location(**m["destination"]), m["detection"], m["type_name"], m["physical_id"], m["compared"])
        for m in record["moves"]
    ]
    if refactor.status != "CREATE_COMPLETE" or refactor.execution_status != "AVAILABLE":
        return refactor  # shown only: nothing to carry out
    blueprints: Dict[str, Blueprint] = {}
    for name, kept in record["blueprints"].items():
        stack_id = refactor.stack_ids[name]
        arns = stacks[stack_id].notification_arns if stack_id in stacks else ()
        blueprint, lacking = made_again(kept, environment(name, stack_id, arns), provisioners)
        if blueprint is None:
            refactor.unexecutable = f"what stack {name} needs: {lacking}"
            return refactor
        blueprints[name] = blueprint
    refactor.blueprints = blueprints
    return refactor
