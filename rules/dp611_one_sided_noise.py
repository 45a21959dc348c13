"""DP611: one-sided noise (an exponential draw, never negative) added to a released value."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.syntax import call_name, dotted, last_name, target_names, walk, words
from dpcheck.rule import Rule

#: draws that are never negative: exponential noise
_ONE_SIDED = frozenset({"exponential", "expovariate", "standard_exponential", "Exponential"})
#: a sum fed to these is report-noisy-max / a ranking: exponential noise there is a correct mechanism
_SELECT = frozenset({"argmax", "argmin", "argsort", "max", "min", "sorted", "sort", "topk", "nlargest", "nsmallest",
                     "top_k", "idxmax", "argpartition", "index"})
#: words saying the draw is privacy noise (its name, the function's, or its scale's)
_NOISE_WORDS = frozenset({"noise", "noisy", "perturb", "perturbed", "perturbation", "private", "privatize",
                          "privatise", "privatized", "dp", "sanitize", "sanitized", "privacy", "privatizer"})
_SCALE_WORDS = frozenset({"eps", "epsilon", "sensitivity", "sens", "budget", "privacy"})
#: a random sign makes the draw symmetric (Laplace as sign·Exp)
#: a file, folder, class or function named for DP (``privatizers/``, ``dp-pix/``, ``exponential_mechanism.py``)
_DP_PLACE_WORDS = frozenset({"dp", "ldp", "private", "privacy", "priv", "differential", "privatizer", "privatizers",
                             "privatize", "privatise", "mechanism", "mechanisms", "sanitizer", "sanitize"})
_SIGN_CALLS = frozenset({"choice", "sign", "randint", "integers", "bernoulli", "binomial", "rademacher"})


def _draw(expr: cst.BaseExpression) -> cst.Call | None:
    """``np.random.exponential(b)``, ``rng.exponential(b, n)[0]``, ``Exponential(rate).sample()``, ``k * draw``."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
            left, right = _draw(expr.left), _draw(expr.right)
            return left or right
        elif isinstance(expr, cst.Call) and call_name(expr) in ("float", "item", "sample", "rsample") and \
                isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Call):
            expr = expr.func.value
        elif isinstance(expr, cst.Call) and call_name(expr) == "float" and len(expr.args) == 1:
            expr = expr.args[0].value
        else:
            break
    if isinstance(expr, cst.Call) and call_name(expr) in _ONE_SIDED:
        root = (dotted(expr.func) or "").split(".")
        if root[0] in ("jax", "jr") or "jax" in root:
            return expr  # jax.random.exponential(key, shape) is one-sided too
        return expr
    return None


def _signed(expr: cst.BaseExpression) -> bool:
    """A product with a random sign (``sign * exp``, ``np.random.choice([-1, 1]) * exp``)."""
    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) in _SIGN_CALLS:
            return True
        if isinstance(n, cst.Name) and words(n.value) & {"sign", "signs", "sgn"}:
            return True
    return False


