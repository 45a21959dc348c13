"""DP128: a bound or sensitivity computed from the same operand twice (``max(a, a)``, ``x.max() - x.max()``)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: two-argument calls that pick one end of their arguments: ``max(a, b)``, ``np.maximum(a, b)``
_PICK = frozenset({"max", "min", "maximum", "minimum", "fmax", "fmin"})
#: calls whose two evaluations differ (random draws, clocks, iterators, I/O): ``rand() - rand()`` is not zero
_IMPURE_WORDS = frozenset({"rand", "randn", "random", "randint", "normal", "laplace", "gauss", "gaussian",
                           "uniform", "sample", "choice", "noise", "draw", "shuffle", "permutation",
                           "exponential", "binomial", "poisson", "gumbel", "geometric", "next", "pop", "read",
                           "readline", "time", "perf", "counter", "monotonic", "now", "input", "get", "popleft",
                           "dgauss", "dlaplace", "bernoulli", "multinomial", "beta", "gamma"})
_SPACE = re.compile(r"\s+")


def _impure_call(name: str) -> bool:
    """``random.gammavariate``, ``rng.expovariate``: the stdlib's ``*variate`` draws are one word each."""
    ws = words(name)
    return bool(ws & _IMPURE_WORDS) or any(w.endswith("variate") for w in ws)


def _pure(expr: cst.BaseExpression) -> bool:
    """No call in ``expr`` whose two evaluations could differ, and at least one name (not a literal)."""
    has_name = False
    for sub in walk(expr):
        if isinstance(sub, cst.Call) and _impure_call(call_name(sub) or ""):
            return False
        if isinstance(sub, (cst.Await, cst.Yield, cst.NamedExpr)):
            return False
        if isinstance(sub, cst.Name):
            has_name = True
    return has_name


