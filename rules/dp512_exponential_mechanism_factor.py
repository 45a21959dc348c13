"""DP512: exponential-mechanism weights ``exp(ε·u/Δ)`` without the factor 2 in the denominator."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, number, walk, words
from dpcheck.rule import Rule

_EPS = re.compile(r"(eps|epsilon)\d*")
_WEIGHT_CALLS = frozenset({"exp", "softmax", "log_softmax"})
#: what turns weights into a draw: a sum to normalise by, a categorical sampler
_SAMPLER_CALLS = frozenset({"sum", "logsumexp", "choice", "choices", "multinomial", "categorical", "random_pick",
                            "searchsorted", "cumsum", "Categorical", "sample", "softmax"})
#: what draws one candidate (an accountant that only computes the output distribution draws nothing)
_DRAW_CALLS = frozenset({"choice", "choices", "multinomial", "categorical", "random_pick", "Categorical", "sample",
                         "rand", "random", "uniform", "randint", "gumbel", "argmax"})


def _eps_name(name: str | None) -> bool:
    if name is None:
        return False
    pieces = words(name)
    return any(_EPS.fullmatch(w) for w in pieces) and not pieces & {"half", "per", "each"}


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The multiplicative factors of ``expr`` (numerator and denominator alike), unary minus dropped."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _factors(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _ast_factors(expr: ast.AST) -> list[ast.AST]:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _ast_factors(expr.operand)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return _ast_factors(expr.left) + _ast_factors(expr.right)
    return [expr]


def _ast_named_eps(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return _eps_name(name)


def _ast_candidate(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in _WEIGHT_CALLS or not call.args:
        return False
    factors = _ast_factors(call.args[0])
    return len(factors) >= 2 and any(_ast_named_eps(f) for f in factors)


_E_NAMES = frozenset({"e", "E"})
#: a docstring saying the scores are counts (a monotone utility)
_COUNT_DOC = re.compile(r"\b(counts?|frequenc(?:y|ies)|histogram)\b")
_SENS = frozenset({"sens", "sensitivity", "delta", "du", "deltau", "delta_u"})


def _ast_exponent(node: ast.AST) -> ast.AST | None:
    """The exponent of ``exp(x)``, ``pow(np.e, x)``, ``math.e ** x``."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name == "exp":
            return node.args[0]
        if name == "pow" and len(node.args) == 2:
            base = node.args[0]
            base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            return node.args[1] if base_name in _E_NAMES else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base = node.left
        base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        return node.right if base_name in _E_NAMES else None
    return None


def _ast_precedence(exponent: ast.AST) -> bool:
    """``eps * u / 2 * sens`` or ``eps * u / 1 * 2``: a product whose left side is an unparenthesised division,
    the right a 2 or a sensitivity (meant as part of the denominator), with an ε in the division."""
    for sub in ast.walk(exponent):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult) and isinstance(sub.left, ast.BinOp) \
                and isinstance(sub.left.op, ast.Div):
            right = sub.right
            rname = right.id if isinstance(right, ast.Name) else right.attr if isinstance(right, ast.Attribute) \
                else None
            doubled = isinstance(right, ast.Constant) and right.value == 2 or (
                rname is not None and bool(words(rname) & _SENS))
            if doubled and any(_ast_named_eps(n) for n in ast.walk(sub.left.left)):
                return True
    return False


def _cst_exponent(node: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(node, cst.Call) and node.args:
        name = call_name(node)
        if name == "exp":
            return node.args[0].value
        if name == "pow" and len(node.args) == 2 and last_name(node.args[0].value) in _E_NAMES:
            return node.args[1].value
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power) \
            and last_name(node.left) in _E_NAMES:
        return node.right
    return None


def _cst_precedence(exponent: cst.BaseExpression) -> cst.BinaryOperation | None:
    for sub in walk(exponent):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply) \
                and isinstance(sub.left, cst.BinaryOperation) and isinstance(sub.left.operator, cst.Divide) \
                and not sub.left.lpar:
            rname = last_name(sub.right) if isinstance(sub.right, (cst.Name, cst.Attribute)) else None
            doubled = number(sub.right) == 2 or (rname is not None and bool(words(rname) & _SENS))
            if doubled and any(isinstance(n, (cst.Name, cst.Attribute)) and _eps_name(last_name(n))
                               for n in walk(sub.left.left)):
                return sub
    return None


