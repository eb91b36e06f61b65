"""A blueprint as ``--state`` keeps it for an operation still to be carried out (a change set, a stack refactor): its
template — the user's file, and what the account's macros made of it — and the parameter values it was made with, never
a NoEcho one (only whether it was the parameter's Default); and the blueprint made again from them after a restart, with
an SSM-typed parameter's value as it was read then (not read again) and no macro run again."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Tuple

from cfnrun.stacks.blueprint import Blueprint, StackEnvironment, prepare
from cfnrun.stacks.change_sets import UNPROCESSED
from cfnrun.stacks.persistence import kept_ssm_values
from cfnrun.stacks.provisioning import NoProvisioner, Provisioners
from cfnrun.stacks.template.errors import TemplateError
from cfnrun.stacks.template.loading import load_stack_template
from cfnrun.stacks.template.parameters import NO_ECHO_MASK


def kept_values(blueprint: Blueprint, parameters: Mapping[str, str]) -> Dict[str, Any]:
    """What is kept of ``blueprint``, made with ``parameters``; its NoEcho values (``no_echo_values``) are to be masked
    wherever they appear in what the caller writes, but in ``template_body``, the user's own file."""
    no_echo = [name for name in blueprint.no_echo if name in parameters]
    declared = blueprint.template.parameters
    return {
        "template_body": blueprint.template_body,
        "macro_output": blueprint.template.macro_output,
        "parameters": {k: v for k, v in parameters.items() if k not in no_echo},
        "no_echo": no_echo,
        "no_echo_defaults": [n for n in no_echo if n in declared and parameters[n] == declared[n].default],
        "resolved_values": {k: v for k, v in blueprint.resolved_values.items() if k not in no_echo},
    }


def no_echo_values(blueprint: Blueprint, parameters: Mapping[str, str]) -> List[str]:
    return [value for name in blueprint.no_echo if (value := parameters.get(name))]


def made_again(kept: Dict[str, Any], environment: StackEnvironment, provisioners: Provisioners) -> Tuple[Optional[Blueprint], Optional[str]]:
    """The blueprint made again from what was kept of it, or what it lacks to be made (said after "without ")."""
    lost = [name for name in kept["no_echo"] if name not in kept["no_echo_defaults"]]
    if lost:
        return None, f"the value of NoEcho parameter {', '.join(lost)} (never written to --state)"
    given = dict(kept["parameters"])  # a NoEcho parameter left at its Default takes it again
    environment = replace(environment, ssm_parameter=kept_ssm_values(given, kept["resolved_values"]))
    macro_output = kept.get("macro_output")
    body = json.dumps(macro_output) if macro_output is not None else kept["template_body"]
    try:
        template = load_stack_template(body, given, environment.module_fragments, environment.read_include, environment.run_macro)
        if macro_output is not None:
            template = replace(template, macro_output=macro_output)
        blueprint = prepare(kept["template_body"], dict(given), {}, environment, template)
        for logical_id in blueprint.resource_ids():
            provisioners.for_type(blueprint.type_of(logical_id))
    except (TemplateError, NoProvisioner) as error:
        return None, f"a template that still reads ({error})"
    return blueprint, None


def shown_only(kept: Dict[str, Any], environment: StackEnvironment) -> Blueprint:
    """A blueprint read back to be shown only: its template as sent, its NoEcho names and SSM values; nothing to run."""
    blueprint = prepare(UNPROCESSED, {}, {}, environment)
    return replace(blueprint, template_body=kept["template_body"], no_echo=tuple(kept["no_echo"]),
                   resolved_values=dict(kept["resolved_values"]))


def shown_parameters(kept: Dict[str, Any]) -> Dict[str, str]:
    """The parameter values kept, each NoEcho one as its mask."""
    return dict(kept["parameters"], **{name: NO_ECHO_MASK for name in kept["no_echo"]})
