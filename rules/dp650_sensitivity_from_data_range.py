"""DP650: a mechanism's sensitivity is computed from the private data's own range (max - min, ptp, max |x|)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words naming a sensitivity (``sensitivity``, ``l1_sens``, ``global_sensitivity``, ``delta_f``)
_SENS_WORDS = frozenset({"sensitivity", "sens", "sensitivities"})
#: words of an operand that is a declared bound or domain, not the records (``max(bounds) - min(bounds)``)
_PUBLIC_WORDS = frozenset({
    "bound", "bounds", "lower", "upper", "lo", "hi", "low", "high", "range", "domain", "clip", "clipping",
    "limit", "limits", "public", "schema", "lb", "ub", "interval", "support", "candidates", "epsilon", "eps",
    "budget", "budgets", "sigma", "scale", "scales", "noise",
})
_MAX_NAMES = frozenset({"max", "amax", "nanmax", "reduce_max"})
_MIN_NAMES = frozenset({"min", "amin", "nanmin", "reduce_min"})
_PRIVACY_TEXT = re.compile(r"(?i)privacy|private|laplace|epsilon|differential|\bdp\b|mechanism")


def _operand(call: cst.Call, names: frozenset[str]) -> str | None:
    """The expression a max/min call reads (``max(data)``, ``np.max(x, axis=0)``, ``x.max()``), as text;
    None when it is not one such call over one operand (``max(a, b)`` compares two numbers)."""
    if call_name(call) not in names:
        return None
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    module = cst.Module(body=[])
    func = call.func
    receiver_call = isinstance(func, cst.Attribute) and not positional
    if receiver_call:
        head = func.value  # type: ignore[union-attr]
        text = module.code_for_node(head)
        if re.fullmatch(r"(np|numpy|torch|tf|jnp|math|pd|tf\.math)", text):
            return None
        return text
    if len(positional) != 1:
        return None
    return module.code_for_node(positional[0].value)


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and call_name(expr) in ("float", "abs", "int") and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


def _data_range(expr: cst.BaseExpression, public: frozenset[str] = frozenset()) -> str | None:
    """``max(x) - min(x)``, ``np.ptp(x)``/``x.ptp()``, or ``max(abs(x))`` of one data operand, anywhere in
    ``expr``: the text of the operand, or None. ``public``: local names that hold a list built from bounds."""
    def _is_data(text: str) -> bool:
        return text.strip() not in public and _is_data_text(text)

    for sub in walk(expr):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Subtract):
            left, right = _unwrap(sub.left), _unwrap(sub.right)
            if isinstance(left, cst.Call) and isinstance(right, cst.Call):
                hi, lo = _operand(left, _MAX_NAMES), _operand(right, _MIN_NAMES)
                if hi is not None and hi == lo and _is_data(hi):
                    return f"max({hi}) - min({lo})"
        if isinstance(sub, cst.Call) and call_name(sub) == "ptp":
            operand = _operand(sub, frozenset({"ptp"}))
            if operand is not None and _is_data(operand):
                return f"ptp({operand})"
        if isinstance(sub, cst.Call) and call_name(sub) in _MAX_NAMES:
            positional = [a for a in sub.args if a.keyword is None]
            if len(positional) == 1 and isinstance(positional[0].value, cst.Call) \
                    and call_name(positional[0].value) in ("abs", "absolute", "fabs") \
                    and len(positional[0].value.args) == 1:
                operand = cst.Module(body=[]).code_for_node(positional[0].value.args[0].value)
                if _is_data(operand):
                    return f"max(|{operand}|)"
    return None


def _public_lists(scope: cst.CSTNode) -> frozenset[str]:
    """Names ``scope`` assigns a list or tuple display whose names are all bounds (``corners = [lo * x_lo,
    lo * x_hi, …]``, the extremes of a product of public intervals) or numbers."""
    out = set()
    for sub in walk(scope):
        if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                and isinstance(sub.value, (cst.List, cst.Tuple)):
            used = [n.value for n in walk(sub.value) if isinstance(n, cst.Name)]
            if used and all(words(n) & _PUBLIC_WORDS for n in used):
                out.add(sub.targets[0].target.value)
    return frozenset(out)


def _is_data_text(text: str) -> bool:
    """An operand that is records, not a declared bound: no literal, no bound/domain/budget word."""
    if not re.search(r"[A-Za-z_]", text) or text.lstrip().startswith(("[", "(")):
        return False  # a literal list of numbers: public constants
    return not any(words(part) & _PUBLIC_WORDS for part in re.findall(r"[A-Za-z_]\w*", text))


def _names_sensitivity(name: str) -> bool:
    return bool(words(name) & _SENS_WORDS) or name.lower() in ("delta_f", "deltaf", "df_sens")


class SensitivityFromDataRange(Rule):
    id = "DP650"
    name = "sensitivity-from-data-range"
    category = "general"
    severity = "error"
    summary = ("a sensitivity is computed from the data's own range (max - min, ptp, max |x|): a local, "
               "unprotected value, so the noise calibrated to it is not differentially private")
    rationale = (
        "The noise of the Laplace or Gaussian mechanism must be calibrated to the *global* sensitivity: the "
        "most one record can change the answer over all possible data sets, fixed before the data are seen "
        "(from declared bounds the data are clipped to). A sensitivity computed as the private data's own "
        "range — `sensitivity = max(data) - min(data)`, `np.ptp(x)`, `np.max(np.abs(x))`, "
        "`(x.max() - x.min()) / len(x)`, a helper `def sensitivity_sum(data): return max(data) - min(data)` "
        "— is the local sensitivity of this one data set: it is itself a function of the extreme records, it "
        "is not released through any mechanism, and the noise scale it sets reveals it (a record far outside "
        "the others doubles the scale). Reported at such an expression assigned to, returned as, or passed "
        "as a sensitivity (a name with the word `sensitivity`/`sens`, or `delta_f`; the return of a function "
        "so named), in code that speaks of privacy. Not reported: the range of declared bounds "
        "(`max(bounds) - min(bounds)`, `upper - lower`, a literal list), a maximum of two numbers "
        "(`max(a, b)`), ranges not used as a sensitivity (min-max scaling of a feature, a plot axis). "
        "Bad: `scale = (max(ages) - min(ages)) / epsilon`. Good: "
        "`ages = np.clip(ages, lo, hi); sensitivity = hi - lo` with public `lo`, `hi`. Fix: take the "
        "bounds from public knowledge and clip the data to them (or estimate them with a DP mechanism "
        "charged to the budget) and compute the sensitivity from those bounds."
    )
    TRIGGERS = ("sens", "delta_f", "deltaf")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # the extremes of a product of two public intervals: the corners are built from the bounds only
        """
