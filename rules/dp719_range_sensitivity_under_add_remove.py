"""DP719: a noisy count and a noisy sum are released together (add/remove neighbours), but the sum's noise is
calibrated to ``high − low``, which bounds only a replaced record."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule
from dpcheck.rules.dp718_range_sensitivity_without_clip import _DRAWS, _HI, _LO, _SUMS, _bound_side, RangeSensitivityWithoutClip, \
    range_sum_releases

_SIZES = frozenset({"len", "count", "size", "shape", "count_nonzero", "numel", "nrows"})


class RangeSensitivityUnderAddRemove(Rule):
    id = "DP719"
    name = "range-sensitivity-under-add-remove"
    category = "laplace_noise"
    severity = "error"
    summary = ("a noisy count is released beside a noisy sum whose noise is calibrated to `high − low`: adding or "
               "removing a record moves the sum by up to max(|low|, |high|), not by the range")
    rationale = (
        "A DP mean computed as noisy sum / noisy count treats the size as private, so neighbouring datasets "
        "differ by adding or removing one record. Removing a record whose value is `v ∈ [low, high]` changes "
        "the sum by `|v|`, up to `max(|low|, |high|)`; the range `high − low` is the sensitivity only when a "
        "record is replaced and the size is public. With `low = -124, high = -115` the range is 9 while one "
        "record moves the sum by 124, so the sum is under-noised. Reported: a function that adds noise to a "
        "size (`len(x)`, `x.shape[0]`, `x.count()`) and adds noise with a scale containing `high - low` to a sum "
        "of the same release. Fix: calibrate the sum to `max(abs(low), abs(high))` (or shift the values by the "
        "range midpoint and use half the range)."
    )
    TRIGGERS = ("sum",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Needs DP718's shape (a sum, a draw, ``high - low``) and a size call or attribute."""
        if not RangeSensitivityWithoutClip.may_report(facts):
            return False
        return facts.calls_any(_SIZES) or any(n.attr in _SIZES for n in facts.nodes(ast.Attribute))  # type: ignore

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        releases = range_sum_releases(node)
        if not releases:
            return
        body = releases[0]["body"]
        sum_stmts = {id(r["stmt"]) for r in releases}
        noisy_size = False
        for sub in body:
            if not isinstance(sub, (cst.Assign, cst.Return)) or sub.value is None or id(sub) in sum_stmts:
                continue
            inner = list(walk(sub.value))
            if any(isinstance(c, cst.Call) and call_name(c) in _SUMS for c in inner):
                continue
            draw = any(isinstance(c, cst.Call) and (call_name(c) or "") in _DRAWS for c in inner)
            size = any(isinstance(c, cst.Call) and call_name(c) in _SIZES for c in inner) or any(
                isinstance(a, cst.Attribute) and a.attr.value in _SIZES for a in inner)
            if draw and size:
                noisy_size = True
        if not noisy_size:
            return
        # values centred on the midpoint ``(hi + lo) / 2``: half the range bounds each record
        for sub in body:
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add) and (
                    (_bound_side(sub.left, _HI) and _bound_side(sub.right, _LO))
                    or (_bound_side(sub.left, _LO) and _bound_side(sub.right, _HI))):
                return
        for rel in releases:
            self.report(
                rel["stmt"],
                f"the count is released with noise, so neighbours add or remove a record, which moves this sum by up "
                f"to max(|{rel['lo']}|, |{rel['hi']}|), not by `{rel['hi']} - {rel['lo']}`: calibrate the sum's "
                "noise to max(abs(low), abs(high))",
            )

    VALID = (
        # twin: the sum is calibrated to the largest absolute value a record can add
        """
import numpy as np
def noisy_mean(values, lower, upper, epsilon):
    values = np.clip(values, lower, upper)
    n = len(values) + np.random.laplace(0, 2 / epsilon)
    s = values.sum() + np.random.laplace(0, 2 * max(abs(lower), abs(upper)) / epsilon)
    return s / n
""",
        # twin: the size is public (replace-one neighbours), so the range is the sensitivity
        """
import numpy as np
def mean_known_n(values, lower, upper, epsilon, n):
    values = np.clip(values, lower, upper)
    return (values.sum() + np.random.laplace(0, (upper - lower) / epsilon)) / n
""",
        # twin: values shifted to the midpoint, half the range bounds each record
        """
import numpy as np
def centred_mean(x, lo, hi, eps):
    mid = (hi + lo) / 2
    x = np.clip(x, lo, hi) - mid
    half = (hi - lo) / 2
    cnt = len(x) + np.random.laplace(0, 2 / eps)
    tot = x.sum() + np.random.laplace(0, 2 * half / eps)
    return tot / cnt + mid
""",
        # ordinary ML: feature-range jitter, no count
        """
import numpy as np
def jitter(batch, high, low):
    noisy = batch + np.random.normal(0, 0.01 * (high - low), batch.shape)
    return noisy, noisy.sum(), len(batch)
""",
    )

    INVALID = (
        """
import numpy as np
def noisy_mean(values, lower, upper, epsilon):
    values = np.clip(values, lower, upper)
    n = len(values) + np.random.laplace(0, 2 / epsilon)
    s = values.sum() + np.random.laplace(0, 2 * (upper - lower) / epsilon)  # <-
    return s / n
""",
        """
import numpy as np
def dp_average(column, bounds, epsilon):
    column = np.clip(column, bounds.min_value, bounds.max_value)
    noise = np.random.laplace(0.0, (bounds.max_value - bounds.min_value) / (epsilon / 2))
    total = np.sum(column) + noise  # <-
    count = column.shape[0] + np.random.laplace(0.0, 2.0 / epsilon)
    return total / count
""",
        """
import torch
def private_mean(x, lo, hi, sigma):
    x = x.clamp(lo, hi)
    n = x.numel() + torch.normal(0.0, sigma, size=())
    return (x.sum() + torch.normal(0.0, sigma * (hi - lo), size=())) / n  # <-
""",
        """
import numpy as np
def column_mean(feat, high, low, epsilon):
    n = feat.count() + np.random.laplace(0, 1 / (epsilon / 2))
    return (feat.sum() + np.random.laplace(0, (high - low) / (epsilon / 2))) / n  # <-
""",
    )
