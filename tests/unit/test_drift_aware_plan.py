"""A drift-aware change set's weighing of previous deployment, actual state and template, one property at a time."""
from __future__ import annotations

from cfnrun.stacks.change_details import ChangeDetail
from cfnrun.stacks.drift import IN_SYNC, MODIFIED, NOT_CHECKED, PropertyDifference, ResourceDrift
from cfnrun.stacks.drift_aware import ACTUAL_STATE, NO_MODIFICATION, PREVIOUS_DEPLOYMENT_STATE, ActualState, actual_state, stack_status
from cfnrun.stacks.plan import KNOWN_AFTER_APPLY, against_actual

DRIFTED = ActualState(MODIFIED, 1.0, {"Title": "edited", "Priority": 5}, frozenset({"Title", "Priority"}), frozenset({"Password"}))


def detail(name: str, before: object, after: object, source: str = "DirectModification") -> ChangeDetail:
    return ChangeDetail(name, "Never", "Static", source, None, "Properties", before, after)


def test_a_drift_result_becomes_the_actual_state_its_differences_name() -> None:
    differences = (PropertyDifference("/Title", "a", "b", "NOT_EQUAL"), PropertyDifference("/Tags/1", "x", "y", "NOT_EQUAL"))
    drift = ResourceDrift("stack", "Note", "n-1", "T::T::T", MODIFIED, 2.0, differences=differences)
    state = actual_state(drift, {"Title": "b"}, frozenset({"Password"}))
    assert (state.status, state.drifted, state.checked_at) == (MODIFIED, frozenset({"Title", "Tags"}), 2.0)
    unsupported = actual_state(ResourceDrift("stack", "Bucket", "b", "AWS::S3::Bucket", NOT_CHECKED, 2.0), None, frozenset())
    assert (unsupported.status, unsupported.read) == ("UNSUPPORTED", False)


def test_what_actually_was_is_the_last_deployment_with_each_drifted_property_as_read() -> None:
    state = ActualState(MODIFIED, 1.0, {"Title": "edited"}, frozenset({"Title", "Gone"}))
    assert state.restored({"Title": "old", "Gone": 1, "Kept": True}) == {"Title": "edited", "Kept": True}


def test_a_property_drifted_and_left_alone_by_the_template_goes_back_from_its_actual_value() -> None:
    [reverted] = against_actual([detail("Title", "old", "old")], DRIFTED)
    assert (reverted.before, reverted.after, reverted.before_from, reverted.drift, reverted.sync) == ("edited", "old", ACTUAL_STATE, ("old", "edited"), False)
    assert reverted.change_type == "Modify"


def test_a_template_that_now_says_what_actually_is_only_syncs_and_keeps_one_detail() -> None:
    both = [detail("Priority", 2, "5", "DirectModification"), detail("Priority", 2, "5", "ParameterReference")]
    [synced] = against_actual(both, DRIFTED)  # "5" and 5 are the same value, as the template's text and READ's number
    assert (synced.change_type, synced.change_source, synced.before_from, synced.drift) == ("SyncWithActual", NO_MODIFICATION, PREVIOUS_DEPLOYMENT_STATE, (2, 5))


def test_an_unknown_after_value_is_never_a_sync_and_write_only_or_unread_properties_come_from_the_last_deployment() -> None:
    [dynamic] = against_actual([detail("Title", "old", KNOWN_AFTER_APPLY)], DRIFTED)
    assert not dynamic.sync and dynamic.before == "edited"
    [secret] = against_actual([detail("Password", "x", "y")], DRIFTED)
    assert (secret.before_from, secret.drift) == (PREVIOUS_DEPLOYMENT_STATE, None)
    in_sync = ActualState(IN_SYNC, 1.0, {"Title": "old"})
    [plain] = against_actual([detail("Title", "old", "new")], in_sync)
    assert (plain.before_from, plain.before, plain.drift) == (ACTUAL_STATE, "old", None)
    assert against_actual([detail("Title", "old", "new")], None)[0].before_from is None  # a traditional change set


def test_the_change_set_s_stack_drift_status() -> None:
    unsupported = ActualState("UNSUPPORTED", 1.0)
    assert stack_status({"a": ActualState(IN_SYNC, 1.0), "b": unsupported}) == "IN_SYNC"
    assert stack_status({"a": ActualState(IN_SYNC, 1.0), "b": DRIFTED}) == "DRIFTED"
    assert stack_status({"a": ActualState("UNKNOWN", 1.0)}) == "UNKNOWN"