import numpy as np
def product_sensitivity(a_lo, a_hi, b_lo, b_hi):
    corners = [a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi]
    return np.max(corners) - np.min(corners)
""",
        # twin of the helper: the sensitivity of a sum of values clipped to public bounds
        """
import numpy as np
def sensitivity_of_sum(lower, upper):
    return upper - lower
def private_sum(values, lower, upper, epsilon):
    clipped = np.clip(values, lower, upper)
    return clipped.sum() + np.random.laplace(0, sensitivity_of_sum(lower, upper) / epsilon)
""",
        # twin: the range of the declared bounds, not of the data
        """
import numpy as np
def dp_mean(incomes, bounds, epsilon):
    sensitivity = (max(bounds) - min(bounds)) / len(incomes)
    x = np.clip(incomes, min(bounds), max(bounds))
    return x.mean() + np.random.laplace(0, sensitivity / epsilon)
""",
        # twin: the largest of two public magnitudes
        """
import numpy as np
def release_total(values, low, high, epsilon):
    sens = max(abs(low), abs(high))
    return np.clip(values, low, high).sum() + np.random.laplace(0, sens / epsilon)
""",
        # ordinary ML: min-max scaling of a feature, and diagnostic sensitivity (recall) of a classifier
        """
import numpy as np
def scale_and_score(features, tp, fn):
    span = features.max() - features.min()
    scaled = (features - features.min()) / span
    sensitivity = tp / (tp + fn)
    return scaled, sensitivity
""",
        # a literal list: public constants
        """
def laplace_scale(epsilon):
    sensitivity = max([1.0, 2.5]) - min([1.0, 2.5])
    return sensitivity / epsilon
""",
    )

    INVALID = (
        # a library helper: the local sensitivity of a sum is the data's range
        """
from typing import List
def sensitivity_sum(data: List[float]) -> float:
    '''sensitivity for the Laplace mechanism'''
    return max(data) - min(data)  # <-
""",
        # the helper for a mean, divided by the exact size
        """
def mean_sensitivity(values):
    '''Laplace noise scale helper (differential privacy).'''
    return (max(values) - min(values)) / len(values)  # <-
""",
        # numpy methods on a column, assigned to a sensitivity then used for the noise
        """
import numpy as np
def noisy_total(df, epsilon):
    ages = df["age"].to_numpy()
    sensitivity = ages.max() - ages.min()  # <-
    return ages.sum() + np.random.laplace(0, sensitivity / epsilon)
""",
        # ptp and the largest magnitude, passed as the mechanism's sensitivity
        """
import numpy as np
def release(x, mech, epsilon):
    a = mech.randomise(x.sum(), sensitivity=np.ptp(x), epsilon=epsilon)  # <-
    delta_f = np.max(np.abs(x))  # <-
    return a, x.mean() + np.random.laplace(0, delta_f / epsilon)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        if not (_PRIVACY_TEXT.search(self.ctx.source) or _PRIVACY_TEXT.search(self.ctx.path or "")):
            return
        for sub in walk(node):
            if isinstance(sub, cst.FunctionDef) and _names_sensitivity(sub.name.value):
                for inner in walk(sub.body, into_scopes=False):
                    if isinstance(inner, cst.Return) and inner.value is not None:
                        self._check(inner, inner.value, f"the return of `{sub.name.value}`")
            elif isinstance(sub, cst.Assign):
                for t in sub.targets:
                    target = t.target
                    name = target.value if isinstance(target, cst.Name) else \
                        target.attr.value if isinstance(target, cst.Attribute) else None
                    if name and _names_sensitivity(name):
                        self._check(sub, sub.value, f"`{name}`")
                        break
            elif isinstance(sub, cst.Call):
                for arg in sub.args:
                    if arg.keyword is not None and _names_sensitivity(arg.keyword.value):
                        self._check(arg, arg.value, f"the `{arg.keyword.value}=` argument")

    def _check(self, at: cst.CSTNode, value: cst.BaseExpression, what: str) -> None:
        scope = self.ctx.analysis.enclosing_function(at)
        found = _data_range(value, _public_lists(scope) if scope is not None else frozenset())
        if found:
            self.report(at, f"{what} is computed from the data's own range (`{found}`): a local sensitivity of "
                            "this data set, itself unprotected, so noise calibrated to it is not DP; clip the data "
                            "to public bounds and compute the sensitivity from those bounds")
