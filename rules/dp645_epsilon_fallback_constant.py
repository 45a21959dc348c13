"""DP645: an ε computation that fails reports a made-up constant instead of failing."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import last_name, walk, words
from dpcheck.rule import Rule

#: words of a function (or a variable) that computes the privacy loss spent
_EPSILON_WORDS = frozenset({"eps", "epsilon", "epsilons", "privacy", "rdp", "dp", "zcdp", "spent", "budget"})
#: words of a function that computes something the ε is only an input of (a noise level, a loss)
_NOT_LOSS_WORDS = frozenset({"noise", "sigma", "multiplier", "loss", "norm", "optimizer", "lr", "std", "scale"})


def _constant(expr: cst.BaseExpression | None) -> float | None:
    """A finite positive number literal (``3.0``, ``10``); not ``0``, ``None``, ``inf`` or ``nan``."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        value = float(expr.evaluated_value)
        return value if value > 0 else None
    return None


def _loss_named(name: str | None) -> bool:
    pieces = words(name or "")
    return bool(pieces & _EPSILON_WORDS) and not pieces & _NOT_LOSS_WORDS


class EpsilonFallbackConstant(Rule):
    id = "DP645"
    name = "epsilon-fallback-constant"
    category = "general"
    severity = "error"
    summary = ("an ε computation that raises is caught and a made-up constant ε is returned (`except: return "
               "3.0`): the run reports a privacy level nothing computed")
    rationale = (
        "The ε an accountant computes is the only evidence of the guarantee a run reports. When the "
        "computation fails (a version mismatch of the accountant, an order out of range, a bad argument) and "
        "the handler returns a fixed number, the run logs and stores that number as its privacy level: it may "
        "be far below the real loss, and nothing says it was invented. Reported: an `except` handler in a "
        "function named for computing ε (`compute_epsilon`, `get_privacy_spent`, `rdp_to_dp`) that returns a "
        "positive number literal, or assigns one to an ε name the function then returns. Bad: "
        "`try: eps = accountant.get_epsilon(delta) except Exception: return 3.0`. Good: let the error "
        "propagate, or return `float('inf')`/`None` so the caller cannot mistake it for a guarantee. Not "
        "reported: a handler that returns `0`, `None`, `inf` or re-raises, functions computing a noise level, "
        "a loss or a step size (whose `eps` is a constant), and handlers outside a function. Fix: re-raise, or "
        "report ε as unknown (`float('inf')`)."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` with a handler in a function named for ε."""
        for fn in facts.nodes(ast.FunctionDef):
            if _loss_named(fn.name) and any(isinstance(n, ast.ExceptHandler) for n in ast.walk(fn)):
                return True
        return False

    VALID = (
        # twin of the literal fallback: ε is reported as unknown (infinite), which no one mistakes for a guarantee
        """
def compute_epsilon(accountant, delta):
    try:
        return accountant.get_epsilon(delta=delta)
    except ValueError:
        return float("inf")
""",
        # the handler re-raises with context
        """
def privacy_spent(orders, rdp, delta):
    try:
        eps, _ = get_privacy_spent(orders, rdp, target_delta=delta)
    except Exception as err:
        raise RuntimeError("accountant failed") from err
    return eps
""",
        # ordinary ML: a numeric-stability eps in a normaliser's fallback
        """
import numpy as np
def safe_std(x, eps=1e-8):
    try:
        return float(np.std(x)) + eps
    except TypeError:
        return 1.0
""",
        # a noise level, not a privacy loss: the fallback is a sigma the caller then accounts
        """
def find_noise_multiplier(target_eps, delta, q, steps):
    try:
        return calibrate_sigma(target_eps, delta, q, steps)
    except ValueError:
        return 1.1
""",
        # None: the caller sees that no ε was computed
        """
def rdp_to_dp(rdp, orders, delta):
    try:
        return min(r + math.log(1 / delta) / (a - 1) for r, a in zip(rdp, orders))
    except Exception:
        return None
""",
    )
    INVALID = (
        # the literal fallback returned from the handler
        """
def compute_epsilon(accountant, delta):
    try:
        return accountant.get_epsilon(delta=delta)
    except Exception as err:
        print("epsilon failed", err)
        return 3.0  # <-
""",
        # the fallback assigned to the ε the function then returns
        """
def get_privacy_spent(engine, delta):
    try:
        epsilon = engine.accountant.get_epsilon(delta)
    except (ValueError, AttributeError):
        epsilon = 8.0  # <-
    return epsilon
""",
        # a method of a privacy tracker
        """
class Tracker:
    def epsilon_spent(self, delta):
        try:
            eps, _ = self.accountant.get_privacy_spent(target_delta=delta)
        except Exception:
            return 10  # <-
        return eps
""",
        # an RDP-to-DP conversion that swallows its error
        """
import math
def rdp_to_dp(rdp, orders, delta):
    try:
        return min(r + math.log(1 / delta) / (a - 1) for r, a in zip(rdp, orders))
    except Exception:
        return 1.0  # <-
""",
    )

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not _loss_named(fn.name.value):
            return
        if any(isinstance(n, cst.Raise) for n in walk(node.body, into_scopes=False)):
            return
        returned = {last_name(n.value) for n in walk(fn, into_scopes=False)
                    if isinstance(n, cst.Return) and n.value is not None and last_name(n.value)}
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Return) and _constant(sub.value) is not None:
                self._report(sub, fa.code(sub.value).strip())
            elif isinstance(sub, cst.Assign) and _constant(sub.value) is not None and any(
                    isinstance(t.target, cst.Name) and t.target.value in returned and _loss_named(t.target.value)
                    for t in sub.targets):
                self._report(sub, fa.code(sub.value).strip())

    def _report(self, node: cst.CSTNode, value: str) -> None:
        self.report(node, f"when the ε computation fails this handler reports the made-up ε `{value}`, which is "
                          "then logged as the run's privacy level though nothing computed it; re-raise, or report "
                          "ε as unknown (`float('inf')`)")
