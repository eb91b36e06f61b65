"""The floor for ``cfnrun serve``: a bare aiohttp Invoke endpoint calling the handler in-process.

Usage: python bench/inprocess_server.py PROJECT_DIR PORT

No worker isolation, no deadlines, no log capture: what is left is HTTP and JSON.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchlib import StubContext  # noqa: E402
from cfnrun.model.project import load_project  # noqa: E402



def main() -> None:
    project = load_project(Path(sys.argv[1]))
    function = project.type_function()
    os.chdir(project.root)
    os.environ.update(function.environment)
    sys.path.insert(0, str(project.code_dir))
    module_name, _, attribute = function.handler.rpartition(".")
    handler = getattr(importlib.import_module(module_name), attribute)
    context = StubContext()

    async def invoke(request: web.Request) -> web.Response:
        event = json.loads(await request.read())
        return web.Response(body=json.dumps(handler(event, context)), content_type="application/json")

    app = web.Application()
    app.router.add_post("/2015-03-31/functions/{name}/invocations", invoke)

    web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), print=None, access_log=None)


if __name__ == "__main__":
    main()
