"""Stack and resource statuses, as the CloudFormation API names them."""
from __future__ import annotations

# Stack statuses an operation ends in; anything else is still moving.
STACK_SETTLED = frozenset(
    {
        "CREATE_COMPLETE",
        "CREATE_FAILED",
        "ROLLBACK_COMPLETE",
        "ROLLBACK_FAILED",
        "DELETE_COMPLETE",
        "DELETE_FAILED",
        "UPDATE_COMPLETE",
        "UPDATE_ROLLBACK_COMPLETE",
        "UPDATE_ROLLBACK_FAILED",
        "REVIEW_IN_PROGRESS",
        "IMPORT_COMPLETE",
        "IMPORT_ROLLBACK_COMPLETE",
        "IMPORT_ROLLBACK_FAILED",
    }
)
# Statuses from which UpdateStack is accepted.
UPDATABLE = frozenset(
    {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "UPDATE_FAILED", "IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE"}
)
# RollbackStack starts from these: a create or an update that failed with rollback disabled.
ROLLBACK_FROM = frozenset({"CREATE_FAILED", "UPDATE_FAILED"})
# A stack in one of these has no resources the service would still manage: it only waits to be deleted.
ONLY_DELETABLE = frozenset({"ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "CREATE_FAILED", "DELETE_FAILED"})


def is_settled(status: str) -> bool:
    return status in STACK_SETTLED
