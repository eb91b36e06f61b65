"""cfn-lint on stack templates: the served types' schemas are checked like AWS types; errors and warnings with lines."""
from __future__ import annotations

from typing import Any, Dict

from cfnrun.stacks.template.lint import lint_template, lint_warnings


def _note_schema(*properties: str) -> Dict[str, Any]:
    return {
        "typeName": "Sample::Note::Resource",
        "description": "A note.",
        "properties": {name: {"type": "string"} for name in ("Title", "NoteId", *properties)},
        "required": ["Title"],
        "readOnlyProperties": ["/properties/NoteId"],
        "primaryIdentifier": ["/properties/NoteId"],
        "additionalProperties": False,
        "handlers": {"create": {"permissions": []}, "read": {"permissions": []}, "delete": {"permissions": []}},
    }


TEMPLATE = """\
Resources:
  Note:
    Type: Sample::Note::Resource
    Properties:
      Title: hello
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !GetAtt Note.NoteId
Outputs:
  NoteId:
    Value: !GetAtt Note.NoteId
"""


def test_a_template_using_a_served_type_lints_clean() -> None:
    assert lint_template(TEMPLATE, [_note_schema()]) == []


def test_a_misspelt_property_of_a_served_type_is_an_error_naming_it_and_its_line() -> None:
    findings = lint_template(TEMPLATE.replace("Title: hello", "Titel: hello"), [_note_schema()])
    misspelt = [finding for finding in findings if "Titel" in finding.message]
    assert [(f.rule_id, f.line, f.severity) for f in misspelt] == [("E3002", 5, "error")]
    assert misspelt[0].path == "Resources/Note/Properties/Titel"
    [warning] = [line for line in lint_warnings(findings) if "Titel" in line]
    assert "'Titel' was unexpected" in warning and "line 5" in warning and "not refused" in warning


def test_an_unknown_attribute_of_a_served_type_is_an_error() -> None:
    findings = lint_template(TEMPLATE.replace("Value: !GetAtt Note.NoteId", "Value: !GetAtt Note.Nope"), [_note_schema()])
    assert [(f.rule_id, f.line) for f in findings] == [("E6101", 12)]


def test_a_changed_schema_takes_effect_and_a_type_no_longer_given_is_unknown() -> None:
    with_body = TEMPLATE.replace("Title: hello", "Title: hello\n      Body: text")
    assert [f.rule_id for f in lint_template(with_body, [_note_schema()])] == ["E3002"]
    assert lint_template(with_body, [_note_schema("Body")]) == []
    assert "E3006" in [f.rule_id for f in lint_template(TEMPLATE, [])]


def test_warnings_are_findings_but_not_errors() -> None:
    findings = lint_template(TEMPLATE.replace("Resources:", "Parameters:\n  Unused: {Type: String}\nResources:"), [_note_schema()])
    assert [(f.rule_id, f.severity) for f in findings] == [("W2001", "warning")]
    assert lint_warnings(findings)[0].startswith("template lint (warning, not refused")


def test_a_pattern_cfn_lint_cannot_compile_is_no_finding() -> None:
    """An ECMA-262 pattern with a surrogate-pair range (as AWS schemas write U+10000-U+10FFFF) met by its value.

    Python's ``re`` reads ``\\uD800\\uDC00-\\uDBFF\\uDFFF`` as a descending range; cfn-lint reported its own
    failure as "[E3031] ... bad character range" against a template the service accepts.
    """
    schema = _note_schema()
    schema["properties"]["Title"]["pattern"] = "^[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF]+$"
    assert lint_template(TEMPLATE, [schema]) == []


def test_serve_lints_in_a_child_process_and_a_lint_past_its_limit_is_stopped_not_refused(monkeypatch: Any) -> None:
    import asyncio

    from cfnrun.stacks import lint_process
    from cfnrun.stacks.lint_child import WAITED_FOR
    from cfnrun.stacks.lint_process import lint_lines

    monkeypatch.setattr(lint_process.CHILDREN, "arguments", (WAITED_FOR,))  # this test waits: not at low priority

    async def main() -> None:
        misspelt = await lint_lines(TEMPLATE.replace("Title: hello", "Titel: hello"), [_note_schema()], "us-east-1")
        assert any("'Titel' was unexpected" in line and "line 5" in line for line in misspelt), misspelt
        assert await lint_lines(TEMPLATE, [_note_schema()], "us-east-1") == []  # the warm child, its tables reset
        assert await lint_lines(TEMPLATE, [_note_schema()], "us-east-1", limit_s=0.0) == []  # linted before: remembered
        stopped = await lint_lines(TEMPLATE + "# changed\n", [_note_schema()], "us-east-1", limit_s=0.0)
        assert stopped == ["template lint did not finish within 0 s and was stopped; the template is not refused"]

    asyncio.run(main())


