"""The worker's public API, driven in this process: what a worker and --in-process both rely on."""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator

import pytest

from cfnrun.runtime.worker.host import HandlerHost
from cfnrun.runtime.worker.lambda_context import LambdaContext, deadline_ms, function_arn, sandbox_identity
from cfnrun.runtime.worker.loading import InitError
from cfnrun.runtime.worker.protocol import encode_reply

IDENTITY = sandbox_identity("Fn", function_arn("eu-west-1", "111122223333", "Fn"), 256, "stream")


@pytest.fixture
def code_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A code folder on sys.path; the root logger and the provider's modules are put back after."""
    folder = tmp_path / "src"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "path_hooks", list(sys.path_hooks))  # hosts install an import hook for the folder
    monkeypatch.setattr(sys, "path_importer_cache", dict(sys.path_importer_cache))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        del sys.modules[name]
    root.handlers[:] = handlers
    root.setLevel(level)


def write(folder: Path, name: str, source: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


def context() -> LambdaContext:
    return LambdaContext(IDENTITY, "req-1", deadline_ms(5))


@pytest.mark.parametrize(
    "handler, source, error_type, message",
    [
        ("nodots", None, "Runtime.MalformedHandlerName", "expected 'module.attribute'"),
        ("absent.handler", None, "Runtime.ImportModuleError", "no module named 'absent'"),
        ("broken.handler", "def handler(:\n", "Runtime.UserCodeSyntaxError", "Syntax error in module 'broken'"),
        ("raising.handler", "raise RuntimeError('at import')\n", "Runtime.ImportModuleError", "RuntimeError: at import (src/raising.py:1)"),
        ("plain.missing", "x = 1\n", "Runtime.HandlerNotFound", "Handler 'missing' missing on module 'plain'"),
    ],
)
def test_a_handler_that_cannot_load_is_an_init_error_in_lambdas_shape(
    code_dir: Path, monkeypatch: pytest.MonkeyPatch, handler: str, source: Any, error_type: str, message: str
) -> None:
    monkeypatch.chdir(code_dir.parent)
    if source is not None:
        write(code_dir, handler.split(".")[0], source)
    with pytest.raises(InitError) as raised:
        HandlerHost(str(code_dir), "INFO", sys.stderr).load(handler)
    assert raised.value.details["errorType"] == error_type
    assert message in raised.value.details["errorMessage"]


def test_call_answers_result_error_or_marshal_error(code_dir: Path) -> None:
    write(
        code_dir,
        "answers",
        """
        def handler(event, context):
            if event == "raise":
                raise KeyError("missing")
            if event == "set":
                return {"tags": {"a"}}
            return {"arn": context.invoked_function_arn, "request": context.aws_request_id}
        """,
    )
    host = HandlerHost(str(code_dir), "INFO", sys.stderr)
    host.load("answers.handler")
    kind, body = host.call("ok", context())
    assert (kind, json.loads(body)) == ("result", {"arn": "arn:aws:lambda:eu-west-1:111122223333:function:Fn", "request": "req-1"})
    kind, body = host.call("raise", context())
    error = json.loads(body)
    assert (kind, error["errorType"], error["errorMessage"]) == ("error", "KeyError", "'missing'")
    assert any("answers.py" in frame for frame in error["stackTrace"]) and not any("runtime/worker/" in f for f in error["stackTrace"])
    kind, body = host.call("set", context())
    assert kind == "error" and json.loads(body)["errorType"] == "Runtime.MarshalError"
    assert encode_reply(7, kind, body).endswith(b'"id":7,"error":' + body + b"}")


def test_sys_exit_is_left_to_the_caller(code_dir: Path) -> None:
    write(code_dir, "leaving", "import sys\ndef handler(event, context):\n    sys.exit(3)\n")
    host = HandlerHost(str(code_dir), "INFO", sys.stderr)
    host.load("leaving.handler")
    with pytest.raises(SystemExit):
        host.call({}, context())


def test_log_records_carry_the_request_id_during_a_call_only(code_dir: Path) -> None:
    import io

    write(code_dir, "logs", "import logging\ndef handler(event, context):\n    logging.getLogger('x').info('inside')\n    return 1\n")
    stream = io.StringIO()
    host = HandlerHost(str(code_dir), "INFO", stream)
    host.load("logs.handler")
    host.call({}, context())
    logging.getLogger("x").info("outside")
    inside, outside = stream.getvalue().splitlines()
    assert inside.startswith("[INFO]\t") and inside.endswith("\treq-1\tinside")
    assert outside.endswith("\t\toutside")


def test_unload_forgets_the_provider_so_the_next_load_reads_the_disk(code_dir: Path) -> None:
    write(code_dir, "versioned", "def handler(event, context):\n    return 1\n")
    host = HandlerHost(str(code_dir), "INFO", sys.stderr)
    host.load("versioned.handler")
    assert host.provider_modules() == {"versioned"} and "versioned" not in host.dependencies
    write(code_dir, "versioned", "def handler(event, context):\n    return 22\n")
    host.unload()
    assert "versioned" not in sys.modules and host.handler is None
    host.load("versioned.handler")
    assert host.call({}, context()) == ("result", b"22")


def test_a_reload_runs_the_saved_code_when_an_edit_keeps_the_size_and_the_second(
    code_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's own bytecode check (size, mtime in whole seconds) would run the old code after this edit."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = code_dir / "versioned.py"
    write(code_dir, "versioned", "def handler(event, context):\n    return 1\n")
    saved_at = path.stat().st_mtime_ns
    host = HandlerHost(str(code_dir), "INFO", sys.stderr)
    try:
        host.load("versioned.handler")
        cached = Path(importlib.util.cache_from_source(str(path)))
        assert cached.exists()  # the first load wrote bytecode, as Lambda's runtime would not but a developer's does
        write(code_dir, "versioned", "def handler(event, context):\n    return 2\n")
        os.utime(path, ns=(saved_at, saved_at))  # the second save, within the same second
        host.unload()
        host.load("versioned.handler")
        assert host.call({}, context()) == ("result", b"2")
        host.unload()
        host.load("versioned.handler")  # the bytecode cached for the new source serves again
        assert host.call({}, context()) == ("result", b"2")
    finally:
        host.release()
    assert not any(getattr(hook, "__self__", None).__class__.__name__ == "CodeFolderImports" for hook in sys.path_hooks)
