"""A template's text → its document: JSON or YAML, CloudFormation's short-form tags (!Ref, !Sub, ...) included.

One decoder for every template cfnrun reads — the provider's SAM template (its functions) and
the templates of local stacks — so both accept exactly what CloudFormation accepts: a document
that starts with ``{`` is JSON, anything else YAML; the short forms become their long forms
(``!GetAtt A.B.C`` → ``{"Fn::GetAtt": ["A", "B.C"]}``, split at the first dot as the service
does; ``!Condition X`` → ``{"Condition": "X"}``); a key given twice in one mapping is refused
(YAML would keep the last one silently, and the service refuses it); YAML timestamps stay
strings (``AWSTemplateFormatVersion: 2010-09-09`` is text to the service, not a date). Errors
carry the line and column, counted from 1.

What a short text can make is bounded before it is built: YAML aliases that would expand past
MAX_EXPANDED_NODES nodes (a "billion laughs" of nested anchors is a few hundred bytes) and
documents nested deeper than MAX_NESTING levels (Python's parsers and every recursive walk after
them give up near 1,000 with a RecursionError) are refused as not well-formed.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from cfnrun.model.errors import ProjectError, unreadable
from cfnrun.model.json_depth import too_deep

MAX_EXPANDED_NODES = 200_000  # a 51,200-byte template has at most ~26,000 nodes without aliases
MAX_NESTING = 200  # a real template nests a few dozen levels

SHORT_FORMS = (
    "Ref", "Condition", "GetAtt", "Sub", "If", "Join", "Select", "Split", "FindInMap", "Base64", "Cidr",
    "GetAZs", "ImportValue", "Equals", "And", "Or", "Not", "Length", "ToJsonString", "Transform",
)


class TemplateDecodeError(ValueError):
    """The text is not a template document: what is wrong, and where (line and column from 1, when known)."""

    def __init__(self, syntax: str, problem: str, line: Optional[int] = None, column: Optional[int] = None) -> None:
        self.syntax = syntax
        self.problem = problem
        self.line = line
        self.column = column
        where = f" at line {line} column {column}" if line is not None else ""
        super().__init__(f"not valid {syntax}{where}: {problem}")


class _NestedTooDeep(ValueError):
    """The YAML scanner opened more than MAX_NESTING flow collections (``[``/``{``) inside one another."""


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def decode_template(text: str) -> Any:
    """The document of a JSON or YAML template; a TemplateDecodeError naming the place when it is neither."""
    syntax = "JSON" if text.lstrip().startswith("{") else "YAML"
    try:
        document = _decode_json(text) if syntax == "JSON" else _decode_yaml(text)
        deep = too_deep(document, MAX_NESTING)
    except (RecursionError, _NestedTooDeep):
        deep = True
    if deep:
        raise TemplateDecodeError(syntax, f"the document nests more than {MAX_NESTING} levels deep")
    return document


def _refuse_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    document: Dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document


def _decode_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicates)
    except json.JSONDecodeError as error:
        raise TemplateDecodeError("JSON", error.msg, error.lineno, error.colno) from None
    except _DuplicateKey as duplicate:
        # json has no positions past the parse; JSON is YAML, whose nodes have them.
        try:
            _decode_yaml(text)
        except TemplateDecodeError as located:
            if located.line is not None and "duplicate key" in located.problem:
                raise TemplateDecodeError("JSON", located.problem, located.line, located.column) from None
        raise TemplateDecodeError("JSON", f"found duplicate key {duplicate.key!r}") from None
    except ValueError as error:  # a number too long to read
        raise TemplateDecodeError("JSON", unreadable(error)) from None


def _decode_yaml(text: str) -> Any:
    import yaml  # PyYAML loads only when a YAML template is read (start-up time: tests/test_fast_start.py)

    try:
        return yaml.load(text, Loader=_loader_class())
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or str(error)
        if mark is None:
            raise TemplateDecodeError("YAML", problem) from None
        raise TemplateDecodeError("YAML", problem, mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as error:
        raise TemplateDecodeError("YAML", str(error)) from None
    except _NestedTooDeep:
        raise
    except ValueError as error:  # a number too long to read
        raise TemplateDecodeError("YAML", unreadable(error)) from None


_LOADER: Any = None


def _loader_class() -> Any:
    """The YAML loader class, built on first use so that importing this module does not import PyYAML."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _build_loader()
    return _LOADER


def _build_loader() -> Any:
    import yaml

    class TemplateLoader(yaml.SafeLoader):
        """SafeLoader with CloudFormation's tags, duplicate keys refused and timestamps kept as text."""

        def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
            # PyYAML's scanner walks every open flow level per token: 100,000 ``[`` took 18 s to refuse.
            if self.flow_level >= MAX_NESTING:
                raise _NestedTooDeep()
            super().fetch_flow_collection_start(TokenClass)

        def construct_mapping(self, node: Any, deep: bool = False) -> Dict[Any, Any]:
            seen: Dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
                    )
                seen[key] = True
            return super().construct_mapping(node, deep=deep)

        def construct_document(self, node: Any) -> Any:
            if _expanded_nodes(node) > MAX_EXPANDED_NODES:
                raise yaml.constructor.ConstructorError(
                    None, None, f"aliases expand the document past {MAX_EXPANDED_NODES} nodes", node.start_mark
                )
            return super().construct_document(node)

    TemplateLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def short_form(loader: Any, node: Any) -> Dict[str, Any]:
        name = node.tag[1:]
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        if name == "Ref" or name == "Condition":
            return {name: value}
        if name == "GetAtt" and isinstance(value, str):
            logical_id, dot, attribute = value.partition(".")
            value = [logical_id, attribute] if dot else value
        return {f"Fn::{name}": value}

    for name in SHORT_FORMS:
        TemplateLoader.add_constructor(f"!{name}", short_form)
    return TemplateLoader


def _expanded_nodes(root: Any) -> int:
    """How many nodes the YAML node graph ``root`` has once every alias is expanded (a cycle counts as unbounded)."""
    import yaml

    sizes: Dict[int, int] = {}
    pending: List[Tuple[Any, bool]] = [(root, False)]
    open_nodes: Set[int] = set()
    while pending:
        node, children_done = pending.pop()
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        children = [child for pair in node.value for child in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
        if children_done:
            sizes[key] = min(1 + sum(sizes[id(child)] for child in children), MAX_EXPANDED_NODES + 1)
            open_nodes.discard(key)
            continue
        if key in open_nodes:
            return MAX_EXPANDED_NODES + 1  # an alias inside its own anchor
        open_nodes.add(key)
        pending.append((node, True))
        pending.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def read_template(path: Path) -> Any:
    """The template's document; a ProjectError with the line and column when it is neither JSON nor YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProjectError(path, "template not found") from None
    try:
        return decode_template(text)
    except TemplateDecodeError as error:
        raise ProjectError(path, str(error)) from None
