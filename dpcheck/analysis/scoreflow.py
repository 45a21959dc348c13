"""Which variables of a function hold a value computed by given expressions: assigned from one, or
filled with one (``xs.append(v)``, ``g.add_edge(a, b, weight=v)``, ``d[k] = v``), followed through
further assignments. Names are dotted (``self.cache``); a subscript stands for its container."""
from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from dpcheck.analysis.syntax import walk


def dotted(expr: cst.CSTNode) -> str | None:
    """``x`` / ``self.x`` / the container of ``x[k]`` / ``self.x[k][j]``."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


def mentions(node: cst.CSTNode, scored: set[str]) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) in scored for n in walk(node))


def holders(nodes: Sequence[cst.CSTNode], sources: Sequence[cst.CSTNode],
            ignore: frozenset[str] = frozenset()) -> set[str]:
    """Variables and containers of ``nodes`` (a function's body, walked) that hold one of ``sources``;
    names in ``ignore`` (modules such as ``np``, whose ``np.sum(w)`` would otherwise count) are never recorded."""
    score_ids = {id(c) for c in sources}
    scored: set[str] = set()

    def holds(value: cst.CSTNode) -> bool:
        return any(id(n) in score_ids for n in walk(value)) or mentions(value, scored)

    changed = True
    while changed:
        changed = False
        for n in nodes:
            targets: list[cst.CSTNode] = []
            if isinstance(n, cst.Assign) and holds(n.value):
                targets = [t.target for t in n.targets]
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign)) and n.value is not None and holds(n.value):
                targets = [n.target]
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and any(holds(a.value) for a in n.args):
                targets = [n.func.value]
            for t in targets:
                for name in ([dotted(e.value) for e in t.elements] if isinstance(t, (cst.Tuple, cst.List))
                             else [dotted(t)]):
                    if name and name not in scored and name not in ignore:
                        scored.add(name)
                        changed = True
    return scored