class ExponentialMechanismFactor(Rule):
    id = "DP512"
    name = "exponential-mechanism-factor"
    category = "general"
    severity = "error"
    summary = "exponential-mechanism weights exp(ε·u/Δ) without the factor 2: each selection is 2ε-DP"
    rationale = (
        "The exponential mechanism samples r with probability ∝ exp(ε·u(D, r) / (2Δu)). The 2 "
        "is needed because both the chosen candidate's score and the normalising sum move when one "
        "record changes: with `exp(eps * score / sensitivity)` (or `exp(eps * score)` for Δu = 1) "
        "the ratio of output probabilities on neighbouring data sets reaches e^{2ε}, so the "
        "selection is 2ε-DP while it is charged ε. Reported: an `exp`/`softmax` of a product of "
        "an ε and a score with no factor 2 (or ½) among its factors, whose result is summed "
        "(normalised) or handed to a categorical sampler, in a function that draws a candidate. Not reported: `exp(eps * u / (2 * sens))`, `exp(0.5 * eps * u)`, "
        "an ε already halved or named as a half, a Δ bound to a product with 2, a scorer documented "
        "as monotone (then ε·u/Δ is right), `exp(eps)` alone (randomized response), Laplace "
        "densities (`exp(-eps * abs(x - mu))`), a function that only computes the output distribution "
        "(an accountant of the mechanism draws nothing). Fix: divide by 2Δu, or state and check that the "
        "utility is monotone."
    )
    TRIGGERS = ("exp(", "softmax(", "pow(", "e **", "e**")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an ``exp``/``softmax`` call in a function that draws a candidate, whose argument
        is a product of an ε-named factor and another non-literal factor, with no 2 or ½ among the factors
        and no ``abs``/``norm`` (a Laplace density); the draw is looked for in the whole module-level
        statement around it."""
        from dpcheck.analysis.astfacts import call_name as ast_call_name
        from dpcheck.analysis.astfacts import number as ast_number
        from dpcheck.analysis.astshapes import top_statement

        for node in (*facts.calls, *facts.binops(ast.Pow)):
            exponent = _ast_exponent(node)
            if exponent is not None and _ast_precedence(exponent):
                return True
        for call in facts.calls:
            if not _ast_candidate(call):
                continue
            factors = _ast_factors(call.args[0])
            if any(ast_number(f) in (2.0, 0.5) for f in factors) or not any(
                    ast_number(f) is None and not _ast_named_eps(f) for f in factors) or any(
                    isinstance(n, ast.Call) and ast_call_name(n) in ("abs", "absolute", "fabs", "norm")
                    for n in ast.walk(call.args[0])):
                continue
            if facts.enclosing_function(call) is not None and any(isinstance(n, ast.Call) and (
                    ast_call_name(n) in _DRAW_CALLS or "pick" in ast_call_name(n).lower())
                    for n in ast.walk(top_statement(facts, call))):
                return True
        return False

    VALID = (
        """
import numpy as np
def exponential_mechanism(scores, epsilon, sensitivity):
    weights = np.exp(epsilon * scores / (2 * sensitivity))
    return np.random.choice(len(scores), p=weights / weights.sum())
""",
        """
import numpy as np
def select(scores, eps, rng):
    p = np.exp(0.5 * eps * (scores - scores.max()))
    return rng.choice(len(p), p=p / p.sum())
""",
        # the sensitivity bound to 2Δ before
        """
import numpy as np
def select(qualities, epsilon, n):
    delta_u = 2 * (1.0 / n)
    w = np.exp(epsilon * qualities / delta_u)
    return np.random.choice(len(w), p=w / np.sum(w))
""",
        # a monotone quality (documented): ε·u/Δ is right
        """
import numpy as np
def exp_mech(q, eps, sensitivity, monotonic=True):
    coef = 1.0 if monotonic else 0.5
    scores = coef * eps / sensitivity * q
    p = np.exp(scores - scores.max())
    return np.random.choice(len(q), p=p / p.sum())
""",
        # randomized response
        """
import numpy as np
def grr(value, k, epsilon):
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    return value if np.random.rand() < p else np.random.choice(k)
""",
        # an accountant computing the mechanism's output distribution: nothing is drawn
        """
import numpy as np
def get_delta_em(eps_em, m, n):
    P1 = np.array([np.exp(eps_em * m), np.exp(eps_em * (n - m))])
    P1 = P1 / np.sum(P1)
    P2 = np.array([np.exp(eps_em * (m - 1)), np.exp(eps_em * (n - m))])
    P2 = P2 / np.sum(P2)
    return np.log(P1 / P2)
""",
        # the precedence twins: the denominator parenthesised
        """
import numpy as np
def choose(items, scores, epsilon):
    weights = {k: pow(np.e, epsilon * scores[k] / (1 * 2)) for k in items}
    total = sum(weights.values())
    return np.random.choice(list(items), p=[weights[k] / total for k in items])
