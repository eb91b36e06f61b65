"""Shared helpers: copies of the samples, and the real cfnrun CLI in a subprocess."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
MISBEHAVING = FIXTURES / "misbehaving"
LIB_PROVIDER = FIXTURES / "lib_provider"
# What a private copy of a sample or fixture leaves behind: state a local run left in the tree (handler
# state, recorded history, bytecode), so each test starts from the files in git.
# How long a test waits for a line it expects before it fails: only a bound on a run that never prints it, not a
# guess of how long printing takes (a loaded 2-core machine takes far longer than a quiet one). Seconds.
PATIENCE_S = float(os.environ.get("CFNRUN_TEST_PATIENCE_S", "100"))
LOCAL_STATE = shutil.ignore_patterns(".state", ".cfnrun", "__pycache__")


def _bytecode_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pytest-of-<user>/cfnrun-pycache`` (pytest removes only its numbered ``pytest-N`` folders there); with
    ``--basetemp``, the session's own folder, shared by its workers. Python writes each file atomically, and checks it
    against its source's size and time before using it, so sharing and keeping it are safe."""
    base = tmp_path_factory.getbasetemp()
    for folder in (base, *base.parents):
        if folder.name.startswith("pytest-of-"):
            shared = folder / "cfnrun-pycache"
            shared.mkdir(exist_ok=True)
            # what was compiled from the private copies of runs pytest has removed since goes too (it mirrors their paths)
            mirrored = shared / folder.relative_to(folder.anchor)
            for run in mirrored.glob("pytest-*"):
                if not (folder / run.name).exists():
                    shutil.rmtree(run, ignore_errors=True)
            return shared
    shared = (base.parent if base.name.startswith("popen-gw") else base) / "pycache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session", autouse=True)
def bytecode_outside_the_tree(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Tests write only under pytest's temporary folders: compiled fixtures and cfnrun's cache too, in this process and its children.

    Bytecode is written there even where PYTHONDONTWRITEBYTECODE is set: with a cache prefix,
    Python looks for no other cache, so every cfnrun and worker process the tests start would
    otherwise compile cfnrun, pydantic, botocore... from source (~1.5 s each instead of ~0.4 s).
    The prefix is pytest's own temporary root's, kept from run to run and shared by the xdist workers
    (``_bytecode_folder``), so the standard library and the packages are compiled once, not once per
    worker and run (a worker of the suite compiled 2,000-3,000 modules, ~5 ms each, on 2026-11-28).
    """
    prefix = str(_bytecode_folder(tmp_path_factory))
    saved = {name: os.environ.get(name) for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "XDG_CACHE_HOME")}
    saved_prefix = sys.pycache_prefix
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))  # the early start's template cache
    yield
    sys.pycache_prefix = saved_prefix
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value



# How often the aws CLI's and boto3's waiters poll in tests, seconds: botocore's models say 30 s for
# `aws cloudformation wait stack-create-complete`, so a stack not done at the first look costs half a minute.
# They look for as long as the suite's patience, however often they look.
WAITER_DELAY_S = 0.1


@pytest.fixture(scope="session", autouse=True)
def waiters_poll_fast(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The waiters of CloudFormation and Cloud Control poll every 0.1 s in tests, the clients unchanged otherwise.

    botocore reads a service's files from each folder of AWS_DATA_PATH before its own, so a copy of its
    waiters-2.json with a shorter delay there changes only how long a waiter sleeps between looks.
    """
    import botocore

    data = tmp_path_factory.mktemp("aws-data")
    models = Path(botocore.__file__).parent / "data"
    for waiters in [*models.glob("cloudformation/*/waiters-2.json"), *models.glob("cloudcontrol/*/waiters-2.json")]:
        model = json.loads(waiters.read_text())
        for waiter in model["waiters"].values():
            waiter["delay"] = WAITER_DELAY_S
            waiter["maxAttempts"] = max(waiter["maxAttempts"], int(PATIENCE_S / WAITER_DELAY_S))
        target = data / waiters.relative_to(waiters.parents[2])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(model))
    saved = os.environ.get("AWS_DATA_PATH")
    os.environ["AWS_DATA_PATH"] = str(data)
    yield
    if saved is None:
        os.environ.pop("AWS_DATA_PATH", None)
    else:
        os.environ["AWS_DATA_PATH"] = saved

