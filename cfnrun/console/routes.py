"""The console's routes on serve's application: GET only, so the APIs' POST routes are untouched."""
from __future__ import annotations

from pathlib import Path

from aiohttp import web

from cfnrun.console import pages
from cfnrun.console.sources import ConsoleSources

STATIC = Path(__file__).parent / "static"
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class ConsoleRoutes:
    """The console: what is served (``/``), the stacks (``/stacks``) and a stack's page (``/stack?id=``, its name or id)."""

    def __init__(self, sources: ConsoleSources) -> None:
        self.sources = sources

    def add_route(self, app: web.Application) -> None:
        app.router.add_get("/", self.served)
        app.router.add_get("/stacks", self.stacks)
        app.router.add_get("/stack", self.stack)
        app.router.add_static("/console/static", STATIC, append_version=False)

    @staticmethod
    def _html(body: str, status: int = 200) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8", headers=HEADERS)

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
        if found is None:
            return self._html(pages.not_found(f"no stack {name_or_id}"), 404)
        return self._html(pages.stack(found))
