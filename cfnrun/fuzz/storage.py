"""Where hypothesis keeps its own tables while cfnrun fuzz explores: cfnrun's cache folder, not the current folder.

Hypothesis computes tables once and keeps them in its storage folder, ``.hypothesis/`` in the
current folder unless told otherwise: the characters a codec encodes (a pattern compiled with
``re.ASCII``, as the fuzzer's are: ~2 s of CPU, every code point tried), the Unicode categories,
the constants of local modules. Run from a fresh folder, ``cfnrun fuzz`` paid that again and left
a ``.hypothesis/`` there. During an exploration the folder is the user's cache folder instead
(``$XDG_CACHE_HOME/cfnrun/hypothesis``, else ``~/.cache/...``, as the template cache), so the tables
are computed once per machine; ``HYPOTHESIS_STORAGE_DIRECTORY`` set by the user wins. The found
cases are kept elsewhere still (the project's ``.cfnrun/hypothesis``, ``explore.py``), and the
tables only save work: what is generated is the same wherever they are kept.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator, Optional

from hypothesis import configuration

from cfnrun.model.template_cache import cache_folder

STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"


@contextlib.contextmanager
def tables_in_cache() -> Iterator[None]:
    """Hypothesis's storage folder is cfnrun's cache folder inside the block; as it was after it (the pytest plugin
    fuzzes in the user's test process, whose own hypothesis tests keep their folder)."""
    folder = cache_folder("hypothesis")
    if folder is None or os.environ.get(STORAGE_ENV):
        yield
        return
    before: Optional[Path] = vars(configuration).get("__hypothesis_home_directory")
    configuration.set_hypothesis_home_dir(folder)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)