def aws_cli_polling_fast(folder: Path) -> Dict[str, str]:
    """Environment for an aws CLI whose waiters, ``deploy``'s fixed 5 s and 30 s included, look every 0.1 s
    (tests/aws_cli_plugin): a config file in ``folder`` naming that plugin, and the plugin's folder to import it from."""
    config = folder / "aws-cli-config"
    config.write_text("[plugins]\ncfnrun_fast_waits = cfnrun_fast_waits\n", encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(ROOT / "tests" / "aws_cli_plugin"), os.environ.get("PYTHONPATH")]))
    return {"AWS_CONFIG_FILE": str(config), "PYTHONPATH": path}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """README's ``-n auto``: one pytest worker more than the cores, since each test spends part of its time
    waiting on the processes it started (a worker whose test waits would otherwise leave its core idle)."""
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Tests send SIGINT to cfnrun as Ctrl-C would. A shell that started this run in the background made
    SIGINT ignored here, and processes inherit that; a handler of our own is reset to the default in them."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """No cyclic collections while the test modules load (boto3, hypothesis, cfnrun...): each pytest worker then froze
    what it loaded out of the collector's sight, as serve does (``app/loaded_objects.py``). Over ``tests/unit`` in one
    process, 2026-11-29: collection 7.3 against 9.9 s of CPU (2,340 collections gone), the whole run 53 against 62 s."""
    import gc

    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


@pytest.fixture
def sample(tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of a bundled sample, so its local state starts empty."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(SAMPLES / name, target, ignore=LOCAL_STATE)
        return target

    return copy


def cfnrun(
    *args: str, cwd: Optional[Path] = None, env: Optional[Dict[str, Optional[str]]] = None, timeout: float = 90
) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would; an ``env`` value of None unsets that variable."""
    merged = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env = {key: value for key, value in merged.items() if value is not None}
    return subprocess.run(
        [sys.executable, "-m", "cfnrun", *args],
        cwd=str(cwd or ROOT),
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def events(completed: subprocess.CompletedProcess) -> List[Dict[str, Any]]:
    """The NDJSON events printed by ``--json``."""
    return [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]


def violations_of(completed: subprocess.CompletedProcess) -> List[Dict[str, Any]]:
    """The contract violations the ``--json`` events report, in order."""
    return [v for e in events(completed) if e["event"] == "violations" for v in e["violations"]]


def result_of(completed: subprocess.CompletedProcess) -> Dict[str, Any]:
    records = [e for e in events(completed) if e["event"] == "result"]
    assert records, f"no result event\nstdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
    return records[-1]


def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Poll for a condition that another process makes true; fail if it never does."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _is_zygote(pid: int) -> bool:
    try:
        return b"--zygote" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _stops_when_the_test_process_dies(parent: int) -> Callable[[], None]:
    """For a serve's child before its exec: SIGTERM once the pytest process that started it ends, however it ends.

    A module's serve is stopped by its fixture's teardown; a pytest process killed outright (pytest-timeout's
    thread method, a killed xdist worker) runs none, and serve would go on serving with its workers. SIGTERM
    makes serve stop them as it always does."""

    def arm() -> None:
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # it died before that: no signal would come
                os.kill(os.getpid(), signal.SIGTERM)

    return arm


def start_serve(project: Path, *args: str) -> "subprocess.Popen[str]":
    """``cfnrun serve PROJECT --port 0 ARGS`` with its console (stdout and stderr) on one text pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "cfnrun", "serve", str(project), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=_stops_when_the_test_process_dies(os.getpid()),
    )


def read_until(process: "subprocess.Popen[str]", pattern: str) -> List[str]:
    """A process's console lines up to the first that matches ``pattern`` (a regex); fails if it ends first."""
    import re

    assert process.stdout is not None
    lines: List[str] = []
    while not lines or not re.search(pattern, lines[-1]):
        line = process.stdout.readline()
        assert line and len(lines) < 50, "".join(lines)
        lines.append(line)
    return lines


class ServerProcess:
    """``cfnrun serve`` in a real subprocess on a free loopback port, its console read live."""

    def __init__(self, project: Path, *args: str, process: "Optional[subprocess.Popen[str]]" = None) -> None:
        """Start serve on ``project``; or, with ``process``, read one started already (stdout a text pipe)."""
        import queue
        import threading

        self.output: List[str] = []
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.process = process or start_serve(project, *args)
        threading.Thread(target=self._pump, daemon=True).start()
        self.url = self.wait_for_line(r"listening on (http://\S+)").split("listening on ")[1].split()[0]

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def has_printed(self, pattern: str, timeout: float = PATIENCE_S) -> str:
        """A console line matching ``pattern``, already printed (read while waiting for another) or the next one."""
        import re

        return next((line for line in self.output if re.search(pattern, line)), None) or self.wait_for_line(pattern, timeout)

    def moto_url(self) -> str:
        """The URL of the moto server ``--moto`` started, as serve's console announces it."""
        import re

        announced = re.search(r"at (http://[0-9.]+:[0-9]+)", self.has_printed(r"moto server \(AWS stand-in\) at"))
        assert announced, self.output
        return announced.group(1)

    def wait_for_line(self, pattern: str, timeout: float = PATIENCE_S) -> str:
        """The next console line matching ``pattern`` (a regex); fails on timeout or exit."""
        import queue
        import re

        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no console line matching {pattern!r}; got:\n" + "\n".join(self.output))
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"server exited; no line matching {pattern!r}:\n" + "\n".join(self.output))
            self.output.append(line)
            if re.search(pattern, line):
                return line

    def stop_cleanly(self, timeout: float = 30) -> None:
        """SIGTERM; serve must exit with 0, else the failure shows all it printed (a stop step it named, a traceback)."""
        status = self.stop(timeout=timeout)
        assert status == 0, f"serve exited with {status}:\n{self.printed_until_exit()}"

    def printed_until_exit(self) -> str:
        """Everything serve printed, once it has exited (its output read to the end): what a failed stop shows."""
        while (line := self._lines.get(timeout=PATIENCE_S)) is not None:
            self.output.append(line)
        self._lines.put(None)  # for a later wait, which then says the server exited
        return "\n".join(self.output)

    def client(self, read_timeout: float = 60) -> Any:
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config

        return boto3.client(
            "lambda",
            endpoint_url=self.url,
            region_name="us-east-1",
            config=Config(
                signature_version=UNSIGNED,
                retries={"max_attempts": 0},
                read_timeout=read_timeout,
                max_pool_connections=32,
            ),
        )

    def worker_pids(self, function: Optional[str] = None) -> List[int]:
        """The server's worker processes: its children (workers, spares, zygotes) and the workers its zygotes forked.

        With ``function`` (a FunctionName, else the logical id: AWS_LAMBDA_FUNCTION_NAME), that function's only
        (a zygote shared by several functions counts as the one's it was started for; its forks, as their own).
        """
        parents = {self.process.pid}
        pids: List[int] = []
        for _ in range(2):  # children, then the zygotes' children
            children: List[int] = []
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit() or int(entry.name) in pids:
                    continue
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if int(fields[1]) not in parents:
                        continue
                    environment = (entry / "environ").read_bytes() if function else b""
                except (OSError, IndexError):  # gone meanwhile
                    continue
                children.append(int(entry.name))
                if function is None or f"\0AWS_LAMBDA_FUNCTION_NAME={function}\0".encode() in b"\0" + environment:
                    pids.append(int(entry.name))
            parents = {pid for pid in children if _is_zygote(pid)}
        return pids

    def zygote_pids(self) -> List[int]:
        """The server's zygotes: its children started as one (a zygote's forks have its command line, and it as parent)."""
        return [pid for pid in self.worker_pids() if _is_zygote(pid) and parent_of(pid) == self.process.pid]

    def stop(self, signum: int = 15, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        return self.process.wait(timeout=timeout)


def parent_of(pid: int) -> int:
    """``pid``'s parent process; 0 once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return 0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):  # gone between the kill and the read (ENOENT, or ESRCH from an open file)
        return False


def sandboxes_of(pid: int) -> List[int]:
    """Processes still carrying a sandbox marker made by cfnrun process ``pid`` (its workers, zygotes and what they started)."""
    marker = f"\0CFNRUN_SANDBOX={pid}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in b"\0" + (entry / "environ").read_bytes() and pid_alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


@pytest.fixture
def serve() -> Any:
    """Start ``cfnrun serve`` for a project; every server is stopped after the test."""
    started: List[ServerProcess] = []

    def start(project: Path, *args: str) -> ServerProcess:
        server = ServerProcess(project, *args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# -- a brand-new `cfn init` project (issue #10) --------------------------------------------------

FRESH_TYPE_NAME = "Org::Svc::Thing"
FRESH_SCHEMA = "org-svc-thing.json"


@pytest.fixture(scope="session")
def cfn_init_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``cfn init`` then ``cfn generate``, non-interactive, exactly as a user would run them."""
    root = tmp_path_factory.mktemp("cfn-init") / "thing"
    root.mkdir()
    cfn = [sys.executable, "-c", "import sys; from rpdk.core.cli import main; sys.exit(main())"]
    init = ["init", "--type-name", FRESH_TYPE_NAME, "--artifact-type", "RESOURCE", "python311", "--no-docker"]
    for args in (init, ["generate"]):
        run = subprocess.run(cfn + args, cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "src" / "org_svc_thing" / "models.py").is_file()
    return root


@pytest.fixture
def fresh(cfn_init_project: Path, tmp_path: Path) -> Path:
    """A private copy of the freshly initialised project."""
    target = tmp_path / "thing"
    shutil.copytree(cfn_init_project, target)
    return target


def edit_schema(project: Path, change: Callable[[dict], None]) -> None:
    """Change the fresh project's schema in place, as a user's editor would."""
    path = project / FRESH_SCHEMA
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2))


@pytest.fixture(autouse=True)
def no_history_in_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """cfnrun records operations under the project's .cfnrun/; tests that use the repo's fixtures
    in place must not write there, so recording is off unless a test turns it on (CFNRUN_HISTORY=on)."""
    monkeypatch.setenv("CFNRUN_HISTORY", "off")


@pytest.fixture
def moto_url() -> Iterator[str]:
    """A separately started moto server on a free loopback port, as a user would run one, emptied for this test."""
    import urllib.request

    from moto import server as moto_server

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    # moto keeps its state per process, not per server: start each test from an empty one
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).close()
    yield url
    server.stop()
