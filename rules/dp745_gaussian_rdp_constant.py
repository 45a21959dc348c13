"""DP745: the Rényi-DP (or zCDP) cost of a Gaussian release written with a constant below α/(2σ²)."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, target_names, walk, words
from dpcheck.rule import Rule

#: words of a noise standard deviation (or noise multiplier: std divided by the sensitivity)
_SIGMA = frozenset({"sigma", "std", "stddev", "multiplier", "sig"})
#: words of a variance: ``alpha / (2 * var)`` is the right formula when the name holds σ²
_VARIANCE = frozenset({"var", "variance", "sigma2", "sigmasq", "sq", "squared"})
#: words of a Rényi order
_ORDER = frozenset({"alpha", "alphas", "order", "orders", "lmbd", "lmbda", "lam", "lams", "lambd", "renyi"})
#: words of an L2 sensitivity or clipping norm (enter squared)
_SENS = frozenset({"sens", "sensitivity", "l2", "clip", "norm", "c", "delta_f", "deltaf", "bound", "gs"})
#: words of a number of composed steps (enter linearly)
_STEPS = frozenset({"steps", "step", "k", "t", "iterations", "iters", "rounds", "epochs", "num", "n", "count",
                    "queries", "compositions"})
_ZCDP = frozenset({"rho", "zcdp"})
_TRANSPARENT = frozenset({"array", "asarray", "float", "tensor", "as_tensor"})
#: words that make a module a Rényi/zCDP accountant (``alpha`` alone is every ML hyper-parameter)
_RDP_WORDS = frozenset({"rdp", "renyi", "orders", "zcdp", "rho", "lmbd", "lmbda"})
_RDP_TEXT = re.compile(r"(?i)rdp|r[eé]nyi|zcdp|\borders\b|lmbda?\b|\brho\b")

Mono = tuple[float, dict[str, float]]


def _mono(expr: cst.BaseExpression, bound: dict[str, str]) -> Mono | None:
    """``expr`` as coefficient · Π symbolᵖ when it is a product/quotient/power of names and numbers (``(2*σ)**2``,
    ``o / (2 * (sigma / sens) ** 2)``), else None. Comprehension variables over orders count as orders."""
    value = number(expr)
    if value is not None:
        return value, {}
    name = dotted(expr)
    if name is not None:
        key = name.split(".")[-1]
        return 1.0, {bound.get(key, key): 1.0}
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].keyword:
        inner = _mono(expr.args[0].value, bound)
        fn = call_name(expr)
        if inner is None:
            return None
        if fn in _TRANSPARENT:
            return inner
        if fn == "square":
            return _pow(inner, 2.0)
        if fn == "sqrt":
            return _pow(inner, 0.5)
        return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _mono(expr.expression, bound)
        return None if inner is None else (-inner[0], inner[1])
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power):
            exp = number(expr.right)
            base = _mono(expr.left, bound)
            return None if exp is None or base is None else _pow(base, exp)
        if isinstance(expr.operator, (cst.Multiply, cst.Divide)):
            left, right = _mono(expr.left, bound), _mono(expr.right, bound)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.Divide):
                if right[0] == 0:
                    return None
                right = _pow(right, -1.0)
            powers = dict(left[1])
            for k, p in right[1].items():
                powers[k] = powers.get(k, 0.0) + p
            return left[0] * right[0], {k: p for k, p in powers.items() if p != 0}
    return None


def _pow(m: Mono, e: float) -> Mono:
    try:
        coef = m[0] ** e if (m[0] > 0 or float(e).is_integer()) else float("nan")
    except (OverflowError, ZeroDivisionError):  # ``10.0 ** 400``, ``0 ** -1`` in scanned code: no coefficient
        coef = float("nan")
    return coef, {k: p * e for k, p in m[1].items()}


def _kind(symbol: str) -> str:
    w = words(symbol)
    if symbol == "__order__" or w & _ORDER:
        return "order"
    if w & _VARIANCE:
        return "other"
    if w & _SIGMA or symbol.lower() in {"noise_multiplier", "nm", "z"}:
        return "sigma"
    if w & _SENS or symbol.lower() in _SENS:
        return "sens"
    if w & _STEPS or symbol.lower() in _STEPS:
        return "steps"
    return "other"


def _short(m: Mono, need_order: bool) -> bool:
    """α/(2σ²) with a constant below ½ (``α/(2σ)²``, ``α/(4σ²)``, ``0.25·α/σ²``)."""
    coef, powers = m
    kinds: dict[str, float] = {}
    for sym, p in powers.items():
        k = _kind(sym)
        if k == "other":
            return False
        kinds[k] = kinds.get(k, 0.0) + p
    if kinds.get("sigma") != -2.0:
        return False
    if need_order and kinds.get("order") != 1.0:
        return False
    if not need_order and "order" in kinds:
        return False
    if kinds.get("sens", 2.0) != 2.0 or kinds.get("steps", 1.0) != 1.0:
        return False
    return 0 < coef < 0.5 - 1e-9


class GaussianRdpConstant(Rule):
    id = "DP745"
    name = "gaussian-rdp-constant"
    category = "moments_accountant"
    severity = "error"
    summary = "Gaussian RDP/zCDP cost written with a constant below α/(2σ²) (e.g. α/(2σ)² = α/(4σ²))"
    rationale = (
        "A Gaussian mechanism with noise standard deviation σ·Δ₂ (σ the noise multiplier) is (α, α/(2σ²))-RDP "
        "and ρ-zCDP with ρ = 1/(2σ²); with σ the absolute std and Δ the L2 sensitivity, α·Δ²/(2σ²). Writing "
        "the denominator as (2σ)² = 4σ², or the constant as ¼, charges half the true cost: every ε the "
        "accountant reports afterwards (DP-PCA, noisy means, the whole training run) is too small. Reported: "
        "an expression α·c/σ² (also with Δ² or a number of steps as factors) with c < ½, where α is a "
        "Rényi-order name (alpha, order(s), lmbd or a comprehension variable over them) and σ a std or "
        "noise-multiplier name; and ρ = c/σ² assigned to a rho/zcdp name with c < ½. Not reported: α/(2σ²), "
        "α/σ² (the GNMax argmax bound, or sensitivity √2), and names of a variance (α/(2·var)). Fix: "
        "α/(2σ²) (α·Δ²/(2σ²) for an absolute std)."
    )
    TRIGGERS = ("sigma", "std", "multiplier")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A Rényi/zCDP word among the identifiers, a σ-named identifier, and a division."""
        ids = facts.identifiers
        if not any(words(i) & _RDP_WORDS for i in ids):
            return False
        if not any(words(i) & _SIGMA or i.lower() in {"noise_multiplier", "nm"} for i in ids):
            return False
        return any(isinstance(n.op, ast.Div) for n in facts.nodes(ast.BinOp))  # type: ignore[attr-defined]

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]  # noqa: D107
        super().__init__(ctx)
        self._bound: dict[str, str] = {}
        self._seen: set[int] = set()
        self._active = bool(_RDP_TEXT.search(ctx.source))

    def _enter_comp(self, node: cst.BaseComp) -> None:
        comp = node.for_in
        while comp is not None:
            it = dotted(comp.iter) or ""
            if isinstance(comp.iter, cst.Call) and comp.iter.args:
                it = dotted(comp.iter.args[0].value) or it
            if words(it.split(".")[-1]) & _ORDER:
                for t in target_names(comp.target):
                    self._bound[t] = "__order__"
            comp = comp.inner_for_in

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_comp(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_comp(node)

    def visit_For(self, node: cst.For) -> None:
        it = dotted(node.iter) or ""
        if isinstance(node.iter, cst.Call) and node.iter.args:
            it = dotted(node.iter.args[0].value) or it
        if words(it.split(".")[-1]) & _ORDER:
            for t in target_names(node.target):
                self._bound[t] = "__order__"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bound = {}

    def _check(self, expr: cst.BaseExpression, need_order: bool) -> bool:
        for sub in walk(expr):
            if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Divide, cst.Multiply))):
                continue
            if id(sub) in self._seen:
                continue
            m = _mono(sub, self._bound)
            if m is not None and _short(m, need_order):
                self._seen |= {id(n) for n in walk(sub)}
                self.report(sub, "the Gaussian mechanism's Rényi cost is α/(2σ²) (α·Δ²/(2σ²) for an absolute "
                                 "std); this constant is below ½ (α/(2σ)² = α/(4σ²) is half the cost), so the "
                                 "accountant under-counts every release")
                return True
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._active and isinstance(node.operator, cst.Divide) and id(node) not in self._seen:
            m = _mono(node, self._bound)
            if m is not None and _short(m, True):
                self._check(node, True)

    def visit_Assign(self, node: cst.Assign) -> None:
        names: set[str] = set()
        for t in node.targets:
            names |= target_names(t.target)
        if self._active and any(words(n.split(".")[-1]) & _ZCDP for n in names):
            self._check(node.value, False)

    VALID = (
        # literal arithmetic that overflows a float or divides by zero is not a coefficient (no crash, no report)
        """
def rdp_terms(orders, sigma):
    big = [o / (2 * sigma ** 2) * 10.0 ** 400 for o in orders]
    inv = [o / (0 ** -1 * sigma ** 2) for o in orders]
    return big, inv
""",
        # twin of the coefficient case: one half written as a coefficient
        """
def rdp_gaussian(alpha, noise_std, l2_sens):
    return 0.5 * alpha * l2_sens ** 2 / noise_std ** 2
""",
        # twin: the right constant, α/(2σ²), over a list of orders
        """
import numpy as np
def gaussian_release(arr, sensitivity, orders, sigma):
    noise = np.random.normal(0, sigma * sensitivity, arr.shape)
    rdp = [o / (2 * sigma ** 2) for o in orders]
    return arr + noise, rdp
""",
        # twin: absolute std with the sensitivity squared
        """
def rdp_gaussian(alpha, noise_std, l2_sens):
    return alpha * l2_sens ** 2 / (2 * noise_std ** 2)
""",
        # twin: zCDP with ρ = 1/(2σ²)
        """
def zcdp_cost(noise_multiplier, steps):
    rho = steps / (2 * noise_multiplier ** 2)
    return rho
""",
        # GNMax argmax bound α/σ² (sensitivity √2), and a variance-named denominator
        """
import numpy as np
def gnmax_data_independent(sigma, orders):
    return np.array(orders) / sigma ** 2
def rdp_from_variance(alpha, noise_var):
    return alpha / (2 * noise_var)
""",
        # ordinary ML: a Gaussian kernel width and a smoothing order, no RDP
        """
import numpy as np
def rbf(x, y, sigma):
    return np.exp(-np.sum((x - y) ** 2) / (2 * sigma) ** 2)
def weight_decay(alpha, std):
    return alpha / (4 * std ** 2)
""",
    )

    INVALID = (
        # (2σ)² in the denominator: α/(4σ²)
        """
import numpy as np
def gaussian_release(arr, sensitivity, orders, sigma):
    noise = np.random.normal(0, sigma * sensitivity, arr.shape)
    rdp = [o / ((2 * sigma) ** 2) for o in orders]  # <-
    return arr + noise, rdp
""",
        # a quarter written as a coefficient, absolute std with the sensitivity squared
        """
def rdp_gaussian(alpha, noise_std, l2_sens):
    return 0.25 * alpha * l2_sens ** 2 / noise_std ** 2  # <-
""",
        # zCDP with ρ = 1/(4σ²) over the steps
        """
def zcdp_cost(noise_multiplier, steps):
    rho = steps / (4 * noise_multiplier ** 2)  # <-
    return rho
""",
        # torch accountant over an array of orders, the std of each step in a loop
        """
import torch
class Accountant:
    def step(self, sigma):
        self.rdp += self.orders / (4 * sigma * sigma)  # <-
""",
    )