def test_a_lint_that_nothing_waits_for_runs_at_low_priority_and_stack_test_s_at_serve_s(monkeypatch: Any) -> None:
    """serve's lints run beside its handler calls, at low priority; ``cfnrun stack test``'s steps wait for the
    template's lint, whose child (started after ``lints_waited_for``) keeps the command's priority."""
    import asyncio
    import os
    import uuid

    from cfnrun.stacks import lint_process
    from cfnrun.stacks.lint_child import LOW_PRIORITY

    def niceness(pid: int) -> int:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[16])

    async def child_priority() -> int:
        assert await lint_process.lint_lines(TEMPLATE + f"# {uuid.uuid4()}\n", [_note_schema()], "us-east-1") == []
        [child] = lint_process.CHILDREN._idle
        return niceness(child.pid) - niceness(os.getpid())

    monkeypatch.setattr(lint_process.CHILDREN, "arguments", ())
    assert asyncio.run(child_priority()) == LOW_PRIORITY
    lint_process.lints_waited_for()
    assert asyncio.run(child_priority()) == 0


def test_a_lint_waits_until_ready_once_its_turn_has_come_and_a_remembered_one_does_not_wait() -> None:
    """serve's lint waits for a pause in the handler calls once its turn has come (one lint at a time): a second lint
    asked meanwhile is not ready-checked until the first is answered; a template linted before is answered at once."""
    import asyncio
    from typing import List

    from cfnrun.stacks.lint_process import lint_lines

    async def main() -> None:
        seen: List[str] = []
        first_may_go = asyncio.Event()

        async def first_ready() -> None:
            seen.append("first ready asked")
            await first_may_go.wait()

        async def second_ready() -> None:
            seen.append("second ready asked")

        async def first() -> Any:
            lines = await lint_lines(TEMPLATE + "# first\n", [_note_schema()], "us-east-1", ready=first_ready)
            seen.append("first answered")
            return lines

        one = asyncio.ensure_future(first())
        while not seen:  # the first lint holds the turn and waits to be ready
            await asyncio.sleep(0)
        two = asyncio.ensure_future(lint_lines(TEMPLATE + "# second\n", [_note_schema()], "us-east-1", ready=second_ready))
        for _ in range(20):  # many turns of the loop: the second waits for its turn, not yet for ready
            await asyncio.sleep(0)
        assert seen == ["first ready asked"]
        first_may_go.set()
        assert await one == [] and await two == []
        assert seen == ["first ready asked", "first answered", "second ready asked"]

        async def never_ready() -> None:
            raise AssertionError("a remembered template is not linted again")

        assert await lint_lines(TEMPLATE + "# first\n", [_note_schema()], "us-east-1", ready=never_ready) == []

    asyncio.run(main())


def test_the_cfnlintrc_of_serve_s_working_folder_applies_to_its_lint(tmp_path: Any, monkeypatch: Any) -> None:
    import asyncio

    from cfnrun.stacks.lint_process import lint_lines

    misspelt = TEMPLATE.replace("Title: hello", "Titel: hello")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".cfnlintrc").write_text("ignore_checks:\n  - E3002\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def lint_in(folder: Any) -> Any:
        monkeypatch.chdir(folder)
        return await lint_lines(misspelt, [_note_schema()], "us-east-1")

    async def main() -> None:
        assert any("[E3002]" in line for line in await lint_in(elsewhere))
        assert not any("[E3002]" in line for line in await lint_in(project))  # the project's .cfnlintrc: E3002 ignored
        assert any("[E3002]" in line for line in await lint_in(elsewhere))  # and only there

    asyncio.run(main())
    monkeypatch.chdir(project)
    assert not any(finding.rule_id == "E3002" for finding in lint_template(misspelt, [_note_schema()]))  # in-process too
    monkeypatch.chdir(elsewhere)
    assert any(finding.rule_id == "E3002" for finding in lint_template(misspelt, [_note_schema()]))
