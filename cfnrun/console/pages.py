"""The console's pages as HTML text: every value from a template, handler or schema HTML-escaped, NoEcho values masked."""
from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import quote, urlencode

if TYPE_CHECKING:  # serve imports the console before it listens: nothing heavy at import
    from cfnrun.console.sources import SourceView
    from cfnrun.events.stack import StackEvent
    from cfnrun.history.store import RecordedOperation
    from cfnrun.stacks.drift import ResourceDrift
    from cfnrun.stacks.hook_results import HookResult
    from cfnrun.model.schema import ResourceSchema
    from cfnrun.stacks.records import Stack
    from cfnrun.stacks.change_sets import ChangeSet



def text(value: object) -> str:
    """``value`` as HTML text: escaped, quotes included."""
    return html.escape("" if value is None else str(value), quote=True)


def page(title: str, body: str, live: Optional[str] = None, source: Optional[str] = None) -> str:
    """A whole page. ``live``: the event stream (``/console/events?…``) whose notices make ``live.js`` re-fetch the page's
    ``<main>`` (from ``source`` if given, else the page's own address); without JavaScript the page is the same, as of its loading."""
    follow = "<script src=\"/console/static/live.js\" defer></script>" if live else ""
    stream = f" data-events=\"{text(live)}\"" if live else ""
    stream += f" data-source=\"{text(source)}\"" if live and source else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{text(title)} · cfnrun console</title>"
        f"<link rel=\"stylesheet\" href=\"/console/static/console.css\">{follow}</head><body>"
        "<nav><a href=\"/\">Served</a><a href=\"/stacks\">Stacks</a><a href=\"/operations\">Operations</a></nav>"
        f"<h1>{text(title)}</h1><main id=\"live\"{stream}>{body}</main></body></html>"
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], caption: str = "") -> str:
    """A table of cells already rendered (escape each cell's text with ``text``)."""
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    titled = f"<caption>{text(caption)}</caption>" if caption else ""
    return f"<table>{titled}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def status_kind(value: str) -> str:
    """The colour a status is shown in: FAILED (a finished rollback too: what was asked did not happen), IN_PROGRESS or
    COMPLETE (SUCCESS too)."""
    if "ROLLBACK" in value and not value.endswith("IN_PROGRESS"):
        return "FAILED"
    return next((k for k in ("FAILED", "IN_PROGRESS", "COMPLETE") if k in value), "COMPLETE" if value == "SUCCESS" else "")


def status(value: str) -> str:
    return f"<span class=\"status-{status_kind(value)}\">{text(value)}</span>"


def when(timestamp: Optional[float]) -> str:
    return text(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(timestamp))) if timestamp else ""


# -- what is served ----------------------------------------------------------------------------------


def served(sources: Sequence[SourceView]) -> str:
    parts = [f"<p>{len(sources)} source(s) served.</p>"] if sources else ["<p>Nothing is served.</p>"]
    for source in sources:
        parts.append(f"<h2 id=\"{text(source.name)}\">{text(source.name)}</h2><p>{text(source.kind)} from <code>{text(source.root)}</code></p>")
        parts.append(table(
            ("function", "handler", "time limit (s)", "workers", "warm (idle)", "busy"),
            (
                (text(f.name), text(f.handler), text(f.timeout_s if f.timeout_s is not None else "default"), text(f.workers), text(f.idle),
                 text(f.workers - f.idle))
                for f in source.functions
            ),
            "functions",
        ))
        parts.append(_reload(source))
        if source.schema is not None:
            parts.append(_schema(source.schema))
    return page("What serve serves", "".join(parts), live="/console/events?served=1")


def _reload(source: "SourceView") -> str:
    """The source's last reload: what was saved and what went live, or each function's load error (a syntax error
    names its file:line), or why the configuration was not read."""
    if not source.reloading:
        return "<p class=\"reload\">Reload: off.</p>"
    last = source.last_reload
    if last is None:
        return "<p class=\"reload\">Reload: watching; no save since serve started.</p>"
    outcomes = ([f"<span class=\"status-COMPLETE\">new code live in {text(', '.join(last.live))}</span>"] if last.live else []) + (
        [f"<span class=\"status-FAILED\">does not load: {text(', '.join(last.failures))}</span>"] if last.failures else []
    ) + (["<span class=\"status-FAILED\">configuration not read</span>"] if last.error else [])
    head = f"<p class=\"reload\">Last reload {when(last.at)} after {text(last.change)}: {'; '.join(outcomes) or 'nothing to reload'}</p>"
    errors = [f"{name}: {message}" for name, message in last.failures.items()] + ([last.error] if last.error else [])
    return head + (f"<pre class=\"reload-error\">{text(chr(10).join(errors))}</pre>" if errors else "")


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