class DuplicatedOperand(Rule):
    id = "DP128"
    name = "duplicated-operand"
    category = "general"
    severity = "error"
    summary = "a max/min of an operand with itself, or an operand minus itself, in DP code: a copy-paste slip"
    rationale = (
        "A privacy bound built from two end points must read both: `max(delta_upper, delta_lower)` is an upper "
        "bound over an interval, `max(delta_upper, delta_upper)` only looks at one end and can under-state δ or ε. "
        "Likewise a range sensitivity `r.max() - r.min()` written `r.max() - r.max()` is 0, so the Laplace/"
        "Gaussian noise calibrated to it has scale 0 and the released statistic is exact. "
        "Reported in DP code: a two-argument `max`/`min`/`np.maximum`/`np.minimum` whose arguments are the same "
        "expression, and a subtraction of an expression from itself (not random draws, clocks or iterators, whose "
        "two evaluations differ). "
        "Fix: use the other end point, e.g. `max(upper, lower)` or `x.max() - x.min()`."
    )
    TRIGGERS = ("max", "min", "-")
    requires_dp_context = True

    VALID = (
        # broadcasting idiom: `x - x` is a zero array of x's shape (scipy.special does this), not a range
        """
import numpy as np

def laplace_pair(n, x, epsilon):
    n = np.asarray(n + (x - x))
    x = np.asarray(x + (n - n))
    return n + np.random.laplace(0.0, 1.0 / epsilon, np.shape(x))
""",
        # the upper bound over an interval reads both end points
        """
def delta_bound(eps, lo, hi, onestep):
    dq_hi = onestep(hi, eps)
    dq_lo = onestep(lo, eps)
    return max(dq_hi, dq_lo)
""",
        # the range sensitivity of ratings is max minus min
        """
import numpy as np
def noisy_mean(ratings, epsilon):
    sens = ratings.max() - ratings.min()
    return ratings.mean() + np.random.laplace(0, sens / (epsilon * len(ratings)))
""",
        # the difference of two noise draws is not zero (each call draws again)
        """
import numpy as np
def symmetric_noise(scale, epsilon):
    return np.random.laplace(0, scale / epsilon) - np.random.laplace(0, scale / epsilon)
""",
        # distributed Laplace: each party's share is the difference of two independent Gamma draws
        """
import random
def laplace_share(sensitivity, epsilon, num_clients):
    scale = sensitivity / epsilon
    return random.gammavariate(1 / num_clients, scale) - random.gammavariate(1 / num_clients, scale)
""",
        # the accountant combines two RDP curves elementwise
        """
import numpy as np
def rdp_upper(orders, rdp_a, rdp_b, delta):
    rdp = np.maximum(rdp_a, rdp_b)
    return np.min(rdp - np.log(delta) / (orders - 1))
""",
        # (fix46-QB) a dict of zeros in the shape of the model's weights, to start a control variate
        """
import copy
def init_control(model, noise_multiplier):
    zero = model.get_weights()
    for k in zero:
        zero[k] = zero[k] - zero[k]
    return copy.deepcopy(zero)
""",
        # ordinary ML code: a max of two different losses, a Huber delta, Adam's eps
        """
import torch
def loss(pred, target, delta=1.0, eps=1e-8):
    a = torch.nn.functional.huber_loss(pred, target, delta=delta)
    b = (pred - target).abs().mean()
    return max(a, b) / (b + eps)
""",
    )

    INVALID = (
        # shuffle amplification: the upper-bound branch takes one end point twice
        """
\"\"\"Differential privacy amplification by shuffling of eps0-LDP local randomizers.\"\"\"
def amplified_delta(eps, eps0, lo, hi, onestep, upperbound=True):
    dq_hi = onestep(hi, eps, eps0)
    dq_lo = onestep(lo, eps, eps0)
    if upperbound:
        return max(dq_hi, dq_hi)  # <-
    return min(dq_hi, dq_lo)
""",
        # the rating-range sensitivity is max minus max: zero, so the Laplace noise vanishes
        """
import numpy as np
def private_average(df, epsilon):
    sensitivity = df.values.max() - df.values.max()  # <-
    return df.values.mean() + np.random.laplace(0, sensitivity / epsilon)
""",
        # numpy's elementwise maximum with the same array twice, in a privacy accountant
        """
import numpy as np
def rdp_upper(orders, rdp_a, rdp_b, delta):
    rdp = np.maximum(rdp_a, rdp_a)  # <-
    return np.min(rdp - np.log(delta) / (orders - 1))
""",
        # a clip bound taken as the min of the same norm twice (the public bound was meant)
        """
import torch
def clip_and_noise(grad, max_norm, noise_multiplier):
    norm = grad.norm()
    bound = torch.minimum(norm, norm)  # <-
    grad = grad * (bound / (norm + 1e-6))
    return grad + torch.normal(0, noise_multiplier * max_norm, grad.shape)
""",
        # (fix46-QB twin) the sensitivity is a subscripted range written max minus max, assigned elsewhere
        """
import numpy as np
def noisy_column_means(cols, epsilon):
    sens = {}
    for k in cols:
        sens[k] = cols[k].max() - cols[k].max()  # <-
    return {k: cols[k].mean() + np.random.laplace(0, sens[k] / epsilon) for k in cols}
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _PICK or len(node.args) != 2:
            return
        a, b = node.args
        if a.keyword is not None or b.keyword is not None or a.star or b.star:
            return
        self._check(node, a.value, b.value, f"`{call_name(node)}` of the same operand twice")

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        # a bare name minus itself (`x - x`) is the usual zeros-of-the-same-shape / NaN-propagating idiom
        if isinstance(node.operator, cst.Subtract) and not isinstance(node.left, cst.Name) \
                and not self._zeroing_in_place(node):
            self._check(node, node.left, node.right, "an operand minus itself (always 0)")

    def _zeroing_in_place(self, node: cst.BinaryOperation) -> bool:
        """``z[k] = z[k] - z[k]``, ``w.data = w.data - w.data``: the operand is overwritten with zeros of its own
        shape (initialising a control variate or an accumulator), not a bound or a sensitivity."""
        stmt = self.ctx.analysis.parent(node)
        if not isinstance(stmt, cst.Assign) or stmt.value is not node:
            return False
        operand = _SPACE.sub("", self.ctx.analysis.code(node.left))
        return any(_SPACE.sub("", self.ctx.analysis.code(t.target)) == operand for t in stmt.targets)

    def _check(self, node: cst.CSTNode, a: cst.BaseExpression, b: cst.BaseExpression, what: str) -> None:
        fa = self.ctx.analysis
        ca, cb = _SPACE.sub("", fa.code(a)), _SPACE.sub("", fa.code(b))
        if ca != cb or not _pure(a):
            return
        self.report(node, f"{what}: `{fa.code(node)}` — a copy-paste slip; a bound or sensitivity that should "
                          f"combine two different end points reads only one of them, so the noise or the "
                          f"reported ε/δ is wrong")
