"""The system's chromium, driven by Playwright, for the console's browser tests and its guide's screenshots (issue #35).

Playwright comes from PyPI (the ``test`` extra); its own browser downloads are not used: it drives Debian's
``chromium`` package at ``/usr/bin/chromium`` (``CFNRUN_TEST_CHROMIUM`` names another). Run as root, chromium needs
no sandbox; without the background-networking flags it opens connections of its own and some of the page's are refused.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

CHROMIUM = os.environ.get("CFNRUN_TEST_CHROMIUM", "/usr/bin/chromium")
INSTALL = "apt-get install chromium"  # Debian's package; .ci/run installs it where apt-get is available
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def missing() -> Optional[str]:
    """Why the browser tests cannot run here (one line naming what to install), or None when they can."""
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM}: `{INSTALL}` to run the console's browser tests"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no playwright: `pip install -e '.[test]'` to run the console's browser tests"
    return None


class Browser:
    """One chromium for a module (or the screenshot script), on a fresh profile folder removed when it closes."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self.profile = tempfile.mkdtemp(prefix="cfnrun-chromium-")
        self._playwright = sync_playwright().start()
        self.context: Any = self._playwright.chromium.launch_persistent_context(
            self.profile, executable_path=CHROMIUM, headless=True, args=FLAGS, viewport={"width": 1200, "height": 800},
        )

    def page(self, timeout_s: float) -> Any:
        """A new tab whose waits (for a selector, a text, a load) fail after ``timeout_s``."""
        opened = self.context.new_page()
        opened.set_default_timeout(timeout_s * 1000)
        return opened

    def close(self) -> None:
        try:
            self.context.close()
            self._playwright.stop()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
