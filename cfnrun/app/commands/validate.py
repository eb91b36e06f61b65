"""``cfnrun validate``: check a resource schema (valid draft-07, and the resource schema rules) and list the problems.

Exit status: 0 no errors (warnings may be printed), 1 errors found, 2 the schema cannot be read.
"""
from __future__ import annotations

import json

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_SUCCESS, echo, project_dir, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.settings.validate import ValidateOptions
from cfnrun.model.errors import CfnrunError
from cfnrun.model.project import load_project
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.schema_check import check_schema, looks_like_hook


def run(options: ValidateOptions, early: EarlyStart) -> int:
    try:
        target = project_dir(options.project_path, options.project)
        if not target.exists():
            what = "schema file" if target.suffix.lower() == ".json" else "schema file or project folder"
            raise CfnrunError(f"{target}: no such {what}")
        if target.is_file():
            schema = ResourceSchema.load(target)
            hook = looks_like_hook(schema.document)
        else:
            loaded = load_project(target, usable_schema=False)
            schema, hook = loaded.schema, loaded.is_hook
    except CfnrunError as error:
        return usage_error(str(error), json_output=options.json_output)
    problems = check_schema(schema, hook)
    errors = sum(1 for p in problems if p.severity == "error")
    if options.json_output:
        echo(json.dumps({
            "schema": str(schema.path),
            "errors": errors,
            "warnings": len(problems) - errors,
            "problems": [{"severity": p.severity, "pointer": p.pointer or "/", "message": p.message} for p in problems],
        }))
    else:
        for problem in problems:
            echo(f"{schema.path}: {problem.line()}")
        echo(f"{schema.path}: {errors} error(s), {len(problems) - errors} warning(s)")
    return EXIT_FAILED if errors else EXIT_SUCCESS
