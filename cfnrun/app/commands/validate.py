"""``cfnrun validate``: check a resource schema (valid draft-07, and the resource schema rules) and list the problems.

A MODULE project (``cfn init --artifact-type MODULE``) is checked by its template fragment's
rules instead (``model/module_fragment.py``), each problem with where it is.

Exit status: 0 no errors (warnings may be printed), 1 errors found, 2 the schema cannot be read.
"""
from __future__ import annotations

import json
from typing import List

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.settings.validate import ValidateOptions
from cfnrun.model.errors import CfnrunError
from cfnrun.model.module_fragment import check_module_fragment, is_module_project, module_type_name
from cfnrun.model.project import load_project
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.schema_check import SchemaProblem, check_schema, looks_like_hook


def run(options: ValidateOptions, early: EarlyStart) -> int:
    try:
        target = project_dir(options.project_path, options.project)
        if not target.exists():
            what = "schema file" if target.suffix.lower() == ".json" else "schema file or project folder"
            raise CfnrunError(f"{target}: no such {what}")
        if target.is_dir() and is_module_project(target):
            module_type_name(target)
            path, _, broken = check_module_fragment(target)
            return _report(str(path), [SchemaProblem(*b.split(": ", 1)) for b in broken], options.json_output)
        if target.is_file():
            schema = ResourceSchema.load(target)
            hook = looks_like_hook(schema.document)
        else:
            loaded = load_project(target, usable_schema=False)
            schema, hook = loaded.schema, loaded.is_hook
    except CfnrunError as error:
        return usage_error(str(error), json_output=options.json_output)
    return _report(str(schema.path), check_schema(schema, hook), options.json_output)


def _report(checked: str, problems: List[SchemaProblem], json_output: bool) -> int:
    """Each problem on its line (or as JSON) and the count; the exit status."""
    errors = sum(1 for p in problems if p.severity == "error")
    if json_output:
        echo(json.dumps({
            "schema": checked,
            "errors": errors,
            "warnings": len(problems) - errors,
            "problems": [{"severity": p.severity, "pointer": p.pointer or "/", "message": p.message} for p in problems],
        }))
    else:
        for problem in problems:
            echo(f"{checked}: {problem.line()}")
        echo(f"{checked}: {errors} error(s), {len(problems) - errors} warning(s)")
    return EXIT_FAILED if errors else EXIT_SUCCESS
