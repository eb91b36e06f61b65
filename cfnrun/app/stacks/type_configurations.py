"""SetTypeConfiguration on the local stacks: a configuration checked against its type's configuration schema, then applied.

The model's documentation of ``Configuration`` says it must validate against the type's configuration schema, and
lists two errors for the operation: ``CFNRegistryException`` and ``TypeNotFoundException``. A configuration that does
not fit is refused with the first, and nothing of it is kept. The service's sentence is not published: cfnrun's words
follow the service's refusal of a resource's properties (``Properties validation failed for resource X with
message:``) with the validator's lines as the service writes them, which name no value (``contract/service_wording.py``):
a type's configuration is where its credentials go.
"""
from __future__ import annotations

from typing import Any, Dict, List

from cfnrun.app.stacks.hook_gate import CustomHook, Hook
from cfnrun.contract.request_rules import configuration_problems
from cfnrun.model.hook_configuration import HookConfigurationError, parse_hook_configuration
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.store import StackError

REFUSED = "CFNRegistryException"  # SetTypeConfiguration's modelled error for a configuration the service refuses
HOOK_PROPERTIES = "#/CloudFormationConfiguration/HookConfiguration/Properties"  # where a hook's own typeConfiguration is


def refusal(type_name: str, lines: List[str]) -> StackError:
    return StackError(f"Configuration validation failed for type {type_name} with message:\n" + "\n".join(lines), REFUSED)


def check_resource_configuration(type_name: str, schema: ResourceSchema, configuration: Dict[str, Any]) -> None:
    """Refuse a resource type's configuration its schema's ``typeConfiguration`` does not allow (a schema that declares
    none takes any: the service's rule there is not known)."""
    problems = configuration_problems(schema, configuration)
    if problems:
        raise refusal(type_name, problems)


def configure_hook(hook: Hook, configuration: Dict[str, Any]) -> None:
    """SetTypeConfiguration of a hook: the service's HookConfiguration, its Properties checked against a served hook's
    schema (a Guard or Lambda hook has none)."""
    try:
        parsed = parse_hook_configuration(configuration)
    except HookConfigurationError as error:
        raise refusal(hook.hook_type, [str(error)]) from None
    schema = hook.schema if isinstance(hook, CustomHook) else None
    if schema is not None:
        problems = configuration_problems(schema, parsed.properties)
        if problems:  # each line's pointer is within Properties: said from the document's top
            raise refusal(hook.hook_type, [HOOK_PROPERTIES + line[1:] for line in problems])
    hook.configuration = parsed
