"""A stack's dependency graph as inline SVG: one box per resource, one arrow per Ref, Fn::GetAtt or DependsOn.

The graph is the one the engine runs by (``Blueprint.dependencies``, from ``stacks/template/dependencies.py``);
its layers (each needs only earlier ones) are the columns, left to right. Each box carries its resource's
status as a class (``status-COMPLETE``, ``-IN_PROGRESS``, ``-FAILED``; ``status-PENDING`` before it starts), which
the stylesheet colours: no inline style, so the console's Content-Security-Policy holds. Every name is escaped.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Tuple

from cfnrun.console.pages import status_kind, text

if TYPE_CHECKING:
    from cfnrun.stacks.records import StackResource

CHAR_W = 7.5  # an average character's width at the stylesheet's 12px, enough for a box to hold its logical id
BOX_H = 28
ROW_H = 44
GAP_W = 60
MARGIN = 10
LANE = ROW_H - BOX_H  # the space above each row's boxes, where an arrow over columns runs


def dependency_svg(dependencies: Mapping[str, FrozenSet[str]], resources: Mapping[str, "StackResource"]) -> str:
    """The picture of ``dependencies`` (each resource and those it waits for), coloured by ``resources``' statuses."""
    from cfnrun.stacks.template.dependencies import DependencyGraph
    from cfnrun.stacks.template.errors import TemplateError

    if not dependencies:
        return "<p>No resources.</p>"
    try:
        layers = DependencyGraph(dependencies).layers()
    except TemplateError:  # never runs so, but a picture is no place to fail: one column
        layers = [tuple(dependencies)]
    box_w = max(len(logical_id) for logical_id in dependencies) * CHAR_W + 20
    where: Dict[str, Tuple[float, float]] = {}
    for column, layer in enumerate(layers):
        for row, logical_id in enumerate(layer):
            where[logical_id] = (MARGIN + column * (box_w + GAP_W), MARGIN + LANE + row * ROW_H)
    width = MARGIN * 2 + len(layers) * box_w + (len(layers) - 1) * GAP_W
    height = MARGIN * 2 + LANE + max(len(layer) for layer in layers) * ROW_H - LANE
    edges: List[str] = []
    for logical_id, needs in dependencies.items():
        x2, y2 = where[logical_id]
        for needed in sorted(needs):
            if needed not in where:
                continue
            x1, y1 = where[needed]
            joins = f"class=\"edge\" data-from=\"{text(needed)}\" data-to=\"{text(logical_id)}\" marker-end=\"url(#arrow)\""
            title = f"<title>{text(logical_id)} waits for {text(needed)}</title>"
            start, end, a, b = x1 + box_w, x2, y1 + BOX_H / 2, y2 + BOX_H / 2
            if x2 - x1 <= box_w + GAP_W:  # the next column: straight across the gap
                edges.append(f"<line {joins} x1=\"{start:g}\" y1=\"{a:g}\" x2=\"{end:g}\" y2=\"{b:g}\">{title}</line>")
                continue
            # over columns between: up into the lane above the higher row's boxes, along it, down into the box
            lane, bend = min(y1, y2) - LANE / 2, GAP_W / 2
            route = (f"M{start:g},{a:g} C{start + bend:g},{a:g} {start + bend:g},{lane:g} {start + GAP_W:g},{lane:g} "
                     f"L{end - GAP_W:g},{lane:g} C{end - bend:g},{lane:g} {end - bend:g},{b:g} {end:g},{b:g}")
            edges.append(f"<path {joins} d=\"{route}\">{title}</path>")
    nodes: List[str] = []
    for logical_id, (x, y) in where.items():
        resource = resources.get(logical_id)
        shown = resource.status if resource is not None else "not started"
        kind = (status_kind(shown) if resource is not None else "") or "PENDING"  # NOT_STARTED: grey, as one not yet in the stack
        nodes.append(
            f"<g class=\"node status-{kind}\" data-id=\"{text(logical_id)}\"><title>{text(logical_id)}: {text(shown)}</title>"
            f"<rect x=\"{x:g}\" y=\"{y:g}\" width=\"{box_w:g}\" height=\"{BOX_H}\" rx=\"4\"></rect>"
            f"<text x=\"{x + 10:g}\" y=\"{y + BOX_H / 2 + 4:g}\">{text(logical_id)}</text></g>"
        )
    arrow = (
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">"
        "<path d=\"M0,0 L10,5 L0,10 z\"></path></marker></defs>"
    )
    return (
        f"<svg class=\"dependencies\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:g}\" height=\"{height:g}\" "
        f"viewBox=\"0 0 {width:g} {height:g}\" role=\"img\" aria-label=\"dependency graph\">{arrow}{''.join(edges)}{''.join(nodes)}</svg>"
    )