class OneSidedNoise(Rule):
    id = "DP611"
    name = "one-sided-noise"
    category = "laplace_noise"
    severity = "error"
    summary = "exponential (never negative) noise is added to the released value: one-sided noise gives no DP guarantee"
    rationale = (
        "An Exponential draw is never negative, so `value + np.random.exponential(b)` is always at least the true "
        "value: the support of the release starts at f(D), and an output between f(D') and f(D) is possible "
        "under the neighbour D' but impossible under D, so ε is infinite. The Laplace mechanism is the "
        "*difference* of two exponentials (or an exponential times a random sign). Reported: a one-sided draw "
        "(`exponential`, `expovariate`, `Exponential(...).sample()`, possibly scaled) added to a value, directly, "
        "through one local name, or with `+=`, when the draw's name, scale or function says it is privacy noise. "
        "Not reported: report-noisy-max (the noisy scores go to an argmax/max/sort, where exponential noise is a "
        "correct mechanism), the difference of two exponential draws, a draw times a random sign, waiting times "
        "of a simulation, code with no DP context. Fix: draw Laplace noise (`np.random.laplace(0, Δ/ε)`)."
    )
    TRIGGERS = ("xponential", "expovariate")
    #: the DP context is checked in the visitor: a file, folder, class or function named for DP counts too, since
    #: a mechanism module of its own (``noise.py`` of ``dp-pix/``) often names no budget
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return any(ast_call_name(c) in _ONE_SIDED for c in facts.calls)

    def _dp_place(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        if fa.in_dp_context(node):
            return True
        parts = re.split(r"[\\/]", self.ctx.path or "")[-3:]
        if any(words(re.sub(r"[@+.-]", "_", p)) & _DP_PLACE_WORDS for p in parts):
            return True
        cur = fa.parent(node)
        while cur is not None:
            if isinstance(cur, (cst.FunctionDef, cst.ClassDef)) and words(cur.name.value) & _DP_PLACE_WORDS:
                return True
            cur = fa.parent(cur)
        return False

    VALID = (
        # the twin: Laplace noise as the difference of two exponentials
        """
import numpy as np
def noisy_count(data, epsilon):
    b = 1.0 / epsilon
    noise = np.random.exponential(b) - np.random.exponential(b)
    return len(data) + noise
""",
        # an exponential magnitude with a random sign is Laplace
        """
import numpy as np
def privatize(value, sensitivity, epsilon):
    sign = np.random.choice([-1, 1])
    noise = sign * np.random.exponential(sensitivity / epsilon)
    return value + noise
""",
        # report-noisy-max with exponential noise is a correct selection mechanism
        """
import numpy as np
def noisy_max(scores, epsilon, sensitivity):
    noisy = scores + np.random.exponential(2 * sensitivity / epsilon, len(scores))
    return int(np.argmax(noisy))
""",
        """
import numpy as np
def select(candidates, utility, epsilon):
    return max(candidates, key=lambda c: utility(c) + np.random.exponential(2 / epsilon))
""",
        # sparse vector with exponential noise: the noisy values are only compared with a noisy threshold
        """
import numpy as np
def sparse_vector_exp(q, epsilon, k, threshold):
    noisy_threshold = threshold + np.random.exponential(2.0 / epsilon)
    out = []
    for i in range(len(q)):
        noisy_q = q[i] + np.random.exponential(4 * k / epsilon)
        if noisy_q >= noisy_threshold:
            out.append(i)
    return out
""",
        # noisy top-k: the noisy scores (with a noisy threshold prepended) are ranked
        """
import numpy as np
def hybrid_topk(q, epsilon, k, t):
    q0 = t + np.random.exponential(scale=2 * k / epsilon)
    noisy_q = q + np.random.exponential(scale=2 * k / epsilon, size=len(q))
    noisy_q = np.insert(noisy_q, 0, q0)
    return np.argpartition(noisy_q, -k)[-k:]
""",
        # waiting times of a simulation, next to DP code
        """
import numpy as np
def simulate_arrivals(rate, horizon, epsilon):
    t, events = 0.0, []
    while t < horizon:
        t += np.random.exponential(1.0 / rate)
        events.append(t)
    return events, epsilon
""",
        # an exponential prior on a hyper-parameter in ordinary ML code
        """
import numpy as np
def init_lengthscale(dim, seed=0):
    rng = np.random.default_rng(seed)
    return 1.0 + rng.exponential(1.0, dim)
""",
        # diffusion timesteps drawn from an exponential, with an ML eps
        """
import torch
def sample_sigma(batch, eps=1e-5):
    sigma = torch.distributions.Exponential(torch.tensor(1.0)).sample((batch,))
    return sigma + eps
""",
    )

    INVALID = (
        # a privatizer adds an exponential draw: the answer never goes below the truth
        """
import numpy as np
class ExponentialPrivatizer:
    def __init__(self, epsilon):
        self._scale = 1.0 / epsilon
    def privatize(self, value):
        noise = np.random.exponential(self._scale, 1)[0]
        return float(value) + noise  # <-
""",
        # the same noise value of Exponential(1) added to every bin of a histogram
        """
import numpy as np
import pandas as pd
def noisy_histogram(df, epsilon):
    counts = df["country"].value_counts()
    exponential_noise = np.random.exponential(1)
    return counts + exponential_noise  # <-
""",
        # an image mechanism's exponential option, scaled by a factor
        """
import numpy as np
def add_exponential_noise(img, scale, noise_factor=1):
    noise = noise_factor * np.random.exponential(scale, img.shape)
    return img + noise  # <-
def dp_pixelate(img, m, eps):
    return add_exponential_noise(img, m / eps)
""",
        # inline, with the budget in the scale
        """
import numpy as np
def dp_sum(values, sensitivity, epsilon):
    return sum(values) + np.random.exponential(sensitivity / epsilon)  # <-
""",
        # accumulated in place, torch spelling
        """
import torch
def perturb(update, epsilon):
    update += torch.distributions.Exponential(torch.tensor(epsilon)).sample(update.shape)  # <-
    return update
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _ONE_SIDED:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node) or self.ctx.module
        if not self._dp_place(node):
            return
        # climb to the full noise expression: scaling, indexing, ``.sample()``
        expr: cst.CSTNode = node
        parent = fa.parent(expr)
        while parent is not None:
            if isinstance(parent, cst.Subscript) and parent.value is expr or \
                    isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
                pass
            elif isinstance(parent, cst.Attribute) and parent.value is expr and parent.attr.value in (
                    "sample", "rsample", "item"):
                pass
            elif isinstance(parent, cst.Call) and (parent.func is expr or call_name(parent) == "float"):
                pass
            elif isinstance(parent, cst.Arg) and isinstance(fa.parent(parent), cst.Call) and \
                    call_name(fa.parent(parent)) == "float":
                pass
            else:
                break
            expr = parent
            parent = fa.parent(expr)
        if isinstance(expr, cst.BaseExpression) and _signed(expr):
            return
        fn_words = words(fn.name.value) if isinstance(fn, cst.FunctionDef) else frozenset()
        noise_named = bool(fn_words & _NOISE_WORDS) or self._scale_says_noise(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
            other = parent.right if parent.left is expr else parent.left
            self._sum(parent, other, node, noise_named)
        elif isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign):
            target = last_name(parent.target) or ""
            if noise_named or words(target) & _NOISE_WORDS:
                self._report(parent, node)
        elif isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target,
                                                                                         cst.Name):
            name = parent.targets[0].target.value
            named = noise_named or bool(words(name) & _NOISE_WORDS)
            for use in walk(fn, into_scopes=False):
                if not (isinstance(use, cst.Name) and use.value == name) or fa.line_of(use) <= fa.line_of(parent):
                    continue
                up = fa.parent(use)
                if isinstance(up, cst.BinaryOperation) and isinstance(up.operator, cst.Subtract):
                    return  # ``noise - other_draw``: the difference of two exponentials (Laplace)
                if isinstance(up, cst.BinaryOperation) and isinstance(up.operator, cst.Multiply) and _signed(up):
                    return
            for use in walk(fn, into_scopes=False):
                if not (isinstance(use, cst.Name) and use.value == name) or fa.line_of(use) <= fa.line_of(parent):
                    continue
                up = fa.parent(use)
                if isinstance(up, cst.BinaryOperation) and isinstance(up.operator, cst.Add):
                    other = up.right if up.left is use else up.left
                    if self._sum(up, other, node, named):
                        return
                elif isinstance(up, cst.AugAssign) and isinstance(up.operator, cst.AddAssign) and named:
                    self._report(up, node)
                    return

    def _scale_says_noise(self, call: cst.Call) -> bool:
        for a in call.args:
            for n in walk(a.value):
                if isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & (_SCALE_WORDS | {"scale"}):
                    return True
        return False

    def _sum(self, add: cst.BinaryOperation, other: cst.BaseExpression, draw: cst.Call, named: bool) -> bool:
        if _draw(other) is not None:
            return False
        if not named:
            return False
        if self._selected(add):
            return False
        self._report(add, draw)
        return True

    def _selected(self, node: cst.CSTNode) -> bool:
        """The noisy value feeds an argmax/max/sort (directly, in a lambda, or through the name it is stored in)."""
        fa = self.ctx.analysis
        cur: cst.CSTNode | None = node
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.SimpleStatementLine)):
            if isinstance(cur, cst.Call) and call_name(cur) in _SELECT:
                return True
            if isinstance(cur, cst.Lambda):
                up = fa.parent(cur)
                if isinstance(up, cst.Arg) and up.keyword is not None and up.keyword.value == "key":
                    return True
            cur = fa.parent(cur)
        stmt = fa.parent(node)
        while stmt is not None and not isinstance(stmt, (cst.Assign, cst.SimpleStatementLine, cst.FunctionDef)):
            stmt = fa.parent(stmt)
        if isinstance(stmt, cst.Assign):
            names: set[str] = set()
            for t in stmt.targets:
                names |= set(target_names(t.target))
            fn = fa.enclosing_function(node) or self.ctx.module
            return bool(names) and self._names_selected(fn, names)
        return False

    def _names_selected(self, fn: cst.CSTNode, names: set[str]) -> bool:
        """A name (or one assigned from it, two steps on) reaches an argmax/sort or a comparison (a sparse-vector
        threshold test): the noisy values are compared, not released."""
        def mentions(expr: cst.CSTNode, pool: set[str]) -> bool:
            return any(isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) in pool for n in walk(expr))

        pool = set(names)
        for _ in range(2):
            for node in walk(fn, into_scopes=False):
                if isinstance(node, cst.Assign) and mentions(node.value, pool):
                    for t in node.targets:
                        pool |= set(target_names(t.target))
        for node in walk(fn, into_scopes=False):
            if isinstance(node, cst.Call) and call_name(node) in _SELECT and any(
                    mentions(a.value, pool) for a in node.args):
                return True
            if isinstance(node, cst.Attribute) and node.attr.value in _SELECT and dotted(node.value) in pool:
                return True
            if isinstance(node, cst.Comparison) and mentions(node, pool):
                return True
        return False

    def _report(self, at: cst.CSTNode, draw: cst.Call) -> None:
        fa = self.ctx.analysis
        self.report(at, f"`{fa.code(draw).strip()}` is never negative, so the released value is always at least the "
                        f"true one and its support moves with the data: one-sided noise gives no ε; draw Laplace "
                        f"noise (the difference of two exponentials, or an exponential with a random sign)")
