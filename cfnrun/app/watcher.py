"""Which saved files matter to a provider project (or a template of plain functions), watched without polling."""
from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import watchfiles

from cfnrun.model.errors import CfnrunError
from cfnrun.model.local_state import FOLDER
from cfnrun.model.project import RPDK_CONFIG
from cfnrun.model.template import FunctionSource

IGNORED_DIRS = {
    ".git", ".hg", ".svn", "__pycache__", "build", "dist", ".state", ".venv", "venv", "env",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", "node_modules",
    ".idea", ".vscode", ".aws-sam", "sam-tests", "example_inputs", "requests", "docs",
    FOLDER,  # cfnrun's own history: recording a call must not reload a project whose code is its root
}
IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", ".swo", ".tmp", ".bak", "~", ".log", ".orig")
# Saves closer together than this make one reload (an editor that truncates, then writes; a save and its
# format-on-save rewrite); a change is seen 1-2 of these after it is made. It is most of save → live:
# 20 made the note sample's reload ~25 ms slower than 5 (bench/reload_latency.py). Each step the watch
# thread takes the GIL briefly (the stop check), 200 times a second at 5 ms.
SETTLE_MS = 5
# A file's modification time may come from the kernel's coarse clock, up to a tick (4 ms at
# HZ=250) behind time.time(): a save just after a moment can carry a time just before it.
CLOCK_SLACK_S = 0.005


class ProjectFilter(watchfiles.DefaultFilter):
    """Code under the import root (each function's, for plain functions), plus the schema, template.yml and .rpdk-config
    (the ``--functions`` template)."""

    def __init__(self, project: FunctionSource, extra_files: Sequence[Path] = ()) -> None:
        super().__init__(ignore_dirs=tuple(IGNORED_DIRS))
        self.code_dirs = project.code_dirs
        self.extra_files = set(extra_files)  # e.g. invoke --watch's request file, wherever it is
        self.config_files = project.config_files
        # The ignored folders right under a watched folder (cfnrun's history, written with every call serve records; a
        # provider's own state, written with every handler call; .git, .venv): their changes are turned away by their
        # start alone, before a Path is made, unless a file named above lies in one.
        named = (*self.config_files, *self.extra_files)
        prefixes = (folder / name for folder in watched_folders(project, extra_files) for name in IGNORED_DIRS)
        self._ignored_starts = tuple(
            f"{prefix}{os.sep}" for prefix in prefixes if not any(path.is_relative_to(prefix) for path in named)
        )

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        if path.startswith(self._ignored_starts):
            return False
        candidate = Path(path)
        if candidate in self.config_files or candidate in self.extra_files:
            return True
        if not super().__call__(change, path):  # ignored folders, editor swap and backup files
            return False
        if candidate.name.startswith("#") or candidate.name.endswith(IGNORED_SUFFIXES):
            return False
        return any(candidate.is_relative_to(folder) for folder in self.code_dirs)

    def is_config(self, path: Path) -> bool:
        return path in self.config_files


@dataclass(frozen=True)
class ProjectChange:
    paths: Set[Path]
    config: bool  # the schema, template.yml or .rpdk-config changed: reread the project


class WatchSignal:
    """The ``stop_event`` the watcher checks on every step: ``ready`` is called at the first check,
    when the file system watches are in place; ``set`` stops the watch at the next step."""

    def __init__(self, ready: Callable[[], object]) -> None:
        self._ready: Optional[Callable[[], object]] = ready
        self._stop = threading.Event()

    def is_set(self) -> bool:
        ready, self._ready = self._ready, None
        if ready is not None:
            ready()
        return self._stop.is_set()

    def set(self) -> None:
        self._stop.set()


def saved_between(project: FunctionSource, extra_files: Sequence[Path], since: float, until: float) -> Optional[ProjectChange]:
    """The files the watch reports on that were saved between ``since`` and ``until`` (``time.time()``s), as one change."""
    watch_filter = ProjectFilter(project, extra_files)
    candidates = [*watch_filter.config_files, *watch_filter.extra_files]
    for code_dir in project.code_dirs:
        candidates.extend(_files_under(code_dir))
    saved = set()
    for path in candidates:
        try:
            modified = os.stat(path).st_mtime
        except OSError:
            continue
        if since <= modified <= until and watch_filter(watchfiles.Change.modified, str(path)):
            saved.add(path)
    return ProjectChange(saved, any(watch_filter.is_config(path) for path in saved)) if saved else None


def watched_folders(project: FunctionSource, extra_files: Sequence[Path] = ()) -> List[Path]:
    """The project's folder, and each code folder and extra file's folder outside it."""
    outside = [*project.code_dirs, *(path.parent for path in extra_files)]
    return sorted({project.root, *(folder for folder in outside if not folder.is_relative_to(project.root))})


def watch_changes(project: FunctionSource, signal: WatchSignal, extra_files: Sequence[Path] = ()) -> Iterator[ProjectChange]:
    """Each burst of saves that touched the project's code or configuration (or one of ``extra_files``), until ``signal`` is set."""
    watch_filter = ProjectFilter(project, extra_files)
    for changes in watchfiles.watch(
        *watched_folders(project, extra_files), watch_filter=watch_filter, step=SETTLE_MS, rust_timeout=1000, stop_event=signal, raise_interrupt=False
    ):
        paths = {Path(path) for _, path in changes}
        paths.update(_in_new_folders(changes, watch_filter))
        yield ProjectChange(paths, any(watch_filter.is_config(path) for path in paths))


