"""DP318: the RDP of the subsampled Gaussian taken as q²·α/(2σ²), a small-q approximation that is not a bound."""
from __future__ import annotations

import ast
import math
import re
from fractions import Fraction
from typing import Callable

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.syntax import number, words
from dpcheck.rule import Rule

_SAMPLING_WORDS = frozenset({"sample", "sampling", "subsample", "subsampling", "poisson"})
_RATE_WORDS = frozenset({"rate", "prob", "probability", "ratio", "fraction", "frac"})
_ORDER_WORDS = frozenset({"alpha", "order", "orders", "lam", "lmbda", "lambd", "lamb", "lambda"})
_SIGMA_WORDS = frozenset({"sigma", "noisemu", "multiplier", "std", "stddev"})
#: a name of the noise multiplier needs one of these pieces (``noise`` alone may be a noise vector)
_NOISE_SCALE = re.compile(r"sigma|noise_?mu|multiplier|std", re.I)


def _rate(name: str) -> bool:
    last = name.split(".")[-1]
    pieces = words(last)
    return last == "q" or bool(pieces & _SAMPLING_WORDS and pieces & _RATE_WORDS)


def _order(name: str) -> bool:
    last = name.split(".")[-1]
    return bool(words(last) & _ORDER_WORDS)


def _sigma(name: str) -> bool:
    last = name.split(".")[-1]
    return bool(words(last) & _SIGMA_WORDS) or bool(_NOISE_SCALE.search(last))


Resolve = Callable[[cst.Name], "cst.BaseExpression | None"]


