"""DP310: Rényi-DP costs summed into an ε that is never converted to (ε, δ)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, value_refs, walk, words
from dpcheck.rule import Rule

#: a callee computing a Rényi-DP cost (``compute_rdp``, ``rdp_per_round``, ``renyi_gaussian``)
_RDP_WORDS = frozenset({"rdp", "renyi"})
#: a callee converting RDP to (ε, δ) or reading ε off an accountant: its result is ε already
_CONVERSION_WORDS = frozenset({"dp", "spent", "convert", "conversion", "epsilon", "eps", "privacy"})
_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons"})


def _rdp_call(name: str) -> bool:
    pieces = words(name)
    return bool(pieces & _RDP_WORDS) and not pieces & (_CONVERSION_WORDS | {"to"})


def _eps_target(name: str | None) -> bool:
    """``accum_eps``, ``self.current_epsilon``, ``spent_epsilon`` — not ``rdp_eps`` (named for what it is)."""
    if name is None:
        return False
    pieces = words(name.rsplit(".", 1)[-1])
    return bool(pieces & _EPS_WORDS) and not pieces & (_RDP_WORDS | {"target", "max", "budget", "limit", "total_budget"})


#: a record sampling rate (``q``, ``sample_rate``, ``sampling_prob``), not a decay or learning rate
_RATE_WORDS = frozenset({"q", "sample", "sampling"})


def _ast_squared(node: ast.AST, rate: bool) -> bool:
    """``q ** 2`` (rate) / ``sigma ** 2`` (anything) somewhere in ``node``."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and isinstance(n.right, ast.Constant) \
                and n.right.value == 2:
            if not rate:
                return True
            base = n.left
            name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
            if name is not None and words(name) & _RATE_WORDS:
                return True
    return False


def _ast_closed_form(node: ast.BinOp) -> bool:
    return _ast_squared(node.left, True) and _ast_squared(node.right, False)


def _squared(expr: cst.CSTNode, rate: bool) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) \
                and isinstance(n.right, cst.Integer) and n.right.value == "2":
            if not rate:
                return True
            name = dotted(n.left)
            if name is not None and words(name.rsplit(".", 1)[-1]) & _RATE_WORDS:
                return True
    return False


def _closed_form_rdp(expr: cst.CSTNode) -> cst.BinaryOperation | None:
    """(h44-2) ``steps * q ** 2 / (2 * sigma ** 2)``: the small-q moment (RDP at order 1) of the subsampled
    Gaussian, with no ``log`` (no δ) anywhere in the expression."""
    if any(isinstance(c, cst.Call) and call_name(c) in ("log", "log1p", "sqrt") for c in walk(expr)):
        return None
    for n in walk(expr):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide) \
                and _squared(n.left, True) and _squared(n.right, False):
            return n
    return None


class RdpReportedAsEpsilon(Rule):
    id = "DP310"
    name = "rdp-reported-as-epsilon"
    category = "general"
    severity = "error"
    summary = "per-step Rényi-DP costs are summed into an ε (compared with the budget or reported) with no RDP→(ε, δ) conversion"
    rationale = (
        "RDP composes by adding the costs at one order α, but the sum ρ(α) is not an ε: an "
        "(ε, δ) guarantee needs the conversion ε = ρ(α) + log(1/δ)/(α − 1) (or a tighter one, "
        "minimised over orders). An accumulator named ε (`accum_eps += rdp_per_round(α, σ, q)`, "
        "`self.spent_epsilon += renyi_cost`) that is compared with the ε budget or logged as ε "
        "without that term under-reports the privacy loss: with α = 8 and δ = 1e-5 the missing "
        "term alone is 1.64, so training stops late and the reported ε is too small. "
        "Reported: an ε-named accumulator (`+=`, `x = x + …`, `sum(…)`) of values computed by an "
        "RDP-named function (`rdp`/`renyi` in its name, not a conversion such as `rdp_to_dp`, "
        "`get_privacy_spent`), when the accumulator never enters a conversion call or an "
        "arithmetic expression with a `log` in the module. Not reported: accumulators named for RDP "
        "(`total_rdp`), sums later passed to a conversion, code with no DP context. "
        "Fix: accumulate the RDP, and report/compare ε = min over α of ρ(α) + log(1/δ)/(α − 1)."
        " "
        "(h44-2) Also reported: a function named for ε returning the closed form `steps * q ** 2 / (2 * sigma ** 2)` with no log/δ term (a fallback 'approximation' when no accountant is installed)."
    )
    TRIGGERS = ("rdp", "RDP", "Rdp", "renyi", "Renyi", "** 2", "**2")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an ``+=`` / assignment to an ε-named target in a module calling an RDP-named function,
        or a closed-form ``steps * q ** 2 / (2 * sigma ** 2)`` in the module."""
        if any(_ast_closed_form(b) for b in facts.binops(ast.Div)):
            return True
        if not any(_rdp_call(n) for n in facts.called):
            return False
        for node in facts.nodes(ast.AugAssign, ast.Assign):
            targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets  # type: ignore[attr-defined]
            for t in targets:
                name = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else None
                if _eps_target(name):
                    return True
        return False

    VALID = (
        # (h44-2 twin) the same moment at order α, converted with the log(1/δ)/(α − 1) term; an ε-greedy schedule
        # with a decay rate; a Gaussian kernel
        """
