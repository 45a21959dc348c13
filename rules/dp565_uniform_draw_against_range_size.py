"""DP565: a uniform [0,1) draw is compared with a range size (>= 2), so the randomiser's branch never (or always) runs."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule

#: calls that draw uniformly from [0, 1) when given no bounds (a size argument at most)
_UNIT_DRAWS = frozenset({"random", "random_sample", "rand", "ranf", "sample", "uniform"})
#: calls whose argument is the size of an integer range (``randint(0, g - 1)``, ``choice(g)``)
_RANGE_CALLS = frozenset({"randint", "integers", "randrange", "choice"})


def _unit_draw(node: cst.BaseExpression) -> bool:
    """``np.random.random()``, ``random.random()``, ``rng.random(n)``, ``np.random.rand(n)``,
    ``np.random.uniform()`` / ``uniform(0, 1)`` / ``uniform(size=n)``."""
    if not isinstance(node, cst.Call):
        return False
    name = call_name(node)
    if name not in _UNIT_DRAWS:
        return False
    if name == "sample":
        # ``random.sample(population, k)`` is not a unit draw; ``random_sample`` is
        return False
    if name == "uniform":
        pos = [a for a in node.args if a.keyword is None]
        if not pos:
            return True
        lits = [a.value for a in pos[:2]]
        return (len(lits) == 2 and all(isinstance(v, (cst.Integer, cst.Float)) for v in lits)
                and float(lits[0].value) == 0.0 and float(lits[1].value) == 1.0)  # type: ignore[union-attr]
    if name == "random" and isinstance(node.func, cst.Name):
        return not node.args  # ``from random import random``
    return True


def _strip_offset(node: cst.BaseExpression) -> cst.BaseExpression:
    """``g - 1`` / ``g + 1`` -> ``g``."""
    while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)) \
            and isinstance(node.right, cst.Integer):
        node = node.left
    return node


class UniformDrawAgainstRangeSize(Rule):
    id = "DP565"
    name = "uniform-draw-against-range-size"
    category = "general"
    severity = "error"
    summary = ("a uniform [0,1) draw is compared with an integer range size (the hash range g, the domain size, "
               "a literal >= 2) instead of a probability, so the randomiser's perturbation branch never runs")
    rationale = (
        "Randomised response and its hashed variants (OLH, GRR, unary encoding) keep the true value with "
        "probability p and perturb it otherwise: `if u < p: keep else: perturb` with `u` uniform in [0,1). "
        "When the draw is compared with the range size instead (`if u > g:` where `g` is the hash range, "
        "`random() < d` with `d` the domain size, a literal 2), the test is constant: a [0,1) number is never "
        "above an integer >= 1, so every user reports the true (hashed) value and the claimed ε-LDP does not "
        "hold, although the estimator still debiases as if it did. Reported: a comparison of a uniform [0,1) "
        "draw (a direct call or an element of an array of such draws made in the same function) with an integer "
        "literal >= 2, or with a name/attribute the same code uses as a range size (the modulus of a hash, the "
        "bound of `randint`/`choice`). Not reported: a comparison with the keep probability p/q or any value "
        "not used as a range, `uniform(a, b)` with other bounds, code with no DP context. Fix: compare the "
        "draw with the keep probability (`u < p`)."
    )
    TRIGGERS = ("random", "rand", "uniform")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.called & _UNIT_DRAWS)

    VALID = (
        # twin: OLH keeps the hashed value with probability p and perturbs otherwise
        """
import numpy as np, xxhash
class OLH:
    def __init__(self, epsilon):
        self.ee = np.exp(epsilon)
        self.g = int(round(self.ee)) + 1
        self.p = self.ee / (self.ee + self.g - 1)
    def report(self, values):
        u = np.random.random_sample(len(values))
        out = []
        for i, v in enumerate(values):
            h = xxhash.xxh32(str(v), seed=i).intdigest() % self.g
            if u[i] > self.p:
                r = np.random.randint(0, self.g - 1)
                out.append(r + 1 if r >= h else r)
            else:
                out.append(h)
        return out
""",
        # twin: GRR with the keep probability
        """
import random, math
def grr(value, domain_size, epsilon):
    p = math.exp(epsilon) / (math.exp(epsilon) + domain_size - 1)
    if random.random() < p:
        return value
    other = random.randrange(domain_size - 1)
    return other if other < value else other + 1
""",
        # ML: dropout / augmentation probability compared with a draw, epochs compared with ints
        """
import numpy as np
def augment(x, epoch, n_classes, eps=1e-8, noise_std=0.1):
    if np.random.rand() < 0.5:
        x = x[:, ::-1]
    label = np.random.randint(0, n_classes)
    if epoch > n_classes:
        x = x + np.random.normal(0, noise_std, x.shape)
    return x / (x.std() + eps), label