def stack_link(stack: "Stack") -> str:
    return f"<a href=\"/stack?id={quote(stack.stack_id, safe='')}\">{text(stack.name)}</a>"


def stacks(listed: Sequence["Stack"]) -> str:
    rows = ((stack_link(s), status(s.status), when(s.created_at), text(s.masked(s.reason or ""))) for s in listed)
    body = table(("stack", "status", "created", "reason"), rows) if listed else "<p>No stacks yet.</p>"
    return page("Stacks", body, live="/console/events")


def stack(
    shown: "Stack", change_sets: Sequence["ChangeSet"] = (), graph: str = "",
    hook_results: Sequence["HookResult"] = (), drifts: Sequence["ResourceDrift"] = (),
) -> str:
    """A stack's page; ``graph``: its dependency graph, already drawn (``graph.py``)."""
    m = shown.masked
    parts = [f"<p>Status: {status(shown.status)} {text(m(shown.reason or ''))}</p>"]
    if graph:
        parts.append(f"<h2>Dependency graph</h2><div class=\"graph\">{graph}</div>")
    parts.append("<h2>Resources</h2>" + table(
        ("logical id", "type", "status", "physical id", "reason", ""),
        (
            (text(r.logical_id), text(r.type_name), status(r.status), text(m(r.physical_id or "")), text(m(r.reason or "")),
             f"<a href=\"/operations?{text(urlencode({'type': r.type_name}))}\">operations</a>")
            for r in shown.resources.values()
        ),
    ))
    parts.append("<h2>Events</h2>" + _timeline(shown))
    parts.append("<h2>Parameters</h2>" + table(("key", "value"), ((text(k), text(v)) for k, v in shown.shown_parameters().items())))
    parts.append("<h2>Outputs</h2>" + table(
        ("key", "value", "description", "export name"),
        ((text(o.key), text(m(_shown_value(o.value))), text(o.description), text(o.export_name)) for o in shown.outputs),
    ))
    if change_sets:
        parts.append("<h2>Change sets</h2>" + table(
            ("change set", "status", "execution status", "created"),
            (
                (f"<a href=\"/changeset?{text(urlencode({'id': c.change_set_id}))}\">{text(c.name)}</a>", status(c.status),
                 text(c.execution_status), when(c.created_at))
                for c in change_sets
            ),
        ))
    if hook_results:
        parts.append("<h2>Hook results</h2>" + _hook_results(shown, hook_results))
    if drifts:
        parts.append("<h2>Drift</h2>" + _drifts(shown, drifts))
    parts.append(f"<h2>Template</h2><pre>{text(m(shown.template_body))}</pre>")
    by_id = "/stack?" + urlencode({"id": shown.stack_id})  # a stack opened by name is found by its id once deleted
    return page(f"Stack {shown.name}", "".join(parts), live="/console/events?" + urlencode({"stack": shown.stack_id}), source=by_id)


def _hook_results(shown: "Stack", results: Sequence["HookResult"]) -> str:
    """Each hook's verdict with its annotations (name, status, message, remediation, severity), masked as the events are."""
    m = shown.masked

    def annotations(result: "HookResult") -> str:
        return "<br>".join(
            text(m(" · ".join(str(a[key]) for key in ("annotationName", "status", "statusMessage", "remediationMessage", "severityLevel") if a.get(key))))
            for a in result.annotations
        )

    rows = (
        (when(r.invoked_at), text(r.hook_type), text(r.target.operation), text(r.target.logical_id), text(r.target.action),
         status(r.status), text(m(r.reason or "")), text(r.failure_mode), annotations(r))
        for r in results
    )
    return table(("invoked", "hook", "target", "logical id", "action", "status", "reason", "failure mode", "annotations"), rows)


def _drifts(shown: "Stack", drifts: Sequence["ResourceDrift"]) -> str:
    """Each checked resource's last drift status and its differences (writeOnly values are masked in the drift itself)."""
    m = shown.masked

    def differences(drift: "ResourceDrift") -> str:
        return "<br>".join(text(m(f"{d.path} {d.kind}: expected {d.expected}, actual {d.actual}")) for d in drift.differences)

    rows = (
        (text(d.logical_id), text(d.resource_type), text(d.status), when(d.timestamp), differences(d), text(m(d.reason or "")))
        for d in drifts
    )
    return table(("logical id", "type", "drift status", "checked", "differences", "reason"), rows)


def _shown_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _timeline(shown: "Stack") -> str:
    """The stack's events, oldest first, one table per operation (each begins with the stack's own IN_PROGRESS event)."""
    sections: List[str] = []
    operation = 0

    def starts_operation(event: "StackEvent") -> int:
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


