"""DP798: k-ary randomized response keeps the value with e^ε/(e^ε+k−1) but otherwise draws uniformly over all
k values, the true one included."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, target_names, walk, words
from dpcheck.rule import Rule

#: uniform draws of one category
_UNIFORM_PICKS = frozenset({"choice", "randint", "randrange", "integers", "sample"})
#: uniform coins compared with the keep probability
_COINS = frozenset({"random", "rand", "uniform", "random_sample", "rand_like"})


def _is_exp(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and call_name(expr) == "exp":
        return True
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and last_name(expr.left) == "e"


def _terms(expr: cst.BaseExpression, sign: int = 1) -> list[tuple[int, cst.BaseExpression]]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        right = -sign if isinstance(expr.operator, cst.Subtract) else sign
        return _terms(expr.left, sign) + _terms(expr.right, right)
    return [(sign, expr)]


def _exclusive_keep(expr: cst.BaseExpression) -> bool:
    """``exp(ε) / (exp(ε) + k - 1)`` (any term order, ``e ** ε``): the keep probability of k-RR that reports
    one of the k−1 OTHER values otherwise."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return False
    if not _is_exp(expr.left):
        return False
    terms = _terms(expr.right)
    has_exp = any(s == 1 and _is_exp(t) for s, t in terms)
    minus_one = any(s == -1 and number(t) == 1 for s, t in terms)
    domain = any(s == 1 and not _is_exp(t) and number(t) is None for s, t in terms)
    return has_exp and minus_one and domain


def _coin(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Call) and call_name(n) in _COINS for n in walk(expr))


class KrrResampleIncludesTrueValue(Rule):
    id = "DP798"
    name = "krr-resample-includes-true-value"
    category = "general"
    severity = "error"
    summary = ("k-ary randomized response keeps the value with p = e^ε/(e^ε+k−1) and otherwise picks uniformly "
               "among all k values, the true one included")
    rationale = (
        "Generalized randomized response has two consistent forms: keep the true value with p = e^ε/(e^ε+k−1) "
        "and otherwise report one of the k−1 OTHER values uniformly, or keep it with (e^ε−1)/(e^ε+k−1) and "
        "otherwise report any of the k values uniformly. Mixing them — the first p with a uniform draw over "
        "the whole domain (`np.random.choice(categories)`, `randint(0, k)`) — gives the true value probability "
        "p + (1−p)/k and each other value (1−p)/k, a ratio above e^ε: the mechanism "
        "is not ε-LDP as claimed. Reported: in a function holding that keep probability, a branch on a uniform "
        "coin that keeps the value on one side and on the other returns or assigns a uniform pick over a "
        "domain that is not filtered to exclude the true value. Not reported: a pick from a list that "
        "excludes the value (`[c for c in cats if c != v]`, `np.delete`, `set(cats) - {v}`), a draw that is "
        "remapped on collision, or the (e^ε−1)/(e^ε+k−1) keep probability. Fix: draw among the other k−1 "
        "values, or use the (e^ε−1)/(e^ε+k−1) form."
    )
    TRIGGERS = ("choice", "randint", "randrange", "integers", "sample(")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a division, an exp and a uniform pick."""
        return bool(facts.binops(ast.Div)) and facts.calls_any(_UNIFORM_PICKS) and (
            "exp" in facts.called or "e" in facts.identifiers)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        keep_names: set[str] = set()
        inline = False
        filtered: set[str] = set()
        compared: set[str] = set()
        coins: set[str] = set()
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign):
                names: set[str] = set()
                for t in sub.targets:
                    names |= target_names(t.target)
                if _exclusive_keep(sub.value):
                    keep_names |= names
                if self._excludes(sub.value):
                    filtered |= names
                if isinstance(sub.value, cst.Call) and call_name(sub.value) in _COINS:
                    coins |= names
            elif isinstance(sub, cst.BinaryOperation) and _exclusive_keep(sub):
                inline = True
            elif isinstance(sub, cst.Comparison):
                for s in (sub.left, *(c.comparator for c in sub.comparisons)):
                    if isinstance(s, cst.Name):
                        compared.add(s.value)
        if not keep_names and not inline:
            return
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.If) and self._keep_test(sub.test, keep_names, coins):
                branches = [sub.body]
                if sub.orelse is not None:
                    branches.append(sub.orelse)
                for br in branches:
                    for stmt in walk(br, into_scopes=False):
                        value = None
                        if isinstance(stmt, cst.Return):
                            value = stmt.value
                        elif isinstance(stmt, cst.Assign):
                            names = set()
                            for t in stmt.targets:
                                names |= target_names(t.target)
                            if names & compared:
                                continue  # remapped on collision
                            value = stmt.value
                        if value is not None and self._uniform_pick(value, filtered):
                            self._report(stmt)
            elif isinstance(sub, cst.IfExp) and self._keep_test(sub.test, keep_names, coins):
                for value in (sub.body, sub.orelse):
                    if self._uniform_pick(value, filtered):
                        self._report(sub)
            elif isinstance(sub, cst.Call) and call_name(sub) == "where" and len(sub.args) == 3 \
                    and self._keep_test(sub.args[0].value, keep_names, coins):
                for arg in sub.args[1:]:
                    if self._uniform_pick(arg.value, filtered):
                        self._report(sub)

    def _report(self, node: cst.CSTNode) -> None:
        self.report(node, "the fallback draw is uniform over all values, the true one included, while the keep "
                          "probability e^ε/(e^ε+k−1) assumes one of the k−1 others: the true value is over-reported "
                          "and the mechanism is not ε-LDP; draw among the other values or keep with "
                          "(e^ε−1)/(e^ε+k−1)")

    @staticmethod
    def _keep_test(test: cst.BaseExpression, keep_names: set[str], coins: set[str]) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        sides = [test.left, test.comparisons[0].comparator]
        if not any(_coin(s) or isinstance(s, cst.Name) and s.value in coins for s in sides):
            return False
        return any(isinstance(s, cst.Name) and s.value in keep_names or _exclusive_keep(s)
                   or isinstance(s, cst.Attribute) and dotted(s) in keep_names for s in sides)

    @staticmethod
    def _excludes(expr: cst.BaseExpression) -> bool:
        """A domain with the true value taken out: a filtered comprehension, ``np.delete``, a set difference,
        ``.remove``/``setdiff1d``."""
        for n in walk(expr):
            if isinstance(n, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and n.for_in.ifs:
                return True
            if isinstance(n, cst.Call) and call_name(n) in ("delete", "setdiff1d", "difference", "remove", "filter"):
                return True
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract) and isinstance(
                    n.right, (cst.Set, cst.Call)):
                return True
        return False

    def _uniform_pick(self, expr: cst.BaseExpression, filtered: set[str]) -> bool:
        if not isinstance(expr, cst.Call) or call_name(expr) not in _UNIFORM_PICKS:
            return False
        if call_name(expr) == "sample" and not (dotted(expr.func) or "").startswith("random."):
            return False
        positional = [a.value for a in expr.args if a.keyword is None]
        if any(a.keyword is not None and a.keyword.value == "p" for a in expr.args):
            return False  # a weighted pick
        if not positional:
            return False
        domain = positional[0]
        if call_name(expr) in ("randint", "randrange", "integers") and len(positional) >= 2:
            domain = positional[1]
            if isinstance(domain, cst.BinaryOperation) and isinstance(domain.operator, cst.Subtract) \
                    and number(domain.right) == 1 and (dotted(expr.func) or "").split(".")[0] != "random":
                return False  # numpy's exclusive k - 1: the k−1 others (remapped elsewhere)
        if self._excludes(domain):
            return False
        if isinstance(domain, cst.Name) and domain.value in filtered:
            return False
        names = {w for n in walk(domain) if isinstance(n, cst.Name) for w in words(n.value)}
        return not names & {"others", "other", "rest", "remaining", "alternatives"}

    VALID = (
        # twin: the fallback is drawn among the other categories
        """
