"""The console's pages as HTML text: every value from a template, handler or schema HTML-escaped, NoEcho values masked."""
from __future__ import annotations

import html
import json
import time
from itertools import groupby
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence
from urllib.parse import quote

if TYPE_CHECKING:  # serve imports the console before it listens: nothing heavy at import
    from cfnrun.console.sources import SourceView
    from cfnrun.events.stack import StackEvent
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.stacks.records import Stack



def text(value: object) -> str:
    """``value`` as HTML text: escaped, quotes included."""
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{text(title)} · cfnrun console</title>"
        "<link rel=\"stylesheet\" href=\"/console/static/console.css\"></head><body>"
        "<nav><a href=\"/\">Served</a><a href=\"/stacks\">Stacks</a></nav>"
        f"<h1>{text(title)}</h1>{body}</body></html>"
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> str:
    """A table of cells already rendered (escape each cell's text with ``text``)."""
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    titled = f"<caption>{text(caption)}</caption>" if caption else ""
    return f"<table>{titled}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def status(value: str) -> str:
    kind = next((k for k in ("FAILED", "IN_PROGRESS", "COMPLETE") if k in value), "")
    return f"<span class=\"status-{kind}\">{text(value)}</span>"


def when(timestamp: Optional[float]) -> str:
    return text(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(timestamp))) if timestamp else ""


# -- what is served ----------------------------------------------------------------------------------


def served(sources: Sequence[SourceView]) -> str:
    parts = [f"<p>{len(sources)} source(s) served.</p>"] if sources else ["<p>Nothing is served.</p>"]
    for source in sources:
        parts.append(f"<h2 id=\"{text(source.name)}\">{text(source.name)}</h2><p>{text(source.kind)} from <code>{text(source.root)}</code></p>")
        parts.append(table(
            ("function", "handler", "time limit (s)", "workers"),
            ((text(f.name), text(f.handler), text(f.timeout_s if f.timeout_s is not None else "default"), text(f.workers)) for f in source.functions),
            "functions",
        ))
        if source.schema is not None:
            parts.append(_schema(source.schema))
    return page("What serve serves", "".join(parts))


def _schema(schema: "ResourceSchema") -> str:
    from cfnrun.model.action import Action

    identifiers = [", ".join(schema.primary_identifier)] + [", ".join(ids) for ids in schema.additional_identifiers]
    rows = [("primary identifier", text(identifiers[0]))]
    rows += [("additional identifier", text(ids)) for ids in identifiers[1:]]
    rows += [("writeOnly properties", text(", ".join(schema.write_only_properties)))]
    rows += [(f"{action.value} timeout (min)", text(schema.timeout_minutes(action))) for action in Action if schema.handler(action) is not None]
    document = json.dumps(schema.document, indent=2, sort_keys=True)
    return table(("", ""), rows, "schema") + f"<details><summary>schema</summary><pre>{text(document)}</pre></details>"


# -- stacks ------------------------------------------------------------------------------------------


def stack_link(stack: Stack) -> str:
    return f"<a href=\"/stack?id={quote(stack.stack_id, safe='')}\">{text(stack.name)}</a>"


def stacks(listed: Sequence[Stack]) -> str:
    rows = ((stack_link(s), status(s.status), when(s.created_at), text(s.masked(s.reason or ""))) for s in listed)
    body = table(("stack", "status", "created", "reason"), rows) if listed else "<p>No stacks yet.</p>"
    return page("Stacks", body)


def stack(shown: Stack) -> str:
    m = shown.masked
    parts = [f"<p>Status: {status(shown.status)} {text(m(shown.reason or ''))}</p>"]
    parts.append("<h2>Resources</h2>" + table(
        ("logical id", "type", "status", "physical id", "reason"),
        ((text(r.logical_id), text(r.type_name), status(r.status), text(m(r.physical_id or "")), text(m(r.reason or ""))) for r in shown.resources.values()),
    ))
    parts.append("<h2>Events</h2>" + _timeline(shown))
    parts.append("<h2>Parameters</h2>" + table(("key", "value"), ((text(k), text(v)) for k, v in shown.shown_parameters().items())))
    parts.append("<h2>Outputs</h2>" + table(
        ("key", "value", "description", "export name"),
        ((text(o.key), text(m(_shown_value(o.value))), text(o.description), text(o.export_name)) for o in shown.outputs),
    ))
    parts.append(f"<h2>Template</h2><pre>{text(m(shown.template_body))}</pre>")
    return page(f"Stack {shown.name}", "".join(parts))


def _shown_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _timeline(shown: Stack) -> str:
    """The stack's events, oldest first, one table per operation (each begins with the stack's own IN_PROGRESS event)."""
    sections: List[str] = []
    operation = 0

    def starts_operation(event: StackEvent) -> int:
        nonlocal operation
        if event.logical_id == shown.name and event.resource_type == "AWS::CloudFormation::Stack" and event.status.endswith("_IN_PROGRESS") and "CLEANUP" not in event.status and "ROLLBACK" not in event.status:
            operation += 1
        return operation

    for _, events in groupby(shown.events, key=starts_operation):
        listed = list(events)
        rows = (
            (when(e.timestamp), text(e.logical_id), text(e.resource_type), status(e.status), text(shown.masked(e.reason or "")), text(e.hook_type or ""))
            for e in listed
        )
        title = listed[0].status.replace("_IN_PROGRESS", "") if listed else ""
        sections.append(table(("time", "logical id", "type", "status", "reason", "hook"), rows, title))
    return "".join(sections) or "<p>No events.</p>"


def not_found(what: str) -> str:
    return page("Not found", f"<p>{text(what)}</p>")
