"""The curves bench/scale.py measured, drawn into one SVG image (matplotlib, imported only when drawing).

Three panels: calls per second against concurrent clients (serve beside its floor), create time
against resources (independent clusters and chains), calls per second against the operations the
history was asked to keep before.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

PANELS: Dict[str, Tuple[str, str, bool]] = {  # panel: x label, y label, x on a log scale
    "clients": ("concurrent clients", "calls per second", True),
    "stacks": ("resources in the stack", "create, seconds", False),
    "history": ("operations asked before", "calls per second", False),
}


@dataclass
class Curves:
    """Points per panel and per line, in the order they were measured."""

    points: Dict[str, Dict[str, List[Tuple[float, float]]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def add(self, panel: str, line: str, x: float, y: float) -> None:
        self.points[panel][line].append((x, y))


def draw(curves: Curves, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    panels = [name for name in PANELS if curves.points.get(name)]
    if not panels:
        return
    figure, axes = pyplot.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for axis, name in zip(axes[0], panels):
        x_label, y_label, log_x = PANELS[name]
        for line, points in curves.points[name].items():
            xs, ys = zip(*points)
            axis.plot(xs, ys, marker="o", label=line)
        if log_x:
            axis.set_xscale("log")
        axis.set_xlabel(x_label)
        axis.set_ylabel(y_label)
        axis.set_ylim(bottom=0)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize="small")
    figure.suptitle(title, fontsize="medium")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="svg", metadata={"Date": None})
    pyplot.close(figure)