""",
        """
import math
def em_weight(u, epsilon, sens):
    return math.e ** (epsilon * u / (2 * sens))
""",
        # Δ = 1: the unparenthesised product is numerically the same
        """
import numpy as np, random
def choose(scores, epsilon):
    sensitivity = 1
    w = {k: np.exp(epsilon * v / 2 * sensitivity) for k, v in scores.items()}
    return random.choices(list(w), list(w.values()))[0]
""",
        # top-k by peeling over counts (documented): a monotone utility needs no factor 2
        """
import numpy as np
def peel_top_k(sorted_counts, eps_step, k):
    '''Select k items from counts sorted in descending order.'''
    w = np.exp(eps_step * sorted_counts) / np.sum(np.exp(eps_step * sorted_counts))
    return np.random.choice(len(sorted_counts), p=w, size=k, replace=False)
""",
        # a Laplace density
        """
import numpy as np
def laplace_pdf(x, mu, epsilon):
    d = np.exp(-epsilon * np.abs(x - mu))
    return d / d.sum()
""",
    )

    INVALID = (
        # FAPrivBayes ExponentMachine.py: exp(eps * score / Δ), normalised by the sum, then sampled
        """
import numpy as np
def exponentSelectB(A, elist, epsilon, n):
    exponent_list = []
    for i in range(len(elist)):
        exponent_list.append(np.exp((elist[i] * epsilon) / ((len(A) - 1) * (6 / n + 4 / (n**2)))))  # <-
    total = sum(exponent_list)
    return random_pick(A, [e / total for e in exponent_list])
""",
        """
import numpy as np
def exponential_mechanism(utility, epsilon, sensitivity=1.0):
    probabilities = np.exp(epsilon * utility / sensitivity)  # <-
    probabilities /= probabilities.sum()
    return np.random.choice(len(utility), p=probabilities)
""",
        """
import torch
def select_candidate(scores, epsilon):
    probs = torch.softmax(epsilon * scores, dim=0)  # <-
    return torch.multinomial(probs, 1).item()
""",
        # precedence: the 2 of 2Δ lands in the numerator (pow of e, math.exp, e ** x)
        """
import numpy as np
def choose(items, scores, epsilon):
    weights = {k: pow(np.e, epsilon * scores[k] / 1 * 2) for k in items}  # <-
    total = sum(weights.values())
    return np.random.choice(list(items), p=[weights[k] / total for k in items])
""",
        """
import math, random
def pick(candidates, utility, eps, sensitivity):
    w = [math.exp(eps * utility(c) / 2 * sensitivity) for c in candidates]  # <-
    return random.choices(candidates, weights=w)[0]
""",
        """
import math
def em_weight(u, epsilon, sens):
    return math.e ** (epsilon * u / 2 * sens)  # <-
""",
        # the weights and their normaliser in one statement, scores not documented as counts: one finding
        """
import numpy as np
def pick_clusters(cluster_scores, epsilon, m):
    '''Sample m clusters by their scores.'''
    p = np.exp(epsilon * cluster_scores) / np.sum(np.exp(epsilon * cluster_scores))  # <-
    return np.random.choice(len(p), size=m, p=p, replace=False)
""",
        # PrivBayes-style: the mutual-information sensitivity without the 2
        """
