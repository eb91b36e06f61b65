"""One zygote for the functions of one code folder (issue #33): a real ``cfnrun serve``, real forks, real reloads.

The project is a provider whose two functions (TypeFunction and TestEntrypoint, as ``cfn init`` makes
them) share their code folder and differ in name, handler and memory size. A dependency outside the
code folder (on PYTHONPATH) writes the pid of every process that imports it to a log, so the tests
see which processes imported it: the zygote, or each worker afresh.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

from cfnrun.runtime.outcome import OutcomeKind
from cfnrun.runtime.pool import FunctionPool
from cfnrun.runtime.spec import WorkerSpec
from cfnrun.runtime.zygote_share import SharedZygote, ZygoteShare, zygote_key
from conftest import LOCAL_STATE, MISBEHAVING, PATIENCE_S, ServerProcess, _is_zygote, parent_of, pid_alive, sandboxes_of, wait_until
from test_runtime import spec_for

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 100
    Environment:
      Variables:
        GREETING: hello
Resources:
  TypeFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: twin.resource
      Runtime: python3.9
      MemorySize: 128
      FunctionName: twin-resource
  TestEntrypoint:
    Type: AWS::Serverless::Function
    Properties:
      Handler: twin.test_entrypoint
      Runtime: python3.9
      MemorySize: 256
"""

TWIN = """\
import os

import sharedep
from behaviours import handler as behave

DEPENDENCY = None  # tests replace this line


def identity(event, context):
    if isinstance(event, dict) and event.get("do") == "identity":
        names = ("AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_LOG_GROUP_NAME", "_HANDLER", "GREETING")
        return {
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "function_name": context.function_name,
            "memory": str(context.memory_limit_in_mb),
            "env": {name: os.environ.get(name) for name in names},
            "dependency": DEPENDENCY,
        }
    return behave(event, context)


resource = identity
test_entrypoint = identity
"""

# A dependency outside the code folder that logs which process imports it.
DEPENDENCY = """\
import os

with open(os.environ["SHAREDEP_LOG"], "a") as log:
    log.write(f"{os.getpid()}\\n")
"""

OWN = {
    "TypeFunction": {
        "AWS_LAMBDA_FUNCTION_NAME": "twin-resource",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/twin-resource",
        "_HANDLER": "twin.resource",
        "GREETING": "hello",
    },
    "TestEntrypoint": {
        "AWS_LAMBDA_FUNCTION_NAME": "TestEntrypoint",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/TestEntrypoint",
        "_HANDLER": "twin.test_entrypoint",
        "GREETING": "hello",
    },
}


# The same dependency, whose import never ends in a zygote (started with ``--zygote``): it says so in a file first.
ENDLESS_IN_ZYGOTE = DEPENDENCY + """
import sys
import time

if "--zygote" in sys.argv:
    open(os.environ["SHAREDEP_LOG"] + ".zygote-importing", "w").close()
    time.sleep(3600)
"""


