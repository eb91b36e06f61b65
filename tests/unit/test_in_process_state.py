"""--in-process borrows cfnrun's own process; close() gives back everything it changed."""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import textwrap
from pathlib import Path

from cfnrun.model.project import handler_project
from cfnrun.runtime.in_process import InProcessFunction
from cfnrun.runtime.outcome import OutcomeKind

SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "misbehaving" / "cfnrun-test-misbehaving.json"
HANDLER = textwrap.dedent(
    """\
    import os, sys

    def handler(event, context):
        if event.get("do") == "exit":
            sys.exit(3)
        if event.get("do") == "set":
            return {"tags": {"a"}}
        return {"region": os.environ["AWS_REGION"], "cwd": os.getcwd(), "arn": context.invoked_function_arn}
    """
)


def test_close_puts_back_environ_cwd_path_logging_breakpointhook_and_modules(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "inproc_unit_handler.py").write_text(HANDLER)
    project = handler_project("inproc_unit_handler.handler", SCHEMA, code)
    root = logging.getLogger()
    before = (dict(os.environ), os.getcwd(), list(sys.path), list(root.handlers), root.level, sys.breakpointhook)

    async def scenario() -> None:
        function = InProcessFunction(project, project.type_function(), "eu-west-2", "111122223333", "DEBUG")
        try:
            await function.warm()
            returned = await function.invoke({}, 5.0)
            assert returned.result == {
                "region": "eu-west-2", "cwd": str(code), "arn": "arn:aws:lambda:eu-west-2:111122223333:function:TypeFunction"
            }
            exited = await function.invoke({"do": "exit"}, 5.0)
            assert (exited.kind, exited.error_type) == (OutcomeKind.WORKER_DIED, "Runtime.ExitError")
            assert exited.error_message == "handler called sys.exit(3) (exit status 3)"
            unmarshallable = await function.invoke({"do": "set"}, 5.0)
            assert (unmarshallable.kind, unmarshallable.error_type) == (OutcomeKind.FUNCTION_ERROR, "Runtime.MarshalError")
            assert os.environ["AWS_REGION"] == "eu-west-2" and root.level == logging.DEBUG
        finally:
            await function.close()

    asyncio.run(scenario())
    after = (dict(os.environ), os.getcwd(), list(sys.path), list(root.handlers), root.level, sys.breakpointhook)
    assert after == before
    assert "inproc_unit_handler" not in sys.modules