def _files_under(folder: Path) -> Iterator[Path]:
    """Every file under ``folder``, outside the ignored folders."""
    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name not in IGNORED_DIRS]
        yield from (Path(parent, name) for name in files)


def _in_new_folders(changes: Set[Tuple[watchfiles.Change, str]], watch_filter: ProjectFilter) -> Set[Path]:
    """The files the watch reports on inside the folders ``changes`` add (made, moved in, a branch checked out).

    The watch of a new folder is put in place when its creation is seen, so a file written into it a moment after it
    was made (``git checkout``, an unpacked archive, ``mkdir pkg && cp ...``) can come before that and raise no change
    of its own: the folder's change says it is there. notify puts the new folder's watch in place as it reads the
    folder's creation, before that change reaches here (inferred from its behaviour: tests/test_reload.py), so what the
    folder holds now is added to the change, and what comes later is seen on its own."""
    found: Set[Path] = set()
    for change, path in changes:
        if change is watchfiles.Change.added and os.path.isdir(path):
            found.update(file for file in _files_under(Path(path)) if watch_filter(watchfiles.Change.added, str(file)))
    return found


class WatchFailed(CfnrunError):
    """The file watch could not start, or stopped with an error: saves are no longer seen."""


class ChangeFeed:
    """Watches from ``start`` on; each burst of saves waits in a queue until taken.

    Starting the watch before acting means a save made while cfnrun is busy (running
    an operation, reloading) is never missed. The watch runs on a thread of its own
    (watchfiles' blocking ``watch``; its async form would load anyio's event loop backend),
    which hands each change to the event loop. An error of the
    watch is never dropped: ``start`` raises it, or, once started, ``next`` does.
    """

    def __init__(self, project: FunctionSource, extra_files: Sequence[Path] = ()) -> None:
        self.project = project
        self.extra_files = [path.resolve() for path in extra_files]
        self._changes: "asyncio.Queue[Union[ProjectChange, WatchFailed]]" = asyncio.Queue()
        self._signal: Optional[WatchSignal] = None

    async def start(self, saved_since: Optional[float] = None) -> None:
        """Begin watching; once this returns, every save is seen.

        With ``saved_since`` (a ``time.time()``), saves made from then until the watch was in
        place come first, as one change: serve's workers read the code before the watch is up.
        """
        loop = asyncio.get_running_loop()
        ready: "asyncio.Future[None]" = loop.create_future()

        def watching() -> None:  # on the watch's thread, once its watches are in place
            if saved_since is not None:
                missed = saved_between(self.project, self.extra_files, saved_since - CLOCK_SLACK_S, time.time())
                if missed is not None:
                    _hand_over(loop, self._changes.put_nowait, missed)
            _hand_over(loop, self._settle, ready, None)

        self._signal = WatchSignal(watching)
        watch = threading.Thread(target=self._pump, args=(loop, self._signal, ready), name="cfnrun-watch", daemon=True)
        watch.start()
        try:
            await ready
        except BaseException:
            self.stop()
            raise

    def _settle(self, ready: "asyncio.Future[None]", error: Optional[BaseException]) -> None:
        """On the event loop: the watch is in place (``error`` None), or it failed, before or after that."""
        failure = None
        if error is not None:
            folders = ", ".join(str(folder) for folder in watched_folders(self.project, self.extra_files))
            failure = WatchFailed(f"cannot watch {folders} for saves: {error}")
        if not ready.done():
            if failure is None:
                ready.set_result(None)
            else:
                ready.set_exception(failure)
        elif failure is not None:
            self._changes.put_nowait(failure)

    def _pump(self, loop: asyncio.AbstractEventLoop, signal: WatchSignal, ready: "asyncio.Future[None]") -> None:
        try:
            for change in watch_changes(self.project, signal, extra_files=self.extra_files):
                if not _hand_over(loop, self._changes.put_nowait, change):
                    return
        except Exception as error:  # noqa: B902 - a folder gone, the OS watch failing: start() or next() says so
            _hand_over(loop, self._settle, ready, error)

    async def next(self) -> ProjectChange:
        change = await self._changes.get()
        if isinstance(change, WatchFailed):
            raise change
        return change

    def stop(self) -> None:
        if self._signal is not None:
            self._signal.set()


def _hand_over(loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: object) -> bool:
    """Run ``callback(*args)`` on ``loop`` (from the watch's thread); False once the loop has closed."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the event loop closed: nobody is left to take it
        return False
    return True


def describe_change(change: ProjectChange, root: Path) -> str:
    """``src/pkg/handlers.py changed``: saved files that exist, deleted ones marked as such."""
    shown = []
    for path in sorted(change.paths):
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        if path.exists():
            shown.append(name)
        elif path.suffix in (".py", ".json", ".yml", ".yaml") or path.name == RPDK_CONFIG:
            shown.append(f"{name} (deleted)")
    return (", ".join(shown) or "files") + " changed"
