"""The dependency graph of a stack: what waits for what, as conditions select it; cycles and missing resources refused."""
from __future__ import annotations

import re

import pytest

from cfnrun.stacks.template.dependencies import dependency_graph, output_dependencies
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template

TEMPLATE = load_stack_template("""\
Conditions:
  HasDb: !Equals [a, a]
Resources:
  Bucket: {Type: AWS::S3::Bucket}
  Queue: {Type: AWS::SQS::Queue}
  Db:
    Type: AWS::RDS::DBInstance
    Condition: HasDb
  Note:
    Type: Sample::Note::Resource
    Properties:
      Title: !Sub '${Bucket}-${Db.Endpoint.Address}'
      Tags: [{Key: k, Value: !If [HasDb, !Ref Db, !Ref AWS::NoValue]}]
  Watcher:
    Type: Sample::Watch::Resource
    DependsOn: [Note]
    Metadata: {Queue: !GetAtt Queue.Arn}
Outputs:
  NoteId: {Value: !Ref Note}
  DbAddress: {Value: !GetAtt Db.Endpoint.Address, Condition: HasDb}
""")


def test_references_dependson_and_other_attributes_make_dependencies() -> None:
    graph = dependency_graph(TEMPLATE, {"HasDb": True})
    assert dict(graph.dependencies) == {
        "Bucket": frozenset(), "Queue": frozenset(), "Db": frozenset(),
        "Note": frozenset({"Bucket", "Db"}), "Watcher": frozenset({"Note", "Queue"}),
    }
    assert graph.layers() == [("Bucket", "Queue", "Db"), ("Note",), ("Watcher",)]
    assert graph.deletion_order() == ["Watcher", "Note", "Db", "Queue", "Bucket"]
    assert graph.ready({"Bucket"}) == ("Queue", "Db")
    assert graph.reversed().ready(set()) == ("Watcher",)
    assert graph.dependants("Note") == frozenset({"Watcher"})
    assert output_dependencies(TEMPLATE, {"HasDb": True}) == {"NoteId": frozenset({"Note"}), "DbAddress": frozenset({"Db"})}


def test_a_false_condition_removes_the_resource_and_the_if_branch_not_taken() -> None:
    template = load_stack_template("""\
Conditions: {HasDb: !Equals [a, b]}
Resources:
  Db: {Type: AWS::RDS::DBInstance, Condition: HasDb}
  Note:
    Type: Sample::Note::Resource
    Properties: {Title: !If [HasDb, !GetAtt Db.Endpoint.Address, none]}
Outputs:
  DbAddress: {Value: !GetAtt Db.Endpoint.Address, Condition: HasDb}
""")
    assert dict(dependency_graph(template, {"HasDb": False}).dependencies) == {"Note": frozenset()}
    assert output_dependencies(template, {"HasDb": False}) == {}


def test_naming_a_resource_whose_condition_is_false_is_refused() -> None:
    with pytest.raises(TemplateError, match=r"Unresolved resource dependencies \[Db\] in the Resources block of the template") as raised:
        dependency_graph(TEMPLATE, {"HasDb": False})
    assert raised.value.where == "Resources.Note"


def test_an_output_naming_an_absent_resource_is_refused() -> None:
    template = load_stack_template("Conditions: {Never: !Equals [a, b]}\nResources:\n  A: {Type: X, Condition: Never}\n  B: {Type: X}\n"
                                   "Outputs: {O: {Value: !Ref A}}\n")
    with pytest.raises(TemplateError, match=r"Unresolved resource dependencies \[A\] in the Outputs block of the template"):
        output_dependencies(template, {"Never": False})


@pytest.mark.parametrize(
    "resources, cycle",
    [
        ("A: {Type: X, DependsOn: B}\n  B: {Type: X, Properties: {P: !Ref A}}\n  C: {Type: X, DependsOn: A}\n", "[A, B]"),
        ("A: {Type: X, DependsOn: A}\n", "[A]"),
        ("A: {Type: X, Properties: {P: !Sub '${B.Arn}'}}\n  B: {Type: X, Metadata: {M: !GetAtt A.Arn}}\n", "[A, B]"),
    ],
)
def test_circles_are_refused_with_the_resources_on_them(resources: str, cycle: str) -> None:
    template = load_stack_template(f"Resources:\n  {resources}")
    with pytest.raises(TemplateError, match=f"^{re.escape(f'Circular dependency between resources: {cycle}')}$"):
        dependency_graph(template, {})


class _CountedResources(dict):  # type: ignore[type-arg]
    """A template's resources that count the walks over all of them."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _CountedResources.walks += 1
        return super().__iter__()


def test_a_resources_dependencies_are_found_without_walking_every_resource_again() -> None:
    """Each resource's dependencies are looked up by name: a set of every resource built for each made the graph of a
    wide stack quadratic."""
    from dataclasses import replace

    body = {f"C{index}": {"Type": "T::T::T", "Properties": {"Peer": {"Ref": f"C{index - 1}"} if index else "x"}} for index in range(40)}
    body["Last"] = {"Type": "T::T::T", "DependsOn": ["C3"], "Properties": {"A": {"Fn::GetAtt": ["C39", "Arn"]}}}
    template = load_stack_template(__import__("json").dumps({"Resources": body}), {})
    counted = replace(template, resources=_CountedResources(template.resources))
    _CountedResources.walks = 0
    graph = dependency_graph(counted, {})
    assert _CountedResources.walks <= 2  # the active resources once, not once per resource
    assert graph.dependencies["C0"] == frozenset() and graph.dependencies["C5"] == {"C4"}
    assert graph.dependencies["Last"] == {"C3", "C39"}