""",
        # a uniform draw in another interval compared with a bound of that interval
        """
import numpy as np
def piecewise(v, epsilon, C):
    u = np.random.uniform(0, C)
    if u < C / 2:
        return v + np.random.laplace(0, 1 / epsilon)
    return np.random.randint(0, C)
""",
        # twin: unary encoding flips each bit with probability q
        """
import numpy as np
def unary_encode(v, d, epsilon):
    q = 1 / (np.exp(epsilon) + 1)
    bits = np.zeros(d)
    bits[v] = 1
    flips = np.random.random(d)
    decoy = np.random.choice(d)
    bits[decoy] = bits[decoy]
    return np.where(flips < 1 - q, bits, 1 - bits)
""",
    )

    INVALID = (
        # OLH perturbation test against the hash range g instead of p
        """
import numpy as np, xxhash
class OLH:
    def __init__(self, epsilon):
        self.ee = np.exp(epsilon)
        self.g = int(round(self.ee)) + 1
        self.p = self.ee / (self.ee + self.g - 1)
    def report(self, values):
        u = np.random.random_sample(len(values))
        out = []
        for i, v in enumerate(values):
            h = xxhash.xxh32(str(v), seed=i).intdigest() % self.g
            if u[i] > self.g:  # <-
                r = np.random.randint(0, self.g - 1)
                out.append(r + 1 if r >= h else r)
            else:
                out.append(h)
        return out
""",
        # GRR keep test against the domain size
        """
import random, math
def grr(value, domain_size, epsilon):
    p = math.exp(epsilon) / (math.exp(epsilon) + domain_size - 1)
    if random.random() < domain_size:  # <-
        return value
    other = random.randrange(domain_size - 1)
    return other if other < value else other + 1
""",
        # a literal 2 where 1/2 was meant: the coin always lands on the truthful side
        """
import numpy as np
def randomized_response(bit, epsilon):
    if np.random.rand() > 2:  # <-
        return 1 - bit if np.random.rand() > np.exp(epsilon) / (1 + np.exp(epsilon)) else bit
    return bit
""",
        # unary encoding flips bits against the domain size d (used as the choice bound), not q
        """
import numpy as np
def unary_encode(v, d, epsilon):
    q = 1 / (np.exp(epsilon) + 1)
    bits = np.zeros(d)
    bits[v] = 1
    flips = np.random.random(d)
    decoy = np.random.choice(d)
    bits[decoy] = bits[decoy]
    return np.where(flips < d, bits, 1 - bits)  # <-
""",
    )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                            cst.GreaterThanEqual)):
            return
        left, right = node.left, target.comparator
        for draw_side, other in ((left, right), (right, left)):
            if not self._is_unit_draw(draw_side, node):
                continue
            why = self._range_size(other, node)
            if why:
                self.report(node, f"the uniform [0,1) draw `{self.ctx.analysis.code(draw_side).strip()[:40]}` is "
                                  f"compared with `{self.ctx.analysis.code(other).strip()[:30]}`, {why}; the test "
                                  "is constant, so the perturbation branch never runs and values are reported "
                                  "unperturbed; compare the draw with the keep probability")
                return

    # -- helpers -------------------------------------------------------------------------------------------
    def _function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        cur = self.ctx.analysis.parent(node)
        while cur is not None and not isinstance(cur, cst.FunctionDef):
            cur = self.ctx.analysis.parent(cur)
        return cur

    def _is_unit_draw(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        if _unit_draw(expr):
            return True
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        if not isinstance(base, cst.Name):
            return False
        func = self._function(at)
        if func is None:
            return False
        for sub in walk(func.body):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 \
                    and isinstance(sub.targets[0].target, cst.Name) \
                    and sub.targets[0].target.value == base.value:
                return _unit_draw(sub.value)
        return False

    def _range_size(self, expr: cst.BaseExpression, at: cst.CSTNode) -> str:
        if isinstance(expr, cst.Integer) and expr.evaluated_value >= 2:
            return "an integer that a [0,1) number never reaches"
        if isinstance(expr, cst.Name):
            scope = self._function(at)
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            scope = self.ctx.module
        else:
            return ""
        if scope is None:
            return ""
        code = self.ctx.analysis.code(expr).strip()
        code_of = self.ctx.analysis.code
        for sub in walk(scope):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Modulo) \
                    and type(sub.right) is type(expr) and code_of(sub.right).strip() == code:
                return "which the code uses as a range size (the modulus of a hash)"
            if isinstance(sub, cst.Call) and call_name(sub) in _RANGE_CALLS:
                for a in sub.args:
                    v = _strip_offset(a.value)
                    if type(v) is type(expr) and code_of(v).strip() == code:
                        return f"which the code uses as a range size (the bound of `{call_name(sub)}`)"
        return ""
