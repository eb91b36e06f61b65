"""Modules: a ``Org::Svc::Name::MODULE`` resource replaced by its fragment's resources, as CloudFormation expands it.

A module's fragment is a small template (Parameters, Resources, optionally Conditions,
Mappings, Outputs). Each inner resource's logical id is the module's logical id followed by
the fragment's (``BucketModule`` + ``S3Bucket`` → ``BucketModuleS3Bucket``); a module inside
a module concatenates again, at most three modules deep and never in a cycle. The module's
``Properties`` are the fragment's parameter values (intrinsic functions over the parent's
parameters allowed; constraints not enforced, as the service does not); ``Ref``, ``Fn::GetAtt``,
``Fn::Sub``, ``DependsOn`` and ``Condition`` inside the fragment follow the renaming. From
outside, ``!Ref Mod.Res``, ``!Ref ModRes`` and ``!GetAtt Mod.Res.Attr`` name an inner resource,
and ``DependsOn: Mod`` every inner resource. The module's ``DeletionPolicy``,
``UpdateReplacePolicy``, ``DependsOn`` and ``Condition`` apply to every inner resource (a
resource's own policy and condition win; ``DependsOn`` adds up); ``CreationPolicy``,
``UpdatePolicy`` and ``Properties.Tags`` on a module are refused.

Undocumented by the service, and cfnrun's choice: the fragment's Conditions and Mappings are
prefixed with the module's logical id like its resources, and its Outputs are reachable only
as ``!GetAtt Mod.Outputs.Name`` (replaced by the output's value). The refusals' wording is
cfnrun's (docs/reference/templates.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from cfnrun.stacks.template.errors import TemplateError

MODULE_SUFFIX = "::MODULE"
MAX_MODULE_DEPTH = 3
INHERITED_POLICIES = ("DeletionPolicy", "UpdateReplacePolicy")
REFUSED_ON_A_MODULE = ("CreationPolicy", "UpdatePolicy")
_SUB_NAME = re.compile(r"\$\{([^!}][^}]*)\}")
_PSEUDO = "AWS::"


def is_module_type(type_name: Any) -> bool:
    return isinstance(type_name, str) and type_name.endswith(MODULE_SUFFIX)


def uses_modules(document: Mapping[str, Any]) -> bool:
    resources = document.get("Resources")
    return isinstance(resources, dict) and any(isinstance(r, dict) and is_module_type(r.get("Type")) for r in resources.values())


@dataclass(frozen=True)
class _Module:
    """One module resource being expanded: its name in the parent, its fragment and its parameter values."""

    logical_id: str
    type_name: str
    fragment: Mapping[str, Any]
    properties: Mapping[str, Any]
    declaration: Mapping[str, Any]

    def section(self, name: str) -> Dict[str, Any]:
        block = self.fragment.get(name)
        return dict(block) if isinstance(block, dict) else {}


ModuleInfo = Dict[str, str]  # the API's ModuleInfo: TypeHierarchy and LogicalIdHierarchy, each "/"-joined, outermost first


def expand_modules(document: Mapping[str, Any], fragments: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """``document`` with every module resource replaced by its fragment's resources; TemplateError when one is wrong.

    ``fragments`` are the served modules' fragments by type name (``Org::Svc::Name::MODULE``).
    """
    return expand_modules_with_info(document, fragments)[0]


def expand_modules_with_info(
    document: Mapping[str, Any], fragments: Mapping[str, Mapping[str, Any]]
) -> Tuple[Dict[str, Any], Dict[str, ModuleInfo]]:
    """The expanded template, and the ModuleInfo of every resource a module made, by its logical id."""
    expanded, hierarchies = _expand(dict(document), fragments, (), "")
    return expanded, {
        logical_id: {"TypeHierarchy": "/".join(types), "LogicalIdHierarchy": "/".join(ids)}
        for logical_id, (types, ids) in hierarchies.items()
    }


_Hierarchy = Tuple[Tuple[str, ...], Tuple[str, ...]]  # module types, module logical ids (as written), outermost first


def _expand(
    document: Dict[str, Any], fragments: Mapping[str, Mapping[str, Any]], enclosing: Tuple[str, ...], prefix: str
) -> Tuple[Dict[str, Any], Dict[str, _Hierarchy]]:
    resources = document.get("Resources")
    hierarchies: Dict[str, _Hierarchy] = {}
    if not isinstance(resources, dict):
        return document, hierarchies
    modules: Dict[str, _Module] = {}
    for logical_id, declaration in resources.items():
        if isinstance(declaration, dict) and is_module_type(declaration.get("Type")):
            modules[logical_id] = _module(logical_id, declaration, fragments, enclosing)
    if not modules:
        return document, hierarchies
    expanded_resources: Dict[str, Any] = {}
    inner_ids: Dict[str, List[str]] = {}
    conditions = dict(document.get("Conditions") or {})
    mappings = dict(document.get("Mappings") or {})
    outputs_of: Dict[str, Dict[str, Any]] = {}
    for logical_id, declaration in resources.items():
        module = modules.get(logical_id)
        if module is None:
            expanded_resources[logical_id] = declaration
            continue
        inner, inner_hierarchies = _expand(_renamed_fragment(module), fragments, (*enclosing, module.type_name), logical_id)
        made = inner.get("Resources") or {}
        written_id = logical_id[len(prefix):]  # as the fragment (or the template) wrote it
        for inner_id in made:
            types, ids = inner_hierarchies.get(inner_id, ((), ()))
            hierarchies[inner_id] = ((module.type_name, *types), (written_id, *ids))
        for inner_id, inner_declaration in made.items():
            if inner_id in resources or inner_id in expanded_resources:
                raise TemplateError(f"Template error: module {logical_id} makes the logical id {inner_id}, "
                                    "which the template already has", f"Resources.{logical_id}")
            expanded_resources[inner_id] = _inherit(inner_declaration, module.declaration)
        inner_ids[logical_id] = list(made)
        conditions.update(inner.get("Conditions") or {})
        mappings.update(inner.get("Mappings") or {})
        outputs_of[logical_id] = dict(inner.get("Outputs") or {})
    result = dict(document)
    result["Resources"] = expanded_resources
    if conditions:
        result["Conditions"] = conditions
    if mappings:
        result["Mappings"] = mappings
    outside = _OutsideNames(modules, inner_ids, outputs_of)
    for section in ("Resources", "Outputs", "Conditions"):
        if isinstance(result.get(section), dict):
            result[section] = outside.rewrite(result[section])
    return result, hierarchies


def _module(logical_id: str, declaration: Mapping[str, Any], fragments: Mapping[str, Mapping[str, Any]],
            enclosing: Tuple[str, ...]) -> _Module:
    type_name = str(declaration["Type"])
    where = f"Resources.{logical_id}"
    fragment = fragments.get(type_name)
    if fragment is None:
        raise TemplateError(f"Template format error: Unrecognized resource types: [{type_name}]", where)
    if type_name in enclosing:
        raise TemplateError(f"Template error: module {type_name} contains itself ({' > '.join((*enclosing, type_name))})", where)
    if len(enclosing) >= MAX_MODULE_DEPTH:
        raise TemplateError(f"Template error: modules nest at most {MAX_MODULE_DEPTH} deep ({' > '.join((*enclosing, type_name))})", where)
    for attribute in REFUSED_ON_A_MODULE:
        if attribute in declaration:
            raise TemplateError(f"Template error: a module ({type_name}) cannot have {attribute}", f"{where}.{attribute}")
    properties = declaration.get("Properties") or {}
    if not isinstance(properties, dict):
        raise TemplateError("Template error: a module's Properties must be a mapping", f"{where}.Properties")
    if "Tags" in properties:
        raise TemplateError(f"Template error: a module ({type_name}) cannot have Properties.Tags", f"{where}.Properties.Tags")
    return _Module(logical_id, type_name, fragment, properties, declaration)


def _renamed_fragment(module: _Module) -> Dict[str, Any]:
    """The fragment with its names prefixed and its parameters replaced by the module's properties."""
    parameters = module.section("Parameters")
    values: Dict[str, Any] = {}
    for name, declared in parameters.items():
        if name in module.properties:
            values[name] = module.properties[name]
        elif isinstance(declared, dict) and "Default" in declared:
            values[name] = declared["Default"]
        else:
            raise TemplateError(f"Template error: module {module.logical_id} ({module.type_name}) needs the property {name}",
                                f"Resources.{module.logical_id}.Properties")
    unknown = sorted(set(module.properties) - set(parameters))
    if unknown:
        raise TemplateError(f"Template error: module {module.type_name} has no parameter {unknown[0]}",
                            f"Resources.{module.logical_id}.Properties.{unknown[0]}")
    names = _InsideNames(module.logical_id, set(module.section("Resources")), set(module.section("Conditions")),
                         set(module.section("Mappings")), values)
    renamed: Dict[str, Any] = {}
    for section in ("Resources", "Conditions", "Mappings", "Outputs"):
        block = module.section(section)
        if section == "Outputs":
            renamed[section] = {key: names.rewrite(value) for key, value in block.items()}
        elif section == "Mappings":
            renamed[section] = {module.logical_id + key: value for key, value in block.items()}
        else:
            renamed[section] = {module.logical_id + key: names.rewrite(value) for key, value in block.items()}
    for declaration in renamed["Resources"].values():
        if isinstance(declaration, dict):
            names.rename_attributes(declaration)
    return renamed


