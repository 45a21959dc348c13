"""DP800: the noise is scaled by a sensitivity parameter while the clamp that would bound the value runs only when
optional bounds are given (their default leaves the value unbounded)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import all_params, call_name, dotted, refs, walk, words
from dpcheck.rule import Rule

_SENS = frozenset({"sensitivity", "sens", "sensitivities"})
_BOUND = frozenset({"lower", "upper", "min", "max", "lo", "hi", "low", "high", "clip", "clamp", "bound", "bounds",
                    "range", "clipping", "clamping", "limit", "limits", "lb", "ub", "vmin", "vmax"})
#: calls that clamp a value into its bounds
_CLAMP = frozenset({"min", "max", "clip", "clamp", "minimum", "maximum", "clip_", "clamp_", "clip_by_value",
                    "clip_by_norm", "clamp_min", "clamp_max", "clip_by_global_norm", "fmin", "fmax"})
_EPS = frozenset({"epsilon", "eps", "epsilons", "budget", "privacy", "rho", "mu"})
_EPS_NAMES = frozenset({"e", "ep", "ε"})
#: noise draws (uniform and random too: inverse-CDF Laplace draws start from them)
_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "standard_normal", "uniform", "random", "exponential",
                    "geometric", "discrete_laplace", "discrete_gaussian", "Laplace", "Normal", "sample", "rvs",
                    "normal_", "randn_like", "normal_like", "laplace_noise", "gaussian_noise", "add_noise"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _is_sens(name: str) -> bool:
    last = name.split(".")[-1]
    return bool(words(last) & _SENS) or last.lower() in ("delta_f", "deltaf", "df", "gs", "l1_sens", "l2_sens")


def _is_bound(name: str) -> bool:
    last = name.split(".")[-1]
    return bool(words(last) & _BOUND) and not words(last) & _SENS


def _is_eps(expr: cst.BaseExpression) -> bool:
    """An ε-named divisor (not ``x + eps``, the numerical guard of ordinary code)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return False
    return any(words(n.split(".")[-1]) & _EPS or n.split(".")[-1] in _EPS_NAMES for n in refs(expr))


def _off_default(default: cst.BaseExpression | None) -> bool:
    """A default that leaves the clamp off: ``None`` or ``False``."""
    return isinstance(default, cst.Name) and default.value in ("None", "False")


class FixedSensitivityOptionalClamp(Rule):
    id = "DP800"
    name = "fixed-sensitivity-optional-clamp"
    category = "general"
    severity = "error"
    summary = ("the noise is scaled by a sensitivity parameter while the value is clamped only `if bound is not "
               "None:`, and the bounds default to None (or the clamp flag to False)")
    rationale = (
        "Laplace or Gaussian noise of scale sensitivity/ε protects a value only if one record can move it by at "
        "most the sensitivity. A masking or release helper that takes `sensitivity=1.0` next to optional bounds "
        "(`lower=None, upper=None`, `clip=None`, `clamp=False`) and clamps the value only when the bounds are "
        "given calibrates the noise to a bound nothing enforces by default: a salary or a count passed without "
        "bounds gets noise of scale 1/ε on an unbounded value and is still reported as ε-DP. Reported: a "
        "division `sensitivity / ε` (the noise scale) in a function whose clamp of the value (min/max/clip/"
        "clamp) sits under an `if` on a bound parameter or attribute whose default is None/False, with no "
        "`raise` when the bounds are missing and no sensitivity derived from the bounds. Bad: `if lo is not None: "
        "x = max(lo, x)` ... `scale = sensitivity / epsilon`. Good: require the bounds (raise when they are "
        "missing), or derive the sensitivity from them (`sensitivity = hi - lo`). Fix: make the bounds mandatory "
        "and clamp unconditionally, or compute the sensitivity from the clamp."
    )
    TRIGGERS = ("sensitiv", "sens")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a division, an ``if`` and a function with a sensitivity-named parameter (or a class
        whose ``__init__`` takes one) and a parameter defaulting to None/False."""
        if not facts.binops(ast.Div) or not facts.nodes(ast.If):
            return False
        for fn in facts.functions:
            a = fn.args
            names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            if not any(words(n) & _SENS or n.lower() in ("delta_f", "deltaf", "gs") for n in names):
                continue
            defaults = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
            if any(isinstance(d, ast.Constant) and (d.value is None or d.value is False) for d in defaults):
                return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    INVALID = (
        # masking helper: sensitivity defaults to 1, the clamp runs only if bounds are given
        """