import math
import numpy as np
from opacus.accountants import RDPAccountant
class Engine:
    def __init__(self, sample_rate, delta, alpha=8):
        self.sample_rate, self.delta, self.alpha = sample_rate, delta, alpha
    def epsilon_after(self, steps, sigma):
        rdp = self.alpha * steps * self.sample_rate ** 2 / sigma ** 2
        return rdp + math.log(1 / self.delta) / (self.alpha - 1)
    def noisy(self, g, sigma):
        return g + np.random.normal(0, sigma, g.shape)
def epsilon_schedule(step, decay_rate=0.99):
    return 0.05 + decay_rate ** 2 / (1 + step ** 2)
def kernel_eps(x, bandwidth):
    return np.exp(-x ** 2 / (2 * bandwidth ** 2))
""",
        # the per-round RDP is accumulated as RDP and converted before it is compared
        """
import math
import torch
from utils.rdp import rdp_per_round
def train(model, rounds, sigma, q, alpha, delta, max_eps):
    rdp_round = rdp_per_round(alpha, sigma, q)
    total_rdp = 0.0
    for t in range(rounds):
        noisy = model.step() + torch.randn(10) * sigma
        total_rdp += rdp_round
        epsilon = total_rdp + math.log(1 / delta) / (alpha - 1)
        if epsilon >= max_eps:
            break
""",
        # an accountant that sums RDP and reads ε through a conversion
        """
import numpy as np
def rdp_gaussian(alpha, sigma):
    return alpha / (2 * sigma ** 2)
def rdp_to_dp(rdp, alpha, delta):
    return rdp + np.log(1 / delta) / (alpha - 1)
class Accountant:
    def __init__(self, alpha, delta):
        self.alpha, self.delta, self.spent_epsilon = alpha, delta, 0.0
    def step(self, sigma):
        self.spent_epsilon += rdp_gaussian(self.alpha, sigma)
    def epsilon(self):
        return rdp_to_dp(self.spent_epsilon, self.alpha, self.delta)