import math, random
def choose_parents(candidates, mi_scores, epsilon, sensitivity):
    weights = [math.exp(epsilon * mi / sensitivity) for mi in mi_scores]  # <-
    return random.choices(candidates, weights=weights)[0]
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._reported_statements: set[int] = set()

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._precedence(node)

    def _precedence(self, node: cst.CSTNode) -> bool:
        """``exp(eps * u / 2 * sens)``: the 2 (or Δ) meant for the denominator multiplies instead."""
        exponent = _cst_exponent(node)
        if exponent is None:
            return False
        product = _cst_precedence(exponent)
        if product is None:
            return False
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if isinstance(product.right, cst.Name) and fn is not None:
            from dpcheck.analysis.noisedraws import last_assignment

            bound = last_assignment(fn, product.right.value, fa.line_of(node), fa.line_of)
            if bound is not None and number(bound) == 1:
                return False  # x / 2 * Δ with Δ = 1 equals x / (2Δ)
        self.report(node, f"`{fa.code(product).strip()[:60]}` is read as ({fa.code(product.left).strip()[:40]}) "
                          f"· {fa.code(product.right).strip()}: `/` and `*` bind left to right, so the factor meant "
                          f"for the denominator multiplies the exponent and the weights are exp(2·ε·u·…), a "
                          f"several-times-ε selection; parenthesise the denominator: ε·u / (2·Δ)")
        return True

    def visit_Call(self, node: cst.Call) -> None:
        if self._precedence(node):
            return
        if call_name(node) not in _WEIGHT_CALLS or not node.args:
            return
        arg = node.args[0].value
        factors = _factors(arg)
        eps = next((f for f in factors if isinstance(f, (cst.Name, cst.Attribute)) and _eps_name(last_name(f))), None)
        if eps is None or len(factors) < 2:
            return
        if any(number(f) in (2.0, 0.5) for f in factors):
            return
        if not any(number(f) is None and f is not eps and not (
                isinstance(f, (cst.Name, cst.Attribute)) and _eps_name(last_name(f))) for f in factors):
            return
        if any(isinstance(n, cst.Call) and call_name(n) in ("abs", "absolute", "fabs", "norm") for n in walk(arg)):
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return
        text = fa.code(fn).lower()
        if "monoton" in text:
            return
        # a utility documented as counts (top-k / peeling over sorted counts): monotone under adding a
        # record, so ε·u/Δ is right
        doc = fn.get_docstring() or ""
        if _COUNT_DOC.search(doc.lower()):
            return
        if call_name(node) == "exp" and not self._sampled(fn, node):
            return
        if not any(isinstance(n, cst.Call) and (call_name(n) in _DRAW_CALLS or "pick" in call_name(n).lower())
                   for n in walk(fn, into_scopes=False)):
            return
        if any(self._halved(fn, f) for f in factors if isinstance(f, (cst.Name, cst.Attribute))):
            return
        if words(last_name(eps) or "") <= {"eps", "self"} and not fa.in_dp_context(node):
            return
        if self._callers_double(fn):
            return
        # ``exp(ε·u) / sum(exp(ε·u))``: the normaliser repeats the weights, one finding per statement
        statement = next((a for a in fa.ancestors(node) if isinstance(a, cst.BaseSmallStatement)), None)
        if statement is not None:
            if id(statement) in self._reported_statements:
                return
            self._reported_statements.add(id(statement))
        self.report(node, f"exponential-mechanism weights `{fa.code(node).strip()[:70]}` have no factor 2: the "
                          f"score and the normalising sum both move with one record, so the selection is "
                          f"2ε-DP; use exp(ε·u / (2Δu)) (or document and check a monotone utility)")

    # -- helpers ---------------------------------------------------------------------------------
    def _sampled(self, fn: cst.FunctionDef, weight: cst.Call) -> bool:
        """Do the weights (the name they are assigned or appended to) reach a sum or a categorical
        sampler in the function?"""
        fa = self.ctx.analysis
        holder: str | None = None
        for anc in fa.ancestors(weight):
            if isinstance(anc, cst.Assign) and len(anc.targets) == 1:
                holder = last_name(anc.targets[0].target)
                break
            if isinstance(anc, cst.Call) and call_name(anc) in ("append", "extend") \
                    and isinstance(anc.func, cst.Attribute):
                holder = last_name(anc.func.value)
                break
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                break
        if holder is None:
            return False
        for n in walk(fn, into_scopes=False):
            if not isinstance(n, cst.Call) or n is weight or call_name(n) not in _SAMPLER_CALLS:
                continue
            receiver = n.func.value if isinstance(n.func, cst.Attribute) else None
            if receiver is not None and last_name(receiver) == holder:
                return True
            if any(isinstance(m, (cst.Name, cst.Attribute)) and last_name(m) == holder
                   for a in n.args for m in walk(a.value)):
                return True
        return False

    def _halved(self, fn: cst.FunctionDef, factor: cst.BaseExpression) -> bool:
        """Is the name bound (in the function or module) to a value with a factor 2 or ½?"""
        name = last_name(factor)
        for scope in (fn, self.ctx.module):
            for sub in walk(scope, into_scopes=scope is not fn):
                if isinstance(sub, cst.Assign) and any(last_name(t.target) == name for t in sub.targets):
                    if any(number(f) in (2.0, 0.5) for f in _factors(sub.value)):
                        return True
                elif isinstance(sub, cst.AugAssign) and last_name(sub.target) == name and number(sub.value) in (
                        2.0, 0.5):
                    return True
        return False

    def _callers_double(self, fn: cst.FunctionDef) -> bool:
        """A caller in the module passes an argument with a factor 2 (``select(q, eps, 2 * sens)``)."""
        name = fn.name.value
        for call in self.ctx.analysis.nodes(cst.Call):
            if call_name(call) == name:  # type: ignore[arg-type]
                for arg in call.args:  # type: ignore[attr-defined]
                    if any(number(f) in (2.0, 0.5) for f in _factors(arg.value)):
                        return True
        return False