import numpy as np
def mask_value(value, epsilon=1.0, sensitivity=1.0, lower=None, upper=None):
    x = float(value)
    if lower is not None:
        x = max(lower, x)
    if upper is not None:
        x = min(upper, x)
    scale = sensitivity / epsilon  # <-
    return x + np.random.laplace(0.0, scale)
""",
        # Gaussian variant with a single optional clip norm and np.clip
        """
import math
import numpy as np
def release_mean(values, eps, delta, sens=1.0, clip=None):
    arr = np.asarray(values, dtype=float)
    if clip is not None:
        arr = np.clip(arr, -clip, clip)
    sigma = math.sqrt(2 * math.log(1.25 / delta)) * sens / eps  # <-
    return arr.mean() + np.random.normal(0, sigma)
""",
        # a boolean clamp flag off by default, bounds stored on the object in __init__
        """
import numpy as np
class NoisyColumn:
    def __init__(self, epsilon, sensitivity=1.0, bounds=None, clamp=False):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.bounds = bounds
        self.clamp = clamp
    def apply(self, column):
        col = np.asarray(column, dtype=float)
        if self.clamp and self.bounds is not None:
            col = np.clip(col, self.bounds[0], self.bounds[1])
        b = self.sensitivity / self.epsilon  # <-
        return col + np.random.laplace(0, b, size=col.shape)
""",
        # inverse-CDF Laplace from random.uniform, an optional (lo, hi) range
        """
import math
import random
def perturb(v, eps, sensitivity=1.0, value_range=None):
    if value_range:
        lo, hi = value_range
        v = min(hi, max(lo, v))
    b = sensitivity / eps  # <-
    u = random.uniform(-0.5, 0.5)
    return v - b * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))
""",
    )
    VALID = (
        # twin: the bounds are mandatory (missing bounds raise)
        """
import numpy as np
def mask_value(value, epsilon=1.0, sensitivity=1.0, lower=None, upper=None):
    if lower is None or upper is None:
        raise ValueError("bounds are required for DP noise")
    x = min(upper, max(lower, float(value)))
    scale = sensitivity / epsilon
    return x + np.random.laplace(0.0, scale)
""",
        # twin: the sensitivity is derived from the clamp
        """
import math
import numpy as np
def release_mean(values, eps, delta, sens=1.0, clip=None):
    arr = np.asarray(values, dtype=float)
    if clip is not None:
        arr = np.clip(arr, -clip, clip)
        sens = 2 * clip / len(arr)
    sigma = math.sqrt(2 * math.log(1.25 / delta)) * sens / eps
    return arr.mean() + np.random.normal(0, sigma)
""",
        # twin: the clamp is unconditional, bounds required
        """
import numpy as np
class NoisyColumn:
    def __init__(self, epsilon, bounds, sensitivity=1.0, verbose=False):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.bounds = bounds
    def apply(self, column):
        col = np.clip(np.asarray(column, dtype=float), self.bounds[0], self.bounds[1])
        b = self.sensitivity / self.epsilon
        return col + np.random.laplace(0, b, size=col.shape)
""",
        # twin: a missing range is rejected
        """
import math
import random
def perturb(v, eps, sensitivity=1.0, value_range=None):
    if not value_range:
        raise ValueError("value_range is required for a bounded sensitivity")
    lo, hi = value_range
    v = min(hi, max(lo, v))
    b = sensitivity / eps
    u = random.uniform(-0.5, 0.5)
    return v - b * math.copysign(1.0, u) * math.log(1 - 2 * abs(u))
""",
        # twin: the optional bounds clamp the released (noisy) value, post-processing; the input is a count
        """
import numpy as np
def noisy_count(records, epsilon, sensitivity=1.0, lower=None, upper=None):
    scale = sensitivity / epsilon
    result = len(records) + np.random.laplace(0.0, scale)
    if lower is not None:
        result = max(result, lower)
    if upper is not None:
        result = min(result, upper)
    return result
""",
        # ordinary ML: a sensitivity (recall) metric divided by an epsilon guard, optional clipping of scores
        """
