"""DP707: a moments-accountant conversion divides by the order ``l`` of the binomial sum, not by ``l − 1``."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, param_names, walk
from dpcheck.rule import Rule

_LOGS = frozenset({"log", "log10", "log2"})
_COMB = frozenset({"comb", "binom", "factorial", "binomial", "choose", "gammaln", "lgamma"})


def _is_name(expr: cst.CSTNode, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _range_to_order(it: cst.BaseExpression, order: str) -> bool:
    """``range(l + 1)`` or ``range(0, l + 1)``: k runs over 0..l, the binomial expansion of E[(1 − q + q·r)^l]."""
    if not (isinstance(it, cst.Call) and call_name(it) == "range" and it.args):
        return False
    stop = it.args[-1].value
    return isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) \
        and _is_name(stop.left, order) and number(stop.right) == 1


def _binomial_log_moment(fn: cst.FunctionDef) -> str | None:
    """The order parameter of a function that returns ``log Σ_{k=0..l} C(l, k) (1−q)^{l−k} q^k exp((k²−k)/2σ²)``:
    the log of A_l, Mironov's moment of Rényi order l (the moments-accountant log moment of order λ = l − 1)."""
    params = param_names(fn)
    for order in params:
        loops = [f for f in walk(fn.body) if isinstance(f, (cst.For, cst.CompFor)) and _range_to_order(f.iter, order)]
        if not loops:
            continue
        text = cst.Module([]).code_for_node(fn.body)
        calls = {call_name(c).split(".")[-1] for c in walk(fn.body) if isinstance(c, cst.Call)}
        if not (calls & _COMB and "exp" in calls):
            continue
        if "**2" not in text.replace(" ", "") and "k*k" not in text.replace(" ", ""):
            continue  # the Gaussian's (k² − k)/2σ² exponent
        returns = [r for r in walk(fn.body) if isinstance(r, cst.Return) and r.value is not None]
        if any(isinstance(r.value, cst.Call) and call_name(r.value).split(".")[-1] in _LOGS for r in returns) \
                or any(isinstance(c, cst.Call) and call_name(c).split(".")[-1] in _LOGS for r in returns
                       for c in walk(r.value)):
            return order
    return None


def _log_inverse_delta(expr: cst.CSTNode) -> bool:
    """``log(1 / δ)`` or ``log(δ)`` (any spelling of δ: delta, target_delta, self.delta)."""
    for call in walk(expr):
        if isinstance(call, cst.Call) and call_name(call).split(".")[-1] in _LOGS and call.args:
            if any(isinstance(n, (cst.Name, cst.Attribute)) and "delta" in (dotted(n) or "").lower()
                   for n in walk(call.args[0].value)):
                return True
    return False


