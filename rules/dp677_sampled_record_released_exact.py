"""DP677: a coin with an ε-derived probability decides whether a record is released, and the record is released
exactly."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, param_names, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"eps", "epsilon", "epsilons", "budget", "privacy"})
_COINS = frozenset({"random", "rand", "uniform", "random_sample", "rand_like", "binomial", "bernoulli"})
#: parameter words that are knobs, not records
_KNOBS = frozenset({"eps", "epsilon", "delta", "threshold", "budget", "seed", "rng", "self", "cls", "p", "q",
                    "prob", "probability", "rate", "k", "n", "size", "num", "bins", "config", "cfg", "args"})


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


class SampledRecordReleasedExact(Rule):
    id = "DP677"
    name = "sampled-record-released-exact"
    category = "general"
    severity = "error"
    summary = ("a record is kept with a probability computed from ε (a sampling step) and then released exactly, "
               "with no mechanism after the sampling")
    rationale = (
        "Sampling with a probability derived from a (personal) ε — as in the sample mechanism of personalized "
        "DP, `p = (e^ε - 1) / (e^t - 1)` — is only the first half of a mechanism: the sampled records must then "
        "go through a t-DP mechanism. A function that keeps a record when `random() <= p` and returns its exact "
        "values (and `None`, nothing or a constant otherwise) releases the true record of every sampled user; "
        "users whose ε is above the threshold are sampled with probability 1 and always released exactly. "
        "Sampling alone gives no finite ε for the values released. Reported: in a function that computes a "
        "probability from a budget-named value, a branch taken on a uniform draw compared with that probability "
        "returns the private record (a parameter, its fields, a dict of its fields) unchanged, while the other "
        "branch returns nothing, None or a constant, and the function draws nothing else (randomized response, "
        "whose other branch draws a value, is not reported). Bad: `if random() <= p: return row['income']`. "
        "Good: `if random() <= p: return row['income'] + laplace(0, sens / t)` (or run the threshold mechanism "
        "on the sample). Fix: apply the t-DP mechanism to the sampled records."
    )
    TRIGGERS = ("random", "rand", "uniform")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a ``return`` under ``if coin() <= p:`` (an order comparison with a uniform draw), in a
        file that names a budget (every ``_BUDGET`` word holds ``eps``, ``budget`` or ``privacy``)."""
        lower = facts.source.lower()
        if not any(w in lower for w in ("eps", "budget", "privacy")) or not facts.nodes(ast.Return):
            return False
        for node in facts.nodes(ast.If):
            test = node.test  # type: ignore[attr-defined]
            if isinstance(test, ast.Compare) and len(test.ops) == 1 \
                    and isinstance(test.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) \
                    and any(isinstance(side, ast.Call) and facts.call_lasts(side) & _COINS
                            for side in (test.left, test.comparators[0])):
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p for p in param_names(node) if p not in _KNOBS and not words(p) & _KNOBS}
        body = list(walk(node.body, into_scopes=False))
        budgeted: set[str] = {p for p in param_names(node) if words(p) & _BUDGET}
        private = set(params)
        for _ in range(3):
            for sub in body:
                if isinstance(sub, cst.Assign):
                    names = _names(sub.value)
                    targets = {n for t in sub.targets for n in _names(t.target)}
                    if any(words(n) & _BUDGET or n in budgeted for n in names):
                        budgeted |= targets
        private -= budgeted
        if not private or not budgeted:
            return
        draws = [c for c in body if isinstance(c, cst.Call) and call_name(c) in _COINS | {
            "choice", "laplace", "normal", "gauss", "randint", "randn", "exponential", "geometric", "sample"}]
        for sub in body:
            if not isinstance(sub, cst.If) or not self._coin(sub.test, budgeted):
                continue
            coin_draws = [c for c in walk(sub.test) if isinstance(c, cst.Call)]
            if any(d not in coin_draws for d in draws):
                return  # other draws: a mechanism or randomized response, not bare sampling
            site = self._exact(sub.body, private)
            if site is None:
                continue
            other = sub.orelse.body if isinstance(sub.orelse, cst.Else) else None
            if isinstance(sub.orelse, cst.If) or other is not None and not self._blank(other):
                continue
            self.report(
                site,
                "the record is kept with a probability computed from ε and then released with its exact values: "
                "sampling is only the first step of the mechanism (personalized-DP sampling must be followed by "
                "a threshold-ε mechanism), so every sampled record leaves exactly; apply the DP mechanism to the "
                "sampled values",
            )

    @staticmethod
    def _coin(test: cst.BaseExpression, budgeted: set[str]) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        op = test.comparisons[0].operator
        if not isinstance(op, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
            return False
        sides = [test.left, test.comparisons[0].comparator]
        coin = [s for s in sides if isinstance(s, cst.Call) and call_name(s) in _COINS and (
            len(s.args) <= 1 or call_name(s) == "uniform" and [number(a.value) for a in s.args] == [0, 1])]
        rest = [s for s in sides if s not in coin]
        return len(coin) == 1 and len(rest) == 1 and bool(_names(rest[0]) & budgeted)

    @staticmethod
    def _value_exact(v: cst.BaseExpression, private: set[str]) -> bool:
        if isinstance(v, cst.Name):
            return v.value in private
        if isinstance(v, cst.Subscript):
            root = v.value
            while isinstance(root, cst.Subscript):
                root = root.value
            return isinstance(root, cst.Name) and root.value in private and not any(
                isinstance(c, cst.Call) for c in walk(v))
        if isinstance(v, cst.Dict) and v.elements:
            return all(isinstance(e, cst.DictElement) and SampledRecordReleasedExact._value_exact(e.value, private)
                       for e in v.elements)
        if isinstance(v, cst.Tuple) and v.elements:
            return all(SampledRecordReleasedExact._value_exact(e.value, private) for e in v.elements)
        return False

    def _exact(self, suite: cst.BaseSuite, private: set[str]) -> cst.CSTNode | None:
        for stmt in walk(suite):
            if isinstance(stmt, cst.Return) and stmt.value is not None and self._value_exact(stmt.value, private):
                return stmt
        return None

    @staticmethod
    def _blank(suite: cst.BaseSuite) -> bool:
        """Returns nothing, None, a constant or a dict of those."""
        for stmt in walk(suite):
            if isinstance(stmt, cst.Return) and stmt.value is not None:
                v = stmt.value
                vals = [e.value for e in v.elements if isinstance(e, cst.DictElement)] if isinstance(v, cst.Dict) \
                    else [v]
                if not all(number(x) is not None or isinstance(x, cst.Name) and x.value in ("None", "False")
                           or isinstance(x, cst.SimpleString) for x in vals):
                    return False
        return True

    VALID = (
        # twin: the sampled record goes through the threshold mechanism
        """
import random
import numpy as np
def personalized_release(record, threshold=1.0):
    eps_u = record["epsilon"]
    keep = 1.0 if eps_u >= threshold else (np.exp(eps_u) - 1) / (np.exp(threshold) - 1)
    if random.random() <= keep:
        return {"salary": record["salary"] + np.random.laplace(0, 1000 / threshold)}
    return {"salary": None}
""",
        # randomized response: the other branch draws another value
        """
import math
import random
def rr_bin(true_bin, epsilon, num_bins):
    p = math.exp(epsilon) / (math.exp(epsilon) + num_bins - 1)
    if random.random() < p:
        return true_bin
    return random.choice([b for b in range(num_bins) if b != true_bin])
""",
        # a sampling rate that is a plain parameter (amplification by subsampling; the caller adds noise)
        """
import random
def poisson_sample(row, rate):
    if random.random() < rate:
        return row
    return None
""",
        # ordinary ML: epsilon-greedy exploration
        """
import random
import numpy as np
def act(q_values, epsilon):
    if random.random() < epsilon:
        return random.randrange(len(q_values))
    return int(np.argmax(q_values))
""",
    )

    INVALID = (
        # personalized-DP sampling, exact fields returned
        """
import random
import numpy as np
def personalized_release(record, threshold=1.0):
    eps_u = record["epsilon"]
    keep = 1.0 if eps_u >= threshold else (np.exp(eps_u) - 1) / (np.exp(threshold) - 1)
    if random.random() <= keep:
        return {"salary": record["salary"]}  # <-
    return {"salary": None}
""",
        # the whole row, numpy coin, else None
        """
import numpy as np
def sample_user(user_row, user_eps, t):
    prob = min(1.0, (np.exp(user_eps) - 1) / (np.exp(t) - 1))
    if np.random.rand() < prob:
        return user_row  # <-
    else:
        return None
""",
        # a tuple of the user's values
        """
import math
import random
def pdp_sample(age, income, epsilon_i, tau):
    pi = (math.exp(epsilon_i) - 1) / (math.exp(tau) - 1) if epsilon_i < tau else 1.0
    if random.uniform(0, 1) <= pi:
        return age, income  # <-
""",
        # the comparison written the other way round
        """
import random
import numpy as np
def keep_record(rec, privacy_level, cap):
    p_keep = np.expm1(privacy_level) / np.expm1(cap)
    if p_keep >= random.random():
        return rec["visits"]  # <-
    return 0
""",
    )