import numpy as np
def recall_ratio(scores, labels, sensitivity=0.9, max_score=None, eps=1e-8):
    if max_score is not None:
        scores = np.minimum(scores, max_score)
    tp = ((scores > 0.5) & (labels == 1)).sum()
    return sensitivity / (tp + eps)
""",
    )

    @property
    def _done(self) -> set[int]:
        """Functions already reported (a method is seen with and without its class's ``__init__`` attributes)."""
        done = self.__dict__.get("_done_ids")
        if done is None:
            done = self.__dict__["_done_ids"] = set()
        return done

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        init_defaults: dict[str, cst.BaseExpression | None] = {}
        for fn in node.body.body:
            if isinstance(fn, cst.FunctionDef) and fn.name.value == "__init__":
                params = {p.name.value: (p.default if p.default is not None else None) for p in all_params(fn)}
                for sub in walk(fn.body, into_scopes=False):
                    if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.value, cst.Name) \
                            and sub.value.value in params:
                        target = dotted(sub.targets[0].target)
                        if target is not None and target.startswith("self."):
                            init_defaults[target] = params[sub.value.value]
        if not init_defaults:
            return
        for fn in node.body.body:
            if isinstance(fn, cst.FunctionDef) and fn.name.value != "__init__":
                self._check(fn, init_defaults)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._check(node, {})

    def _check(self, fn: cst.FunctionDef, extra: dict[str, cst.BaseExpression | None]) -> None:
        known: dict[str, cst.BaseExpression | None] = dict(extra)
        for p in all_params(fn):
            known[p.name.value] = p.default
        sens = {n for n in known if _is_sens(n)}
        bounds = {n for n, d in known.items() if _is_bound(n) and _off_default(d)}
        if not sens or not bounds:
            return
        if id(fn) in self._done:
            return
        body = list(walk(fn.body, into_scopes=False))
        draws = [self.ctx.analysis.line_of(c) for c in body if isinstance(c, cst.Call) and _last(c) in _DRAWS]
        if not draws:
            return
        # the sensitivity is rebound in the function (derived from the bounds, or checked): quiet
        for sub in body:
            if isinstance(sub, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                if any(dotted(t) in sens for t in targets):
                    return
        conditional_clamps: list[cst.If] = []
        guarded: set[int] = set()
        for sub in body:
            if not isinstance(sub, cst.If):
                continue
            test_refs = refs(sub.test)
            if not test_refs & bounds:
                continue
            if test_refs & sens:
                return
            if any(isinstance(s, cst.Raise) for s in walk(sub)):
                return  # missing bounds raise (or are rejected): enforced
            clamps = [c for c in walk(sub.body) if isinstance(c, cst.Call) and _last(c) in _CLAMP]
            if clamps and self.ctx.analysis.line_of(sub) > min(draws):
                continue  # a clamp of the noisy result: post-processing, not the bound the noise assumes
            if clamps:
                conditional_clamps.append(sub)
                guarded.update(id(c) for c in clamps)
                if sub.orelse is not None and any(isinstance(c, cst.Call) and _last(c) in _CLAMP
                                                  for c in walk(sub.orelse)):
                    return  # both branches clamp
        if not conditional_clamps:
            return
        # an unconditional clamp elsewhere bounds the value anyway
        for sub in body:
            if isinstance(sub, cst.Call) and _last(sub) in _CLAMP and id(sub) not in guarded \
                    and refs(sub) & bounds:
                return
        for sub in body:
            if isinstance(sub, cst.Assert) and refs(sub.test) & bounds:
                return
        inside = {id(n) for c in conditional_clamps for n in walk(c)}
        for sub in body:
            if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide)):
                continue
            if id(sub) in inside or not refs(sub.left) & sens or not _is_eps(sub.right):
                continue
            self._done.add(id(fn))
            name = sorted(refs(sub.left) & sens)[0]
            self.report(sub, f"the noise scale `{self.ctx.analysis.code(sub).strip()}` assumes `{name}` bounds "
                             "one record's effect, but the value is clamped only when the optional bounds ("
                             f"{', '.join(sorted(bounds))}) are given and they default to None/False: require the "
                             "bounds (raise when missing) or derive the sensitivity from them")
