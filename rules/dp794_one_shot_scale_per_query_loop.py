"""DP794: a noise scale calibrated from the whole ε once, then used for every query of a loop over many queries
(marginals, cliques, public points) of the same records, with no split and no accountant."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_EPS = frozenset({"eps", "epsilon"})
#: an ε whose name says it is already a share
_SHARE = frozenset({"per", "each", "share", "split", "query", "marginal", "step", "round", "iter", "single", "one",
                    "part", "sub", "remaining", "left", "unit", "avg"})
#: a scale name
_SCALE = frozenset({"sigma", "std", "stddev", "scale", "b", "noise", "lap", "beta", "lambda", "lam"})
#: a loop over a workload of queries answered from the same records
_QUERY_LOOP = frozenset({
    "comb", "combs", "combination", "combinations", "clique", "cliques", "marginal", "marginals", "query",
    "queries", "workload", "public", "attr", "attrs", "attribute", "attributes", "proj", "projections",
    "measurement", "measurements", "pair", "pairs", "itertools",
})
#: the loop count or composition appearing in the calibration
_COUNT_WORDS = frozenset({"len", "n", "k", "num", "count", "number", "queries", "rounds", "steps", "sqrt_k", "d",
                          "composition", "total", "t"})
_DRAWS = frozenset({"normal", "laplace", "gauss", "rvs", "randn", "standard_normal", "gaussian", "Laplace", "Normal",
                    "LinearMeasurement", "add_noise", "gaussian_noise", "laplace_noise"})
_ACCOUNTING = frozenset({"compose", "composition", "accountant", "rdp", "zcdp", "spend", "charge", "advanced",
                         "heterogeneous", "privacy", "budget"})


def _counted(value: cst.BaseExpression) -> bool:
    """Does the expression involve a count (``len(...)``, ``k``, ``num_queries``)?"""
    for n in walk(value):
        if isinstance(n, cst.Call) and call_name(n) == "len":
            return True
        if isinstance(n, (cst.Name, cst.Attribute)):
            name = n.value if isinstance(n, cst.Name) else n.attr.value
            if words(name) & _COUNT_WORDS and not words(name) & _EPS:
                return True
    return False


def _one_shot(value: cst.BaseExpression, shares: set[str]) -> bool:
    """``sqrt(2 ln(1.25/δ)) / ε``, ``Δ / ε``: divided by a full ε, with no loop count in it."""
    eps_full = False
    for n in walk(value):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide):
            right = n.right
            name = right.value if isinstance(right, cst.Name) else (
                right.attr.value if isinstance(right, cst.Attribute) else None)
            if name and words(name) & _EPS and not words(name) & _SHARE and name not in shares:
                eps_full = True
        if isinstance(n, cst.Call) and call_name(n) == "len":
            return False
        if isinstance(n, (cst.Name, cst.Attribute)):
            name = n.value if isinstance(n, cst.Name) else n.attr.value
            if words(name) & _COUNT_WORDS and not words(name) & _EPS:
                return False
    return eps_full


class OneShotScalePerQueryLoop(Rule):
    id = "DP794"
    name = "one-shot-scale-per-query-loop"
    category = "general"
    severity = "error"
    summary = ("a noise scale calibrated for one release at the whole ε is used for every query of a loop over "
               "marginals / cliques / public points of the same records, with no split and no accountant")
    rationale = (
        "σ = Δ·√(2 ln(1.25/δ))/ε (or b = Δ/ε) makes ONE answer (ε, δ)-DP. A loop that answers a workload of "
        "queries over the same records with that σ, each marginal of a Private-PGM workload, each public point "
        "a PATE ensemble labels, each attribute pair, spends (ε, δ) per query: k queries cost about k·ε by "
        "basic composition, while the code reports ε. Reported: a scale assigned from a division by a full ε "
        "(no share word, no loop count such as `len(...)`, `k`, `num_queries` in the formula), then given to a "
        "noise draw or a measurement inside a `for` loop over a workload (combinations, cliques, marginals, "
        "queries, public points), in a function with no accountant or composition call. Fix: divide ε (and δ) "
        "by the number of queries, or calibrate with zCDP/RDP over the whole workload and report the composed ε."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``for`` loop, a division and a draw or measurement."""
        return bool(facts.nodes(ast.For)) and bool(facts.binops(ast.Div)) and facts.calls_any(_DRAWS)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        scales: dict[str, cst.CSTNode] = {}
        # names assigned from a count (``eps_q = epsilon / len(combos)``): already a share
        shares: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and _counted(sub.value):
                shares |= {n.value for t in sub.targets for n in walk(t.target) if isinstance(n, cst.Name)}
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                name = sub.targets[0].target.value
                if words(name) & _SCALE and _one_shot(sub.value, shares):
                    scales[name] = sub
        if not scales:
            return
        if any(isinstance(c, cst.Call) and words(call_name(c)) & _ACCOUNTING for c in body):
            return
        reported: set[str] = set()
        for loop in body:
            if not isinstance(loop, cst.For):
                continue
            loop_words = set()
            for n in walk(loop.iter):
                if isinstance(n, cst.Name):
                    loop_words |= words(n.value)
                elif isinstance(n, cst.Attribute):
                    loop_words |= words(n.attr.value)
            for n in walk(loop.target):
                if isinstance(n, cst.Name):
                    loop_words |= words(n.value)
            if not loop_words & _QUERY_LOOP:
                continue
            for call in walk(loop.body):
                if not (isinstance(call, cst.Call) and call_name(call) in _DRAWS):
                    continue
                used = {n.value for a in call.args for n in walk(a.value) if isinstance(n, cst.Name)} & set(scales)
                for name in sorted(used - reported):
                    reported.add(name)
                    self.report(
                        call,
                        f"`{name}` is calibrated for one release at the whole ε, and used for every query of this "
                        "loop over the same records: k queries cost k·ε; split ε (and δ) over the queries or "
                        "account for the composition",
                    )

    VALID = (
        # twin: ε and δ split over the marginals
        """
import itertools
import numpy as np
def measure(counts_of, columns, epsilon, delta):
    combos = list(itertools.combinations(columns, 2))
    eps_q, delta_q = epsilon / len(combos), delta / len(combos)
    sigma = np.sqrt(2 * np.log(1.25 / delta_q)) / eps_q
    out = {}
    for comb in combos:
        out[comb] = counts_of(comb) + np.random.normal(0, sigma)
    return out
""",
        # twin: zCDP calibration over the workload
        """
import numpy as np
def measure(data, cliques, rho):
    sigma = np.sqrt(len(cliques) / (2 * rho))
    return [data.project(cl).datavector() + np.random.normal(0, sigma) for cl in cliques]
""",
        # local DP: one noisy report per record (parallel composition)
        """
import numpy as np
def randomize_all(values, epsilon):
    scale = 1.0 / epsilon
    return [v + np.random.laplace(0, scale) for v in values]
""",
        # twin: the PATE labels are charged to an accountant
        """
import numpy as np
from scipy.stats import norm
def label_public(teachers, X_public, epsilon, delta, accountant):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    labels = []
    for x in X_public:
        votes = np.bincount([t.predict(x) for t in teachers], minlength=2)
        labels.append(int(np.argmax(votes + norm.rvs(scale=sigma, size=2))))
        accountant.spend(epsilon, delta)
    return labels
""",
        # ordinary ML: label smoothing noise with an epsilon margin over feature columns
        """
import numpy as np
def jitter(df, columns, eps=0.1):
    std = 1.0 / eps
    for col in columns:
        df[col] = df[col] + np.random.normal(0, 0.01)
    return df
""",
    )

    INVALID = (
        # PATE: each public point is labelled with the full (ε, δ)
        """
import numpy as np
from collections import Counter
from scipy.stats import norm
def label_public(teachers, X_public, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    labels = []
    for x in X_public:
        counts = Counter(int(t.predict(x)) for t in teachers)
        noisy = {c: counts.get(c, 0) + norm.rvs(scale=sigma) for c in (0, 1)}  # <-
        labels.append(int(noisy[1] > noisy[0]))
    return labels
""",
        # every two-way marginal measured at the full ε
        """
import itertools
import numpy as np
def two_way(data, columns, epsilon, sensitivity=1.0):
    b = sensitivity / epsilon
    released = {}
    for pair in itertools.combinations(columns, 2):
        table = data.groupby(list(pair)).size().values
        released[pair] = table + np.random.laplace(0, b, table.shape)  # <-
    return released
""",
        # Private-PGM measurements all at the one-shot σ
        """
import itertools
import numpy as np
from mbi import LinearMeasurement
def measure(data, names, epsilon, delta, order=2):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    combinations = []
    for k in range(1, order + 1):
        combinations += list(itertools.combinations(names, k))
    ms = []
    for comb in combinations:
        y = data.project(comb).datavector()
        ms.append(LinearMeasurement(y + np.random.normal(0, sigma, y.size), comb, sigma))  # <-
    return ms
""",
        # a list of linear queries over one table, each at the full budget
        """
import numpy as np
def answer_workload(x, queries, eps, rng):
    noise_scale = 2.0 / eps
    answers = []
    for q in queries:
        answers.append(q @ x + rng.laplace(0, noise_scale))  # <-
    return answers
""",
    )
