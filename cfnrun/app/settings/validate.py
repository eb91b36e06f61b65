"""``cfnrun validate``'s options."""
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from cfnrun.app.options import argument, option
from cfnrun.app.settings import common


@dataclass(frozen=True)
class ValidateOptions:
    project_path: Optional[Path] = argument("A provider project folder, or a resource schema file.", show_default=False)
    project: Optional[Path] = common.project()
    json_output: bool = option("--json", help="Print the problems as one JSON object.", default=False)