""",
        # ε values already converted by the library, summed over releases (basic composition)
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def total_epsilon(q, sigmas, steps, orders, delta):
    eps_total = 0.0
    for s in sigmas:
        rdp = compute_rdp(q, s, steps, orders)
        eps_total += get_privacy_spent(orders, rdp, target_delta=delta)[0]
    return eps_total
""",
        # an ε summed from a Laplace mechanism's costs in a file that also imports an RDP helper
        """
import numpy as np
from accounting import compute_rdp
def release(counts, epsilon_each, k):
    spent_eps = 0.0
    out = []
    for c in counts[:k]:
        out.append(c + np.random.laplace(0, 1 / epsilon_each))
        spent_eps += epsilon_each
    return out, spent_eps
""",
    )

    INVALID = (
        # (h44-2) without an accountant, the small-q moment steps·q²/(2σ²) is returned as ε
        """
import numpy as np
from opacus.accountants import RDPAccountant
class Engine:
    def __init__(self, sample_rate, delta):
        self.sample_rate, self.delta = sample_rate, delta
    def epsilon_after(self, steps, sigma):
        s = max(sigma, 1e-12)
        return steps * self.sample_rate ** 2 / (2.0 * s ** 2)  # <-
    def noisy(self, g, sigma):
        return g + np.random.normal(0, sigma, g.shape)
""",
        # a federated driver: the per-round RDP at one order is summed and compared with ε_max
        """
import torch
from privacy.renyi import gaussian_rdp
def run(server, clients, rounds, sigma, alpha, max_epsilon):
    cost = gaussian_rdp(alpha, sigma)
    spent_epsilon = 0.0
    for t in range(rounds):
        server.aggregate([c.update() + torch.randn(1) * sigma for c in clients])
        spent_epsilon += cost  # <-
        if spent_epsilon > max_epsilon:
            break
""",
        # an accountant object whose ε is a running RDP sum
        """
import numpy as np
def renyi_subsampled_gaussian(q, sigma, alpha):
    return 2 * q ** 2 * alpha / sigma ** 2
class BudgetTracker:
    def __init__(self, alpha, target_epsilon):
        self.alpha, self.target_epsilon, self.epsilon = alpha, target_epsilon, 0.0
    def step(self, q, sigma):
        self.epsilon = self.epsilon + renyi_subsampled_gaussian(q, sigma, self.alpha)  # <-
        return self.epsilon < self.target_epsilon
""",
        # jax: the ε reported is a sum of per-step RDP
        """
import jax.numpy as jnp
from dp_accounting.rdp import compute_rdp
def report(q, sigmas, alpha, logger):
    eps = sum(compute_rdp(q, s, 1, [alpha])[0] for s in sigmas)  # <-
    logger.log({"epsilon": float(jnp.asarray(eps))})
    return eps
""",
        # the cost goes through a local name and an attribute
        """
import tensorflow as tf
from rdp_utils import compute_rdp_single_order
class DPClient:
    def __init__(self, alpha):
        self.alpha, self.privacy_eps = alpha, 0.0
    def train_round(self, q, noise_multiplier, grads):
        noisy = [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier) for g in grads]
        round_cost = compute_rdp_single_order(q, noise_multiplier, self.alpha)
        self.privacy_eps += round_cost  # <-
        return noisy, self.privacy_eps
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._converted: set[str] | None = None

    def _converted_names(self) -> set[str]:
        """Names and attribute tails that enter a conversion call or a ``… log(…) …`` expression."""
        if self._converted is None:
            out: set[str] = set()
            for node in walk(self.ctx.module):
                if isinstance(node, cst.Call) and words(call_name(node)) & _CONVERSION_WORDS:
                    for arg in node.args:
                        out.update(self._tails(arg.value))
                elif isinstance(node, cst.BinaryOperation) and any(
                        isinstance(s, cst.Call) and call_name(s) in ("log", "log1p") for s in walk(node)):
                    out.update(self._tails(node))
            self._converted = out
        return self._converted

    @staticmethod
    def _tails(expr: cst.CSTNode) -> set[str]:
        return {r.rsplit(".", 1)[-1] for r in value_refs(expr)}

    def _rdp_names(self, fn: cst.FunctionDef) -> set[str]:
        """Locals and attributes of ``fn`` holding a value computed by an RDP-named call."""
        names: set[str] = set()
        assigns = [n for n in walk(fn.body) if isinstance(n, (cst.Assign, cst.AugAssign))]
        for _ in range(3):
            before = len(names)
            for node in assigns:
                value = node.value
                if not self._from_rdp(value, names):
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for t in targets:
                    name = dotted(t)
                    if name is not None:
                        names.add(name)
            if len(names) == before:
                break
        return names

    @staticmethod
    def _from_rdp(value: cst.BaseExpression, names: set[str]) -> bool:
        """``value`` is computed by an RDP-named call or from a name holding one, and no conversion
        call (``get_privacy_spent(orders, rdp, δ)``) turns it into ε on the way."""
        if any(isinstance(sub, cst.Call) and words(call_name(sub)) & _CONVERSION_WORDS for sub in walk(value)):
            return False
        for sub in walk(value):
            if isinstance(sub, cst.Call) and _rdp_call(call_name(sub)):
                return True
        return bool(value_refs(value) & names)

    def visit_Return(self, node: cst.Return) -> None:
        """(h44-2) A function named for ε (``_epsilon_from_params``, ``compute_eps``) returning the closed-form
        ``steps * q ** 2 / (2 * sigma ** 2)``: an RDP-like moment with no order and no δ, reported as ε."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if node.value is None or fn is None or not words(fn.name.value) & _EPS_WORDS \
                or words(fn.name.value) & (_RDP_WORDS | {"target", "budget"}):
            return
        if _closed_form_rdp(node.value) is None or not fa.in_dp_context(node):
            return
        self.report(node.value, f"`{fn.name.value}` returns `{' '.join(fa.code(node.value).split())[:60]}` as ε: "
                                "steps·q²/(2σ²) is the small-q Rényi/moments cost of the subsampled Gaussian at "
                                "one order, with no log(1/δ)/(α − 1) term and no δ at all, so it is not an "
                                "(ε, δ) guarantee and under-states ε by orders of magnitude; compute the RDP over "
                                "orders and convert it (ε = min_α ρ(α) + log(1/δ)/(α − 1)), or refuse without an "
                                "accountant")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        rdp = None
        for sub in walk(node.body):
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                target, value = sub.target, sub.value
            elif isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                target, value = sub.targets[0].target, sub.value
                name = dotted(target)
                summed = isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
                    and name is not None and name in value_refs(value)
                if not summed and not (isinstance(value, cst.Call) and call_name(value) == "sum"):
                    continue
            else:
                continue
            name = dotted(target)
            if not _eps_target(name) or self.ctx.analysis.enclosing_function(sub) is not node:
                continue
            if rdp is None:
                rdp = self._rdp_names(node)
            increment = value
            if not self._from_rdp(increment, rdp - {name}):
                continue
            if name.rsplit(".", 1)[-1] in self._converted_names():
                continue
            if not self.ctx.analysis.in_dp_context(sub):
                continue
            self.report(sub, f"`{name}` adds up Rényi-DP costs (at one order α) but is named and used as ε, and "
                             "it never goes through an RDP→(ε, δ) conversion: the reported/compared ε omits "
                             "log(1/δ)/(α − 1) (1.6 for α = 8, δ = 1e-5), so the privacy loss is under-stated; "
                             "convert the summed RDP before comparing or reporting it")