@dataclass
class _InsideNames:
    """Names inside a fragment: its resources, conditions and mappings prefixed, its parameters replaced."""

    prefix: str
    resources: Set[str]
    conditions: Set[str]
    mappings: Set[str]
    parameters: Mapping[str, Any]

    def rewrite(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.rewrite(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            [(function, argument)] = value.items()
            if function == "Ref" and isinstance(argument, str):
                if argument in self.parameters:
                    return self.parameters[argument]
                inside = argument.partition(".")[0] in self.resources  # Res, or Inner.Res of a module inside
                return {"Ref": self.prefix + argument if inside else argument}
            if function == "Fn::GetAtt":
                return {"Fn::GetAtt": self._get_att(argument)}
            if function == "Fn::Sub":
                return {"Fn::Sub": self._sub(argument)}
            if function == "Condition" and isinstance(argument, str) and argument in self.conditions:
                return {"Condition": self.prefix + argument}
            if function == "Fn::If" and isinstance(argument, list) and argument and argument[0] in self.conditions:
                return {"Fn::If": [self.prefix + argument[0], *self.rewrite(argument[1:])]}
            if function == "Fn::FindInMap" and isinstance(argument, list) and argument and argument[0] in self.mappings:
                return {"Fn::FindInMap": [self.prefix + argument[0], *self.rewrite(argument[1:])]}
        return {key: self.rewrite(item) for key, item in value.items()}

    def rename_attributes(self, declaration: Dict[str, Any]) -> None:
        depends = declaration.get("DependsOn")
        if isinstance(depends, str):
            declaration["DependsOn"] = self.prefix + depends if depends in self.resources else depends
        elif isinstance(depends, list):
            declaration["DependsOn"] = [self.prefix + d if d in self.resources else d for d in depends]
        condition = declaration.get("Condition")
        if isinstance(condition, str) and condition in self.conditions:
            declaration["Condition"] = self.prefix + condition

    def _get_att(self, argument: Any) -> Any:
        if isinstance(argument, str) and "." in argument:
            argument = argument.split(".", 1)
        if isinstance(argument, list) and argument and isinstance(argument[0], str) and argument[0] in self.resources:
            return [self.prefix + argument[0], *self.rewrite(argument[1:])]
        return self.rewrite(argument)

    def _sub(self, argument: Any) -> Any:
        text, variables = (argument[0], dict(argument[1])) if isinstance(argument, list) and len(argument) == 2 else (argument, {})
        if not isinstance(text, str):
            return self.rewrite(argument)

        def renamed(match: "re.Match[str]") -> str:
            name = match.group(1)
            head, _, tail = name.partition(".")
            if name in variables or name.startswith(_PSEUDO):
                return match.group(0)
            if name in self.parameters:
                value = self.parameters[name]
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    return str(value)
                variables[name] = value
                return match.group(0)
            if head in self.resources:
                return "${" + self.prefix + head + ("." + tail if tail else "") + "}"
            return match.group(0)

        text = _SUB_NAME.sub(renamed, text)
        rewritten = {key: self.rewrite(value) for key, value in variables.items()}
        return [text, rewritten] if rewritten else text


@dataclass
class _OutsideNames:
    """Names the parent uses for what its modules made: ``Mod.Res``, ``Mod`` (in DependsOn), ``Mod.Outputs.Name``."""

    modules: Mapping[str, _Module]
    inner_ids: Mapping[str, List[str]]
    outputs_of: Mapping[str, Mapping[str, Any]]

    def rewrite(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.rewrite(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            [(function, argument)] = value.items()
            if function == "Ref" and isinstance(argument, str):
                return {"Ref": self._dotted(argument)}
            if function == "Fn::GetAtt":
                return self._get_att(argument)
        rewritten = {key: self.rewrite(item) for key, item in value.items()}
        depends = rewritten.get("DependsOn")
        if isinstance(depends, (str, list)) and "Type" in rewritten:
            wanted: List[str] = []
            for name in [depends] if isinstance(depends, str) else depends:
                wanted.extend(self.inner_ids.get(name, [name]) if isinstance(name, str) else [name])
            rewritten["DependsOn"] = wanted
        return rewritten

    def _dotted(self, name: str) -> str:
        module, dot, inner = name.partition(".")
        return module + inner if dot and module in self.modules else name

    def _get_att(self, argument: Any) -> Any:
        parts: Optional[List[str]] = None
        if isinstance(argument, str):
            parts = argument.split(".")
        elif isinstance(argument, list) and len(argument) == 2 and all(isinstance(a, str) for a in argument):
            parts = [argument[0], *str(argument[1]).split(".")]
        if parts and parts[0] in self.modules and len(parts) >= 3:
            if parts[1] == "Outputs":
                output = self.outputs_of[parts[0]].get(parts[2])
                if not isinstance(output, dict) or "Value" not in output:
                    raise TemplateError(f"Template error: module {parts[0]} has no output {parts[2]}")
                return output["Value"]
            return {"Fn::GetAtt": [parts[0] + parts[1], ".".join(parts[2:])]}
        return {"Fn::GetAtt": self.rewrite(argument)}


def _inherit(inner: Any, module: Mapping[str, Any]) -> Any:
    """An inner resource with the module's policies, condition and dependencies where it has none of its own."""
    if not isinstance(inner, dict):
        return inner
    declaration = dict(inner)
    for attribute in (*INHERITED_POLICIES, "Condition"):
        if attribute in module and attribute not in declaration:
            declaration[attribute] = module[attribute]
    extra = module.get("DependsOn")
    if extra is not None:
        own = declaration.get("DependsOn")
        mine = [own] if isinstance(own, str) else list(own or [])
        theirs = [extra] if isinstance(extra, str) else list(extra)
        declaration["DependsOn"] = mine + [d for d in theirs if d not in mine]
    return declaration
