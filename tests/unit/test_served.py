"""Serve's lookup of what it serves, without workers: function names across providers and templates, types, debugger ports."""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Sequence

import pytest

from cfnrun.app import served as served_module
from cfnrun.app.served import Served, UnknownFunction, UnknownType, check_unique, qualified_name
from cfnrun.model.budgets import Budgets
from cfnrun.model.errors import CfnrunError
from cfnrun.model.function_template import FunctionTemplate, load_function_template
from cfnrun.model.project import Project, load_project
from cfnrun.runtime.registry import FunctionRegistry
from cfnrun.runtime.spec import RuntimeSettings

ROOT = Path(__file__).resolve().parents[2]
NOTE = load_project(ROOT / "samples" / "note", usable_schema=False)
CLUSTER = load_project(ROOT / "samples" / "cluster", usable_schema=False)
HOOK = load_project(ROOT / "samples" / "hook", usable_schema=False)
FUNCTIONS = load_function_template(ROOT / "tests" / "fixtures" / "functions" / "template.yaml")
ARN = "arn:aws:lambda:us-east-1:123456789012:function:"


def served(providers: Sequence[Project], templates: Sequence[FunctionTemplate] = (), debug_port: "int | None" = None) -> Served:
    return Served(providers, templates, RuntimeSettings(debug_port=debug_port), Budgets())


def test_a_types_functions_are_named_with_the_type_name_made_a_lambda_function_name() -> None:
    assert qualified_name("Cfnrun::Sample::Note", "TypeFunction") == "Cfnrun-Sample-Note-TypeFunction"


def test_with_one_provider_names_stay_as_they_were_and_the_qualified_name_works_too() -> None:
    one = served([NOTE], [FUNCTIONS])
    assert one.function("TypeFunction").name == "TypeFunction"
    assert one.function(ARN + "TestEntrypoint:$LATEST").spec.logical_id == "TestEntrypoint"
    assert one.function("Cfnrun-Sample-Note-TypeFunction").spec is NOTE.functions["TypeFunction"]
    assert one.function_names() == ["TypeFunction", "TestEntrypoint", "EchoFunction", "cfnrun-echo", "PlainFunction"]


def test_with_several_providers_a_shared_bare_name_is_ambiguous_and_lists_the_unambiguous_ones() -> None:
    two = served([NOTE, CLUSTER])
    with pytest.raises(UnknownFunction) as ambiguous:
        two.function("TypeFunction")
    assert ambiguous.value.candidates == ["Cfnrun-Sample-Note-TypeFunction", "Cfnrun-Sample-Cluster-TypeFunction"]
    found = two.function(ARN + "Cfnrun-Sample-Cluster-TypeFunction")
    assert (found.name, found.type_name, found.registry) == ("Cfnrun-Sample-Cluster-TypeFunction", "Cfnrun::Sample::Cluster", two.provider("Cfnrun::Sample::Cluster"))
    with pytest.raises(UnknownFunction) as missing:
        two.function("Nope")
    assert missing.value.candidates == [] and "Cfnrun-Sample-Note-TestEntrypoint" in str(missing.value)


def test_a_plain_function_answers_to_its_logical_id_function_name_and_arn() -> None:
    both = served([NOTE, CLUSTER], [FUNCTIONS])
    for name in ("EchoFunction", "cfnrun-echo", ARN + "cfnrun-echo"):
        function = both.function(name)
        assert (function.name, function.type_name, function.spec.code_dir) == ("EchoFunction", None, FUNCTIONS.root / "src")
    assert both.function_arn(both.function("PlainFunction")) == ARN + "PlainFunction"


def test_a_name_found_before_is_found_again_in_what_is_served_now_after_a_reload_or_a_stacks_functions_came() -> None:
    one = served([NOTE])
    before = one.function("TypeFunction")
    assert one.function("TypeFunction") is before  # remembered while nothing changed
    registry = one.providers[0]
    registry.project = load_project(ROOT / "samples" / "note", usable_schema=False)  # what a reload does
    after = one.function("TypeFunction")
    assert after is not before and after.spec is registry.project.functions["TypeFunction"]
    with pytest.raises(UnknownFunction):
        one.function("EchoFunction")
    functions = Served([], [FUNCTIONS], RuntimeSettings(), Budgets()).templates[0]
    one.serve_template(functions)  # a stack's functions, served from now on
    assert one.function("EchoFunction").registry is functions
    one.stop_serving_template(functions)
    with pytest.raises(UnknownFunction):
        one.function("EchoFunction")


def test_a_remembered_name_is_found_without_reading_what_is_served_until_a_project_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: List[str] = []

    class Counted(FunctionRegistry):  # type: ignore[type-arg]
        def __getattribute__(self, name: str) -> Any:
            if name == "project":
                reads.append(name)
            return super().__getattribute__(name)

    monkeypatch.setattr(served_module, "FunctionRegistry", Counted)
    two = served([NOTE, CLUSTER], [FUNCTIONS])
    first = two.function("Cfnrun-Sample-Note-TypeFunction")
    reads.clear()
    assert [two.function("Cfnrun-Sample-Note-TypeFunction") for _ in range(3)] == [first] * 3
    assert reads == []  # neither every registry nor its project gathered for each call
    other = served([HOOK])
    other.providers[0].project = load_project(ROOT / "samples" / "hook", usable_schema=False)  # another serve's reload
    again = two.function("Cfnrun-Sample-Note-TypeFunction")  # found anew, to the same function
    assert reads and again is not first and (again.name, again.spec) == (first.name, first.spec)


def test_types_are_looked_up_by_name_and_hooks_are_no_resource_types() -> None:
    lookup = served([NOTE, HOOK])
    assert lookup.type_names() == ["Cfnrun::Sample::Note"]
    assert lookup.provider("Cfnrun::Sample::BucketGuard").project.is_hook
    with pytest.raises(UnknownType, match="this endpoint serves Cfnrun::Sample::Note$"):
        lookup.provider("Org::Svc::Missing")


def test_debugger_ports_run_on_across_sources_in_order() -> None:
    lookup = served([NOTE, CLUSTER], [FUNCTIONS], debug_port=5678)
    assert [registry.settings.debug_port for registry in lookup.registries] == [5678, 5680, 5682]


def test_a_type_served_twice_or_a_taken_function_name_is_refused() -> None:
    with pytest.raises(CfnrunError, match="two providers serve Cfnrun::Sample::Note"):
        check_unique([NOTE, load_project(NOTE.root, usable_schema=False)], [])
    with pytest.raises(CfnrunError, match="function name EchoFunction is also served by --functions"):
        check_unique([NOTE], [FUNCTIONS, FUNCTIONS])
    check_unique([NOTE, CLUSTER], [FUNCTIONS])
