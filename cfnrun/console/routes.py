"""The console's routes on serve's application: GET only, so the APIs' POST routes are untouched."""
from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Tuple

from aiohttp import web

from cfnrun.console import pages
from cfnrun.console.graph import dependency_svg
from cfnrun.console.sources import ConsoleSources
from cfnrun.model.errors import CfnrunError

if TYPE_CHECKING:
    from cfnrun.history.store import RecordedOperation

PAGE = 100  # operations on one page by default (the history holds up to 10,000)
MAX_PAGE = 1000
FOUND = 20  # of each kind of finding, above the operations
FOUND_SOURCES = (("fuzz", None), ("stack", "FAILED"))  # history's source of a fuzz case, and of a stack's resource operation
STATIC = Path(__file__).parent / "static"
HEARTBEAT_S = 15.0  # an open event stream says something this often, so a closed browser is noticed
RETRY_MS = 2000  # how soon a browser reconnects a stream that ended (serve restarted, or not loaded yet)
SERVED_LOOK_S = 0.5  # how often the served page's stream looks at what is served, while a browser has that page open
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class ConsoleRoutes:
    """The console: what is served (``/``), the stacks (``/stacks``) and a stack's page (``/stack?id=``, its name or id)."""

    def __init__(self, sources: ConsoleSources) -> None:
        self.sources = sources
        self._stopping: Optional[asyncio.Event] = None  # set when serve stops: the served page's streams end

    def add_route(self, app: web.Application) -> None:
        app.router.add_get("/", self.served)
        app.router.add_get("/stacks", self.stacks)
        app.router.add_get("/stack", self.stack)
        app.router.add_get("/changeset", self.change_set)
        app.router.add_get("/operations", self.operations)
        app.router.add_get("/operation", self.operation)
        app.router.add_get("/console/events", self.events)
        app.router.add_static("/console/static", STATIC, append_version=False)
        app.on_shutdown.append(self._end_streams)

    @staticmethod
    def _html(body: str, status: int = 200) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8", headers=HEADERS)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: a ``changed`` notice (the stack's id, name and status) each time a stack changes; with
        ``stack=`` (a name or id), that stack's only; with ``served=1``, each change of what the served page shows. Ends when
        the browser goes, or with a ``closing`` notice when serve stops."""
        if request.query.get("served"):
            return await self._served_events(request)
        store = self.sources.stack_store()
        wanted = request.query.get("stack", "")
        followed = store.find(wanted) if store is not None and wanted else None
        stream = web.StreamResponse(headers={**HEADERS, "Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
        await stream.prepare(request)
        await stream.write(f"retry: {RETRY_MS}\n\n".encode())
        if store is None or (wanted and followed is None):
            return stream  # nothing to follow yet: the browser asks again after ``retry``
        listener = store.notices.listen()
        try:
            await stream.write(b": following\n\n")
            while not listener.closed:
                changed = await listener.next_changes(HEARTBEAT_S)
                notices = [
                    store.stacks[stack_id] for stack_id in sorted(changed)
                    if stack_id in store.stacks and (followed is None or stack_id == followed.stack_id)
                ]
                for stack in notices:
                    data = json.dumps({"stack": stack.stack_id, "name": stack.name, "status": stack.status})
                    await stream.write(f"event: changed\ndata: {data}\n\n".encode())
                if not changed and not listener.closed:
                    await stream.write(b": still here\n\n")
            await stream.write(b"event: closing\ndata: serve stops\n\n")  # the browser reconnects once serve is back
        except (ConnectionResetError, ConnectionError):
            pass  # the browser went
        finally:
            store.notices.stop_listening(listener)
        return stream

    async def _served_events(self, request: web.Request) -> web.StreamResponse:
        """A ``changed`` notice each time the served page would read differently: a reload's outcome (or its syntax error),
        a pool's workers warm or busy. Those change with every call, so nothing tells of them: while a browser has the page
        open (and only then) this looks at them every ``SERVED_LOOK_S``, and tells when the page's text changed."""
        stopping = self._stopping_event()
        stream = web.StreamResponse(headers={**HEADERS, "Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
        await stream.prepare(request)
        await stream.write(f"retry: {RETRY_MS}\n\n".encode())
        try:
            await stream.write(b": following\n\n")
            shown, quiet = pages.served(self.sources.sources()), 0.0
            while not stopping.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stopping.wait(), SERVED_LOOK_S)
                now = pages.served(self.sources.sources())
                quiet += SERVED_LOOK_S
                if now != shown:
                    shown, quiet = now, 0.0
                    await stream.write(b"event: changed\ndata: {\"served\": true}\n\n")
                elif quiet >= HEARTBEAT_S:
                    quiet = 0.0
                    await stream.write(b": still here\n\n")
            await stream.write(b"event: closing\ndata: serve stops\n\n")
        except (ConnectionResetError, ConnectionError):
            pass  # the browser went
        return stream

    def _stopping_event(self) -> asyncio.Event:
        if self._stopping is None:  # made on serve's own loop, on first use
            self._stopping = asyncio.Event()
        return self._stopping

    async def _end_streams(self, app: web.Application) -> None:
        """serve stops: every open event stream ends, so shutdown waits for none."""
        self._stopping_event().set()
        store = self.sources.stack_store()
        if store is not None:
            store.notices.close()

    async def served(self, request: web.Request) -> web.Response:
        return self._html(pages.served(self.sources.sources()))

    async def stacks(self, request: web.Request) -> web.Response:
        store = self.sources.stack_store()
        listed = sorted(store.stacks.values(), key=lambda s: s.created_at, reverse=True) if store is not None else []
        return self._html(pages.stacks(listed))

    async def stack(self, request: web.Request) -> web.Response:
        store = self.sources.stack_store()
        name_or_id = request.query.get("id", "")
        found = store.find(name_or_id) if store is not None and name_or_id else None
        if found is None or store is None:
            return self._html(pages.not_found(f"no stack {name_or_id}"), 404)
        blueprint = store.engine.blueprints.get(found.stack_id)
        graph = dependency_svg(blueprint.dependencies, found.resources) if blueprint is not None else ""
        change_sets = [c for c in store.change_sets.values() if c.stack_id == found.stack_id]
        hooks, drifts = self.sources.hook_results(found.stack_id), self.sources.drift_results(found.stack_id)
        return self._html(pages.stack(found, change_sets, graph, hooks, drifts))

    async def change_set(self, request: web.Request) -> web.Response:
        """A change set's changes as the AWS console's table shows them, properties as IncludePropertyValues masks them."""
        from cfnrun.stacks.store import StackError

        store = self.sources.stack_store()
        name_or_id = request.query.get("id", "")
        try:
            found = store.change_set(name_or_id) if store is not None else None
        except StackError:
            found = None
        if found is None or store is None:
            return self._html(pages.not_found(f"no change set {name_or_id}"), 404)
        return self._html(pages.change_set(found, store.property_values(found).context))

    async def operations(self, request: web.Request) -> web.Response:
        """The recorded operations, newest first, filtered by ``type``, ``action`` and ``status``; ``limit`` to a page,
        page ``page`` (1, the newest, by default)."""
        wanted = {key: request.query.get(key, "") for key in ("type", "action", "status")}
        try:
            limit = max(1, min(int(request.query.get("limit", str(PAGE))), MAX_PAGE))
        except ValueError:
            limit = PAGE
        try:
            number = max(1, int(request.query.get("page", "1")))
        except ValueError:
            number = 1
        listed = []
        for type_name, store in self.sources.histories().items():
            if wanted["type"] and wanted["type"] != type_name:
                continue
            try:  # up to this page's end, and one more: is there a next page?
                recorded = store.operations(limit * number + 1 if not (wanted["action"] or wanted["status"]) else None)
            except CfnrunError:  # nothing recorded yet: no database
                continue
            listed += [
                (type_name, op) for op in recorded
                if (not wanted["action"] or op.action == wanted["action"]) and (not wanted["status"] or op.status == wanted["status"])
            ]
        listed.sort(key=lambda pair: pair[1].started_at, reverse=True)
        shown = pages.OperationsPage(listed[limit * (number - 1):limit * number], wanted, limit, number, len(listed) > limit * number)
        return self._html(pages.operations(shown, sorted(self.sources.histories()), self._found()))

    def _found(self) -> List[Tuple[str, "RecordedOperation"]]:
        """What was found failing: the minimal cases ``cfnrun fuzz`` recorded first, then the failed resource operations of
        stacks (``cfnrun stack test``'s, and serve's own stacks'), each newest first, up to ``FOUND`` of each."""
        found: List[Tuple[str, "RecordedOperation"]] = []
        for source, wanted in FOUND_SOURCES:
            recorded: List[Tuple[str, "RecordedOperation"]] = []
            for type_name, store in self.sources.histories().items():
                try:
                    recorded += [(type_name, op) for op in store.operations_from(source, wanted, FOUND)]
                except CfnrunError:  # nothing recorded yet: no database
                    continue
            recorded.sort(key=lambda pair: pair[1].started_at, reverse=True)
            found += recorded[:FOUND]
        return found

    async def operation(self, request: web.Request) -> web.Response:
        type_name, number = request.query.get("type", ""), request.query.get("id", "")
        store = self.sources.histories().get(type_name)
        try:
            recorded = store.get(int(number)) if store is not None else None
        except (ValueError, CfnrunError):
            recorded = None
        if recorded is None:
            return self._html(pages.not_found(f"no recorded operation {number} of {type_name}"), 404)
        return self._html(pages.operation(type_name, recorded, self.sources.timeline(type_name, recorded.id)))