import numpy as np
def k_rr(value, categories, epsilon):
    p_keep = np.exp(epsilon) / (np.exp(epsilon) + len(categories) - 1)
    if np.random.random() < p_keep:
        return value
    others = [c for c in categories if c != value]
    return np.random.choice(others)
""",
        # twin: the (e^eps - 1) keep probability with a uniform draw over all k
        """
import math, random
def grr(v, domain, eps):
    p = (math.exp(eps) - 1) / (math.exp(eps) + len(domain) - 1)
    return v if random.random() < p else random.choice(domain)
""",
        # twin: draw among k - 1 then remap the collision
        """
import numpy as np
def perturb(v, k, eps):
    p = np.exp(eps) / (np.exp(eps) + k - 1)
    if np.random.rand() < p:
        return v
    j = np.random.randint(0, k - 1)
    if j >= v:
        j += 1
    return j
""",
        # ordinary ML: epsilon-greedy exploration with a softmax temperature
        """
import numpy as np
def act(q_values, temperature, epsilon):
    probs = np.exp(q_values / temperature) / np.exp(q_values / temperature).sum()
    if np.random.rand() < epsilon:
        return np.random.randint(0, len(q_values))
    return int(np.argmax(probs))
""",
    )

    INVALID = (
        # a method with categories defaulting to binary
        """
import numpy as np
class LocalDP:
    def randomized_response(self, value, categories):
        n = len(categories)
        p_keep = np.exp(self.epsilon) / (np.exp(self.epsilon) + n - 1)
        if np.random.random() < p_keep:
            return value
        else:
            return np.random.choice(categories)  # <-
""",
        # one-line conditional with the stdlib
        """
import math, random
def grr(v, domain, eps):
    p = math.exp(eps) / (math.exp(eps) + len(domain) - 1)
    return v if random.random() < p else random.choice(domain)  # <-
""",
        # vectorised with numpy: the replacement may be the true code
        """
import numpy as np
def perturb_codes(x, k, eps):
    keep = np.exp(eps) / (np.exp(eps) + k - 1)
    coins = np.random.rand(len(x))
    return np.where(coins < keep, x, np.random.randint(0, k, size=len(x)))  # <-
""",
        # integer category drawn with an inclusive randint into the result
        """
import math, random
def krr_item(item, d, epsilon):
    q = math.e ** epsilon / (math.e ** epsilon + d - 1)
    if random.random() > q:
        item = random.randint(0, d - 1)  # <-
    return item
""",
    )