def change_set(shown: "ChangeSet", properties: Callable[[str, Dict[str, Any]], str]) -> str:
    """The changes table (action, logical id, physical id, type, replacement), each changed property with what it
    requires, and the properties before and after as IncludePropertyValues shows them (``properties`` masks)."""
    rows = []
    for change in shown.changes:
        if change.action is None:
            continue
        detail = "<br>".join(text(f"{d.name}: {d.change_source}, recreation {d.requires_recreation}") for d in change.details)
        before = f"<pre>{text(properties(change.resource_type, change.before))}</pre>" if change.before is not None else ""
        after = f"<pre>{text(properties(change.resource_type, change.after))}</pre>" if change.after is not None else ""
        replacement = f"<strong>{text(change.replacement)}</strong>" if change.replacement in ("True", "Conditional") else text(change.replacement or "")
        rows.append((text(change.action), text(change.logical_id), text(change.physical_id or ""), text(change.resource_type), replacement, detail, before, after))
    head = f"<p>{text(shown.change_set_type)} change set: {status(shown.status)} {text(shown.status_reason or '')}, execution {text(shown.execution_status)}</p>"
    body = table(("action", "logical id", "physical id", "resource type", "replacement", "changed properties", "before", "after"), rows) if rows else "<p>No changes.</p>"
    return page(f"Change set {shown.name}", head + body)


# -- operations (history) ----------------------------------------------------------------------------


OPERATION_COLUMNS = ("id", "when (UTC)", "via", "type", "action", "status", "calls", "seconds", "error")
FOUND_BY = {"fuzz": "cfnrun fuzz (minimal case)", "stack": "a stack (stack test or serve)"}


def operation_link(type_name: str, operation: "RecordedOperation") -> str:
    query = urlencode({"type": type_name, "id": operation.id})
    return f"<a href=\"/operation?{text(query)}\">{text(operation.id)}</a>"


@dataclass(frozen=True)
class OperationsPage:
    """One page of the recorded operations: those ``listed`` (newest first), the filter, and where the page is."""

    listed: Sequence[Tuple[str, "RecordedOperation"]]
    wanted: Dict[str, str]
    limit: int
    number: int = 1  # 1: the newest
    more: bool = False  # older operations follow on the next page

    def link(self, number: int) -> str:
        query = urlencode({**{k: v for k, v in self.wanted.items() if v}, "limit": self.limit, "page": number})
        return f"/operations?{text(query)}"


def operations(shown: OperationsPage, type_names: Sequence[str], found: Sequence[Tuple[str, "RecordedOperation"]] = ()) -> str:
    """A page of the operations; above them what was ``found`` failing (fuzz's minimal cases first, then failed stack operations)."""
    form = (
        "<form method=\"get\" action=\"/operations\">"
        + "".join(f"<label>{text(key)} <input name=\"{text(key)}\" value=\"{text(value)}\"></label> " for key, value in shown.wanted.items())
        + "<button>filter</button></form>"
    )
    served = f"<p>Histories of: {text(', '.join(type_names)) or 'none (recording is off)'}</p>"
    rows = (_operation_row(t, op, text(op.source)) for t, op in shown.listed)
    body = table(OPERATION_COLUMNS, rows) if shown.listed else "<p>No recorded operations.</p>"
    steps = ([f"<a rel=\"prev\" href=\"{shown.link(shown.number - 1)}\">newer</a>"] if shown.number > 1 else []) + (
        [f"<a rel=\"next\" href=\"{shown.link(shown.number + 1)}\">older</a>"] if shown.more else []
    )
    body += f"<p class=\"pages\">Page {shown.number} {' '.join(steps)}</p>" if steps else ""
    if not found:
        return page("Operations", form + served + body)
    findings = table(
        OPERATION_COLUMNS, (_operation_row(t, op, text(FOUND_BY.get(op.source, op.source))) for t, op in found),
        "fuzz's minimal cases first, then stacks' failed operations",
    )
    return page("Operations", "<h2>Found failing</h2>" + findings + "<h2>All operations</h2>" + form + served + body)


def _operation_row(type_name: str, op: "RecordedOperation", via: str) -> Tuple[str, ...]:
    return (operation_link(type_name, op), when(op.started_at), via, text(type_name), text(op.action), status(op.status),
            text(op.invocations), text(f"{op.duration_s:.2f}"), text(op.error_code or ""))


def operation(type_name: str, recorded: "RecordedOperation", timeline: str) -> str:
    body = (
        f"<p>{text(type_name)} {text(recorded.action)}: {status(recorded.status)}, {text(recorded.invocations)} call(s), "
        f"recorded {when(recorded.started_at)} via {text(recorded.source)}, cfnrun {text(recorded.cfnrun_version)}</p>"
        f"<p>Run it again: <code>cfnrun replay {text(recorded.id)}</code> (in {text(type_name)}'s project folder)</p>"
        f"<pre>{text(timeline)}</pre>"
    )
    return page(f"Operation {recorded.id}", body)


def not_found(what: str) -> str:
    return page("Not found", f"<p>{text(what)}</p>")