def _factors(expr: cst.BaseExpression, power: Fraction, out: list[tuple[cst.BaseExpression, Fraction]],
             resolve: Resolve | None = None) -> None:
    """Multiplicative factors of ``expr`` with their exponents: ``q**2 * a / (2 * s * s)`` ->
    q^2, a^1, 2^-1, s^-1, s^-1. With ``resolve``, a local name bound to a product is expanded once
    (``rdp_full = order / (2 * sigma ** 2)`` … ``q * rdp_full``)."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Multiply):
            _factors(expr.left, power, out, resolve)
            _factors(expr.right, power, out, resolve)
            return
        if isinstance(expr.operator, cst.Divide):
            _factors(expr.left, power, out, resolve)
            _factors(expr.right, -power, out, resolve)
            return
        if isinstance(expr.operator, cst.Power):
            exponent = number(expr.right)
            if exponent is not None and float(exponent).is_integer():
                _factors(expr.left, power * int(exponent), out, resolve)
                return
    if resolve is not None and isinstance(expr, cst.Name) and not (_rate(expr.value) or _order(expr.value)
                                                                    or _sigma(expr.value)):
        bound = resolve(expr)
        if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, (cst.Multiply, cst.Divide)) \
                and subsampled_rdp_shape(bound) is None:  # a bound already of the shape is reported where it is
            _factors(bound, power, out)  # one hop only
            return
    out.append((expr, power))


def subsampled_rdp_shape(expr: cst.BaseExpression, resolve: Resolve | None = None
                         ) -> tuple[str, str, str, Fraction, Fraction] | None:
    """(rate, order, σ, constant, power of the rate) when ``expr`` is c·q^k·α/σ² with k = 1 or 2 (times other
    factors that read none of the three), else None."""
    parts: list[tuple[cst.BaseExpression, Fraction]] = []
    _factors(expr, Fraction(1), parts, resolve)
    constant = Fraction(1)
    powers: dict[str, Fraction] = {}
    kinds: dict[str, str] = {}
    for factor, power in parts:
        value = number(factor)
        if value is not None:
            # a literal raised high, out of float range or below 1e-6 is no c of c·q²·α/σ²
            if not math.isfinite(value) or abs(power) > 4:
                return None
            fraction = Fraction(value).limit_denominator(10 ** 6)
            if fraction == 0:
                return None
            constant *= fraction ** int(power)
            continue
        name = ident(factor) if isinstance(factor, (cst.Name, cst.Attribute)) else None
        kind = None if name is None else "rate" if _rate(name) else "order" if _order(name) else \
            "sigma" if _sigma(name) else None
        if kind is None:
            # another factor (``steps``, ``T``) may scale the cost; one that reads the rate, the order or σ
            # (``alpha + 1``, ``1 - q``) is another formula
            inner = [ident(n) or "" for n in _names(factor)]
            if any(_rate(n) or _order(n) or _sigma(n) for n in inner):
                return None
            continue
        assert name is not None
        powers[name] = powers.get(name, Fraction(0)) + power
        kinds[name] = kind
    by_kind: dict[str, list[str]] = {}
    for name, power in powers.items():
        if power != 0:
            by_kind.setdefault(kinds[name], []).append(name)
    if any(len(by_kind.get(k, [])) != 1 for k in ("rate", "order", "sigma")):
        return None
    rate, order, sigma = by_kind["rate"][0], by_kind["order"][0], by_kind["sigma"][0]
    if powers[rate] not in (1, 2) or (powers[order], powers[sigma]) != (1, -2):
        return None
    return rate, order, sigma, constant, powers[rate]


def _names(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.Name, cst.Attribute)):
            found.append(cur)
            continue
        stack.extend(cur.children)
    return found


class SubsampledRdpApproximation(Rule):
    id = "DP318"
    name = "subsampled-rdp-approximation"
    category = "general"
    severity = "error"
    summary = ("the RDP of the Poisson-subsampled Gaussian taken as q²·α/(2σ²): a small-q approximation, not an "
               "upper bound, so the ε it gives is understated")
    rationale = (
        "The Gaussian mechanism with noise multiplier σ has Rényi DP α/(2σ²) at order α. Subsampling each "
        "record with probability q does not simply multiply that by q²: q²·α/(2σ²) is the leading term of an "
        "expansion that holds only for small q, small α and large σ, and is not an upper bound (at q = 0.1, "
        "σ = 1, α = 32 the true RDP is orders of magnitude larger). Hand-written accountants that charge "
        "`(q ** 2) * alpha / (2 * sigma ** 2)` per step report an ε (and stop a budget loop) far too early. "
        "The provable simple bound (Mironov, Talwar & Zhang 2019) is 2q²α/σ², and only under conditions on σ "
        "and α. Reported: a product c·q²·α/σ² with c < 2 (a rate `q`/`sample_rate`/`sampling_prob`, an order "
        "`alpha`/`order`/`lam`, a noise multiplier `sigma`/`noise_multiplier`), other factors such as the "
        "number of steps allowed; the same linear in q (q·α/(2σ²), the full-batch RDP scaled by the rate), also "
        "through a local name bound to α/(2σ²). Not reported: 2q²α/σ² and larger constants, Abadi et al.'s moment bound "
        "(it reads α + 1 and 1 − q), code with no DP context. Fix: compute the subsampled Gaussian's RDP "
        "numerically (Opacus' or TF-Privacy's `compute_rdp`, Google's dp_accounting)."
    )
    TRIGGERS = ("sigma", "Sigma", "SIGMA", "noise", "Noise", "NOISE", "mult", "Mult", "MULT", "std", "Std", "STD")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A product or quotient in a file with a name of the order (``alpha``, ``order``, ``lam``) and of a
        rate (``q`` or a sampling rate/probability)."""
        if not (facts.binops(ast.Mult) or facts.binops(ast.Pow)) or not facts.binops(ast.Div):
            return False
        names = facts.identifiers
        return any(_order(n) for n in names) and any(_rate(n) for n in names) and any(_sigma(n) for n in names)

    VALID = (
        # twins of the linear spelling: the full-batch RDP kept unamplified, a numerical accountant, and a
        # local full-batch RDP charged once per step (no rate factor)
        """
from opacus.accountants.analysis.rdp import compute_rdp
def rdp_per_step(order, noise_multiplier, sample_rate):
    rdp_full = order / (2.0 * noise_multiplier ** 2)
    return rdp_full if sample_rate >= 1 else float(compute_rdp(q=sample_rate, noise_multiplier=noise_multiplier,
                                                               steps=1, orders=[order])[0])
def total(alpha, sigma, steps):
    per_step = alpha / (2 * sigma ** 2)
    return steps * per_step
class Ledger:
    def charge(self, q, sigma, alpha):
        return 2 * q ** 2 * alpha / sigma ** 2
""",
        # the provable simple bound (factor 2) and a numerical accountant
        """
from opacus.accountants.analysis.rdp import compute_rdp
def rdp_step(q, sigma, alpha):
    return 2 * q ** 2 * alpha / sigma ** 2
def rdp_curve(q, noise_multiplier, steps, orders):
    return compute_rdp(q=q, noise_multiplier=noise_multiplier, steps=steps, orders=orders)
""",
        # the full-batch Gaussian's RDP (no subsampling), and Abadi et al.'s moment bound (α + 1, 1 − q)
        """
def rdp_gaussian(alpha, sigma, steps):
    return steps * alpha / (2 * sigma ** 2)
def moments_bound(q, sigma, lam):
    return q ** 2 * lam * (lam + 1) / ((1 - q) * sigma ** 2)
""",
        # literals no rule arithmetic can take: constants below 1e-6 (one divides), a huge power
        """
from opacus.accountants.analysis.rdp import compute_rdp
def rdp_tiny(q, sigma, alpha):
    return 1e-300 * q ** 2 * alpha / sigma ** 2
def rdp_subnormal(q, sigma, alpha):
    return q ** 2 * alpha / (1e-320 * sigma ** 2)
def rdp_huge(q, sigma, alpha):
    return 10 ** 100000 * q ** 2 * alpha / sigma ** 2 / 3 ** 100000000
""",
        # q² α / (2σ²) in a module with no privacy context at all (a variance identity)
        """
def spread(q, alpha, std):
    return (q * q) * alpha / (2.0 * std * std)
""",
        # the conversion from RDP to (ε, δ) and Mironov's bound written with the 2 in the denominator's place
        """
import math
def epsilon_from_rdp(q, sigma, alpha, rdp, delta):
    bound = q ** 2 * alpha / (sigma ** 2 / 2)
    return min(rdp, bound) + math.log(1 / delta) / (alpha - 1)
""",
    )

    INVALID = (
        # the full-batch RDP α/(2σ²) scaled linearly by the sampling rate, through a local name
        """
import math
def rdp_per_step(order, noise_multiplier, sample_rate):
    rdp_full = order / (2.0 * noise_multiplier ** 2)
    return sample_rate * rdp_full  # <-
def to_dp(rdp, order, delta):
    return rdp + math.log(1 / delta) / (order - 1)
""",
        # the same written inline, times the number of steps
        """
import numpy as np
def epsilon_spent(q, sigma, steps, orders, delta):
    orders = np.asarray(orders)
    rdp = steps * q * orders / (2 * sigma ** 2)  # <-
    return np.min(rdp + np.log(1 / delta) / (orders - 1))
""",
        # on an accountant object: the per-order RDP scaled by the sampling probability
        """
class MomentsLedger:
    def step_cost(self, alpha):
        base = alpha / (self.noise_multiplier ** 2)
        return self.sampling_prob * base / 2  # <-
    def epsilon(self, delta):
        return min(r + __import__("math").log(1 / delta) / (a - 1) for a, r in self.rdp)
""",
        # Subspace-DP-FL's accountant.py: a method on an RDP accountant
        """
import math
class RDPAccountant:
    def ComputeRdp(self, q, noisemu, alpha):
        \"\"\"RDP of Poisson-subsampled Gaussian (simple upper bound).\"\"\"
        if q <= 0:
            return 0.0
        return (q * q) * alpha / (2.0 * noisemu * noisemu)  # <-
    def get_epsilon(self, delta):
        return min(r + math.log(1 / delta) / (a - 1) for a, r in self.rdp)
""",
        # Blockchain-Adaptive-DP-FL: per-step RDP times the steps, summed into the total
        """
def compute_epsilon(q, sigma, steps, delta, orders):
    best = float("inf")
    for alpha in orders:
        rdp_per_step = (q**2 * alpha) / (2 * sigma**2)  # <-
        total_rdp = rdp_per_step * steps
        best = min(best, total_rdp + 2.302 * -delta / (alpha - 1))
    return best
""",
        # DP-recommender-system: array of orders, a sampling-probability name, an attribute σ
        """
import numpy as np
class Accountant:
    def compute_rdp_step(self, sampling_prob):
        rdp = np.zeros(len(self.orders))
        for i, order in enumerate(self.orders):
            rdp[i] = (order * (sampling_prob ** 2)) / (2.0 * (self.noise_multiplier ** 2))  # <-
        return rdp
    def epsilon(self, delta):
        return np.min(self.rdp_eps + np.log(1 / delta) / (np.array(self.orders) - 1))
""",
        # a vector of orders, the number of steps as a factor, a sample-rate name
        """
import numpy as np
def total_rdp(sample_rate, noise_multiplier, steps, orders):
    orders = np.asarray(orders)
    return steps * sample_rate ** 2 * orders / (2 * noise_multiplier ** 2)  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide, cst.Power)):
            return  # the outermost product decides
        shape = subsampled_rdp_shape(node, fa.value_of)
        if shape is None:
            return
        rate, order, sigma, constant, power = shape
        if constant >= 2 or not fa.in_dp_context(node):
            return
        term = f"{rate}²" if power == 2 else rate
        self.report(node, f"`{' '.join(fa.code(node).split())}` takes the RDP of the subsampled Gaussian at order "
                          f"`{order}` as {constant}·{term}·{order}/{sigma}²: that is the small-q leading term, not "
                          "an upper bound (for larger orders or smaller σ the true RDP is far larger), so the ε "
                          "reported is understated; compute the subsampled Gaussian's RDP numerically (Opacus or "
                          "TF-Privacy `compute_rdp`)")
