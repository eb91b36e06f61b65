"""Type configuration files in cloudformation-cli's format, checked against the schema's ``typeConfiguration``.

``cfn`` reads ``--typeconfig FILE`` (default ``~/.cfn-cli/typeConfiguration.json``): for a
resource type the whole file is the configuration; for a hook it is
``CloudFormationConfiguration.HookConfiguration.Properties``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

from cfnrun.model.errors import CfnrunError
from cfnrun.model.schema import ResourceSchema

DEFAULT_TYPE_CONFIGURATION = Path("~/.cfn-cli/typeConfiguration.json")
HOOK_KEYS = ("CloudFormationConfiguration", "HookConfiguration", "Properties")


def load_type_configuration(path: Path, hook: bool) -> Dict[str, Any]:
    """The configuration a file holds; a CfnrunError naming the file when it is unreadable or misshapen."""
    try:
        document = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CfnrunError(f"{path}: type configuration file not found") from None
    except json.JSONDecodeError as error:
        raise CfnrunError(f"{path}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(document, dict):
        raise CfnrunError(f"{path}: a type configuration must be a JSON object")
    if not hook:
        return document
    value: Any = document
    for depth, key in enumerate(HOOK_KEYS):
        if not isinstance(value, dict) or key not in value:
            where = ".".join(HOOK_KEYS[:depth]) or "the top level"
            raise CfnrunError(
                f"{path}: a hook's type configuration is {{\"CloudFormationConfiguration\": {{\"HookConfiguration\": "
                f"{{\"Properties\": {{...}}}}}}}}; '{key}' is missing under {where}"
            )
        value = value[key]
    if not isinstance(value, dict):
        raise CfnrunError(f"{path}: {'.'.join(HOOK_KEYS)} must be a JSON object")
    return value


def declares_type_configuration(schema: ResourceSchema) -> bool:
    return isinstance(schema.document.get("typeConfiguration"), dict)


def configuration_schema(schema: ResourceSchema) -> Optional[ResourceSchema]:
    """The schema's ``typeConfiguration`` as a schema of its own (its ``$ref``s reach the schema's definitions), or None
    when the schema declares none."""
    definition = schema.document.get("typeConfiguration")
    if not isinstance(definition, dict):
        return None
    return ResourceSchema({"definitions": schema.document.get("definitions") or {}, **definition})


def type_configuration_problem(schema: ResourceSchema, configuration: Dict[str, Any]) -> Optional[str]:
    """Why ``configuration`` does not fit the schema's ``typeConfiguration`` (as InvalidTypeConfiguration would say), or None."""
    from jsonschema.exceptions import best_match

    from cfnrun.model.schema_validator import SchemaValidator

    fragment = configuration_schema(schema)
    if fragment is None:
        return "the schema declares no typeConfiguration, so the type takes none"
    error = best_match(SchemaValidator(fragment.document).iter_errors(configuration))
    if error is None:
        return None
    pointer = "".join("/" + str(part) for part in error.absolute_path) or "/"
    return f"{pointer}: {error.message}"