def twin_serve(tmp_path: Path, *args: str, dependency: str = DEPENDENCY) -> ServerProcess:
    """serve on a fresh copy of the two-function project, its dependency folder on PYTHONPATH."""
    project = tmp_path / "twin"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    (project / "template.yml").write_text(TEMPLATE)
    (project / "twin.py").write_text(TWIN)
    dependencies = tmp_path / "dependencies"
    dependencies.mkdir()
    (dependencies / "sharedep.py").write_text(dependency)
    (dependencies / "newdep.py").write_text(DEPENDENCY.replace("SHAREDEP_LOG", "NEWDEP_LOG"))
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONPATH": str(dependencies),
        "SHAREDEP_LOG": str(tmp_path / "sharedep.log"),
        "NEWDEP_LOG": str(tmp_path / "newdep.log"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", str(project), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    return ServerProcess(project, process=process)


def importers(log: Path) -> List[int]:
    """The pids that imported a logging dependency, in order."""
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def identity(server: ServerProcess, function: str) -> Dict[str, Any]:
    response = server.client().invoke(FunctionName=function, Payload=json.dumps({"do": "identity"}).encode())
    answer = dict(json.loads(response["Payload"].read()))
    assert "pid" in answer, answer
    return answer


def assert_own_identity(answer: Dict[str, Any], function: str) -> None:
    own = OWN[function]
    assert answer["env"] == own, answer
    assert answer["function_name"] == own["AWS_LAMBDA_FUNCTION_NAME"] and answer["memory"] == own["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"], answer


def test_both_functions_are_forks_of_one_zygote_each_with_its_own_identity(tmp_path: Path) -> None:
    server = twin_serve(tmp_path, "--no-reload")
    try:
        first = identity(server, "TypeFunction")
        second = identity(server, "TestEntrypoint")
        assert_own_identity(first, "TypeFunction")
        assert_own_identity(second, "TestEntrypoint")
        assert first["ppid"] == server.process.pid  # the first worker is spawned: its load tells the dependencies
        zygote = second["ppid"]  # the second function's first worker is already a fork
        assert zygote != server.process.pid and parent_of(zygote) == server.process.pid and _is_zygote(zygote)
        # The dependency was imported twice in all: by the first worker and by the zygote, never by the fork.
        assert importers(tmp_path / "sharedep.log") == [first["pid"], zygote]
        # /proc/PID/environ names each fork's own function (what tools and the tests' helpers read).
        assert second["pid"] in server.worker_pids("TestEntrypoint") and second["pid"] not in server.worker_pids("twin-resource")

        # A killed worker of each function is replaced by a fork of the same zygote, with its function's identity.
        for function, answer in (("TypeFunction", first), ("TestEntrypoint", second)):
            killed = answer["pid"]
            os.kill(killed, signal.SIGKILL)
            wait_until(lambda killed=killed: killed not in server.worker_pids(), timeout=PATIENCE_S, what=f"worker {killed} to be reaped")
            again = identity(server, function)
            assert again["pid"] != answer["pid"] and again["ppid"] == zygote, (again, zygote)
            assert_own_identity(again, function)
            name = OWN[function]["AWS_LAMBDA_FUNCTION_NAME"]
            assert again["pid"] in server.worker_pids(name)
        assert server.zygote_pids() == [zygote]  # one zygote serves both functions
        assert importers(tmp_path / "sharedep.log") == [first["pid"], zygote]
        everyone = server.worker_pids()
    finally:
        server.stop()
    wait_until(lambda: not any(pid_alive(pid) for pid in everyone), timeout=PATIENCE_S, what="the zygote and its forks to end with serve")


def test_a_reload_importing_a_new_dependency_replaces_the_shared_zygote_and_the_old_one_ends(tmp_path: Path) -> None:
    server = twin_serve(tmp_path)
    try:
        first = identity(server, "TypeFunction")
        old = identity(server, "TestEntrypoint")["ppid"]
        assert server.zygote_pids() == [old]
        twin = tmp_path / "twin" / "twin.py"

        twin.write_text(TWIN.replace("DEPENDENCY = None  # tests replace this line", "import newdep\nDEPENDENCY = newdep.__name__"))
        server.wait_for_line(r"reload: new code live")
        for function in OWN:
            answer = identity(server, function)
            assert answer["dependency"] == "newdep"  # each on a fork of the old zygote, which lacked it, so it imported it
            assert_own_identity(answer, function)
        # The provider imports more now: a zygote that imports it all replaces the old one, for both functions.
        wait_until(lambda: len(server.zygote_pids()) == 2, timeout=PATIENCE_S, what="the new zygote")
        (new,) = [pid for pid in server.zygote_pids() if pid != old]
        wait_until(lambda: new in importers(tmp_path / "newdep.log"), timeout=PATIENCE_S, what="the new zygote to import newdep")
        assert new in importers(tmp_path / "sharedep.log")
        imported = len(importers(tmp_path / "newdep.log"))

        twin.write_text(TWIN.replace("DEPENDENCY = None  # tests replace this line", "import newdep\nDEPENDENCY = newdep.__name__ + '!'"))
        server.wait_for_line(r"reload: new code live")
        for function in OWN:
            answer = identity(server, function)
            assert answer["dependency"] == "newdep!" and answer["ppid"] == new  # a fork of the new zygote
            assert_own_identity(answer, function)
        # The old zygote's forks were retired by the reload: it ends, and leaves nothing behind.
        wait_until(lambda: not pid_alive(old), timeout=PATIENCE_S, what=f"the old zygote {old} to end")
        assert server.zygote_pids() == [new]
        assert len(importers(tmp_path / "newdep.log")) == imported  # the new zygote's forks import nothing again
        wait_until(
            lambda: sorted(sandboxes_of(server.process.pid)) == sorted(server.worker_pids()),
            timeout=PATIENCE_S,
            what="no sandbox left but the zygote and the current workers",
        )
        assert first["pid"] not in sandboxes_of(server.process.pid)
        wait_until(lambda: len(server.worker_pids()) == 5, timeout=PATIENCE_S, what="the forks made ahead of the next save")
        assert server.zygote_pids() == [new]  # per function, one worker and one fork made ahead; one zygote
    finally:
        server.stop()


def test_after_a_reload_the_next_saves_worker_is_forked_ahead_and_answers_it(tmp_path: Path) -> None:
    server = twin_serve(tmp_path)
    try:
        identity(server, "TypeFunction")
        twin = tmp_path / "twin" / "twin.py"
        twin.write_text(TWIN.replace("DEPENDENCY = None  # tests replace this line", "DEPENDENCY = 'first save'"))
        server.wait_for_line(r"reload: new code live")
        answer = identity(server, "TypeFunction")
        assert answer["dependency"] == "first save"
        (zygote,) = server.zygote_pids()

        def waiting_forks() -> List[int]:
            """TypeFunction's forks of the zygote that answer no call: the fork made ahead."""
            return [pid for pid in server.worker_pids("twin-resource") if pid not in (zygote, answer["pid"])]

        wait_until(lambda: len(waiting_forks()) == 1, timeout=PATIENCE_S, what="TypeFunction's fork made ahead")
        (ahead,) = waiting_forks()
        assert parent_of(ahead) == zygote

        twin.write_text(TWIN.replace("DEPENDENCY = None  # tests replace this line", "DEPENDENCY = 'second save'"))
        server.wait_for_line(r"reload: new code live")
        again = identity(server, "TypeFunction")
        assert again["dependency"] == "second save" and again["pid"] == ahead, (again, ahead)
        assert_own_identity(again, "TypeFunction")  # a fork made ahead carries its own function's variables
        wait_until(lambda: len(waiting_forks()) == 2, timeout=PATIENCE_S, what="the fork made ahead of the third save")
        everyone = server.worker_pids()
    finally:
        server.stop()
    wait_until(lambda: not any(pid_alive(pid) for pid in everyone), timeout=PATIENCE_S, what="every fork to end with serve")


# The twin's code after a save: each worker's import says which function it loads for, and TestEntrypoint's waits for
# the test's word (a file) before it ends, so the test sees what started while that import ran.
GATED_IMPORT = """
import time

with open(os.environ["SHAREDEP_LOG"] + ".imports", "a") as log:
    log.write(os.environ["AWS_LAMBDA_FUNCTION_NAME"] + " importing\\n")
if os.environ["AWS_LAMBDA_FUNCTION_NAME"] == "TestEntrypoint":
    while not os.path.exists(os.environ["SHAREDEP_LOG"] + ".release"):
        time.sleep(0.005)
    with open(os.environ["SHAREDEP_LOG"] + ".imports", "a") as log:
        log.write("TestEntrypoint imported\\n")
DEPENDENCY = "gated"
"""


def test_a_reload_loads_the_function_called_last_first_and_the_others_once_it_is_warm(tmp_path: Path) -> None:
    server = twin_serve(tmp_path)
    try:
        identity(server, "TypeFunction")
        identity(server, "TestEntrypoint")  # called last: its new code is loaded first
        imports = tmp_path / "sharedep.log.imports"
        (tmp_path / "twin" / "twin.py").write_text(TWIN.replace("DEPENDENCY = None  # tests replace this line", GATED_IMPORT))
        wait_until(lambda: imports.exists() and imports.read_text().endswith("\n"), timeout=PATIENCE_S, what="the first import of the new code")
        assert imports.read_text() == "TestEntrypoint importing\n"
        (tmp_path / "sharedep.log.release").touch()
        server.wait_for_line(r"reload: new code live in \d+ ms: TypeFunction, TestEntrypoint")
        # TypeFunction's worker started once TestEntrypoint's was warm: on a small machine they did not share the cores.
        assert imports.read_text().splitlines() == ["TestEntrypoint importing", "TestEntrypoint imported", "twin-resource importing"]
        for function in OWN:
            answer = identity(server, function)
            assert answer["dependency"] == "gated"
            assert_own_identity(answer, function)
    finally:
        server.stop()


# -- pools sharing a zygote, driven directly -----------------------------------------------------


def named(name: str, memory_mb: int = 128, **env: str) -> WorkerSpec:
    """The misbehaving provider's spec, as the function ``name`` (its own name, log group, handler and memory size)."""
    spec = spec_for("behaviours.handler", **env)
    own = {
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{name}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
    }
    return dataclasses.replace(spec, function_name=name, memory_mb=memory_mb, env={**spec.env, **own})


def test_serve_stopped_while_the_shared_zygote_imports_ends_it_at_once_and_starts_no_worker_for_it(tmp_path: Path) -> None:
    # TypeFunction's first worker is spawned; the zygote it starts never finishes importing, and TestEntrypoint's
    # first worker waits for it. A stop cancels that wait (no worker is started for it then) and kills the zygote:
    # it used to be waited for until its import's time limit, past the stop's bound for its workers (exit status 1).
    server = twin_serve(tmp_path, dependency=ENDLESS_IN_ZYGOTE)
    wait_until(lambda: (tmp_path / "sharedep.log.zygote-importing").exists(), timeout=PATIENCE_S, what="the zygote to be importing")
    spawned, zygote = importers(tmp_path / "sharedep.log")  # TypeFunction's worker, then the zygote (it logs, then waits)
    server.stop_cleanly()
    server.has_printed(r"\bstopped$")
    assert not any("TestEntrypoint" in line and "warm" in line for line in server.output), server.output
    assert sandboxes_of(server.process.pid) == [] and not pid_alive(spawned) and not pid_alive(zygote)


def test_a_caller_cancelled_while_it_waits_for_the_shared_zygote_is_cancelled_and_a_zygote_start_called_off_is_none() -> None:
    async def run() -> None:
        shared = SharedZygote("key")
        starting = shared._task = asyncio.ensure_future(asyncio.Event().wait())  # a zygote importing for ever
        waiting = asyncio.ensure_future(shared.ready())
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.wait([waiting])
        assert waiting.cancelled() and not starting.done()  # the caller's cancel is its own: the start goes on, for others
        other = asyncio.ensure_future(shared.ready())
        await asyncio.sleep(0)
        await shared.close()  # still importing: called off, not waited for
        assert starting.cancelled() and await other is None

    asyncio.run(run())


def test_functions_share_a_zygote_only_where_nothing_but_their_names_differs() -> None:
    assert zygote_key(named("alpha")) == zygote_key(named("beta", 512))
    assert zygote_key(named("alpha")) != zygote_key(named("beta", GREETING="bonjour"))  # a dependency may read it on import
    assert zygote_key(named("alpha")) != zygote_key(dataclasses.replace(named("beta"), code_dir=MISBEHAVING.parent))
    assert zygote_key(named("alpha")) != zygote_key(named("b" * 700))  # too long for the zygote's room for it


def test_a_shared_zygote_outlives_the_pool_that_closes_first_and_ends_with_the_last() -> None:
    async def run() -> int:
        share = ZygoteShare()
        alpha = FunctionPool(named("alpha"), standby=True, zygotes=share)
        beta = FunctionPool(named("beta", 256), standby=True, zygotes=share)
        try:
            await alpha.warm()  # spawned: its load tells the dependencies, and the zygote starts
            await beta.warm()  # a fork of that zygote
            zygote = parent_of(beta.pids[0])
            assert zygote != os.getpid() and parent_of(zygote) == os.getpid() and parent_of(alpha.pids[0]) == os.getpid()
            context = await beta.invoke({"do": "context"}, 5)
            assert context.result["function_name"] == "beta" and context.result["env"]["AWS_LAMBDA_FUNCTION_NAME"] == "beta"
            await alpha.close()
            assert pid_alive(zygote)  # beta's worker is its child, and beta forks from it still
            assert (await beta.invoke({"do": "exit"}, 5)).kind is OutcomeKind.WORKER_DIED
            again = await beta.invoke({"do": "echo"}, 5)
            assert again.kind is OutcomeKind.RETURNED and parent_of(again.result["pid"]) == zygote
        finally:
            await alpha.close()
            await beta.close()
        return zygote

    zygote = asyncio.run(run())
    assert not pid_alive(zygote) and sandboxes_of(os.getpid()) == []


def test_where_a_shared_zygote_cannot_fork_each_function_says_so_and_starts_fresh_processes() -> None:
    notes: List[str] = []

    async def run() -> None:
        share = ZygoteShare()
        pools = [
            FunctionPool(named(name), standby=True, dependencies=["threaded_dependency"], on_note=notes.append, zygotes=share)
            for name in ("alpha", "beta")
        ]
        try:
            for pool in pools:
                await pool.warm()
                assert parent_of(pool.pids[0]) == os.getpid()  # a spare, spawned
                assert pool.fork_unavailable is not None and "threads" in pool.fork_unavailable
        finally:
            for pool in pools:
                await pool.close()

    asyncio.run(run())
    assert sorted(note.split(":")[0] for note in notes) == ["alpha", "beta"], notes
    assert all("fresh processes, not forks" in note for note in notes) and sandboxes_of(os.getpid()) == []
