"""DP676: noise is written back only to the histogram cells that hold data; empty cells stay exact zeros."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: words of a mask naming the cells that hold data
_OCCUPIED_WORDS = frozenset({"nonzero", "nz", "occupied", "observed", "nonempty", "populated", "positive"})
#: calls whose result is noisy: draws and mechanisms
_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "standard_normal", "geometric", "poisson",
                    "discrete_gaussian", "discrete_laplace"})
_NOISE_WORDS = frozenset({"noise", "noisy", "laplace", "gaussian", "gauss", "perturb", "privatize", "privatise",
                          "mechanism", "dp"})


def _noise_call(name: str) -> bool:
    return name in _DRAWS or bool({w.lower() for w in words(name)} & _NOISE_WORDS)


def _occupied_name(name: str) -> bool:
    w = {x.lower() for x in words(name)}
    return bool(w & _OCCUPIED_WORDS) or {"has", "data"} <= w or {"non", "zero"} <= w or {"non", "empty"} <= w


def _occupancy_of(value: cst.BaseExpression) -> str | None:
    """``h > 0``, ``h != 0``, ``np.nonzero(h)``, ``h.nonzero()``, ``np.where(h > 0)``, ``h.astype(bool)``: the
    array whose occupied cells the value selects."""
    if isinstance(value, cst.Comparison) and len(value.comparisons) == 1:
        op = value.comparisons[0].operator
        if isinstance(op, (cst.GreaterThan, cst.NotEqual)) and number(value.comparisons[0].comparator) == 0:
            return dotted(value.left) or (dotted(value.left.value) if isinstance(value.left, cst.Subscript) else None)
    if isinstance(value, cst.Call):
        name = call_name(value)
        if name in ("nonzero", "flatnonzero", "argwhere", "where") and value.args and len(value.args) == 1:
            return _occupancy_of(value.args[0].value) or dotted(value.args[0].value)
        if name == "nonzero" and not value.args and isinstance(value.func, cst.Attribute):
            return dotted(value.func.value)
        if name == "astype" and isinstance(value.func, cst.Attribute) and value.args \
                and dotted(value.args[0].value) in ("bool", "np.bool_"):
            return dotted(value.func.value)
    return None


class NoiseOnlyOnOccupiedCells(Rule):
    id = "DP676"
    name = "noise-only-on-occupied-cells"
    category = "general"
    severity = "error"
    summary = "noise is added only to the histogram cells that hold data; the empty cells are released as exact zeros"
    rationale = (
        "A noisy histogram is private only if every cell of its (public) domain gets noise. When the code selects "
        "the occupied cells (`mask = hist > 0`, `np.nonzero(hist)`, a `has_data` mask) and writes noise back to "
        "those cells only, every empty cell is released as an exact 0 while every occupied cell almost never is: "
        "the output shows which cells the records occupy (adding one record to an empty cell changes that cell "
        "from an exact 0 to a noisy count), so no ε or ρ bounds it. Reported: a write-back `hist[mask] = <noisy>` "
        "(or `+=` of a draw) where `mask` selects the occupied cells of a histogram (by its definition or its "
        "name) and the function writes nothing to the other cells. Not reported: a mask of a public domain, noise "
        "added to the whole array. Bad: `nz = hist > 0; hist[nz] += np.random.laplace(0, b, nz.sum())`. Good: "
        "`hist = hist + np.random.laplace(0, b, hist.shape)` (then sparsify by a noisy threshold if needed)."
    )
    TRIGGERS = ("[",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a write-back ``a[mask] = …`` / ``a[mask] += …`` (the index a plain name) in a file with a
        noise call."""
        if not any(_noise_call(n) for c in facts.calls for n in facts.call_lasts(c)):
            return False
        for node in facts.nodes(ast.Assign, ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                if isinstance(t, ast.Subscript):
                    # ``a[m,]`` is libcst's one-element subscript of ``m`` too
                    index = t.slice.elts[0] if isinstance(t.slice, ast.Tuple) and len(t.slice.elts) == 1 else t.slice
                    if isinstance(index, ast.Name):
                        return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        masks: dict[str, str | None] = {}
        noisy: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                name = sub.targets[0].target.value
                of = _occupancy_of(sub.value)
                if of is not None or (_occupied_name(name) and isinstance(sub.value, (cst.Attribute, cst.Name))
                                      and _occupied_name(dotted(sub.value) or "")):
                    masks[name] = of
                if self._noisy(sub.value, noisy):
                    noisy.add(name)
        for p in node.params.params:
            if _occupied_name(p.name.value):
                masks.setdefault(p.name.value, None)
        if not masks:
            return
        complemented = set()
        for sub in body:
            for t in self._targets(sub):
                if isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index):
                    idx = t.slice[0].slice.value
                    if isinstance(idx, cst.UnaryOperation) or isinstance(idx, cst.Call) and call_name(idx) in (
                            "logical_not", "invert"):
                        complemented.add(self.ctx.analysis.code(t.value).strip())
        for sub in body:
            value = sub.value if isinstance(sub, (cst.Assign, cst.AugAssign)) else None
            if value is None or not self._noisy(value, noisy):
                continue
            for t in self._targets(sub):
                if not (isinstance(t, cst.Subscript) and len(t.slice) == 1
                        and isinstance(t.slice[0].slice, cst.Index)):
                    continue
                idx = t.slice[0].slice.value
                if not isinstance(idx, cst.Name) or idx.value not in masks:
                    continue
                array = self.ctx.analysis.code(t.value).strip()
                if array in complemented:
                    continue
                of = masks[idx.value]
                if of is not None and not array.startswith(of) and not self._copy_of(body, array, of):
                    continue
                self.report(
                    sub,
                    f"noise is written back only to the cells `{idx.value}` selects (the cells that hold data): every "
                    "empty cell is released as an exact zero, so the output shows which cells the records occupy; "
                    "add noise to every cell of the domain (and sparsify afterwards by a noisy threshold)",
                )
                return

    @staticmethod
    def _copy_of(body: list[cst.CSTNode], array: str, source: str) -> bool:
        """Is ``array`` (its root name) a copy of ``source`` (``out = hist.astype(float)``)?"""
        root = source.split(".")[0].split("[")[0]
        family = {root}
        for _ in range(2):
            for sub in body:
                if isinstance(sub, cst.Assign) and any(
                        isinstance(n, cst.Name) and n.value in family for n in walk(sub.value)):
                    family |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        return array.split(".")[0].split("[")[0] in family

    @staticmethod
    def _targets(sub: cst.CSTNode) -> list[cst.BaseExpression]:
        if isinstance(sub, cst.Assign):
            return [t.target for t in sub.targets]
        if isinstance(sub, cst.AugAssign):
            return [sub.target]
        return []

    @staticmethod
    def _noisy(value: cst.BaseExpression, noisy: set[str]) -> bool:
        for n in walk(value):
            if isinstance(n, cst.Name) and n.value in noisy:
                return True
            if isinstance(n, cst.Call):
                if _noise_call(call_name(n)):
                    return True
        return False

    VALID = (
        # twin: every cell of the domain gets noise
        """
import numpy as np
def release_counts(hist, epsilon):
    noisy = hist.astype(float)
    noisy = noisy + np.random.laplace(0, 1.0 / epsilon, noisy.shape)
    return noisy
""",
        # twin of the mask spelling: the occupied cells and the empty ones both get noise
        """
import numpy as np
def release_counts(hist, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    occupied = hist > 0
    out = hist.astype(float)
    out[occupied] = out[occupied] + np.random.normal(0, sigma, occupied.sum())
    out[~occupied] = np.random.normal(0, sigma, (~occupied).sum())
    return out
""",
        # post-processing: negative noisy cells clipped, the mask is on the noisy output
        """
import numpy as np
def release_counts(hist, epsilon):
    noisy = hist + np.random.laplace(0, 1.0 / epsilon, hist.shape)
    neg = noisy < 0
    noisy[neg] = 0
    return noisy
""",
        # ordinary ML: label-smoothing noise on the non-zero targets of a one-hot matrix
        """
import numpy as np
def smooth(targets, eps=0.1):
    hot = targets > 0
    out = targets.astype(float)
    out[hot] = 1.0 - eps
    return out
""",
    )

    INVALID = (
        # a mask of the cells with data, noise only there
        """
import numpy as np
def release_counts(hist, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    occupied = hist > 0
    out = hist.astype(float)
    out[occupied] = out[occupied] + np.random.normal(0, sigma, occupied.sum())  # <-
    return out
""",
        # a has-data mask from the histogram object, noise from a mechanism helper written back
        """
import numpy as np
class TopDown:
    def noise_level(self, histogram, query, rho, sensitivity):
        has_data = histogram.has_data
        values = histogram.data[query][has_data]
        noisy = add_discrete_gaussian_noise(values, rho=rho, sensitivity=sensitivity)
        histogram.data[query][has_data] = noisy  # <-
""",
        # np.nonzero indices, Laplace added in place
        """
import numpy as np
def noisy_grid(grid, epsilon):
    idx = np.nonzero(grid)
    grid = grid.astype(float)
    grid[idx] += np.random.laplace(0, 1.0 / epsilon, len(idx[0]))  # <-
    return grid
""",
        # a parameter named for the occupied cells
        """
import numpy as np
def privatize(counts, nonzero_mask, epsilon):
    counts = counts.astype(float)
    counts[nonzero_mask] = counts[nonzero_mask] + np.random.laplace(0, 1 / epsilon, nonzero_mask.sum())  # <-
    return counts
""",
    )