class LogMomentDividedByBinomialOrder(Rule):
    id = "DP707"
    name = "log-moment-divided-by-binomial-order"
    category = "moments_accountant"
    severity = "error"
    summary = ("the (ε, δ) conversion of a hand-written moments accountant divides by the order l of the "
               "binomial sum, but that sum is the moment of order l − 1: ε is under-stated")
    rationale = (
        "For the subsampled Gaussian, A_l = Σ_{k=0..l} C(l, k)(1−q)^{l−k} q^k exp((k²−k)/(2σ²)) is Mironov's "
        "Rényi moment of order α = l, i.e. the moments accountant's log moment of order λ = l − 1 (Abadi et al. "
        "write the same sum with C(λ+1, k)). The tail bound is ε = min (T·log A_l + log(1/δ)) / (l − 1) (the "
        "RDP conversion ε = RDP(α) + log(1/δ)/(α−1)); dividing by l instead applies the formula for the moment of "
        "order l to the moment of order l − 1 and reports an ε smaller than the bound, most for the small "
        "orders that usually attain the minimum. Reported: a module function that returns the log of that "
        "binomial sum with k running to its order parameter (`range(l + 1)`, `comb(l, k)`), and a conversion "
        "`(M·T + log(1/δ)) / l` whose divisor is the same order (M the function's value at l, directly or "
        "stored under index l). Fix: divide by `l - 1` (and skip l = 1), or compute the sum to l + 1 for "
        "order λ = l."
    )
    TRIGGERS = ("log",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An ``exp`` and a ``log`` call, a binomial coefficient, and a division."""
        return facts.calls_any(frozenset({"exp"})) and facts.calls_any(_LOGS) and facts.calls_any(_COMB) \
            and bool(facts.binops(ast.Div)) and "delta" in facts.source

    VALID = (
        # the conversion divides by l - 1, matching the order of the sum
        """
import math
class Accountant:
    def log_moment(self, l, q):
        m = 0.0
        for k in range(l + 1):
            m += math.comb(l, k) * (1 - q) ** (l - k) * q ** k * math.exp((k ** 2 - k) / (2 * self.sigma ** 2))
        return math.log(m)

    def epsilon(self, steps, q):
        return min((steps * self.log_moment(l, q) + math.log(1 / self.delta)) / (l - 1) for l in range(2, 64))
""",
        # Abadi's form: the sum runs to lam + 1, so dividing by lam is right
        """
import math
def log_moment(lam, q, sigma):
    total = 0.0
    for k in range(lam + 2):
        total += math.comb(lam + 1, k) * (1 - q) ** (lam + 1 - k) * q ** k * math.exp((k * k - k) / (2 * sigma ** 2))
    return math.log(total)

def eps_from_moments(T, q, sigma, delta):
    return min((T * log_moment(lam, q, sigma) + math.log(1 / delta)) / lam for lam in range(1, 33))
""",
        # ordinary code: a log-sum of binomial probabilities averaged over n, no delta or accountant
        """
import math
def mean_log_likelihood(n, p, counts):
    ll = 0.0
    for k in range(n + 1):
        ll += counts[k] * math.log(math.comb(n, k) * p ** k * (1 - p) ** (n - k))
    return ll / n
""",
        # (twin) the moments are stored per order and the conversion divides by l - 1
        """
import math
class MomentsAccountant:
    def log_mgf(self, l, q):
        s = 0.0
        for k in range(0, l + 1):
            c = math.factorial(l) / (math.factorial(k) * math.factorial(l - k))
            s += c * (1 - q) ** (l - k) * q ** k * math.exp((k ** 2 - k) / (2 * self.sigma ** 2))
        return math.log(s)

    def fill(self, q):
        for j in range(2, self.max_order + 1):
            self.moments[j] = self.log_mgf(j, q)

    def eps(self, steps):
        return min((self.moments[l] * steps + math.log(1 / self.delta)) / (l - 1) for l in range(2, self.max_order + 1))
""",
    )

    INVALID = (
        # the conversion divides by the order of the binomial sum
        """
import math
class Accountant:
    def log_moment(self, l, q):
        m = 0.0
        for k in range(l + 1):
            m += math.comb(l, k) * (1 - q) ** (l - k) * q ** k * math.exp((k ** 2 - k) / (2 * self.sigma ** 2))
        return math.log(m)

    def epsilon(self, steps, q):
        return min((steps * self.log_moment(l, q) + math.log(1 / self.delta)) / l for l in range(1, 64))  # <-
""",
        # the moments are stored per order, and the per-client conversion divides by l
        """
import math
class MomentsAccountant:
    def log_mgf(self, l, q):
        s = 0.0
        for k in range(0, l + 1):
            c = math.factorial(l) / (math.factorial(k) * math.factorial(l - k))
            s += c * (1 - q) ** (l - k) * q ** k * math.exp((k ** 2 - k) / (2 * self.sigma ** 2))
        return math.log(s)

    def fill(self, q):
        for j in range(1, self.max_order + 1):
            self.moments[j] = self.log_mgf(j, q)

    def eps(self, steps):
        best = float("inf")
        for l in range(1, self.max_order + 1):
            e = (self.moments[l] * steps + math.log(1 / self.delta)) / l  # <-
            best = min(best, e)
        return best
""",
        # a module-level helper and log(delta) subtracted
        """
import numpy as np
from scipy.special import comb
def log_a(order, q, sigma):
    terms = [comb(order, k) * (1 - q) ** (order - k) * q ** k * np.exp((k * k - k) / (2 * sigma ** 2))
             for k in range(order + 1)]
    return np.log(sum(terms))

def epsilon(T, q, sigma, delta):
    return min((T * log_a(a, q, sigma) - np.log(delta)) / a for a in range(2, 40))  # <-
""",
        # the per-order moments list, the ratio against a target δ
        """
import math
def log_moment(l, q, sigma):
    acc = 0.0
    for k in range(l + 1):
        acc += math.comb(l, k) * q ** k * (1 - q) ** (l - k) * math.exp((k ** 2 - k) / (2 * sigma ** 2))
    return math.log(acc)

def spent(steps, q, sigma, target_delta):
    moments = {l: log_moment(l, q, sigma) for l in range(1, 32)}
    return min((steps * moments[l] + math.log(1.0 / target_delta)) / l for l in moments)  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        functions = [f for f in walk(node) if isinstance(f, cst.FunctionDef)]
        moments = {f.name.value: order for f in functions if (order := _binomial_log_moment(f)) is not None}
        if not moments:
            return
        # containers filled with the log moment under the order's index: ``self.km[i][j] = self.f(j, q)``,
        # ``{l: f(l, …) for l in …}``
        stores: set[str] = set()
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value).split(".")[-1] in moments:
                for t in sub.targets:
                    if isinstance(t.target, cst.Subscript):
                        stores.add(self._root(t.target))
                    elif isinstance(t.target, cst.Name):
                        stores.add(t.target.value)
            elif isinstance(sub, cst.Assign) and isinstance(sub.value, cst.DictComp) \
                    and isinstance(sub.value.value, cst.Call) and call_name(sub.value.value).split(".")[-1] in moments:
                stores |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        for div in walk(node):
            if not (isinstance(div, cst.BinaryOperation) and isinstance(div.operator, cst.Divide)
                    and isinstance(div.right, cst.Name)):
                continue
            order = div.right.value
            if not _log_inverse_delta(div.left) or not self._moment_at(div.left, order, moments, stores):
                continue
            self.report(div, f"`… / {order}`: the log moment here is the binomial sum up to k = {order} (the Rényi "
                             f"moment of order {order}, the moments accountant's λ = {order} − 1), so the tail "
                             f"bound divides by `{order} - 1`; dividing by `{order}` under-states ε")

    @staticmethod
    def _root(expr: cst.BaseExpression) -> str:
        while isinstance(expr, cst.Subscript):
            expr = expr.value
        return dotted(expr) or ""

    def _moment_at(self, expr: cst.CSTNode, order: str, moments: dict[str, str], stores: set[str]) -> bool:
        """``expr`` reads the log moment at ``order``: ``f(order, …)`` or ``store[…][order]``."""
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and call_name(sub).split(".")[-1] in moments and sub.args \
                    and _is_name(sub.args[0].value, order):
                return True
            if isinstance(sub, cst.Subscript) and self._root(sub) in stores and len(sub.slice) == 1 \
                    and isinstance(sub.slice[0].slice, cst.Index) and _is_name(sub.slice[0].slice.value, order):
                return True
        return False
