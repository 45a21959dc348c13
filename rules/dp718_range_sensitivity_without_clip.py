"""DP718: a sum gets noise calibrated to the range ``high − low`` but the summed values are never clipped to
``[low, high]``."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, target_nodes, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

_HI = frozenset({"high", "upper", "max", "ub", "hi", "maximum", "top", "upperbound"})
_LO = frozenset({"low", "lower", "min", "lb", "lo", "minimum", "bottom", "lowerbound"})
_DRAWS = NOISE_DRAWS | {"laplace_noise", "add_noise", "gaussian_noise", "laplace_mechanism", "gaussian_mechanism"}
_SUMS = frozenset({"sum", "nansum"})
#: calls that bound values (``np.clip``, ``torch.clamp``, ``np.minimum``)
_CLIPS = frozenset({"clip", "clip_", "clamp", "clamp_", "minimum", "maximum", "where", "clip_values", "clip_data",
                    "clip_to_bounds", "truncate", "bound", "bounded", "winsorize", "mask"})


def _bound_side(expr: cst.BaseExpression, side: frozenset[str]) -> str | None:
    d = dotted(expr)
    if d is None and isinstance(expr, cst.Subscript):
        d = dotted(expr.value)
    if d is None:
        return None
    return d if words(d.rsplit(".", 1)[-1]) & side else None


def _range_in(expr: cst.CSTNode, values: dict[str, cst.BaseExpression], depth: int = 0
              ) -> tuple[cst.BinaryOperation, str, str] | None:
    """The ``high - low`` inside ``expr`` (following names assigned in the function, two hops)."""
    for sub in walk(expr):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Subtract):
            hi, lo = _bound_side(sub.left, _HI), _bound_side(sub.right, _LO)
            if hi and lo:
                return sub, hi, lo
        if depth < 2 and isinstance(sub, cst.Name) and sub.value in values and values[sub.value] is not expr:
            found = _range_in(values[sub.value], values, depth + 1)
            if found:
                return found
    return None


def _is_draw(call: cst.Call) -> bool:
    return (call_name(call) or "") in _DRAWS


def range_sum_releases(fn: cst.FunctionDef) -> list[dict]:
    """Noisy sums in ``fn`` whose noise scale holds ``high - low``: dicts with the reported statement, the range
    subtraction and its bound names, the summed expression and the function body."""
    body = list(walk(fn.body, into_scopes=False))
    values: dict[str, cst.BaseExpression] = {}
    for sub in body:
        if isinstance(sub, cst.Assign):
            for t in sub.targets:
                for n in target_nodes(t.target):
                    if isinstance(n, cst.Name):
                        values[n.value] = sub.value
    noise_names: dict[str, tuple] = {}
    for name, value in values.items():
        for call in walk(value):
            if isinstance(call, cst.Call) and _is_draw(call):
                found = _range_in(call, values)
                if found:
                    noise_names[name] = found
    out = []
    for sub in body:
        if not isinstance(sub, (cst.Assign, cst.Return, cst.AugAssign)) or sub.value is None:
            continue
        sums = [c for c in walk(sub.value) if isinstance(c, cst.Call) and call_name(c) in _SUMS]
        if not sums:
            continue
        found = None
        for c in walk(sub.value):
            if isinstance(c, cst.Call) and _is_draw(c):
                found = found or _range_in(c, values)
            elif isinstance(c, cst.Name) and c.value in noise_names:
                found = found or noise_names[c.value]
        if not found:
            continue
        summed = []
        for c in sums:
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "sum" and not c.args \
                    and dotted(c.func.value) not in {"np", "numpy", "torch"}:
                summed.append(c.func.value)
            elif c.args:
                summed.append(c.args[0].value)
        # a sum of comparisons or indicators is a count, bounded by construction
        if not summed or any(isinstance(n, cst.Comparison) for s in summed for n in walk(s)):
            continue
        out.append({"stmt": sub, "range": found[0], "hi": found[1], "lo": found[2], "summed": summed, "body": body})
    return out


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    return any(dotted(n) in names for n in walk(node) if isinstance(n, (cst.Name, cst.Attribute)))


def _other_names(call: cst.Call, bounds: set[str]) -> bool:
    """``min(max(v, lo), hi)`` bounds a value; ``max(abs(lo), abs(hi))`` only combines the bounds."""
    heads = {b.split(".", 1)[0] for b in bounds}
    for arg in call.args:
        for n in walk(arg.value):
            if isinstance(n, cst.Name) and n.value not in heads and n.value not in {"abs", "float", "int"} \
                    and n.value not in bounds:
                return True
    return False


class RangeSensitivityWithoutClip(Rule):
    id = "DP718"
    name = "range-sensitivity-without-clip"
    category = "laplace_noise"
    severity = "error"
    summary = ("a sum is noised with a scale built from the range `high − low`, but the summed values are never "
               "clipped to `[low, high]`: nothing enforces the sensitivity the noise assumes")
    rationale = (
        "The noise of a DP sum is calibrated to how much one record can move it. Taking that from the declared "
        "range `high − low` is only sound when every value is forced into `[low, high]` before summing: an "
        "unclipped value outside the range (a wrong or data-given bound, an outlier, a column whose bound is a "
        "placeholder 0) moves the sum by any amount and the noise covers nothing. Reported: an assignment or "
        "return that adds a noise draw whose scale contains `high - low` (bound names such as `high`/`low`, "
        "`upper`/`lower`, `max_val`/`min_val`, followed through local names) to a `.sum()` / `np.sum(x)` / "
        "`sum(x)`, in a function that never clips (`np.clip`, `clamp`, `np.minimum`/`maximum`, `min`/`max` or a "
        "comparison with a bound) and in a module that never clips with those bounds. "
        "Bad: `x.sum() + np.random.laplace(0, (high - low) / eps)`. Good: `np.clip(x, low, high).sum() + ...`."
    )
    TRIGGERS = ("sum",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a sum call, a noise draw and a subtraction of a low-named from a high-named value."""
        if not facts.calls_any(_SUMS) or not facts.calls_any(_DRAWS):
            return False
        for op in facts.binops(ast.Sub):
            left, right = op.left, op.right  # type: ignore[attr-defined]
            left = left.value if isinstance(left, ast.Subscript) else left
            right = right.value if isinstance(right, ast.Subscript) else right
            ln = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else None
            rn = right.attr if isinstance(right, ast.Attribute) else right.id if isinstance(right, ast.Name) else None
            if ln and rn and words(ln) & _HI and words(rn) & _LO:
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        self._module_clips: set[str] = set()
        for call in walk(node):
            if isinstance(call, cst.Call) and call_name(call) in _CLIPS:
                for n in walk(call):
                    if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n)):
                        self._module_clips.add(d.rsplit(".", 1)[-1])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for rel in range_sum_releases(node):
            body = rel["body"]
            bounds = {rel["hi"], rel["lo"]}
            lasts = {b.rsplit(".", 1)[-1] for b in bounds}
            if lasts & getattr(self, "_module_clips", set()):
                continue
            clipped = False
            for sub in body:
                if isinstance(sub, cst.Call):
                    name = call_name(sub) or ""
                    if name in _CLIPS or (name in {"min", "max"} and _mentions(sub, bounds)
                                          and _other_names(sub, bounds)):
                        clipped = True
                elif isinstance(sub, cst.Comparison) and _mentions(sub, bounds):
                    clipped = True
                elif isinstance(sub, cst.Subscript) and any(isinstance(n, cst.Comparison) for n in walk(sub)):
                    clipped = True  # values filtered by a mask: x[(x >= lo) & (x <= hi)]
            if clipped:
                continue
            self.report(
                rel["stmt"],
                f"the sum's noise is calibrated to `{rel['hi']} - {rel['lo']}`, but the summed values are never "
                f"clipped to [{rel['lo']}, {rel['hi']}]: one record can move the sum without bound; clip the values "
                "first (and under add/remove use max(|low|, |high|))",
            )

    VALID = (
        # twin: the values are clipped to the declared range first
        """
import numpy as np
def noisy_mean(values, lower, upper, epsilon):
    values = np.clip(values, lower, upper)
    n = len(values) + np.random.laplace(0, 2 / epsilon)
    s = values.sum() + np.random.laplace(0, 2 * max(abs(lower), abs(upper)) / epsilon)
    return s / n
""",
        # twin: torch clamp before a Gaussian sum
        """
import torch
def private_total(x, lo, hi, sigma):
    x = x.clamp(lo, hi)
    return x.sum() + torch.normal(0.0, sigma * (hi - lo), size=())
""",
        # the module clips with the same bounds before calling the release helper
        """
import numpy as np
def release_sum(col, high, low, eps):
    return col.sum() + np.random.laplace(0, (high - low) / eps)
def run(df, eps, low, high):
    return release_sum(df["age"].clip(low, high), high, low, eps)
""",
        # a count of values above a threshold is bounded by construction
        """
import numpy as np
def above(values, max_v, min_v, eps):
    return np.sum(values > min_v) + np.random.laplace(0, (max_v - min_v) / eps)
""",
        # ordinary ML: jitter proportional to the feature range in augmentation
        """
import numpy as np
def jitter(batch, high, low):
    noisy = batch + np.random.normal(0, 0.01 * (high - low), batch.shape)
    return noisy, noisy.sum()
""",
    )

    INVALID = (
        """
import numpy as np
def noisy_mean(values, lower, upper, epsilon):
    n = len(values) + np.random.laplace(0, 2 / epsilon)
    s = values.sum() + np.random.laplace(0, 2 * max(abs(lower), abs(upper)) / epsilon)
    t = values.sum() + np.random.laplace(0, 2 * (upper - lower) / epsilon)  # <-
    return s / n, t / n
""",
        """
import torch
def private_total(x, lo, hi, sigma):
    return x.sum() + torch.normal(0.0, sigma * (hi - lo), size=())  # <-
""",
        """
import numpy as np
def dp_average(column, bounds, epsilon):
    sensitivity = bounds.max_value - bounds.min_value
    scale = sensitivity / (epsilon / 2)
    noise = np.random.laplace(0.0, scale)
    total = np.sum(column) + noise  # <-
    count = column.shape[0] + np.random.laplace(0.0, 2.0 / epsilon)
    return total / count
""",
        """
import numpy as np
class SumQuery:
    def answer(self, rows, epsilon):
        return sum(rows) + np.random.laplace(0, (self.upper - self.lower) / epsilon)  # <-
""",
    )
